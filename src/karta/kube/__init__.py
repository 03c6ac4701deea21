"""karta.kube: the only layer that talks to Kubernetes (DESIGN.md section 2).

Kubeconfig and in-cluster configuration (:mod:`.config`, :mod:`.auth`), HTTP (:mod:`.transport`),
discovery and type tokens (:mod:`.discovery`, :mod:`.resources`), get/list/watch/apply
(:mod:`.client`), the resumable list-then-watch loop (:mod:`.watch`), many types listed and
watched at once (:mod:`.fanout`), several clusters (kubeconfig contexts) worked on at once
(:mod:`.contexts`), controller-owner chains (:mod:`.owners`), Karta definitions read from the
cluster (:mod:`.kartas`), workload types and pods seen through them (:mod:`.workloads`) and the
Events of some objects (:mod:`.events`) and a namespace's labels (:mod:`.namespaces`).

Why no client library: DESIGN.md section 4's measured facts rule each one out for some need —
``kubernetes`` (160 MiB, 250–400 ms import), ``kubernetes_asyncio`` (70 MiB, async only),
``lightkube`` (no watch bookmarks, no discovery API), ``kr8s`` (no server-side apply, re-watches a
stale resourceVersion after 410). What we need from the API is small and stable (discovery, GET,
paged LIST, WATCH lines, PATCH with ``application/apply-patch+yaml``), so this package is a thin
client of its own. It uses the standard library's ``http.client`` and ``ssl`` rather than
``httpx``: measured here, ``import httpx`` takes ~160 ms (it pulls in its CLI and ``anyio``),
more than the whole ``kli`` start-up budget of 150 ms, while ``http.client`` + ``ssl`` take
~55 ms and add no dependency (0 bytes installed vs. ~4 MiB for httpx and its five dependencies).
Tests inject a fake :class:`~karta.kube.transport.Transport` instead of a mock server.

Everything is imported lazily (PEP 562): ``import karta.kube`` costs nothing until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "ClusterConfig": "karta.kube.config",
    "ConfigOverrides": "karta.kube.sources",
    "ExecConfig": "karta.kube.config",
    "load_config": "karta.kube.config",
    "parse_timeout": "karta.kube.config",
    "in_cluster_config": "karta.kube.config",
    "Credentials": "karta.kube.auth",
    "ResourceType": "karta.kube.resources",
    "Discovery": "karta.kube.discovery",
    "KubeClient": "karta.kube.client",
    "ObjectList": "karta.kube.client",
    "WatchEvent": "karta.kube.client",
    "WatchStream": "karta.kube.client",
    "FIELD_MANAGER": "karta.kube.client",
    "ListWatch": "karta.kube.watch",
    "SyncEvent": "karta.kube.watch",
    "OwnerChains": "karta.kube.owners",
    "OwnerChain": "karta.kube.owners",
    "OwnerLink": "karta.kube.owners",
    "controller_ref": "karta.kube.owners",
    "MAX_DEPTH": "karta.kube.owners",
    "ReadFailure": "karta.kube.owners",
    "EventsRead": "karta.kube.events",
    "object_events": "karta.kube.events",
    "KueuePending": "karta.kube.kueue",
    "KueueQueues": "karta.kube.kueue",
    "KueueRead": "karta.kube.kueue",
    "kueue_pending": "karta.kube.kueue",
    "kueue_queues": "karta.kube.kueue",
    "kueue_workloads": "karta.kube.kueue",
    "kueue_workloads_in": "karta.kube.kueue",
    "NAMESPACE_RESOURCE": "karta.kube.namespaces",
    "NamespaceRead": "karta.kube.namespaces",
    "namespace_labels": "karta.kube.namespaces",
    "ClusterKartas": "karta.kube.kartas",
    "KARTA_RESOURCE": "karta.kube.kartas",
    "read_cluster_kartas": "karta.kube.kartas",
    "load_definitions": "karta.kube.kartas",
    "connect_for_definitions": "karta.kube.sources",
    "ResolvedType": "karta.kube.workloads",
    "CoveredType": "karta.kube.workloads",
    "TopLevel": "karta.kube.workloads",
    "resolve_type": "karta.kube.workloads",
    "covered_types": "karta.kube.workloads",
    "workload_pods": "karta.kube.workloads",
    "external_pods": "karta.kube.workloads",
    "find_pods": "karta.kube.workloads",
    "gang_kinds": "karta.kube.workloads",
    "find_pods_many": "karta.kube.workloads",
    "owned_workloads": "karta.kube.workloads",
    "pod_lineage": "karta.kube.workloads",
    "UnreadOwners": "karta.kube.workloads",
    "WorkloadPods": "karta.kube.workloads",
    "ListedPage": "karta.kube.fanout",
    "ListFailed": "karta.kube.fanout",
    "MergedWatch": "karta.kube.fanout",
    "WatchFailed": "karta.kube.fanout",
    "list_many": "karta.kube.fanout",
    "ClusterResult": "karta.kube.contexts",
    "ClusterTarget": "karta.kube.contexts",
    "DEFAULT_CLUSTER_TIMEOUT": "karta.kube.contexts",
    "context_names": "karta.kube.contexts",
    "per_cluster": "karta.kube.contexts",
    "select_contexts": "karta.kube.contexts",
    "CRD_TYPE": "karta.kube.crds",
    "CrdNotFound": "karta.kube.crds",
    "served_crd": "karta.kube.crds",
    "Listed": "karta.kube.capacity",
    "list_nodes": "karta.kube.capacity",
    "list_pods": "karta.kube.capacity",
    "fetch_references": "karta.kube.references",
    "resolve_live": "karta.kube.references",
}

__all__ = [
    "CRD_TYPE",
    "DEFAULT_CLUSTER_TIMEOUT",
    "FIELD_MANAGER",
    "KARTA_RESOURCE",
    "MAX_DEPTH",
    "NAMESPACE_RESOURCE",
    "ClusterConfig",
    "ClusterKartas",
    "ClusterResult",
    "ClusterTarget",
    "ConfigOverrides",
    "CoveredType",
    "CrdNotFound",
    "Credentials",
    "Discovery",
    "EventsRead",
    "ExecConfig",
    "KubeClient",
    "KueuePending",
    "KueueQueues",
    "KueueRead",
    "ListFailed",
    "ListWatch",
    "Listed",
    "ListedPage",
    "MergedWatch",
    "NamespaceRead",
    "ObjectList",
    "OwnerChain",
    "OwnerChains",
    "OwnerLink",
    "ReadFailure",
    "ResolvedType",
    "ResourceType",
    "SyncEvent",
    "TopLevel",
    "UnreadOwners",
    "WatchEvent",
    "WatchFailed",
    "WatchStream",
    "WorkloadPods",
    "connect_for_definitions",
    "context_names",
    "controller_ref",
    "covered_types",
    "external_pods",
    "fetch_references",
    "find_pods",
    "find_pods_many",
    "gang_kinds",
    "in_cluster_config",
    "kueue_pending",
    "kueue_queues",
    "kueue_workloads",
    "kueue_workloads_in",
    "list_many",
    "list_nodes",
    "list_pods",
    "load_config",
    "load_definitions",
    "namespace_labels",
    "object_events",
    "owned_workloads",
    "parse_timeout",
    "per_cluster",
    "pod_lineage",
    "read_cluster_kartas",
    "resolve_live",
    "resolve_type",
    "select_contexts",
    "served_crd",
    "workload_pods",
]

if TYPE_CHECKING:
    from karta.kube.auth import Credentials
    from karta.kube.capacity import Listed, list_nodes, list_pods
    from karta.kube.client import FIELD_MANAGER, KubeClient, ObjectList, WatchEvent, WatchStream
    from karta.kube.config import (
        ClusterConfig,
        ExecConfig,
        in_cluster_config,
        load_config,
        parse_timeout,
    )
    from karta.kube.contexts import (
        DEFAULT_CLUSTER_TIMEOUT,
        ClusterResult,
        ClusterTarget,
        context_names,
        per_cluster,
        select_contexts,
    )
    from karta.kube.crds import CRD_TYPE, CrdNotFound, served_crd
    from karta.kube.discovery import Discovery
    from karta.kube.events import EventsRead, object_events
    from karta.kube.fanout import ListedPage, ListFailed, MergedWatch, WatchFailed, list_many
    from karta.kube.kartas import (
        KARTA_RESOURCE,
        ClusterKartas,
        load_definitions,
        read_cluster_kartas,
    )
    from karta.kube.kueue import (
        KueuePending,
        KueueQueues,
        KueueRead,
        kueue_pending,
        kueue_queues,
        kueue_workloads,
        kueue_workloads_in,
    )
    from karta.kube.namespaces import NAMESPACE_RESOURCE, NamespaceRead, namespace_labels
    from karta.kube.owners import MAX_DEPTH, OwnerChain, OwnerChains, OwnerLink, ReadFailure, controller_ref
    from karta.kube.references import fetch_references, resolve_live
    from karta.kube.resources import ResourceType
    from karta.kube.sources import ConfigOverrides, connect_for_definitions
    from karta.kube.watch import ListWatch, SyncEvent
    from karta.kube.workloads import (
        CoveredType,
        ResolvedType,
        TopLevel,
        UnreadOwners,
        WorkloadPods,
        covered_types,
        external_pods,
        find_pods,
        find_pods_many,
        gang_kinds,
        owned_workloads,
        pod_lineage,
        resolve_type,
        workload_pods,
    )


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


__dir__ = lazy_dir(_EXPORTS, globals())
