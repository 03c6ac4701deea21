"""Every backend on every corpus manifest whose catalog definition has gang instructions (renders, or
fails with a clear GangError), the catalog JobSet's one gang before any pod, alpha-format gangs with
pods (a JobSet definition per replicated job, the catalog Sandbox per owner UID, conformance case
C9), and determinism."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import catalog_by_gvk
from karta.errors import GangError
from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.model import Karta, load_karta
from karta.references import resolve
from karta.render import BACKENDS, Rendering, options_for, render

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "catalog"))
from catalog_view import CORPUS, definition_for, workload_documents

EVALUATOR = Evaluator(trusted=True)
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


def _gang_documents() -> list[tuple[str, dict[str, Any]]]:
    if not CORPUS.is_dir():
        return []
    out = []
    for path, index, doc in workload_documents():
        karta = definition_for(doc)
        if karta is not None and karta.gang is not None:
            out.append((f"{path.parent.name}/{path.name}#{index}", doc))
    return out


GANG_DOCUMENTS = _gang_documents()
# Known, clear refusals: Kueue PodSet names come from instance ids, and Dynamo's are upper case.
EXPECTED_ERRORS = {
    ("kueue", "dynamo"): "is not a DNS-1123 label",
}


def _render(
    backend: str,
    doc: dict[str, Any],
    pods: list[dict[str, Any]] | None = None,
    *,
    karta: Karta | None = None,
    **options: Any,
) -> Rendering:
    """Rendered through ``karta``, by default the catalog definition of ``doc``'s type."""
    if karta is None:
        group, _, version = str(doc["apiVersion"]).rpartition("/")
        karta = catalog_by_gvk(group, version, str(doc["kind"]))
    assert karta is not None
    # a definition with references (extension E3, the TrainJob) read alone: bound to null
    evaluator = resolve(karta, doc, EVALUATOR, ()).evaluator(EVALUATOR)
    factory = ComponentFactory(karta, copy.deepcopy(doc), evaluator=evaluator)
    return render(backend, factory, pods=pods or [], options=options_for(backend, options))


@needs_corpus
def test_the_corpus_has_gang_workloads() -> None:
    assert len(GANG_DOCUMENTS) >= 50


@needs_corpus
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_every_backend_on_every_gang_manifest(backend: str) -> None:
    rendered = 0
    for label, doc in GANG_DOCUMENTS:
        metadata = doc.get("metadata")
        with_uid = copy.deepcopy(doc)
        if isinstance(metadata, dict):
            with_uid["metadata"]["uid"] = "0f0e0d0c-0000-4000-8000-000000000001"
        try:
            result = _render(backend, with_uid)
        except GangError as exc:
            message = str(exc)
            expected = EXPECTED_ERRORS.get((backend, label.split("/")[0]))
            if expected is not None and expected in message:
                continue
            if not isinstance(metadata, dict) or not metadata.get("name"):
                assert "has no metadata.name" in message
                continue
            raise AssertionError(f"{backend} on {label}: {message}") from None
        rendered += 1
        for obj in result.objects:
            assert obj["metadata"]["name"]
            assert obj["metadata"]["ownerReferences"][0]["uid"] == "0f0e0d0c-0000-4000-8000-000000000001"
            assert len(obj["metadata"]["name"]) <= 253
        if backend != "kai":  # KAI's preview adds nothing of ours
            assert all(
                o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "karta" for o in result.objects
            )
    assert rendered >= 40


@needs_corpus
def test_without_uid_kai_refuses_and_the_others_warn() -> None:
    label, doc = next((label, d) for label, d in GANG_DOCUMENTS if label.startswith("kubeflow-training-v1/"))
    assert "uid" not in doc["metadata"], label
    with pytest.raises(GangError, match="KAI names its PodGroups"):
        _render("kai", doc)
    result = _render("volcano", doc)
    assert "ownerReferences" not in result.objects[0]["metadata"]
    assert any("no metadata.uid" in w for w in result.warnings)


def _jobset_pod(name: str, job: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"jobset.sigs.k8s.io/replicatedjob-name": job}},
        "spec": {"containers": [{"name": "sleep"}]},
    }


def _jobset() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((CORPUS / "workloads/jobset/paralleljobs.yaml").read_text())
    doc["metadata"].update({"namespace": "ns", "uid": "js-uid"})
    return doc


# One gang per replicated job (alpha ``podGroups``), as the catalog's JobSet had it before it declared
# one gang for the whole JobSet: the alpha rendering path on a real manifest.
_ALPHA_JOBSET = load_karta(
    yaml.safe_load((Path(__file__).parents[2] / "definitions" / "jobset-per-replicated-job.yaml").read_text())
).karta


