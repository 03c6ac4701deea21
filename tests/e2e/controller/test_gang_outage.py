"""Never a partial gang, even while karta-controller is down (issue 22 items 2 and 8), on the real
API server with kube-controller-manager and kube-scheduler 1.37 (GenericWorkload on; fake Nodes,
no kubelet: what is checked is binding, ``spec.nodeName``).

The controller runs in-process with the defaults a platform team gets: ``--gang-scope opt-in``,
the pod webhook registered fail-closed (``failurePolicy: Fail``) with the scope's
namespaceSelector (:func:`karta.gang.scope.namespace_selector`, narrowed to this test's
namespaces so that other tests' pods never reach it). One namespace is labelled
``karta.run.ai/gang-scheduling=enabled``, the other is not.

- the controller is stopped; a batch/v1 Job of 4 pods is created in the opted-in namespace:
  kube-controller-manager's pod creations are refused by the API server (the webhook is
  unreachable), so no pod exists and none is bound; the Job's ``FailedCreate`` event and the API
  server's answer to a pod created directly say why;
- meanwhile a Job in the namespace outside the scope schedules normally: its pods never reach the
  webhook;
- the controller starts again (same port, same certificate): the Job controller's retries go
  through, the pods are bound to their gang and, on Nodes with room for 2 of the 4, none is bound;
  one more Node: all 4 bind;
- the Job outside the scope is untouched: no Workload, no PodGroup, no binding.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from karta.controller.parts.pod_binding.admission import PATH
from karta.gang import SCOPE_LABEL

from ..kubehttp import KubeHTTP
from .certs_support import free_port, write_test_certificates
from .pods_support import (
    HOLD_S,
    batch_job,
    bound,
    events,
    fake_node,
    hold_unbound,
    namespace,
    ok,
    pod_template,
    pods,
    registered_webhook,
    running_controller,
    wait,
    wait_webhook_active,
)

pytestmark = pytest.mark.slow

SELECTOR = "batch.kubernetes.io/job-name=train"
MERGE = "application/merge-patch+json"


def _group_objects(kube: KubeHTTP, ns: str) -> list[str]:
    names = []
    for plural in ("workloads", "podgroups"):
        items = ok(kube.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/{plural}"), 200)["items"]
        names.extend(f"{plural}/{i['metadata']['name']}" for i in items)
    return names


def test_no_partial_gang_while_the_controller_is_down(controllers_cluster: KubeHTTP, tmp_path: Path) -> None:
    kube = controllers_cluster
    inside, outside = namespace(kube, "outage-in"), namespace(kube, "outage-out")
    label = {"metadata": {"labels": {SCOPE_LABEL: "enabled"}}}
    ok(kube.request("PATCH", f"/api/v1/namespaces/{inside}", body=label, content_type=MERGE))
    run = uuid.uuid4().hex[:6]
    nodes: list[str] = []

    def node(role: str, index: int) -> dict[str, str]:
        labels = {"karta-e2e-outage": f"{role}-{run}"}
        name = f"outage-{role}-{run}-{index}"
        fake_node(kube, name, labels, cpu="2")  # room for 2 pods of 1 CPU
        nodes.append(name)
        return labels

    port = free_port()
    ca = write_test_certificates(tmp_path / "certs")  # both runs serve this certificate on this port
    controller_args: dict[str, Any] = {
        "backend": "workload-api",
        "gang_scope": "opt-in",  # the default
        "webhook_port": port,
        "ca": ca,
        "namespaces": (inside, outside),
    }
    url = f"https://127.0.0.1:{port}{PATH}"
    try:
        with registered_webhook(kube, url=url, ca=ca, namespaces=(inside, outside), scope="opt-in") as hook:
            with running_controller(kube, tmp_path, **controller_args) as (controller, _):
                assert controller.scope is not None and controller.scope.mode == "opt-in"
                wait_webhook_active(kube, controller, inside)
            # -- the controller is down ------------------------------------------------------------
            labels = node("in", 0)
            ok(
                kube.post(
                    f"/apis/batch/v1/namespaces/{inside}/jobs", batch_job("train", labels, parallelism=4)
                )
            )
            failed = wait(
                "the Job controller's FailedCreate event",
                lambda: [
                    e for e in events(kube, inside, "FailedCreate") if e["involvedObject"]["name"] == "train"
                ],
                timeout=60,
            )
            message = failed[0]["message"]
            assert message.startswith("Error creating: Internal error occurred: failed calling webhook"), (
                message
            )
            assert hook in message or "pods.karta.run.ai" in message, message
            assert "connection refused" in message, message
            direct = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "direct"},
                **pod_template(labels),
            }
            refused = kube.post(f"/api/v1/namespaces/{inside}/pods", direct)
            assert refused.status == 500, refused.json()
            assert "failed calling webhook" in refused.json()["message"]
            print(f"\nwhile the controller is down, the API server answers: {refused.json()['message']}")
            # outside the scope, pods never reach the webhook: the Job schedules normally
            other = node("out", 0)
            ok(
                kube.post(
                    f"/apis/batch/v1/namespaces/{outside}/jobs", batch_job("train", other, parallelism=2)
                )
            )
            wait(
                "the Job outside the scope to be bound",
                lambda: len(bound(pods(kube, outside, SELECTOR))) == 2,
                timeout=60,
            )
            time.sleep(2.0)  # the Job controller has retried meanwhile
            assert pods(kube, inside, SELECTOR) == []  # no pod of the gang exists: none can be bound

            # -- the controller is back ------------------------------------------------------------
            with running_controller(kube, tmp_path, **controller_args) as (controller, _):
                held = hold_unbound(kube, inside, 4, SELECTOR)
                assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in held} == {"train-job"}
                node("in", 1)  # now the whole gang fits
                started = time.monotonic()
                wait(
                    "all 4 pods of the gang bound",
                    lambda: len(bound(pods(kube, inside, SELECTOR))) == 4,
                    timeout=90,
                )
                took = time.monotonic() - started
                # the Job outside the scope: untouched by the running controller
                time.sleep(2.0)
                assert _group_objects(kube, outside) == []
                items = pods(kube, outside, SELECTOR)
                assert len(bound(items)) == 2 and all("schedulingGroup" not in p["spec"] for p in items)
                assert sorted(_group_objects(kube, inside)) == ["podgroups/train-job", "workloads/train"]
            print(f"controller back: 0/4 bound for {HOLD_S:g}s on room for 2; 4/4 bound {took:.1f}s later")
    finally:
        for name in nodes:
            kube.delete(f"/api/v1/nodes/{name}")
        for ns in (inside, outside):
            kube.delete(f"/api/v1/namespaces/{ns}")
