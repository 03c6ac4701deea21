"""Pod admission against a real API server for the backends whose scheduler does not run here
(Volcano, coscheduling, KAI in mode B): kube-controller-manager creates a Job's pods, the API server
calls the in-process controller's webhook, and the admitted pods carry the backend's binding
metadata and scheduler name while the group object (CRD of the corpus) exists. Then the webhook
unreachable under ``failurePolicy: Ignore``: the pods are admitted unbound, and the escaped-pod pass
reports them (a Warning event on the Job, ``karta_unbound_pods{reason="escaped"}``), once."""

from __future__ import annotations

from pathlib import Path

import pytest

from karta.gang import SCOPE_LABEL

from ..kubehttp import KubeHTTP, load_manifests
from .pods_support import (
    batch_job,
    events,
    namespace,
    ok,
    pods,
    registered_webhook,
    running_controller,
    unbound,
    wait,
    wait_webhook_active,
    webhook_url,
)

pytestmark = pytest.mark.slow

CRDS = {
    "volcano": "scheduling.volcano.sh_podgroups.yaml",
    "coscheduling": "scheduling.x-k8s.io_podgroups.yaml",
    "kai": "scheduling.run.ai_podgroups.yaml",
}
NODE_LABELS = {"karta-e2e-admission": "none"}  # no such Node: the pods are never bound here


def _expected(backend: str, uid: str) -> tuple[str, str, dict[str, str], dict[str, str], str]:
    """(group API path segment, group name, pod labels, pod annotations, scheduler name)."""
    if backend == "volcano":
        return (
            "scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups",
            "train-job",
            {},
            {"scheduling.k8s.io/group-name": "train-job"},  # no task: the gang has no sub-groups
            "volcano",
        )
    if backend == "coscheduling":
        return (
            "scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups",
            "train-job",
            {"scheduling.x-k8s.io/pod-group": "train-job"},
            {},
            "my-coscheduler",
        )
    name = f"pg-{uid}-job"
    return (
        "scheduling.run.ai/v2alpha2/namespaces/{ns}/podgroups",
        name,
        {},
        {"pod-group-name": name, "kai.scheduler/skip-podgrouper": "true"},
        "kai-scheduler",
    )


@pytest.mark.parametrize("backend", ["volcano", "coscheduling", "kai"])
def test_backend_binding_metadata(
    backend: str, controllers_cluster: KubeHTTP, corpus: Path, tmp_path: Path
) -> None:
    kube = controllers_cluster
    (crd,) = load_manifests(corpus / "crds" / CRDS[backend])
    kube.ensure_crd(crd)
    ns = namespace(kube, f"bind-{backend}")
    extra = {"scheduler_name": "my-coscheduler"} if backend == "coscheduling" else {}
    try:
        with running_controller(kube, tmp_path, backend=backend, namespaces=(ns,), **extra) as (
            controller,
            ca,
        ):
            group, version = crd["spec"]["group"], crd["spec"]["versions"][0]["name"]
            kind = crd["spec"]["names"]["kind"]
            wait(
                f"{kind} in discovery",
                lambda: (
                    controller.client.discovery.invalidate()
                    or controller.client.discovery.find(group, version, kind)
                ),
            )
            with registered_webhook(kube, url=webhook_url(controller), ca=ca, namespaces=(ns,)):
                wait_webhook_active(kube, controller, ns)
                job = ok(
                    kube.post(
                        f"/apis/batch/v1/namespaces/{ns}/jobs", batch_job("train", NODE_LABELS, parallelism=2)
                    )
                )
                path, name, labels, annotations, scheduler = _expected(backend, job["metadata"]["uid"])
                items = wait("2 pods", lambda: (lambda got: got if len(got) == 2 else None)(pods(kube, ns)))
                for pod in items:
                    meta = pod["metadata"]
                    assert labels.items() <= meta.get("labels", {}).items(), meta
                    assert annotations.items() <= meta.get("annotations", {}).items(), meta
                    assert pod["spec"]["schedulerName"] == scheduler
                    assert "schedulingGroup" not in pod["spec"]
                obj = ok(kube.get(f"/apis/{path.format(ns=ns)}/{name}"), 200)
                assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "karta"
                assert obj["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
                assert obj["spec"]["minMember"] == 2
                assert unbound(controller, "api") == 0
    finally:
        kube.delete(f"/api/v1/namespaces/{ns}")


def test_unreachable_webhook_with_ignore_admits_unbound_and_the_escaped_pass_reports(
    controllers_cluster: KubeHTTP, tmp_path: Path
) -> None:
    kube = controllers_cluster
    ns = namespace(kube, "escaped")
    try:
        with running_controller(kube, tmp_path, backend="workload-api", namespaces=(ns,)) as (controller, ca):
            # Registered at a port nothing listens on: the API server cannot call it.
            closed = webhook_url(controller).replace(f":{controller.webhooks.bound_port}/", ":9/")  # type: ignore[union-attr]
            with registered_webhook(kube, url=closed, ca=ca, namespaces=(ns,), failure_policy="Ignore"):
                job = ok(
                    kube.post(
                        f"/apis/batch/v1/namespaces/{ns}/jobs", batch_job("train", NODE_LABELS, parallelism=2)
                    )
                )
                items = wait("2 pods", lambda: (lambda got: got if len(got) == 2 else None)(pods(kube, ns)))
                assert all("schedulingGroup" not in p["spec"] for p in items)  # admitted, unbound

                escaped = controller.parts["escaped-pods"]
                found = escaped.run_once()  # type: ignore[attr-defined]
                assert sorted(p.name for p in found) == sorted(p["metadata"]["name"] for p in items)
                assert all(p.workload_kind == "Job" and p.workload_name == "train" for p in found)
                assert all(p.missing == ("spec.schedulingGroup",) for p in found)
                assert unbound(controller, "escaped") == 2
                reported = wait("the Warning events", lambda: events(kube, ns, "PodEscapedBinding"))
                assert {e["involvedObject"]["uid"] for e in reported} == {job["metadata"]["uid"]}
                assert all(e["type"] == "Warning" for e in reported)
                assert escaped.run_once() == []  # type: ignore[attr-defined]
                assert unbound(controller, "escaped") == 2
    finally:
        kube.delete(f"/api/v1/namespaces/{ns}")


BROKEN_JOB = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: broken-job}
spec:
  structureDefinition:
    rootComponent:
      name: job
      kind: {group: batch, version: v1, kind: Job}
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition: {replicasPath: 'error("this definition has no scale for Jobs")'}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["batch.kubernetes.io/job-name"]'}
      statusDefinition:  # valid (an invalid definition is never used): it fails only when evaluated
        conditionsDefinition: {path: .status.conditions}
        statusMappings: {completed: [{byConditions: [{type: Complete, status: "True"}]}]}
  optimizationInstructions:
    gangScheduling:
      podGroup: {name: job}
