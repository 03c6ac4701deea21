"""The running example of docs/spec/gang-backends.md#running-example (train-7 with the definition of
docs/spec/format.md#full-example) and small builders for renderer tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.model import Karta, karta_from_dict
from karta.render import Rendering, options_for, render

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
UID = "6d1e0c7a-51f2-4c2e-9a55-0b3d00000007"
OWNER_REF = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "train-7", "uid": UID}
EVALUATOR = Evaluator(trusted=True)


def _load(relative: str) -> Any:
    return yaml.safe_load((EXAMPLES / relative).read_text())


def definition_dict() -> dict[str, Any]:
    """docs/spec/format.md#full-example as a dict (examples/definitions/kubeflow-org-pytorchjob-v1.yaml)."""
    data: dict[str, Any] = _load("definitions/kubeflow-org-pytorchjob-v1.yaml")
    return data


def definition(**gang: Any) -> Karta:
    """The 2.5 definition; keyword arguments replace its ``gangScheduling``."""
    data = definition_dict()
    if gang:
        data["spec"]["optimizationInstructions"]["gangScheduling"] = gang
    return karta_from_dict(data)


def train_7() -> dict[str, Any]:
    """The workload of 1.6 (the example file plus the Kueue queue label 1.6 shows)."""
    obj: dict[str, Any] = _load("workloads/pytorchjob-train-7.yaml")
    obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "team-a"
    return obj


def train_7_pods() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / "pods/pytorchjob-train-7-pods.yaml").read_text()) if d]


def run(
    backend: str,
    karta: Karta | None = None,
    obj: dict[str, Any] | None = None,
    *,
    pods: list[dict[str, Any]] | None = None,
    **options: Any,
) -> Rendering:
    factory = ComponentFactory(
        karta if karta is not None else definition(),
        copy.deepcopy(obj) if obj else train_7(),
        evaluator=EVALUATOR,
    )
    return render(backend, factory, pods=pods or [], options=options_for(backend, options))


def managed_metadata(name: str, **extra: Any) -> dict[str, Any]:
    """The metadata of 1.5 for a train-7 group object rendered with the 2.5 definition."""
    return {
        "name": name,
        "namespace": "ml-team",
        "labels": {
            "app.kubernetes.io/managed-by": "karta",
            "run.ai/karta-group": "kubeflow.org",
            "run.ai/karta-version": "v1",
            "run.ai/karta-kind": "PyTorchJob",
        },
        "annotations": {"run.ai/karta-name": "kubeflow-org-pytorchjob-v1"},
        "ownerReferences": [OWNER_REF],
        **extra,
    }


def pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml-team", "labels": labels or {}},
        "spec": {"containers": [{"name": "c"}], **spec},
    }


def patch_of(result: Rendering, pod_name: str) -> dict[str, Any]:
    for item in result.pod_patches:
        if item.pod == pod_name:
            return item.patch
    raise AssertionError(f"no patch for {pod_name}")
