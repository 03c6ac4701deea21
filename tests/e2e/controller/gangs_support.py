"""Fixtures and helpers for the gang reconciler's tests against the real API server.

Owns: the CRDs the tests need (read from the shared corpus in place), a controller started
in-process with :func:`karta.controller.main.build` (restricted to the test's namespace, so that
tests sharing the session cluster never see each other's workloads), workload manifests, the
*expected* group objects (rendered offline by the library from the live workload, exactly as
``kli gang`` does), and polling with a deadline.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import yaml

from karta import extract, jq, render
from karta.controller.main import Controller, build
from karta.controller.options import Options
from karta.controller.parts.gangs import GangReconciler
from karta.controller.parts.platform import PlatformMetrics
from karta.definitions import DefinitionStore, StoredDefinition
from karta.kube import ConfigOverrides, KubeClient
from karta.model.gvk import GVK
from karta.render.backends import BACKENDS

from ..kubehttp import KubeHTTP, load_manifests

T = TypeVar("T")

DEADLINE_S = 90.0  # a hang guard for eventual state, far above what convergence takes

CRD_FILES = (
    "kubeflow.org_pytorchjobs.yaml",
    "jobset.x-k8s.io_jobsets.yaml",
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    "ray.io_rayclusters.yaml",
    "scheduling.run.ai_podgroups.yaml",
    "scheduling.volcano.sh_podgroups.yaml",
    "scheduling.x-k8s.io_podgroups.yaml",
)

GROUP_RESOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "kai": (("scheduling.run.ai/v2alpha2", "podgroups"),),
    "volcano": (("scheduling.volcano.sh/v1beta1", "podgroups"),),
    "coscheduling": (("scheduling.x-k8s.io/v1alpha1", "podgroups"),),
    "workload-api": (("scheduling.k8s.io/v1beta1", "workloads"), ("scheduling.k8s.io/v1beta1", "podgroups")),
}


def eventually(check: Callable[[], T | None], *, what: str, timeout: float = DEADLINE_S) -> T:
    """Poll ``check`` until it returns something truthy; fail with ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = check()
        except AssertionError as exc:
            last = exc
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached in {timeout}s (last: {last!r})")
        time.sleep(0.2)


def install_crds(cluster: KubeHTTP, corpus: Path, files: tuple[str, ...] = CRD_FILES) -> list[dict[str, Any]]:
    crds = []
    for name in files:
        (crd,) = load_manifests(corpus / "crds" / name)
        cluster.ensure_crd(crd)
        crds.append(crd)
    return crds


def wait_served(client: KubeClient, gvks: list[tuple[str, str, str]]) -> None:
    def served() -> bool:
        client.discovery.invalidate()
        return all(client.discovery.find(*gvk) is not None for gvk in gvks)

    eventually(served, what=f"{gvks} discovered")


# What the gang tests' CRDs serve, once installed (:func:`served_kube` waits for all of it).
SERVED = [
    ("kubeflow.org", "v1", "PyTorchJob"),
    ("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
    ("ray.io", "v1", "RayCluster"),
    ("scheduling.run.ai", "v2alpha2", "PodGroup"),
    ("scheduling.volcano.sh", "v1beta1", "PodGroup"),
    ("scheduling.x-k8s.io", "v1alpha1", "PodGroup"),
    ("scheduling.k8s.io", "v1beta1", "Workload"),
]


def served_kube(cluster: KubeHTTP, corpus: Path) -> Iterator[KubeClient]:
    """A client once the CRDs are installed and served (a module fixture's body)."""
    install_crds(cluster, corpus)
    client = client_for(cluster)
    wait_served(client, SERVED)
    yield client
    client.close()


def new_namespace(cluster: KubeHTTP) -> str:
    name = f"karta-gangs-{uuid.uuid4().hex[:8]}"
    created = cluster.post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    assert created.status == 201, created.body
    return name


def client_for(cluster: KubeHTTP) -> KubeClient:
    return KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig)))


@contextmanager
def running_controller(
    cluster: KubeHTTP,
    *,
    backend: str,
    namespace: str,
    definitions_dir: Path,
    cluster_definitions: bool = False,
    resync_period: float = 600.0,
    as_user: str | None = None,
    **extra: Any,
) -> Iterator[Controller]:
    """The controller of ``build()`` for ``backend``, watching ``namespace`` only, started and
    ready; shut down afterwards. Types are re-read every second (the default is 30 s). ``extra``:
    more :class:`Options` (e.g. ``ui=True``, a ``metrics_bind_address`` to serve ``/metrics``);
    ``as_user``: the controller impersonates that user (its RBAC is the test's)."""
    client = (
        client_for(cluster)
        if as_user is None
        else KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig), as_user=as_user))
    )
    options = Options(
        backend=backend,
        gang_scope="all",  # these tests predate the opt-in scope (issue 22): every namespace
        namespaces=(namespace,),
        health_probe_bind_address="0",
        definitions_dir=definitions_dir,
        cluster_definitions=cluster_definitions,
        resync_period=resync_period,
        shutdown_timeout=15.0,
        **{"metrics_bind_address": "0", **extra},
    )
    controller = build(options, client)
    gangs = controller.parts["gangs"]
    assert isinstance(gangs, GangReconciler)
    gangs.types_interval = 1.0
    gangs.informer_retry_s = 0.5
    platform = controller.parts["platform-metrics"]
    assert isinstance(platform, PlatformMetrics)
    platform.types_interval = 1.0
    platform.informer_retry_s = 0.5
    controller.manager.start()
    try:
        eventually(lambda: controller.manager.ready()[0], what="controller ready")
        yield controller
    finally:
        controller.manager.shutdown()
        client.close()


