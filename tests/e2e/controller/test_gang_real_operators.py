"""Gang scheduling with the real operators (issue 24 item 5): a PyTorchJob through the Kubeflow
training operator and a RayCluster through KubeRay, both built from their Go modules, on kwok GPU
Nodes with kube-scheduler (``ecosystem_cluster``), and karta-controller in this process
(``--backend workload-api``, its pod webhook registered fail-closed for the test's namespaces,
``--gang-scope opt-in``, ``--ui``).

The namespaces are opted in as a platform team would: the label
``karta.run.ai/gang-scheduling=enabled`` on the namespace, and the webhook registered with the
scope's namespaceSelector. For each workload:

- the kwok GPU capacity is one GPU short of the gang: the operator creates every pod, the webhook
  binds each to the gang, the scheduler tries them, and for :data:`HOLD_S` seconds none is bound
  (without the gang, all but one would be);
- one more kwok Node of one GPU: all bind together (the time from the Node to the last binding is
  printed), kwok runs them, and the operator reports the workload Running by its own fields
  (PyTorchJob condition ``Running``, RayCluster ``state: ready``);
- ``kli get -o wide`` reads it Running with its GANG column ``N/N bound, min N met`` (and
  ``0/N bound, min N not met`` while it is held), and the controller's web view
  (``/api/workloads``, read over HTTP) shows the same gang and status.
"""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from karta.cli.main import main as kli_main
from karta.controller.main import Controller
from karta.gang.scope import ENABLED, SCOPE_LABEL
from karta.ui import UiServer

from ..kubehttp import KubeHTTP, ok, wait
from ..nodes import dedicated_node, pin
from .pods_support import (
    HOLD_S,
    bound,
    hold_unbound,
    namespace,
    pods,
    registered_webhook,
    running_controller,
    wait_webhook_active,
    webhook_url,
)

pytestmark = pytest.mark.slow

GPU = "nvidia.com/gpu"
SERVED = (("kubeflow.org", "v1", "PyTorchJob"), ("ray.io", "v1", "RayCluster"))


@dataclass
class Env:
    kube: KubeHTTP
    controller: Controller
    ui: str
    pytorch_ns: str
    ray_ns: str
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    nodes: list[str] = field(default_factory=list)

    def gpu_node(self, pool: str, index: int, gpus: int) -> dict[str, str]:
        """A kwok Node of ``gpus`` GPUs in ``pool`` (its pods run); the selector of the pool."""
        selector = {"karta.test/pool": f"{pool}-{self.run}"}
        name = f"gang-{pool}-{self.run}-{index}"
        dedicated_node(self.kube, name, selector=selector, gpus=gpus, kwok=True)
        self.nodes.append(name)
        return selector


