"""Components the object does not have (issue 24 item 4): one rule (karta.report.rows.instance_absent)
for every text view (``kli inspect``'s text, ``kli describe``, ``kli get``'s components, the web
view's rows); ``kli inspect -o json`` keeps the full extraction result. The catalog's KServe roles
and Milvus modes give such components no instance (format 5.2)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta import references, report
from karta.definitions import DefinitionStore, StoredDefinition, evaluator_for
from karta.extract import Scale
from karta.jq import Evaluator
from karta.model import load_karta
from karta.report.rows import instance_absent
from karta.ui import workload_row

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "workloads"
STORE = DefinitionStore.offline(user_directory=None)

ISVC: dict[str, Any] = {
    "apiVersion": "serving.kserve.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "t", "namespace": "ns", "uid": "uid-t"},
    "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://m"}}},
}
TRANSFORMER = {"minReplicas": 2, "containers": [{"name": "kserve-container", "image": "img"}]}

# A virtual grouping component whose only child is a replica type the object does not use.
GROUPING_DEF = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: example-com-app-v1}
spec:
  structureDefinition:
    rootComponent:
      name: app
      kind: {group: example.com, version: v1, kind: App}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
    - name: main
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: app
      specDefinition: {podSpecPath: .spec.main}
      scaleDefinition: {replicasPath: .spec.replicas}
      podSelector: {componentTypeSelector: {keyPath: '.metadata.labels["role"]', value: main}}
    - name: helpers
      ownerRef: app
    - name: sidecar
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: helpers
      specDefinition: {podSpecPath: .spec.sidecar}
      scaleDefinition: {replicasPath: '.spec.sidecarReplicas // 0'}
      podSelector: {componentTypeSelector: {keyPath: '.metadata.labels["role"]', value: sidecar}}
"""
APP: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "App",
    "metadata": {"name": "a", "namespace": "ns"},
    "spec": {"replicas": 2, "main": {"containers": [{"name": "main", "image": "img"}]}},
}


def _isvc(*, transformer: bool) -> dict[str, Any]:
    obj = json.loads(json.dumps(ISVC))
    if transformer:
        obj["spec"]["transformer"] = TRANSFORMER
    return obj


def _pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "img"}]},
    }


def _write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _tree_lines(text: str) -> list[str]:
    """The component lines of a ``kli inspect`` text (between "Components:" and the gangs)."""
    lines = text.splitlines()
    start = lines.index("Components:") + 1
    return lines[start : lines.index("", start)]


def _milvus(name: str) -> str:
    return str(CORPUS / "milvus" / name)


# --- the library -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "scale", "spec", "absent"),
    [
        (0, (0, None, None), False, True),
        (0, (None, 0, None), False, True),
        (1, (0, None, None), False, False),  # a pod: present
        (0, (1, None, None), False, False),  # desired: present
        (0, None, False, False),  # no scale: 1 desired
        (0, (0, None, None), True, False),  # a pod specification: present
    ],
)
def test_instance_absent_rule(pods: int, scale: Any, spec: bool, absent: bool) -> None:
    value = Scale(*scale) if scale is not None else None
    assert instance_absent(pods=pods, scale=value, has_pod_spec=spec) is absent


def _bound_for(definition: StoredDefinition) -> Callable[[dict[str, Any]], Evaluator]:
    """The evaluator of an object of ``definition`` with its references bound: the KServe
    definition reads the serving runtimes (extension E3); none given, the lists are []."""

    def bound(obj: dict[str, Any]) -> Evaluator:
        base = evaluator_for(definition)
        return references.resolve(definition.karta, obj, base, []).evaluator(base)

    return bound


def test_absent_components_kserve_roles() -> None:
    definition = STORE.by_name("serving-kserve-io-inferenceservice-v1beta1")
    assert definition is not None
    bound = _bound_for(definition)
    bare_isvc, full_isvc = _isvc(transformer=False), _isvc(transformer=True)
    bare = report.inspect_report(definition.karta, bare_isvc, evaluator=bound(bare_isvc))
    assert report.absent_components(definition.karta, bare) == {"transformer", "explainer"}
    full = report.inspect_report(definition.karta, full_isvc, evaluator=bound(full_isvc))
    assert report.absent_components(definition.karta, full) == {"explainer"}


def test_absent_components_grouping_whose_children_are_absent() -> None:
    karta = load_karta(GROUPING_DEF).karta
    assert karta is not None
    view = report.inspect_report(karta, APP, evaluator=Evaluator())
    assert report.absent_components(karta, view) == {"helpers", "sidecar"}
    with_sidecar = json.loads(json.dumps(APP))
    with_sidecar["spec"]["sidecar"] = {"containers": [{"name": "s", "image": "img"}]}
    view = report.inspect_report(karta, with_sidecar, evaluator=Evaluator())
    assert report.absent_components(karta, view) == set()


# --- kli inspect ---------------------------------------------------------------------------------------