def gangs_of(controller: Controller) -> GangReconciler:
    gangs = controller.parts["gangs"]
    assert isinstance(gangs, GangReconciler)
    return gangs


# -- workloads -------------------------------------------------------------------------------------


def _container(gpus: int) -> dict[str, Any]:
    return {
        "name": "pytorch",
        "image": "registry.example/train:1.0",
        "resources": {"limits": {"nvidia.com/gpu": gpus}},
    }


def pytorchjob(name: str, *, workers: int = 4, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {
                    "replicas": 1,
                    "restartPolicy": "OnFailure",
                    "template": {"spec": {"containers": [_container(1)]}},
                },
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "OnFailure",
                    "template": {"spec": {"containers": [_container(8)]}},
                },
            }
        },
    }


def leaderworkerset(
    name: str, *, replicas: int = 3, size: int = 4, worker_spec: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An LWS of ``replicas`` groups of ``size`` pods (one leader, size-1 workers; ``worker_spec``
    their pod spec)."""
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {
                "size": size,
                "workerTemplate": {
                    "spec": worker_spec
                    or {"containers": [{"name": "main", "image": "registry.example/serve:1.0"}]}
                },
            },
        },
    }


def controller_ref_to(owner: Mapping[str, Any]) -> dict[str, Any]:
    """The controller ownerReference a pod of ``owner`` carries (no controllers run: the workload
    owns its pods directly)."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
    }


def raycluster(name: str, *, replicas: int = 2, hosts: int = 2) -> dict[str, Any]:
    """A RayCluster with a head and one multi-host worker group ``tpu`` of ``replicas`` x ``hosts``."""
    template = {"spec": {"containers": [{"name": "ray", "image": "rayproject/ray:2.52.0"}]}}
    group = {"groupName": "tpu", "replicas": replicas, "maxReplicas": 4, "numOfHosts": hosts}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": template},
            "workerGroupSpecs": [{**group, "rayStartParams": {}, "template": template}],
        },
    }


def ray_pod(owner: Mapping[str, Any], replica: int | None = None, host: int = 0) -> dict[str, Any]:
    """A pod as KubeRay v1.6 labels it (no controllers run: the RayCluster owns it directly): the
    head (``replica`` None) or host ``host`` of replica ``replica`` of the group ``tpu``."""
    meta = owner["metadata"]
    labels = {"ray.io/cluster": meta["name"], "ray.io/node-type": "head", "ray.io/group": "headgroup"}
    name = f"{meta['name']}-head"
    if replica is not None:
        name = f"{meta['name']}-tpu-worker-{replica}-{host}"
        labels = {
            "ray.io/cluster": meta["name"],
            "ray.io/node-type": "worker",
            "ray.io/group": "tpu",
            "ray.io/worker-group-replica-index": str(replica),
            "ray.io/worker-group-replica-name": f"tpu-x{replica}",
            "ray.io/replica-host-index": str(host),
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": labels,
            "ownerReferences": [controller_ref_to(owner)],
        },
        "spec": {"containers": [{"name": "ray", "image": "rayproject/ray:2.52.0"}]},
    }


def jobset(name: str, *, workers: int = 2, in_order: bool = False) -> dict[str, Any]:
    def replicated(rj: str, parallelism: int) -> dict[str, Any]:
        return {
            "name": rj,
            "replicas": 1,
            "template": {
                "spec": {
                    "parallelism": parallelism,
                    "completions": parallelism,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "main", "image": "registry.example/jax:1.0"}],
                        }
                    },
                }
            },
        }

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {
            "replicatedJobs": [replicated("driver", 1), replicated("workers", workers)],
            **({"startupPolicy": {"startupPolicyOrder": "InOrder"}} if in_order else {}),
        },
    }


def jobset_pod(owner: Mapping[str, Any], replicated_job: str, index: int) -> dict[str, Any]:
    """A pod as the JobSet's Jobs would create it (no controllers run: the JobSet owns it directly)."""
    meta = owner["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{meta['name']}-{replicated_job}-0-{index}",
            "labels": {
                "jobset.sigs.k8s.io/jobset-name": meta["name"],
                "jobset.sigs.k8s.io/replicatedjob-name": replicated_job,
                "jobset.sigs.k8s.io/job-index": "0",
            },
            "ownerReferences": [controller_ref_to(owner)],
        },
        "spec": {"containers": [{"name": "main", "image": "registry.example/jax:1.0"}]},
    }


