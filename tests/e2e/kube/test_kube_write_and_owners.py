"""Server-side apply as field manager ``karta``, and controller-owner chains (Job → Pod, a custom
resource → Job → Pod, cluster-scoped owners, depth limit, unreadable and replaced owners, cache)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from karta.errors import ApiError
from karta.kube import ConfigOverrides, KubeClient, OwnerChains

from ..kubehttp import KubeHTTP, load_manifests


def _uid(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["uid"])


def _ref(owner: dict[str, Any], *, controller: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": _uid(owner),
        "controller": controller,
    }


# ---------------------------------------------------------------------------------- apply


def test_server_side_apply_creates_updates_and_records_the_manager(kube: KubeClient, namespace: str) -> None:
    name = f"ssa-{uuid.uuid4().hex[:6]}"
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
    created = kube.apply({**desired, "data": {"a": "1"}})
    assert created["data"] == {"a": "1"}
    managers = {(m["manager"], m["operation"]) for m in created["metadata"]["managedFields"]}
    assert ("karta", "Apply") in managers

    updated = kube.apply({**desired, "data": {"a": "2", "b": "3"}})
    assert updated["data"] == {"a": "2", "b": "3"}
    assert _uid(updated) == _uid(created)
    # Applying the response back (managedFields and all) is accepted: they are stripped.
    again = kube.apply(updated)
    assert again["data"] == {"a": "2", "b": "3"}


def test_apply_conflict_and_force(kube: KubeClient, namespace: str) -> None:
    name = f"ssa-{uuid.uuid4().hex[:6]}"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
    kube.apply({**body, "data": {"owner": "karta"}})
    with pytest.raises(ApiError) as info:
        kube.apply({**body, "data": {"owner": "other"}}, field_manager="someone-else")
    assert info.value.status == 409 and info.value.reason == "Conflict"
    taken = kube.apply({**body, "data": {"owner": "other"}}, field_manager="someone-else", force=True)
    assert taken["data"] == {"owner": "other"}


def test_apply_uses_the_default_namespace_and_dry_run(cluster: KubeHTTP, namespace: str) -> None:
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig), namespace=namespace))
    name = f"ssa-{uuid.uuid4().hex[:6]}"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}
    dry = client.apply(body, dry_run=True)
    assert dry["metadata"]["namespace"] == namespace
    with pytest.raises(ApiError):
        client.get("cm", name)
    client.apply(body)
    assert client.get("cm", name)["data"] == {"k": "v"}


def test_apply_a_custom_resource(
    kube: KubeClient, namespace: str, corpus: Path, corpus_crd: Callable[[str], dict[str, Any]]
) -> None:
    corpus_crd("jobset.x-k8s.io_jobsets.yaml")
    (jobset,) = load_manifests(corpus / "workloads" / "jobset" / "paralleljobs.yaml")
    jobset["metadata"] = {"name": f"js-{uuid.uuid4().hex[:6]}", "namespace": namespace}
    applied = kube.apply(jobset)
    assert applied["kind"] == "JobSet"
    names = [r["name"] for r in applied["spec"]["replicatedJobs"]]
    assert names == [r["name"] for r in jobset["spec"]["replicatedJobs"]]
    assert ("karta", "Apply") in {
        (m["manager"], m["operation"]) for m in applied["metadata"]["managedFields"]
    }


# ---------------------------------------------------------------------------------- owners


def _job(kube: KubeClient, namespace: str, *, owner: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"job-{uuid.uuid4().hex[:6]}"}
    if owner is not None:
        meta["ownerReferences"] = [_ref(owner)]
    spec = {
        "suspend": True,  # nothing needs to run
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}},
    }
    return kube.create(
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}, namespace=namespace
    )


def _pod(
    kube: KubeClient, namespace: str, *owners: dict[str, Any], controller: bool = True
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"pod-{uuid.uuid4().hex[:6]}"}
    if owners:
        meta["ownerReferences"] = [_ref(o, controller=controller) for o in owners]
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
    return kube.create(body, namespace=namespace)


def test_owner_chain_job_to_pod(kube: KubeClient, namespace: str) -> None:
    job = _job(kube, namespace)
    pod = _pod(kube, namespace, job)
    chain = OwnerChains(kube).walk(pod)
    assert chain.complete and chain.error is None
    assert [(link.kind, link.name, link.namespace) for link in chain.links] == [
        ("Job", job["metadata"]["name"], namespace)
    ]
    assert chain.reaches(_uid(job)) and not chain.reaches(_uid(pod))
    assert chain.has_owner_of_kind([("batch", "Job")])


def test_owner_chain_through_a_custom_resource(
    kube: KubeClient, namespace: str, corpus: Path, corpus_crd: Callable[[str], dict[str, Any]]
) -> None:
    corpus_crd("jobset.x-k8s.io_jobsets.yaml")
    (jobset,) = load_manifests(corpus / "workloads" / "jobset" / "paralleljobs.yaml")
    jobset["metadata"] = {"name": f"js-{uuid.uuid4().hex[:6]}"}
    js = kube.create(jobset, namespace=namespace)
    job = _job(kube, namespace, owner=js)
    pods = [_pod(kube, namespace, job) for _ in range(4)]

    walker = OwnerChains(kube)
    chains = walker.walk_many(pods)
    for chain in chains:
        assert chain.complete
        assert [link.kind for link in chain.links] == ["Job", "JobSet"]
        assert chain.reaches(_uid(js))
        assert chain.top is not None and chain.top.group == "jobset.x-k8s.io"
        assert chain.has_owner_of_kind([("jobset.x-k8s.io", "JobSet")])
    assert walker.reads == 2  # Job and JobSet once each, shared by the four walks
    walker.walk(pods[0])
    assert walker.reads == 2


def test_non_controller_references_are_not_followed(kube: KubeClient, namespace: str) -> None:
    job = _job(kube, namespace)
    pod = _pod(kube, namespace, job, controller=False)
    chain = OwnerChains(kube).walk(pod)
    assert chain.links == () and chain.complete


def test_cluster_scoped_owner(kube: KubeClient, namespace: str) -> None:
    ns = kube.get("namespaces", namespace)
    cm = kube.create(
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": f"owned-{uuid.uuid4().hex[:6]}", "ownerReferences": [_ref(ns)]}},
        namespace=namespace,
    )  # fmt: skip
    chain = OwnerChains(kube).walk(cm)
    assert chain.complete
    assert [(link.kind, link.namespace) for link in chain.links] == [("Namespace", "")]


def test_depth_limit(kube: KubeClient, namespace: str) -> None:
    tag = uuid.uuid4().hex[:6]
    top = kube.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"d0-{tag}"}}, namespace=namespace
    )
    objs = [top]
    for i in range(1, 9):
        meta = {"name": f"d{i}-{tag}", "ownerReferences": [_ref(objs[-1])]}
        objs.append(
            kube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}, namespace=namespace)
        )
    chain = OwnerChains(kube).walk(objs[-1])
    assert len(chain.links) == 6 and not chain.complete
    assert chain.error == "owner chain deeper than 6"
    short = OwnerChains(kube).walk(objs[5])
    assert len(short.links) == 5 and short.complete
    with pytest.raises(ValueError):
        OwnerChains(kube, max_depth=7)


def test_missing_and_replaced_owners(kube: KubeClient, namespace: str) -> None:
    job = _job(kube, namespace)
    ghost = {**job, "metadata": {**job["metadata"], "name": "no-such-job"}}
    orphan = _pod(kube, namespace, ghost)
    chain = OwnerChains(kube).walk(orphan)
    assert not chain.complete and "cannot read Job/no-such-job" in (chain.error or "")
    assert chain.reaches(_uid(job))  # the reference itself is still known

    impostor = {**job, "metadata": {**job["metadata"], "uid": str(uuid.uuid4())}}
    pod = _pod(kube, namespace, impostor)
    replaced = OwnerChains(kube).walk(pod)
    assert not replaced.complete and "was replaced" in (replaced.error or "")


def test_unreadable_owner_under_limited_rbac(cluster: KubeHTTP, kube: KubeClient, namespace: str) -> None:
    job = _job(kube, namespace)
    pod = _pod(kube, namespace, job)
    nobody = KubeClient.from_config(ConfigOverrides(kubeconfig=str(cluster.kubeconfig), as_user="nobody"))
    chain = OwnerChains(nobody).walk(pod)
    assert not chain.complete and chain.error is not None
    assert [link.kind for link in chain.links] == ["Job"]  # kept: recognised from the reference