"""


def test_a_failing_definition_refuses_the_pods_of_the_scope_with_a_clear_message(
    controllers_cluster: KubeHTTP, tmp_path: Path
) -> None:
    """A user definition (it wins over the catalog's) whose expression fails. Before issue 22 the
    pods were created unbound; inside the gang scope they are now refused (never a partial gang):
    the Job's FailedCreate event carries the webhook's message, the failure is counted and
    reported on the Job. The workload opting out (label ``disabled``) lets them be created,
    unbound and untouched."""
    kube = controllers_cluster
    (tmp_path / "definitions").mkdir()
    (tmp_path / "definitions" / "broken-job.yaml").write_text(BROKEN_JOB)
    ns = namespace(kube, "unbound")
    try:
        with (
            running_controller(kube, tmp_path, backend="workload-api", namespaces=(ns,)) as (controller, ca),
            registered_webhook(kube, url=webhook_url(controller), ca=ca, namespaces=(ns,)),
        ):
            wait_webhook_active(kube, controller, ns)
            jobs = f"/apis/batch/v1/namespaces/{ns}/jobs"
            job = ok(kube.post(jobs, batch_job("train", NODE_LABELS, parallelism=2)))
            failed = wait("the Job's FailedCreate event", lambda: events(kube, ns, "FailedCreate"))
            message = failed[0]["message"]
            assert "refused: its gang binding cannot be made now (extraction)" in message, message
            assert "no scale for Jobs" in message, message
            assert pods(kube, ns) == []
            assert unbound(controller, "extraction") >= 1
            reported = wait("the Warning event", lambda: events(kube, ns, "PodNotBound"))
            assert {e["involvedObject"]["uid"] for e in reported} == {job["metadata"]["uid"]}
            assert "no scale for Jobs" in reported[0]["message"]
            group = kube.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups/train-job")
            assert group.status == 404
            opt_out = {"metadata": {"labels": {SCOPE_LABEL: "disabled"}}}
            ok(
                kube.request(
                    "PATCH", f"{jobs}/train", body=opt_out, content_type="application/merge-patch+json"
                )
            )
            items = wait(
                "2 pods once the Job opts out",
                lambda: (lambda got: got if len(got) == 2 else None)(pods(kube, ns)),
                timeout=120,
            )
            assert all("schedulingGroup" not in p["spec"] for p in items)
    finally:
        kube.delete(f"/api/v1/namespaces/{ns}")
