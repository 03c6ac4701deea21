"""The gang state read once in the library (issue 21 item 4) and what every consumer shows of it:
a gang with sub-groups (gang-level minMember 0) and none of its 12 pods bound is "0/12 bound, min
12 not met" in ``kli get -o wide``, ``kli describe``, the web view's rows (its JSON API) and the
platform metrics; the web view said "min met" before. Without every pod (from a file, a pod list
refused) it is unknown, never counted from what was seen. The same on the real API server and in
a browser: tests/e2e/controller/test_platform_metrics.py."""

from __future__ import annotations

import datetime as dt
import http.client
import json
import threading
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest
from tests.subgroup_gang import EXAMPLES, NOT_MET, definition, job, pods

from karta import report
from karta.cli.views.describe import render_table
from karta.cli.views.get import Table
from karta.controller.parts.platform import PlatformMetrics, _Type
from karta.definitions import DefinitionStore
from karta.kube import KubeClient
from karta.kube.config import ClusterConfig
from karta.kube.resources import ResourceType
from karta.model.gvk import GroupKind
from karta.ui import RowStore, UiServer, workload_row

GPU = ("nvidia.com/gpu",)


def test_the_library_counts_the_sub_groups_minimums() -> None:
    state = report.workload_gang(definition().karta, job(), pods(), evaluator=_evaluator())
    assert state is not None
    assert (state.gangs, state.minimum, state.bound, state.pods, state.met) == (1, 12, 0, 12, False)
    assert state.text() == f"{NOT_MET} (master 0/1, worker 0/11)"
    assert [(s.name, s.minimum, s.bound) for s in state.sub_groups] == [("master", 1, 0), ("worker", 11, 0)]


def test_a_sub_group_short_of_its_minimum_is_not_met_even_when_the_total_is() -> None:
    everyone_but_the_master = frozenset(f"train-12-worker-{i}" for i in range(11)) | {"train-12-extra"}
    state = report.workload_gang(
        definition().karta, job(), pods(bound=everyone_but_the_master), evaluator=_evaluator()
    )
    assert state is not None and state.bound == 11 and not state.met
    assert state.text() == "11/12 bound, min 12 not met (master 0/1, worker 11/11)"
    every_pod = frozenset(p["metadata"]["name"] for p in pods())
    state = report.workload_gang(definition().karta, job(), pods(bound=every_pod), evaluator=_evaluator())
    assert state is not None and state.met and state.text() == "12/12 bound, min 12 met"


def test_kli_get_wide_shows_it() -> None:
    view = report.Summarizer(gpu_resources=GPU).summary(job(), definition())
    assert "gang" not in view  # read without its pods: kli get adds it where the output shows it
    view["gang"] = report.gang_report(definition(), job(), pods())
    assert view["gang"] is not None and view["gang"]["text"].startswith(NOT_MET)
    assert (view["gang"]["minMember"], view["gang"]["scheduled"], view["gang"]["minimumMet"]) == (
        12,
        0,
        False,
    )
    table = Table(show_type=False, wide=True, now=lambda: dt.datetime(2026, 1, 2, 4, tzinfo=dt.UTC))
    text = table.render([view])
    assert text.splitlines()[0].split() == ["NAME", "PHASE", "GPU", "COMPONENTS", "AGE", "GANG", "ORIGIN"]
    assert f"   {NOT_MET} (master 0/1, worker 0/11)   user" in text.splitlines()[1]
    plain = Table(show_type=False, wide=False, now=lambda: dt.datetime(2026, 1, 2, 4, tzinfo=dt.UTC))
    assert "GANG" not in plain.render([view]) and NOT_MET not in plain.render([view])


def test_a_gang_read_from_some_of_its_pods_or_none_is_unknown() -> None:
    partial = report.gang_report(definition(), job(), pods()[:3], pods_complete=False)
    assert partial == {"error": "some of its pods could not be read"}
    assert report.gang_report(definition(), job(), None) == {"error": "read without its pods"}
    view = {
        "name": "train-12",
        "phases": ["Running"],
        "gpus": 0,
        "components": [],
        "gang": partial,
        "origin": "user",
    }
    table = Table(show_type=False, wide=True, now=lambda: dt.datetime(2026, 1, 2, 4, tzinfo=dt.UTC))
    assert "   unknown (some of its pods could not be read)   " in table.render([view]).splitlines()[1]