@needs_corpus
def test_catalog_jobset_is_one_gang_before_any_pod() -> None:
    """Every replicated job in one gang (workers 1 x 4 + driver 1 x 1), rendered without pods."""
    for backend, name in (("kai", "pg-js-uid-jobset"), ("volcano", "paralleljobs-jobset")):
        (group,) = _render(backend, _jobset()).objects
        assert (group["metadata"]["name"], group["spec"]["minMember"]) == (name, 5)
    (group,) = _render("coscheduling", _jobset()).objects
    assert group["spec"]["minMember"] == 5
    workload, group = _render("workload-api", _jobset()).objects
    assert workload["spec"]["podGroupTemplates"] == [
        {"name": "jobset", "schedulingPolicy": {"gang": {"minCount": 5}}}
    ]
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 5}}
    (kueue,) = _render("kueue", _jobset()).objects
    assert [(p["name"], p["count"]) for p in kueue["spec"]["podSets"]] == [
        ("replicatedjob-workers", 4),
        ("replicatedjob-driver", 1),
    ]
    pods = [_jobset_pod(f"workers-{i}", "workers") for i in range(4)] + [_jobset_pod("driver-0", "driver")]
    kai = _render("kai", _jobset(), pods)
    assert {p.pod: p.patch["metadata"]["annotations"]["pod-group-name"] for p in kai.pod_patches} == {
        pod["metadata"]["name"]: "pg-js-uid-jobset" for pod in pods
    }


@needs_corpus
def test_jobset_alpha_gangs_per_replicated_job() -> None:
    assert _ALPHA_JOBSET is not None
    pods = [_jobset_pod(f"workers-{i}", "workers") for i in range(4)] + [_jobset_pod("driver-0", "driver")]
    kai = _render("kai", _jobset(), pods, karta=_ALPHA_JOBSET)  # gangs in key order
    assert [(o["metadata"]["name"], o["spec"]["minMember"]) for o in kai.objects] == [
        ("pg-js-uid-driver", 1),
        ("pg-js-uid-workers", 4),
    ]
    assert {p.pod: p.patch["metadata"]["annotations"]["pod-group-name"] for p in kai.pod_patches}[
        "driver-0"
    ] == ("pg-js-uid-driver")
    api = _render("workload-api", _jobset(), pods, karta=_ALPHA_JOBSET)
    workload, *groups = api.objects
    # the template carries the first gang's minimum (3.5 step 5); gangs are ordered by key
    assert workload["spec"]["podGroupTemplates"] == [
        {"name": "replicatedjob", "schedulingPolicy": {"gang": {"minCount": 1}}}
    ]
    assert [(g["metadata"]["name"], g["spec"]["schedulingPolicy"]["gang"]["minCount"]) for g in groups] == [
        ("paralleljobs-replicatedjob-driver", 1),
        ("paralleljobs-replicatedjob-workers", 4),
    ]
    legacy = _render("workload-api", _jobset(), pods, karta=_ALPHA_JOBSET, k8s_version="1.35")
    refs = {p.pod: p.patch["spec"]["workloadRef"] for p in legacy.pod_patches}
    assert refs["driver-0"] == {
        "name": "paralleljobs",
        "podGroup": "replicatedjob",
        "podGroupReplicaKey": "driver",
    }
    volcano = _render("volcano", _jobset(), pods, karta=_ALPHA_JOBSET)
    assert [(o["metadata"]["name"], o["spec"]["minMember"]) for o in volcano.objects] == [
        ("paralleljobs-replicatedjob-driver", 1),
        ("paralleljobs-replicatedjob-workers", 4),
    ]
    kueue = _render("kueue", _jobset(), pods, karta=_ALPHA_JOBSET)
    assert [(p["name"], p["count"]) for p in kueue.objects[0]["spec"]["podSets"]] == [
        ("replicatedjob-workers", 4),
        ("replicatedjob-driver", 1),
    ]


@needs_corpus
def test_alpha_gangs_need_pods_for_group_objects() -> None:
    for backend in ("kai", "volcano", "coscheduling"):
        assert _render(backend, _jobset(), karta=_ALPHA_JOBSET).objects == ()
    workload, *groups = _render("workload-api", _jobset(), karta=_ALPHA_JOBSET).objects
    assert groups == []
    assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 4}}


def test_sandbox_gang_keyed_by_owner_uid() -> None:
    sandbox = {
        "apiVersion": "agents.x-k8s.io/v1beta1",
        "kind": "Sandbox",
        "metadata": {"name": "sb", "namespace": "ns", "uid": "sb-uid"},
        "spec": {"podTemplate": {"spec": {"containers": [{"name": "agent", "image": "a"}]}}},
    }
    owner = {"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "name": "sb", "uid": "sb-uid"}
    pods = [
        {
            "metadata": {
                "name": "a",
                "labels": {"agents.x-k8s.io/sandbox-name-hash": "h1"},
                "ownerReferences": [{**owner, "controller": True}],
            }
        },
        {"metadata": {"name": "b", "labels": {"other": "x"}, "ownerReferences": [owner]}},
    ]
    kai = _render("kai", sandbox, pods)
    (group,) = kai.objects
    assert group["metadata"]["name"] == "pg-sb-uid-sb-uid"
    assert group["spec"]["minMember"] == 1
    assert [p.pod for p in kai.pod_patches] == ["a", "b"]
    (coscheduling,) = _render("coscheduling", sandbox, pods).objects
    assert coscheduling["metadata"]["name"] == "sb-sandbox-sb-uid"


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_rendering_is_deterministic(backend: str) -> None:
    from render_fixtures import run, train_7_pods

    def dump() -> str:
        result = run(backend, pods=train_7_pods(), min_resources=True)
        return yaml.safe_dump_all(
            [*result.objects, *(p.to_dict() for p in result.pod_patches)], sort_keys=False
        )

    first = dump()
    assert first == dump()
    assert first
