"""What a flow works with: one namespace, two kwok GPU Nodes of its own, the flow's object, and
the helpers that change it and wait for the operator (``settle``) before recording a state.

A flow is a function ``flow(session)``: it creates its object with :meth:`Session.create`, moves
it (``patch``, ``scale``, ``suspend``, ``resume``, ``end_pod``), calls :meth:`Session.settle` and
then :meth:`Session.record` with a label at every state worth keeping.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from karta.kube import KubeClient, ResourceType

from ..e2e.conftest import hack_module
from ..e2e.nodes import pin, taint
from .fixtures import Fixture, reading_of, sanitize
from .judges import Judge

__all__ = ["EXIT", "FlowError", "Session"]

EXIT = "karta.dev/kwok-exit"  # hack/kwok/stages.yaml
GPU = "nvidia.com/gpu"
NODES = 2
GPUS_PER_NODE = 8


class FlowError(RuntimeError):
    """A flow did not reach the state it waited for."""


def _pod_state(pod: Mapping[str, Any]) -> tuple[Any, ...]:
    status = pod.get("status") or {}
    ready = [c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"]
    restarts = [c.get("restartCount") for c in status.get("containerStatuses") or []]
    meta = pod.get("metadata") or {}
    return (meta.get("name"), status.get("phase"), ready, restarts, bool(meta.get("deletionTimestamp")))


class Session:
    """One flow's namespace, Nodes and object (see the module docstring)."""

    def __init__(
        self, client: KubeClient, judge: Judge, *, quiet: float = 3.0, timeout: float = 120.0
    ) -> None:
        self.client = client
        self.judge = judge
        self.namespace = f"rec-{uuid.uuid4().hex[:6]}"
        self.selector = {"karta.test/pool": self.namespace}
        self.quiet = quiet
        self.timeout = timeout
        self.fixtures: list[Fixture] = []
        self._uids: dict[str, str] = {}
        self._rtype: ResourceType | None = None
        self._name = ""

    # -- set-up and tear-down -------------------------------------------------------------------
    def open(self) -> Session:
        self.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})
        fake_nodes = hack_module("fake_nodes.py")
        for index in range(NODES):
            fake_nodes.ensure_fake_node(
                self.client,
                f"{self.namespace}-gpu-{index}",
                gpus=GPUS_PER_NODE,
                labels=self.selector,
                taints=[taint(self.selector)],
                kwok=True,
            )
        return self

    def close(self) -> None:
        for index in range(NODES):
            self.client.delete("nodes", f"{self.namespace}-gpu-{index}")
        self.client.delete("namespaces", self.namespace)

    # -- building objects ------------------------------------------------------------------------
    def pod_spec(
        self, name: str = "main", *, gpus: int = 0, restart: str | None = None, image: str = "busybox:1.36"
    ) -> dict[str, Any]:
        """A pod spec of one container pinned to this flow's Nodes."""
        container: dict[str, Any] = {"name": name, "image": image}
        if gpus:
            container["resources"] = {"limits": {GPU: gpus}}
        spec: dict[str, Any] = {"containers": [container]}
        if restart:
            spec["restartPolicy"] = restart
        return pin(spec, self.selector)

    @staticmethod
    def exit_annotations(how: str, *, delay: str = "4s", code: int | None = None) -> dict[str, str]:
        """Pod annotations that make kwok end the pod (``succeeded``/``failed``) ``delay`` after Running."""
        found = {EXIT: how, f"{EXIT}-delay": delay}
        if code is not None:
            found[f"{EXIT}-code"] = str(code)
        return found

    # -- the flow's object -----------------------------------------------------------------------
    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        body = json.loads(json.dumps(obj))
        body.setdefault("metadata", {})["namespace"] = self.namespace
        self._rtype = self.client.discovery.for_api_version(str(body["apiVersion"]), str(body["kind"]))
        self._name = str(body["metadata"]["name"])
        return self.client.create(body)

    @property
    def rtype(self) -> ResourceType:
        if self._rtype is None:
            raise FlowError("the flow has not created its object yet")
        return self._rtype

    def get(self) -> dict[str, Any]:
        return self.client.get(self.rtype, self._name, namespace=self.namespace)

    def patch(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.client.patch(self.rtype, self._name, dict(body), namespace=self.namespace)

    def set_path(self, path: str, value: Any) -> dict[str, Any]:
        """Merge-patch ``spec.a.b`` (a dotted path) to ``value``."""
        body: dict[str, Any] = {}
        cursor = body
        *parents, last = path.split(".")
        for key in parents:
            cursor = cursor.setdefault(key, {})
        cursor[last] = value
        return self.patch(body)

    def pods(self) -> list[dict[str, Any]]:
        items = self.client.list("pods", namespace=self.namespace).items
        return sorted((dict(p) for p in items), key=lambda p: str(p["metadata"]["name"]))

    def end_pod(self, match: Callable[[dict[str, Any]], bool], how: str, *, code: int | None = None) -> str:
        """Annotate the first running pod ``match`` accepts so that kwok ends it (``succeeded`` or
        ``failed``; under restartPolicy OnFailure/Always kwok restarts its containers once)."""
        for pod in self.pods():
            if match(pod) and (pod.get("status") or {}).get("phase") == "Running":
                name = str(pod["metadata"]["name"])
                annotations = self.exit_annotations(how, delay="0s", code=code)
                self.client.patch(
                    "pods", name, {"metadata": {"annotations": annotations}}, namespace=self.namespace
                )
                return name
        raise FlowError(f"no running pod to end ({how}) among {[p['metadata']['name'] for p in self.pods()]}")

    # -- waiting and recording -------------------------------------------------------------------
    def wait(
        self, what: str, ok: Callable[[dict[str, Any]], bool], timeout: float | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + (timeout or self.timeout)
        obj = self.get()
        while not ok(obj):
            if time.monotonic() > deadline:
                raise FlowError(f"timed out waiting for {what}; status: {json.dumps(obj.get('status'))}")
            time.sleep(0.5)
            obj = self.get()
        return obj

    def wait_pods(self, what: str, ok: Callable[[list[dict[str, Any]]], bool]) -> None:
        deadline = time.monotonic() + self.timeout
        while not ok(self.pods()):
            if time.monotonic() > deadline:
                raise FlowError(f"timed out waiting for {what}: {[_pod_state(p) for p in self.pods()]}")
            time.sleep(0.5)

    def _state(self) -> str:
        obj = self.get()
        meta = obj.get("metadata") or {}
        seen = {"generation": meta.get("generation"), "status": obj.get("status")}
        return json.dumps([seen, [_pod_state(p) for p in self.pods()]], sort_keys=True, default=str)

    def settle(self, until: Callable[[dict[str, Any]], bool] | None = None, what: str = "") -> dict[str, Any]:
        """The object once ``until`` holds (when given) and neither its status nor its pods have
        changed for ``quiet`` seconds."""
        if until is not None:
            self.wait(what or "the flow's condition", until)
        deadline = time.monotonic() + self.timeout
        last, since = self._state(), time.monotonic()
        while time.monotonic() - since < self.quiet:
            if time.monotonic() > deadline:
                raise FlowError("the object never settled")
            time.sleep(0.5)
            now = self._state()
            if now != last:
                last, since = now, time.monotonic()
        return self.get()

    def record(self, label: str) -> Fixture:
        """Record the current state: the sanitized object, the judged state, karta's reading."""
        aliases = {taint(self.selector)["value"]: "recorded-taint"}
        obj = sanitize(self.get(), self.namespace, self._uids, aliases)
        fixture: Fixture = {
            "step": len(self.fixtures) + 1,
            "label": label,
            "kind": obj.get("kind"),
            "object": obj,
            "judged": self.judge(obj).to_dict(),
            "reading": reading_of(obj),
        }
        self.fixtures.append(fixture)
        return fixture
