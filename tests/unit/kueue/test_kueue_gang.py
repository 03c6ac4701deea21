"""Kueue with a gang backend (docs/kueue.md, "Kueue with a gang backend"): what the Kueue part
writes never changes what the gang part renders, and the two mutating webhooks never meet.

- The gang objects, pod bindings and owner patch of every backend karta-controller runs are the
  same for a workload as created, as the Kueue part's webhook suspended it, and as started with an
  admission (the flavor's node labels and tolerations written into its templates, the templates to
  restore saved in an annotation): the gang part rewrites nothing on admission or eviction, and a
  suspended workload's gang keeps its own minimum. This found that KAI (mode B) copied the Kueue
  part's saved templates (``run.ai/karta-kueue-restore``) onto its PodGroup with the workload's
  other annotations, so every admission and eviction rewrote the PodGroup.
- The registered MutatingWebhookConfiguration with ``--kueue --backend workload-api``: the pod
  binding webhook sees Pods only, the Kueue suspend webhook the workload kinds only, neither is
  re-invoked: no object meets both, so their order on CREATE cannot matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from karta.controller.options import Options
from karta.controller.parts.kueue.webhook import WEBHOOK_NAME as KUEUE_WEBHOOK
from karta.controller.parts.kueue.webhook import webhook_rules
from karta.controller.parts.pod_binding.admission import WEBHOOK_NAME as POD_WEBHOOK
from karta.controller.registration import webhook_configurations
from karta.extract import ComponentFactory
from karta.kueue.activity import pods_ready_condition
from karta.kueue.admission import admission_infos
from karta.kueue.names import RESTORE_ANNOTATION
from karta.kueue.patches import start, stop, suspend
from karta.kueue.workload import build_workload
from karta.model import Karta
from karta.render import render
from karta.render.backends import CONTROLLER_BACKENDS, KaiOptions, controller_options
from karta.render.common import Rendering
from karta.render.kai import KUEUE_STATE_PREFIX

from .test_kueue_adapter import CASES, EVALUATOR, FLAVORS, admitted, catalog, corpus


@dataclass(frozen=True)
class Served:
    group: str
    version: str
    kind: str


# what a 1.37 API server serves of the Workload API (the test cluster's)
SERVED = tuple(Served("scheduling.k8s.io", v, "Workload") for v in ("v1beta1", "v1alpha3"))
GANG_BACKENDS = [b for b in CONTROLLER_BACKENDS if b != "none"]


def _rendered(backend: str, karta: Karta, obj: dict[str, Any]) -> Rendering:
    options = controller_options(backend, SERVED)
    return render(backend, ComponentFactory(karta, obj, evaluator=EVALUATOR), options=options)


@pytest.mark.parametrize("backend", GANG_BACKENDS)
@pytest.mark.parametrize(("slug", "manifest"), CASES)
def test_suspend_admission_and_eviction_change_nothing_the_gang_part_renders(
    backend: str, slug: str, manifest: str
) -> None:
    karta, created = catalog(slug), corpus(manifest)
    held = suspend(ComponentFactory(karta, created, evaluator=EVALUATOR))
    factory = ComponentFactory(karta, held, evaluator=EVALUATOR)
    workload = admitted(build_workload(factory).obj, {"nvidia.com/gpu": "a100", "cpu": "a100"})
    running = start(factory, workload, admission_infos(workload, FLAVORS))
    assert RESTORE_ANNOTATION in running["metadata"]["annotations"]  # the Kueue part's saved state
    stopped = stop(ComponentFactory(karta, running, evaluator=EVALUATOR), workload)

    expected = _rendered(backend, karta, created)
    assert expected.objects, f"{slug}: no gang objects on {backend}"
    for moment, obj in (("suspended", held), ("admitted", running), ("evicted", stopped)):
        assert _rendered(backend, karta, obj) == expected, f"{slug} on {backend}: {moment} differs"


def test_kai_mode_b_leaves_the_kueue_state_off_its_pod_group_and_keeps_the_rest() -> None:
    assert RESTORE_ANNOTATION.startswith(KUEUE_STATE_PREFIX)
    karta = catalog("kubeflow-org-pytorchjob-v1")
    obj = corpus("kubeflow-training-v1/pytorchjob-simple.yaml")
    obj["metadata"]["annotations"] = {RESTORE_ANNOTATION: "{}", "team.example.com/owner": "ml"}
    factory = ComponentFactory(karta, obj, evaluator=EVALUATOR)
    (managed,) = render("kai", factory, options=KaiOptions(kai_managed=True)).objects
    assert RESTORE_ANNOTATION not in managed["metadata"]["annotations"]
    assert managed["metadata"]["annotations"]["team.example.com/owner"] == "ml"
    # the preview of KAI's own PodGroup (mode A) stays exact: KAI copies every annotation
    (preview,) = render("kai", factory).objects
    assert preview["metadata"]["annotations"][RESTORE_ANNOTATION] == "{}"


def test_the_pod_webhook_and_the_kueue_webhook_never_see_the_same_object() -> None:
    kartas = [catalog(slug) for slug, _ in CASES]
    rules = webhook_rules(kartas)
    options = Options(kueue=True, backend="workload-api")
    mutating, _ = webhook_configurations(options, namespace="karta-system", kueue_rules=rules)
    entries = {w["name"]: w for w in mutating["webhooks"]}
    pod, kueue = entries[POD_WEBHOOK], entries[KUEUE_WEBHOOK]
    resources = [{(g, r) for rule in e["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
                 for e in (pod, kueue)]  # fmt: skip
    assert resources[0] == {("", "pods")}
    assert resources[1] == {
        ("kubeflow.org", "pytorchjobs"),
        ("jobset.x-k8s.io", "jobsets"),
        ("ray.io", "rayjobs"),
    }
    assert pod["reinvocationPolicy"] == kueue["reinvocationPolicy"] == "Never"
    assert all(rule["operations"] == ["CREATE"] for e in (pod, kueue) for rule in e["rules"])


def _pod(phase: str, ready: bool = False) -> dict[str, Any]:
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {"metadata": {"name": "p"}, "status": {"phase": phase, "conditions": conditions}}


def _with(condition: tuple[str, str] | None) -> dict[str, Any]:
    workload: dict[str, Any] = {"spec": {"podSets": [{"name": "worker", "count": 2}]}, "status": {}}
    if condition is not None:
        status, reason = condition
        workload["status"]["conditions"] = [{"type": "PodsReady", "status": status, "reason": reason}]
    return workload


@pytest.mark.parametrize(
    ("current", "pods", "expected"),
    [
        (None, [], ("False", "WaitForStart")),  # admitted, no pod yet (a gang that does not fit)
        (None, [_pod("Pending"), _pod("Pending")], ("False", "WaitForStart")),
        (("False", "WaitForStart"), [_pod("Running", True), _pod("Running")], ("False", "WaitForStart")),
        (("False", "WaitForStart"), [_pod("Running", True), _pod("Succeeded")], ("True", "Started")),
        (("True", "Started"), [_pod("Running", True), _pod("Failed")], ("False", "WaitForRecovery")),
        (("False", "WaitForRecovery"), [_pod("Running", True)], ("False", "WaitForRecovery")),
        (("False", "WaitForRecovery"), [_pod("Running", True), _pod("Running", True)], ("True", "Recovered")),
        (("True", "Recovered"), [_pod("Running", True), _pod("Running", True)], ("True", "Recovered")),
    ],
)
def test_pods_ready_is_the_condition_kueues_job_reconciler_writes(
    current: tuple[str, str] | None, pods: list[dict[str, Any]], expected: tuple[str, str]
) -> None:
    """Kueue v0.17.0 generatePodsReadyCondition: what its waitForPodsReady times out on, so that an
    admitted gang that does not fit is evicted and requeued rather than holding its quota."""
    condition = pods_ready_condition(pods, _with(current))
    assert (condition["type"], condition["status"], condition["reason"]) == ("PodsReady", *expected)