def test_kli_describe_shows_it_live_and_says_unknown_from_a_file() -> None:
    described = report.describe_live(
        definition(), job(), pods(), [], events_read=True, warnings=[], gpu_resources=GPU
    )
    assert described.report["gang"] is not None and described.report["gang"]["text"].startswith(NOT_MET)
    text = render_table(described.report, described.built.rows)
    lines = text.splitlines()
    assert f"Gang: {NOT_MET} (master 0/1, worker 0/11)" in lines
    assert lines[lines.index(f"Gang: {NOT_MET} (master 0/1, worker 0/11)") - 1].startswith("Phase: ")
    partial = report.describe_live(
        definition(),
        job(),
        pods()[:3],
        [],
        events_read=True,
        warnings=[],
        gpu_resources=GPU,
        pods_complete=False,
    )
    assert partial.report["gang"] == {"error": "some of its pods could not be read"}
    assert "Gang: unknown (some of its pods could not be read)" in render_table(
        partial.report, partial.built.rows
    )
    offline = report.describe_file(definition(), job(), gpu_resources=GPU)
    assert offline.report["gang"] == {"error": "no pods in file mode"}
    text = render_table(offline.report, offline.built.rows)
    assert "Gang: unknown (no pods in file mode)" in text.splitlines() and "bound" not in text


def test_the_web_views_api_says_not_met() -> None:
    row = workload_row(job(), definition(), cluster="c", pods=pods(), gpu_resources=GPU)
    assert row["gang"] == {
        "gangs": 1,
        "minMember": 12,
        "scheduled": 0,
        "groupObjects": 0,
        "minimumMet": False,
        "text": f"{NOT_MET} (master 0/1, worker 0/11)",
    }
    store = RowStore()
    store.put(row)
    server = UiServer(store, {}, port=0, allowed_hosts={"127.0.0.1"})
    server.start()
    try:
        conn = http.client.HTTPConnection(*server.address, timeout=10)
        conn.request("GET", "/api/workloads", headers={"Host": "127.0.0.1"})
        answer = conn.getresponse()
        body = json.loads(answer.read())
        conn.close()
    finally:
        server.close()
    assert answer.status == 200
    (served,) = body["items"]
    assert served["gang"]["minimumMet"] is False and served["gang"]["minMember"] == 12
    assert served["gang"]["scheduled"] == 0


def test_the_platform_metrics_say_not_met() -> None:
    part = _part()
    registry = CollectorRegistry()
    registry.register(part)
    text = generate_latest(registry).decode()
    where = 'group="kubeflow.org",kind="PyTorchJob",namespace="ml-team"'
    gangs = 'karta_gangs{{group="kubeflow.org",kind="PyTorchJob",minimum="{}",namespace="ml-team"}}'
    assert f"{gangs.format('not_met')} 1.0" in text and f"{gangs.format('met')} 0.0" in text
    assert f"karta_gang_pods_bound{{{where}}} 0.0" in text
    assert f"karta_gang_pods_minimum{{{where}}} 12.0" in text
    (counts,) = part.counts()
    assert counts.gang is not None and counts.gang.text().startswith(NOT_MET)
    part._pods[None].informer.replace(pods(bound=frozenset(p["metadata"]["name"] for p in pods())))
    part.drain()
    text = generate_latest(registry).decode()
    assert f"{gangs.format('met')} 1.0" in text  # the cache follows the pods
    assert f"karta_gang_pods_bound{{{where}}} 12.0" in text


def _evaluator() -> Any:
    from karta.definitions import evaluator_for

    return evaluator_for(definition())


class _Definitions:
    def __init__(self) -> None:
        self.store = DefinitionStore.offline(user_directory=EXAMPLES / "definitions")
        self.synced = threading.Event()
        self.synced.set()

    def subscribe(self, _callback: Any) -> None:
        pass


def _part() -> PlatformMetrics:
    client = KubeClient(ClusterConfig(server="https://127.0.0.1:1"))
    part = PlatformMetrics(client, definitions=_Definitions(), backend="kai")  # type: ignore[arg-type]
    jobs = ResourceType("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", verbs=("list", "watch"))
    pod_type = ResourceType("", "v1", "Pod", "pods", verbs=("list", "watch"))
    part._pods = {None: part._informer(pod_type, None)}
    part._types[GroupKind("kubeflow.org", "PyTorchJob")] = _Type(
        jobs, definition(), {None: part._informer(jobs, None)}
    )
    part._types[GroupKind("", "Pod")] = _Type(
        pod_type, part.definitions.store.definition_for(pod_type.gvk), part._pods, shared=True
    )
    part._types[GroupKind("kubeflow.org", "PyTorchJob")].informers[None].informer.replace([job()])
    part._pods[None].informer.replace(pods())
    part.drain()  # the part's workers' evaluations (a scrape evaluates nothing)
    return part