@pytest.fixture(scope="module")
def env(ecosystem_cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    kube = ecosystem_cluster
    opted_in = {SCOPE_LABEL: ENABLED}  # as a platform team opts a namespace in
    pytorch_ns, ray_ns = (namespace(kube, p, opted_in) for p in ("gang-real-pytorch", "gang-real-ray"))
    spaces = (pytorch_ns, ray_ns)
    workdir = tmp_path_factory.mktemp("gang-real-operators")
    with running_controller(
        kube,
        workdir,
        backend="workload-api",
        namespaces=spaces,
        gang_scope="opt-in",
        ui=True,
        ui_bind_address="127.0.0.1:0",
    ) as (controller, ca):
        for group, version, kind in SERVED:  # discovery must know them before the first owner walk
            wait(
                f"{kind} in discovery",
                partial(_served, controller, group, version, kind),
                timeout=60,
            )
        server = controller.parts["ui-server"]
        assert isinstance(server, UiServer)
        with registered_webhook(
            kube, url=webhook_url(controller), ca=ca, namespaces=spaces, failure_policy="Fail", scope="opt-in"
        ):
            for ns in spaces:
                wait_webhook_active(kube, controller, ns)
            e = Env(kube, controller, server.url, pytorch_ns, ray_ns)
            try:
                yield e
            finally:
                for node in e.nodes:
                    kube.delete(f"/api/v1/nodes/{node}")
                for ns in spaces:
                    kube.delete(f"/api/v1/namespaces/{ns}")


def _served(controller: Controller, group: str, version: str, kind: str) -> bool:
    controller.client.discovery.invalidate()
    return controller.client.discovery.find(group, version, kind) is not None


# -- what the tests observe -------------------------------------------------------------------------


def _bind_all(kube: KubeHTTP, ns: str, count: int) -> float:
    """Seconds until all ``count`` pods of ``ns`` are bound."""
    started = time.monotonic()
    wait(f"all {count} pods bound", lambda: len(bound(pods(kube, ns))) == count, timeout=90, interval=0.1)
    return time.monotonic() - started


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """kli reads only the built-in catalog and the kubeconfig it is given (as tests/e2e/cli)."""
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "no-definitions"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("KARTA_OUTPUT", "KARTA_CONFIG", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(name, raising=False)


def _kli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    code = kli_main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@dataclass
class Seen:
    """What ``kli get -o wide`` (its table and its JSON) and the web view's row show."""

    status: str
    gang_cell: str
    gang_json: dict[str, Any]
    ui_status: str
    ui_gang: dict[str, Any] | None


def _seen(env: Env, capsys: pytest.CaptureFixture[str], resource: str, ns: str, name: str) -> Seen:
    config = ("--kubeconfig", str(env.kube.kubeconfig))
    table = _kli(capsys, "get", resource, name, "-n", ns, *config, "-o", "wide").splitlines()
    header, row = table[0], next(line for line in table[1:] if line.split()[0] == name)
    gang_cell = row[header.index("GANG") : header.index("ORIGIN")].strip()
    status = row[header.index("PHASE") :].split()[0]
    answer = json.loads(_kli(capsys, "get", resource, name, "-n", ns, *config, "-o", "json"))
    (item,) = [i for i in answer.get("items", [answer]) if i.get("name") == name]
    with urllib.request.urlopen(f"{env.ui}api/workloads?namespace={ns}", timeout=30) as response:
        rows = [r for r in json.loads(response.read())["items"] if r.get("name") == name]
    ui_row = rows[0] if rows else {}
    return Seen(status, gang_cell, item.get("gang") or {}, str(ui_row.get("status")), ui_row.get("gang"))


def _eventually_seen(
    env: Env,
    capsys: pytest.CaptureFixture[str],
    resource: str,
    ns: str,
    name: str,
    ok_: Callable[[Seen], bool],
) -> Seen:
    last: list[Seen] = []

    def probe() -> Seen | None:
        seen = _seen(env, capsys, resource, ns, name)
        last[:] = [seen]
        return seen if ok_(seen) else None

    try:
        found: Seen = wait(f"kli get and the web view to agree on {name}", probe, timeout=60)
    except AssertionError as failure:
        raise AssertionError(f"{failure}; last seen: {last}") from None
    return found


def _conditions(obj: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}


def _operator_status(obj: dict[str, Any]) -> str:
    """What the operator wrote, in one line: its ``state`` (KubeRay) and its conditions."""
    status = obj.get("status") or {}
    conditions = [
        f"{c['type']}={c['status']}" + (f" ({c['reason']})" if c.get("reason") else "")
        for c in status.get("conditions") or []
    ]
    return f"state {status.get('state')!r}, conditions [{', '.join(conditions)}]"


# -- the workloads ---------------------------------------------------------------------------------


def _container(name: str, image: str, gpus: int) -> dict[str, Any]:
    return {"name": name, "image": image, "resources": {"limits": {GPU: gpus}}}


def _pytorchjob(name: str, selector: dict[str, str], workers: int) -> dict[str, Any]:
    image = "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"

    def replicas(count: int) -> dict[str, Any]:
        spec = pin({"containers": [_container("pytorch", image, 1)]}, selector)
        return {"replicas": count, "restartPolicy": "OnFailure", "template": {"spec": spec}}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": {"pytorchReplicaSpecs": {"Master": replicas(1), "Worker": replicas(workers)}},
    }


def _raycluster(name: str, selector: dict[str, str], workers: int) -> dict[str, Any]:
    image = "rayproject/ray:2.46.0"

    def template(container: str, gpus: int) -> dict[str, Any]:
        return {"spec": pin({"containers": [_container(container, image, gpus)]}, selector)}

    group = {"groupName": "gpu", "replicas": workers, "minReplicas": workers, "maxReplicas": workers}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": template("ray-head", 1)},
            "workerGroupSpecs": [{**group, "rayStartParams": {}, "template": template("ray-worker", 1)}],
        },
    }


