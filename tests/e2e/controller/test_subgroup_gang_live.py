"""Issue 21's regression test on the real API server: a gang with sub-groups (the example
PyTorchJob definition: sub-groups master and worker, so the gang-level minMember is 0) whose 12
pods are all Pending, none bound to a Node, is "0/12 bound, min 12 not met" everywhere the gang
state shows: ``kli get -o wide`` and ``-o json``, ``kli describe``, the web view of
``karta-controller --ui`` in a real browser (the list row and the workload page; it said "min met"
before) and the controller's platform metrics on ``/metrics`` (``karta_gangs{minimum="not_met"}``,
``karta_gang_pods_bound``, ``karta_gang_pods_minimum``).

The control plane runs no scheduler (``cluster``), so the pods stay unbound as the test wrote
them; every check waits for its condition (the controller's caches fill asynchronously).
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from karta.cli.main import main
from karta.controller.main import Controller
from karta.kube import KubeClient
from karta.ui import UiServer
from tests.subgroup_gang import EXAMPLES, NOT_MET, job, pods

from ..kubehttp import KubeHTTP
from ..ui.browser import errors, filter_namespace, headless_chromium, load, page_rows
from .gangs_support import (
    client_for,
    eventually,
    install_crds,
    new_namespace,
    running_controller,
    wait_served,
)

pytestmark = pytest.mark.slow

STATE = f"{NOT_MET} (master 0/1, worker 0/11)"
SERVED = [("kubeflow.org", "v1", "PyTorchJob"), ("scheduling.k8s.io", "v1beta1", "Workload")]


@dataclass
class Scene:
    kube: KubeHTTP
    client: KubeClient
    ns: str
    definitions: Path  # the example PyTorchJob definition, for kli and the controller
    uid: str


@pytest.fixture(scope="module")
def scene(cluster: KubeHTTP, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    install_crds(cluster, corpus, ("kubeflow.org_pytorchjobs.yaml",))
    client = client_for(cluster)
    wait_served(client, SERVED)
    ns = new_namespace(cluster)
    definitions = tmp_path_factory.mktemp("subgroup-definitions")
    shutil.copy(EXAMPLES / "definitions" / "kubeflow-org-pytorchjob-v1.yaml", definitions)
    try:
        created = client.create(_creatable(job(), ns), namespace=ns)
        uid = created["metadata"]["uid"]
        for pod in pods():
            pod = _creatable(pod, ns)
            pod["metadata"]["ownerReferences"][0]["uid"] = uid
            for container in pod["spec"]["containers"]:
                container["image"] = "busybox"
            client.create(pod, namespace=ns)
        yield Scene(cluster, client, ns, definitions, uid)
    finally:
        cluster.delete(f"/api/v1/namespaces/{ns}")
        client.close()


def _creatable(obj: dict[str, Any], ns: str) -> dict[str, Any]:
    """``obj`` without what the API server sets (uid, resourceVersion, creationTimestamp, status)."""
    server_set = ("uid", "resourceVersion", "creationTimestamp")
    meta = {k: v for k, v in obj["metadata"].items() if k not in server_set}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": {**meta, "namespace": ns}}


@pytest.fixture(scope="module")
def controller(scene: Scene) -> Iterator[Controller]:
    with running_controller(
        scene.kube,
        backend="workload-api",
        namespace=scene.ns,
        definitions_dir=scene.definitions,
        metrics_bind_address="127.0.0.1:0",
        ui=True,
        ui_bind_address="127.0.0.1:0",
    ) as running:
        yield running


def _kli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, scene: Scene, *args: str
) -> str:
    """``kli ARGS --kubeconfig ... -n NS`` in-process with the example definition as the user's."""
    monkeypatch.setenv("KARTA_DEFINITIONS", str(scene.definitions))
    for name in ("KARTA_OUTPUT", "KARTA_CONFIG", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(name, raising=False)
    capsys.readouterr()
    code = main([*args, "--kubeconfig", str(scene.kube.kubeconfig), "-n", scene.ns])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def test_kli_get_wide_and_json_say_not_met(
    scene: Scene, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    wide = _kli(capsys, monkeypatch, scene, "get", "pytorchjobs", "-o", "wide")
    header, row = wide.splitlines()
    assert header.split()[-2:] == ["GANG", "ORIGIN"]
    assert row.startswith("train-12 ") and row.endswith(f"   {STATE}   user"), row
    (item,) = json.loads(_kli(capsys, monkeypatch, scene, "get", "pytorchjobs", "-o", "json"))["items"]
    assert item["gang"] == {
        "gangs": 1,
        "minMember": 12,
        "scheduled": 0,
        "minimumMet": False,
        "pods": 12,
        "subGroups": [
            {"name": "master", "minMember": 1, "scheduled": 0},
            {"name": "worker", "minMember": 11, "scheduled": 0},
        ],
        "text": STATE,
    }
    plain = _kli(capsys, monkeypatch, scene, "get", "pytorchjobs")
    assert "GANG" not in plain and "bound" not in plain  # -o table reads no pods


def test_kli_describe_says_not_met(
    scene: Scene, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _kli(capsys, monkeypatch, scene, "describe", "pytorchjob", "train-12").splitlines()
    assert f"Gang: {STATE}" in lines
    assert lines[lines.index(f"Gang: {STATE}") - 1].startswith("Phase: ")
    data = json.loads(_kli(capsys, monkeypatch, scene, "describe", "pytorchjob", "train-12", "-o", "json"))
    assert data["gang"]["text"] == STATE and data["gang"]["minimumMet"] is False


def test_the_platform_metrics_say_not_met(scene: Scene, controller: Controller) -> None:
    url = f"http://127.0.0.1:{controller.manager.bound_port('metrics')}/metrics"
    where = f'group="kubeflow.org",kind="PyTorchJob",namespace="{scene.ns}"'

    def gangs(minimum: str) -> str:
        labels = f'group="kubeflow.org",kind="PyTorchJob",minimum="{minimum}",namespace="{scene.ns}"'
        return f"karta_gangs{{{labels}}}"

    expected = [
        f"{gangs('not_met')} 1.0",
        f"{gangs('met')} 0.0",
        f"karta_gang_pods_bound{{{where}}} 0.0",
        f"karta_gang_pods_minimum{{{where}}} 12.0",
    ]
    last: list[str] = []

    def scraped() -> bool:
        with urllib.request.urlopen(url, timeout=30) as answer:
            last[:] = [line for line in answer.read().decode().splitlines() if scene.ns in line]
        return all(line in last for line in expected)

    eventually(scraped, what=f"/metrics to say the gang is not met (last: {last})")


def test_the_web_view_says_not_met_in_a_browser(scene: Scene, controller: Controller) -> None:
    server = controller.parts["ui-server"]
    assert isinstance(server, UiServer)
    with headless_chromium() as browser:
        load(browser, server.url)
        filter_namespace(browser, scene.ns)
        row = eventually(
            lambda: page_rows(browser).get("PyTorchJob/train-12"), what="the PyTorchJob row in the list"
        )
        # the cell's short text counts bound against the minimum; its tooltip is kli's sentence
        assert row["gang"] == "0/12 bound · not met" and row["gangTitle"].startswith(STATE), row
        browser.find_element("link text", "train-12").click()
        detail = eventually(
            lambda: (lambda e: e if e.is_displayed() and "Gang" in e.text else None)(
                browser.find_element("id", "detail-view")
            ),
            what="the workload page",
        )
        assert STATE in detail.text and "min met" not in detail.text
        assert errors(browser) == []