def test_inspect_text_leaves_out_absent_roles_json_keeps_them(kli, tmp_path: Path) -> None:
    obj = _write(tmp_path, "isvc.yaml", _isvc(transformer=False))
    text = kli("inspect", "-f", obj)
    assert text.code == 0, text.err
    assert _tree_lines(text.out) == [
        "inferenceservice  InferenceService.v1beta1.serving.kserve.io",
        # the model fragment holds only KServe's fields (modelFormat, storageUri): trimmed to a
        # Container [compat] it is empty, and an empty fragment key is omitted (format 6.2 rule 5)
        "`-- predictor  Deployment.v1.apps   replicas: 1   min: 1   containers: <none>",
    ]
    as_json = json.loads(kli("inspect", "-f", obj, "-o", "json").out)
    components = {c["name"]: c["instances"] for c in as_json["components"]}
    assert list(components) == ["inferenceservice", "predictor", "transformer", "explainer"]
    assert components["transformer"] == [] and components["explainer"] == []


def test_inspect_text_shows_a_role_the_object_has_on_one_line(kli, tmp_path: Path) -> None:
    obj = _write(tmp_path, "isvc.yaml", _isvc(transformer=True))
    pods = _write(
        tmp_path,
        "pods.yaml",
        _pod("t-transformer-1", {"component": "transformer"}),
        _pod("t-predictor-1", {"component": "predictor"}),
    )
    r = kli("inspect", "-f", obj, "--pods", pods)
    assert r.code == 0, r.err
    assert _tree_lines(r.out)[1:] == [
        "|-- predictor  Deployment.v1.apps   replicas: 1   min: 1   containers: <none>",
        "`-- transformer  Deployment.v1.apps   replicas: 2   min: 2   containers: kserve-container",
    ]
    assert "  t-transformer-1   transformer   transformer   -         inferenceservice" in r.out


def test_inspect_text_milvus_standalone_lists_only_standalone(kli) -> None:
    r = kli("inspect", "-f", _milvus("milvus-standalone-demo.yaml"))
    assert r.code == 0, r.err
    assert [line.split()[1] for line in _tree_lines(r.out)[1:]] == ["standalone"]


def test_inspect_text_grouping_with_absent_children(kli, tmp_path: Path) -> None:
    definition = tmp_path / "def.yaml"
    definition.write_text(GROUPING_DEF)
    r = kli("inspect", "-f", _write(tmp_path, "app.yaml", APP), "--definition", str(definition))
    assert r.code == 0, r.err
    assert _tree_lines(r.out) == [
        "app  App.v1.example.com",
        "`-- main  Pod.v1   replicas: 2   containers: main",
    ]


# --- kli describe and kli get --------------------------------------------------------------------------


def _describe_names(kli, *args: str) -> list[str]:
    r = kli("describe", *args, "-o", "json")
    assert r.code == 0, r.err
    return [c["name"] for c in json.loads(r.out)["components"]]


def test_describe_kserve_without_and_with_transformer(kli, tmp_path: Path) -> None:
    assert _describe_names(kli, "-f", _write(tmp_path, "a.yaml", _isvc(transformer=False))) == ["predictor"]
    with_role = _write(tmp_path, "b.yaml", _isvc(transformer=True))
    assert _describe_names(kli, "-f", with_role) == ["predictor", "transformer"]
    r = kli("describe", "-f", with_role, "-o", "json")
    transformer = json.loads(r.out)["components"][1]
    assert transformer["replicas"]["desired"] == 2 and "children" not in transformer  # no instance row
    text = kli("describe", "-f", with_role).out
    assert "`-- transformer    replicas: 2" in text


def test_describe_milvus_modes(kli) -> None:
    assert _describe_names(kli, "-f", _milvus("milvus-standalone-demo.yaml")) == ["standalone"]
    assert _describe_names(kli, "-f", _milvus("milvus-cluster-demo.yaml")) == [
        "proxy",
        "mixcoord",
        "datanode",
        "querynode",
        "streamingnode",
    ]


def test_describe_grouping_with_absent_children(kli, tmp_path: Path) -> None:
    definition = tmp_path / "def.yaml"
    definition.write_text(GROUPING_DEF)
    app = _write(tmp_path, "app.yaml", APP)
    assert _describe_names(kli, "-f", app, "--definition", str(definition)) == ["main"]


def test_get_components_leave_out_absent_roles() -> None:
    """``kli get``'s COMPONENTS (and the web view's) come from :func:`karta.report.summarize`."""
    definition = STORE.by_name("serving-kserve-io-inferenceservice-v1beta1")
    assert definition is not None
    bound, gpus = _bound_for(definition), ["nvidia.com/gpu"]
    bare_isvc, full_isvc = _isvc(transformer=False), _isvc(transformer=True)
    bare = report.summarize(definition, bare_isvc, gpu_resources=gpus, evaluator=bound(bare_isvc))
    assert [c["name"] for c in bare.components] == ["predictor"]
    full = report.summarize(definition, full_isvc, gpu_resources=gpus, evaluator=bound(full_isvc))
    assert full.components == [{"name": "predictor", "replicas": 1}, {"name": "transformer", "replicas": 2}]


# --- the web view --------------------------------------------------------------------------------------


def test_web_view_row_components_leave_out_absent_modes() -> None:
    definition = STORE.by_name("milvus-io-milvus-v1beta1")
    assert definition is not None
    obj = yaml.safe_load(Path(_milvus("milvus-standalone-demo.yaml")).read_text())
    obj["metadata"].setdefault("namespace", "ns")
    row = workload_row(obj, definition, cluster="c", pods=[], gpu_resources=["nvidia.com/gpu"])
    assert [c["name"] for c in row["components"]] == ["standalone"]