@pytest.mark.parametrize(
    ("kind", "resource", "path", "make", "running"),
    [
        (
            "PyTorchJob",
            "pytorchjobs",
            "/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs",
            _pytorchjob,
            lambda obj: _conditions(obj).get("Running") == "True",
        ),
        (
            "RayCluster",
            "rayclusters",
            "/apis/ray.io/v1/namespaces/{ns}/rayclusters",
            _raycluster,
            lambda obj: (obj.get("status") or {}).get("state") == "ready",
        ),
    ],
)
def test_the_operators_gang_binds_all_or_nothing_then_runs(
    env: Env,
    isolated: None,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    resource: str,
    path: str,
    make: Callable[[str, dict[str, str], int], dict[str, Any]],
    running: Callable[[dict[str, Any]], bool],
) -> None:
    kube = env.kube
    ns = env.pytorch_ns if kind == "PyTorchJob" else env.ray_ns
    pool, name, workers = kind.lower(), "gang", 3
    size = 1 + workers  # the master (head) and the workers, one GPU each
    selector = env.gpu_node(pool, 0, gpus=size - 1)  # one GPU short of the gang
    ok(kube.post(path.format(ns=ns), make(name, selector, workers)))

    held_pods = hold_unbound(kube, ns, size)  # the operator created them all, none bound
    # each bound to the gang by the webhook
    assert all(p["spec"].get("schedulingGroup", {}).get("podGroupName") for p in held_pods), [
        (p["metadata"]["name"], p["spec"].get("schedulingGroup")) for p in held_pods
    ]
    held = _eventually_seen(
        env,
        capsys,
        resource,
        ns,
        name,
        lambda s: (
            s.gang_cell == f"0/{size} bound, min {size} not met"
            and s.ui_gang is not None
            and s.ui_gang["minMember"] == size
        ),
    )
    assert held.gang_json["minMember"] == size and held.gang_json["scheduled"] == 0, held
    assert held.ui_gang is not None and held.ui_gang["minMember"] == size, held
    assert held.ui_gang["scheduled"] == 0 and not held.ui_gang["minimumMet"], held
    assert held.status != "Running" and held.ui_status != "Running", held
    held_by_operator = _operator_status(ok(kube.get(f"{path.format(ns=ns)}/{name}"), 200))

    started = time.monotonic()
    env.gpu_node(pool, 1, gpus=1)  # room for the last pod: the whole gang fits
    took = _bind_all(kube, ns, size)
    obj = wait(
        f"the operator to report {kind} {name} running",
        lambda: (lambda o: o if running(o) else None)(ok(kube.get(f"{path.format(ns=ns)}/{name}"), 200)),
        timeout=120,
    )
    to_running = time.monotonic() - started
    seen = _eventually_seen(
        env,
        capsys,
        resource,
        ns,
        name,
        # the web view reads its own watch cache, which may see the last binding a moment later
        lambda s: (
            s.gang_cell == f"{size}/{size} bound, min {size} met"
            and s.ui_status == "Running"
            and s.ui_gang is not None
            and s.ui_gang["scheduled"] == size
        ),
    )
    assert seen.status == "Running", (seen, obj["status"])
    assert seen.ui_gang is not None and seen.ui_gang["minimumMet"] and seen.ui_gang["scheduled"] == size, seen
    print(  # after the last kli run (its output capture would take this line)
        f"\n{kind} held: operator {held_by_operator}; kli {held.status!r} GANG {held.gang_cell!r}; "
        f"web view {held.ui_status!r} {held.ui_gang}\n"
        f"{kind} gang of {size}: 0/{size} bound for {HOLD_S:g}s on {size - 1} GPUs; {size}/{size} bound "
        f"{took:.2f}s after the last Node, operator Running {to_running:.1f}s after it; "
        f"operator {_operator_status(obj)}; kli {seen.status!r} GANG {seen.gang_cell!r}; "
        f"web view {seen.ui_status!r} {seen.ui_gang}"
    )


def test_without_the_label_the_same_capacity_binds_a_partial_set(env: Env, tmp_path: Path) -> None:
    """The control experiment: a namespace without the label (the webhook is not called there),
    the same PyTorchJob on the same GPUs: the scheduler binds all but one pod."""
    kube = env.kube
    ns = namespace(kube, "gang-real-control")
    try:
        selector = env.gpu_node("control", 0, gpus=3)
        ok(kube.post(f"/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs", _pytorchjob("gang", selector, 3)))
        wait("4 pods", lambda: len(pods(kube, ns)) == 4, timeout=120)
        wait("3 pods bound", lambda: len(bound(pods(kube, ns))) == 3, timeout=60)
        assert all("schedulingGroup" not in p["spec"] for p in pods(kube, ns))
        time.sleep(2.0)
        assert len(bound(pods(kube, ns))) == 3  # and no more: the fourth does not fit
    finally:
        kube.delete(f"/api/v1/namespaces/{ns}")