# -- the expected state ----------------------------------------------------------------------------


ALPHA_JOBSET = Path(__file__).parents[2] / "definitions" / "jobset-per-replicated-job.yaml"


def alpha_jobset_definitions(directory: Path) -> StoredDefinition:
    """A definitions directory at ``directory`` holding the per-replicated-job JobSet (alpha
    ``podGroups``: gangs found from pods), which then covers JobSets instead of the catalog's; the
    stored definition, for :func:`expected_objects`."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / ALPHA_JOBSET.name).write_text(ALPHA_JOBSET.read_text())
    store = DefinitionStore.load(include_catalog=True, user_directory=directory)
    definition = store.definition_for(GVK("jobset.x-k8s.io", "v1alpha2", "JobSet"))
    assert definition.name == "jobset-per-replicated-job", definition.name
    return definition


def expected_objects(
    client: KubeClient,
    workload: Mapping[str, Any],
    *,
    backend: str,
    definition: StoredDefinition | None = None,
    pods: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The group objects the library renders for the live ``workload`` (the catalog's definition
    unless given), with the controller's backend options."""
    if definition is None:
        store = DefinitionStore.load(include_catalog=True, user_directory=Path("/nonexistent"))
        definition = store.definition_for(GVK.of(workload["apiVersion"], workload["kind"]))
    values: dict[str, Any] = {"kai_managed": True} if backend == "kai" else {"k8s_version": "1.37"}
    options = render.options_for(backend, values)
    factory = extract.ComponentFactory(
        definition.karta, workload, evaluator=jq.Evaluator(trusted=definition.trusted)
    )
    return list(render.render(backend, factory, pods=pods or [], options=options).objects)


def group_objects(client: KubeClient, backend: str, namespace: str) -> list[dict[str, Any]]:
    """Every object of the backend's group resources in ``namespace`` (ours or not), but those
    being deleted (a Workload API PodGroup waits for kube-controller-manager to remove its
    ``podgroup-protection`` finalizer, and the ``cluster`` fixture runs no controllers)."""
    out: list[dict[str, Any]] = []
    for api_version, plural in GROUP_RESOURCES[backend]:
        group, _, version = api_version.rpartition("/")
        rtype = next(
            r
            for r in client.discovery.resources()
            if (r.group, r.version, r.plural) == (group, version, plural)
        )
        listed = client.list(rtype, namespace=namespace).items
        out.extend(o for o in listed if not o["metadata"].get("deletionTimestamp"))
    return out


def covers(live: Any, desired: Any) -> bool:
    """Every field of ``desired`` is in ``live`` with the same value (the server adds defaults)."""
    if isinstance(desired, Mapping):
        return isinstance(live, Mapping) and all(k in live and covers(live[k], v) for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(live, list) and len(live) == len(desired) and all(map(covers, live, desired))
    return bool(live == desired)


def matches_plan(client: KubeClient, backend: str, namespace: str, expected: list[dict[str, Any]]) -> bool:
    """The group objects in ``namespace`` are exactly ``expected``: the same (kind, name) set, and
    each live object holds the expected labels, annotations, ownerReferences and spec."""
    live = {(o["kind"], o["metadata"]["name"]): o for o in group_objects(client, backend, namespace)}
    want = {(o["kind"], o["metadata"]["name"]): o for o in expected}
    if set(live) != set(want):
        return False
    for key, desired in want.items():
        got = live[key]
        for part in ("labels", "annotations", "ownerReferences"):
            if not covers(got["metadata"].get(part), desired["metadata"].get(part)):
                return False
        if not covers(got.get("spec"), desired.get("spec")):
            return False
    return True


def backend_api_group(backend: str) -> str:
    return BACKENDS[backend].api_group


def events_for(client: KubeClient, namespace: str, name: str, reason: str) -> list[dict[str, Any]]:
    listed = client.list("events", namespace=namespace).items
    return [
        e for e in listed if e.get("reason") == reason and (e.get("involvedObject") or {}).get("name") == name
    ]


def metric(controller: Controller, name: str, labels: Mapping[str, str]) -> float:
    value = controller.metrics.registry.get_sample_value(name, dict(labels))
    return float(value or 0.0)


def metric_total(controller: Controller, name: str, labels: Mapping[str, str]) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    total = 0.0
    for family in controller.metrics.registry.collect():
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


def describe_live(cluster: KubeHTTP, namespace: str, target: str, capsys: Any) -> dict[str, Any]:
    """``kli describe TARGET -n NAMESPACE -o json`` through the API (``capsys``: pytest's capture
    fixture), which must succeed with every reference read (nothing about one on stderr)."""
    from karta.cli.main import main

    capsys.readouterr()
    code = main(["describe", target, "-n", namespace, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "reference" not in err, err  # the referenced objects were read, none bound null
    doc: dict[str, Any] = yaml.safe_load(out)
    return doc
