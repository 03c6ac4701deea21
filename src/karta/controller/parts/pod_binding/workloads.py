"""The admission process's own watch of the covered workloads: the fresh read of a pod's workload
without a request (issue 21 item 6, issue 22 item 5).

Pod admission renders a pod's gang from its top-level workload, and the workload must be the one
whose change created the pod: a scale-up's new pods are admitted only once their group object
carries the new minimum (:meth:`~karta.controller.parts.pod_binding.admission.PodBinder.fresh`).
Reading it from the API server for every pod put the server's latency under load (the
2,000-workload burst) into every admission. :class:`WatchedWorkloads` keeps, in the admission
process, one informer per covered type whose definition has gang instructions (on the process's
:class:`~karta.kube.cache.SharedCache`, one per ``--namespace`` when given, types followed with
the :class:`~karta.kube.tracker.CoveredTypes` tracker as the gang reconciler does), full objects
(the scale lives in ``spec``). :meth:`WatchedWorkloads.get` answers from it only once that type's
informer has synced; :meth:`~karta.controller.parts.pod_binding.admission.PodBinder.fresh` uses
the watched object when its ``resourceVersion`` is at least the one already held, else reads the
server as before.

**Why this keeps item 5's guarantee in practice.** The workload's operator creates the new pods
because it was told of the scale change by its own watch of the workload; this process watches
the same resource on the same API server, which sends the event to every watcher from the same
watch cache at once. Before the first new pod reaches this webhook, the operator has decoded the
event, reconciled and sent a pod POST that the API server admitted up to the mutating webhooks;
this process only has to decode one watch event, on a thread of an interpreter that serves
admissions (mostly idle, short requests). So the event is ahead by the operator's reconcile and a
round trip: milliseconds to seconds, against microseconds of decoding.

**What it does not guarantee.** Nothing orders the two deliveries: a watch that is re-listing
(after a 410, a dropped connection, an API-server restart), a child whose interpreter is busy
(a burst of admissions, a long evaluation), or an operator that creates pods from a cache read
(not from the event) can let a pod arrive before this process saw the change. A watched object
older than the one held falls back to the server read; but a watched object that is merely *as
new* as the cached one, both behind the server, is used. The reconciler still writes the new
minimum, and admission never lowers a minimum (the writer's admission mode), so the window is
the one the 10 s owner cache had before the fresh read, narrowed to the watch's lag.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any, Protocol

from karta.controller.runtime.definitions import LiveDefinitions
from karta.controller.runtime.follow import FollowsTypes
from karta.controller.runtime.logs import logger
from karta.gang import gang_format
from karta.kube.cache import SharedCache, Watch
from karta.kube.client import KubeClient
from karta.kube.owners import OwnerLink
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage, CoveredTypes
from karta.model.gvk import GroupKind

__all__ = ["WatchedWorkloads", "WorkloadView", "not_older"]

_LOG = logger("admission-workloads")
_COMPARABLE = re.compile(r"[1-9][0-9]*")


class WorkloadView(Protocol):
    """What pod admission reads a workload from without a request (the seam tests fake)."""

    def get(self, link: OwnerLink) -> Mapping[str, Any] | None:
        """The watched object ``link`` names, or None when not watched, not synced or not held."""
        ...


def not_older(watched: Mapping[str, Any], held: Mapping[str, Any]) -> bool:
    """Whether ``watched``'s resourceVersion is at least ``held``'s (two versions of one object).
    Both must be positive decimal integers without leading zeros, the values KEP-5504 (stable in
    Kubernetes 1.35) lets clients compare as numbers; any other value is not compared (False: the
    caller reads the server)."""
    a, b = _version(watched), _version(held)
    return bool(_COMPARABLE.fullmatch(a) and _COMPARABLE.fullmatch(b)) and int(a) >= int(b)


def _version(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""


class WatchedWorkloads(FollowsTypes):
    """The covered workloads with gang instructions, watched (see the module docstring); a manager
    part of the admission process (``run`` blocks until ``stop``)."""

    name = "admission-workloads"

    def __init__(
        self,
        client: KubeClient,
        *,
        definitions: LiveDefinitions,
        namespaces: tuple[str, ...] = (),
        cache: SharedCache | None = None,
        tracker: CoveredTypes | None = None,
    ) -> None:
        self._init_following(
            client, definitions, cache=cache, tracker=tracker, types_interval=30.0, retry_s=5.0, log=_LOG
        )
        self.namespaces: tuple[str | None, ...] = tuple(namespaces) or (None,)
        self._lock = threading.Lock()
        self._types: dict[GroupKind, tuple[ResourceType, dict[str | None, Watch]]] = {}

    def run(self, stop: threading.Event) -> None:
        def body() -> None:
            stop.wait()

        try:
            self._follow(stop, body)
        finally:
            with self._lock:
                watched, self._types = list(self._types.values()), {}
            for _, watches in watched:
                for watch in watches.values():
                    watch.release()

    def watched(self) -> dict[GroupKind, ResourceType]:
        with self._lock:
            return {gk: rtype for gk, (rtype, _) in self._types.items()}

    def synced(self) -> bool:
        """Every watched type's informers have listed (until then, fresh reads go to the server)."""
        with self._lock:
            watches = [w for _, by_ns in self._types.values() for w in by_ns.values()]
        return all(w.synced.is_set() for w in watches)

    def _coverage(self, coverage: Coverage) -> None:
        """References that match the covered types with gang instructions (one per namespace)."""
        wanted = {
            gk: c.resource for gk, c in coverage.types.items() if gang_format(c.definition.karta) is not None
        }
        stopped: list[Watch] = []
        started: list[tuple[GroupKind, ResourceType]] = []
        with self._lock:
            for gk in list(self._types):
                rtype, watches = self._types[gk]
                if gk not in wanted or wanted[gk].gvk != rtype.gvk:
                    del self._types[gk]
                    stopped.extend(watches.values())
            started = [(gk, rtype) for gk, rtype in wanted.items() if gk not in self._types]
            for gk, rtype in started:
                self._types[gk] = (rtype, {})
        for watch in stopped:
            watch.release()
        for gk, rtype in started:
            watches = {
                ns: self.cache.watch(rtype, namespace=ns)
                for ns in (self.namespaces if rtype.namespaced else (None,))
            }
            with self._lock:
                entry = self._types.get(gk)
                if entry is not None and entry[0] is rtype and not entry[1]:
                    entry[1].update(watches)
                    watches = {}
            for watch in watches.values():  # dropped meanwhile by a later coverage
                watch.release()
            _LOG.info("watching workloads for admission", extra={"type": rtype.token})

    def get(self, link: OwnerLink) -> Mapping[str, Any] | None:
        group, _, version = link.api_version.rpartition("/")
        with self._lock:
            entry = self._types.get(GroupKind(group, link.kind))
        if entry is None:
            return None
        rtype, watches = entry
        if rtype.version != version or not watches:
            return None  # another version than the one watched: its object converted is not compared
        watch = watches.get(link.namespace or None) or watches.get(None)
        if watch is None or not watch.synced.is_set():
            return None
        found = watch.get(f"{link.namespace}/{link.name}" if link.namespace else link.name)
        if found is None:
            return None
        uid = str((found.get("metadata") or {}).get("uid") or "")
        return found if not link.uid or uid == link.uid else None
