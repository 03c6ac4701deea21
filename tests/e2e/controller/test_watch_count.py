"""On the leader each resource is watched once (issue 21 item 2): the gang reconciler, the platform
metrics, the live definitions, the Karta operator and its CRD index run on one shared cache and one
covered-types tracker, against the real API server.

Every watch request the controller's client sends is recorded (the client's own ``watch`` and
``list``, wrapped on the instance the controller is built with: nothing else can see a request the
controller does not make). The controller runs with an alpha JobSet definition (gangs found from
pods: the reconciler follows pods, as the platform metrics do) and cluster definitions, so that
Kartas, CRDs, pods, every covered type and the backend's group objects are all wanted by two parts
or more. Once ready and quiet, each resource has exactly one watch.

With ``--ui`` the web view reads the same cache and tracker: it wants every namespace and every
group object (the reconciler wants one namespace and its own objects, by label), so the cache is
wide and serves the narrower requests from the view's informers: still one watch each."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.controller.main import build
from karta.controller.options import Options
from karta.controller.parts.platform import PlatformMetrics
from karta.kube import KubeClient
from karta.ui import ClusterSource

from ..kubehttp import KubeHTTP
from .gangs_support import (
    alpha_jobset_definitions,
    client_for,
    eventually,
    new_namespace,
    served_kube,
)
from .operator_support import install_karta_crd


@pytest.fixture(scope="module")
def kube(cluster: KubeHTTP, corpus: Path) -> Iterator[KubeClient]:
    install_karta_crd(cluster)  # the Kartas too: the definitions and the operator both read them
    yield from served_kube(cluster, corpus)


class Recorder:
    """The watches opened and the list requests of one client, by resource (group/plural),
    namespace, label selector and metadata-only."""

    def __init__(self, client: KubeClient) -> None:
        self.watches: Counter[tuple[str, str, str, str, bool]] = Counter()
        self.lists: Counter[tuple[str, str, str, str, bool]] = Counter()
        self._lock = threading.Lock()
        watch, listing = client.watch, client.list

        def key(what: Any, kwargs: dict[str, Any]) -> tuple[str, str, str, str, bool]:
            rtype = client.resource(what)
            return (
                rtype.group,
                rtype.plural,
                str(kwargs.get("namespace") or ""),
                str(kwargs.get("label_selector") or ""),
                bool(kwargs.get("metadata_only")),
            )

        def recording_watch(what: Any, **kwargs: Any) -> Any:
            # A watch the server refused (a CRD's resource a moment after it was installed
            # answers 404 or 503, and the same list-watch asks again) was never open: not counted.
            stream = watch(what, **kwargs)
            with self._lock:
                self.watches[key(what, kwargs)] += 1
            return stream

        def recording_list(what: Any, **kwargs: Any) -> Any:
            with self._lock:
                self.lists[key(what, kwargs)] += 1
            return listing(what, **kwargs)

        client.watch = recording_watch  # type: ignore[method-assign]
        client.list = recording_list  # type: ignore[method-assign]

    def by_resource(self, counts: Counter[tuple[str, str, str, str, bool]]) -> dict[tuple[str, str], int]:
        out: Counter[tuple[str, str]] = Counter()
        with self._lock:
            for (group, plural, _ns, _selector, _meta), n in counts.items():
                out[group, plural] += n
        return dict(out)


@pytest.mark.parametrize("ui", [False, True], ids=["parts", "parts+ui"])
def test_on_the_leader_each_resource_is_watched_once(
    cluster: KubeHTTP, kube: KubeClient, tmp_path: Path, ui: bool
) -> None:
    ns = new_namespace(cluster)
    alpha_jobset_definitions(tmp_path / "definitions")
    client = client_for(cluster)
    recorder = Recorder(client)
    options = Options(
        backend="coscheduling",
        gang_scope="all",  # predates the opt-in scope (issue 22)
        namespaces=(ns,),
        metrics_bind_address="0",
        health_probe_bind_address="0",
        definitions_dir=tmp_path / "definitions",
        cluster_definitions=True,
        shutdown_timeout=15.0,
        ui=ui,
        ui_bind_address="127.0.0.1:0",
    )
    controller = build(options, client)
    platform = controller.parts["platform-metrics"]
    assert isinstance(platform, PlatformMetrics)
    controller.manager.start()
    try:
        eventually(lambda: controller.manager.ready()[0], what="controller ready")
        eventually(platform.synced, what="platform metrics synced")
        gangs = controller.parts["gangs"]
        eventually(lambda: getattr(gangs, "_pods", None) is not None, what="the reconciler follows pods")
        if ui:
            source = controller.parts["ui-source"]
            assert isinstance(source, ClusterSource)
            eventually(source.synced.is_set, what="the web view synced")
        time.sleep(3.0)  # quiet: a second watch of anything would have started by now
        watched = recorder.by_resource(recorder.watches)
        listed = recorder.by_resource(recorder.lists)
    finally:
        controller.manager.shutdown()
        client.close()
    # Every resource two parts or more read, watched (and listed) once.
    for resource in [
        ("run.ai", "kartas"),  # live definitions + the Karta operator
        ("apiextensions.k8s.io", "customresourcedefinitions"),  # the CRD index + the tracker
        ("", "pods"),  # the gang reconciler (alpha definition) + the platform metrics
        ("batch", "jobs"),  # a covered type: the gang reconciler + the platform metrics
        ("kubeflow.org", "pytorchjobs"),
        ("jobset.x-k8s.io", "jobsets"),
        ("scheduling.x-k8s.io", "podgroups"),  # the backend's group objects
    ]:
        assert watched.get(resource) == 1, (resource, watched)
        # Lists are not counted strictly: a list the server answers 429/5xx is sent again by the
        # same list-watch (seen once for a group resource right after its CRD was installed).
        assert listed.get(resource, 0) <= 2, (resource, listed)
    assert all(n == 1 for n in watched.values()), sorted(recorder.watches.items())
    if ui:  # the view's own types: every backend's group objects, each watched once too
        assert ("scheduling.x-k8s.io", "podgroups") in watched
