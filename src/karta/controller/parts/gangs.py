"""The gang reconciler (mode B, docs/spec/gang-backends.md#modes): the backend's group objects for every
workload that owns its gang, of every type a usable definition describes.

**Types.** The covered-types tracker (:class:`karta.kube.tracker.CoveredTypes`, shared with the
other parts: it reads discovery every ``types_interval`` seconds, when the definitions change and
when a CRD does) gives the covered types; those whose definition validates and has gang
instructions get a reference on the shared cache's informer (:class:`karta.kube.cache.SharedCache`,
one per ``--namespace`` when given); types no longer served or covered release theirs.
Definitions whose gangs follow the pods (:func:`karta.gang.gangs_follow_pods`: the alpha format,
extension E1 with ``split.indexes: observed``) add a reference on pods; every backend adds ones
on its own group resources (label ``app.kubernetes.io/managed-by=karta``, indexed by owner UID), so
that an edit or deletion of one of our objects brings its workload back to the queue.

**Queue.** Keys are :class:`Key` (GVK, namespace, name): deduplicated, never two workers on one key,
rate-limited retries on API errors, every key again each ``--resync-period``.

**Reconcile.** The object comes from the informer's cache; only workloads that own their
gang are handled (:meth:`~karta.kube.workloads.TopLevel.of` with ``gangs``: the topmost workload in the
owner chain whose definition has gang instructions; a Katib Experiment's Trial, a CronJob's Job
and a ScheduledSparkApplication's SparkApplication own theirs, a JobSet's Jobs are in the
JobSet's). The definition's expressions run with a trusted evaluator for the catalog and a
budgeted, untrusted one otherwise. The plan and the rendering are computed in full before
anything is written: an error (or an error diagnostic of the plan) is a Warning event
``GangRenderFailed`` and ``karta_gang_render_errors``, and nothing is written. The objects are
then written by :class:`~karta.controller.runtime.group_writer.GroupWriter`
(server-side apply with force as ``karta``, immutable fields never forced, stale objects deleted).
A workload being deleted is left alone: its group objects carry an ownerReference with its UID and
go with it by garbage collection. Suspended workloads keep their group objects on every backend,
updated like any other (our rule: a group without running pods asks nothing of the scheduler, and
nothing is deleted and re-created across suspend and resume). For plans that follow the pods a young
stale group (:data:`ALPHA_STALE_GRACE_S`) is kept until it is older: the pod webhook may create it
before its pod is listed. Types are dropped only when missing from two discovery reads in a row
(the tracker's rule: after an API-server restart CRDs are served a moment later than built-in types).

**Scope.** With a :class:`~karta.controller.runtime.scope.GangScope` (karta-controller always gives
one: ``--gang-scope``), only the workloads in the gang-scheduling scope get group objects
(:func:`karta.gang.scope.gang_scope`: the label ``karta.run.ai/gang-scheduling`` on the workload and
its namespace). A namespace whose label changes brings its workloads back to the queue at once
(:func:`~karta.controller.runtime.mappers.namespace_keys`). A workload outside the scope that has
group objects (it left the scope) has them deleted once none of its pods still waits on them (a
pod not bound to a Node that names one of them: without its group such a pod would never be
scheduled); until then they are kept whole, not updated, and a ``GangScopeLeft`` event says why.
Its new pods are not bound (the webhook lets them through unchanged), so the scheduler places them
one by one, as any pod outside the scope.

**Quarantine.** A definition the process's :class:`~karta.controller.runtime.quarantine.Quarantine`
holds is not evaluated: its workloads keep the group objects last written for them (nothing is
updated or deleted) until its Karta changes; every budget breach of a reconcile is told to it.

**Definitions going away.** When a Karta is deleted, the type resolves again through the store: the
next definition (the directory's, else the catalog's) takes over, and the reconcile replaces what the
old plan made (new objects applied, the old ones deleted as stale). When no usable definition covers
the type any more, its informer stops and its group objects are **left as they are** (not updated,
not deleted): pods already bound keep their groups, and garbage collection still removes them with
their workloads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from karta import extract, model, render
from karta.controller.runtime.definitions import LiveDefinitions
from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.follow import FollowsTypes, Watched
from karta.controller.runtime.group_writer import MANAGED_SELECTOR, GroupWriter, WriteResult
from karta.controller.runtime.logs import logger
from karta.controller.runtime.mappers import namespace_keys, owner_keys
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import owner_rules, readable_owner_kinds
from karta.controller.runtime.quarantine import Quarantine
from karta.controller.runtime.scope import GangScope, scope_rules
from karta.controller.runtime.workqueue import WorkQueue
from karta.definitions import StoredDefinition, evaluator_for
from karta.errors import ClusterError, KartaError
from karta.gang import compute_gang_plan, gang_format, gangs_follow_pods
from karta.kube.cache import OWNER_INDEX, SharedCache
from karta.kube.client import KubeClient
from karta.kube.informer import Handler
from karta.kube.owners import OwnerChains, controller_ref
from karta.kube.reference_index import ReferenceIndex
from karta.kube.resources import ResourceType
from karta.kube.tracker import Coverage, CoveredTypes, same_definition
from karta.kube.workloads import TopLevel, workload_pods
from karta.model.gvk import GVK, GroupKind
from karta.model.names import plural_guess
from karta.rbac import build_rbac, rule
from karta.references import Resolution, referenced_kinds
from karta.render.backends import NO_BACKEND, BackendOptions, controller_options, gang_backend

__all__ = [
    "ALPHA_STALE_GRACE_S",
    "CONTROLLER",
    "GangReconciler",
    "Key",
    "workload_rules",
]

CONTROLLER: Final = "gangs"
_LOG = logger(CONTROLLER)
_POD = GVK("", "v1", "Pod")
ALPHA_STALE_GRACE_S: Final = 30.0
REFERENCES_RETRY_S: Final = 1.0  # a referenced kind's cache not synced yet: try again this soon


@dataclass(frozen=True, slots=True)
class Key:
    """A work-queue key: a workload, or (``pod``) a pod whose top owner is to be found."""

    gvk: GVK
    namespace: str
    name: str
    pod: bool = False

    def __str__(self) -> str:
        what = "Pod" if self.pod else self.gvk.kind
        return f"{what} {self.namespace}/{self.name}" if self.namespace else f"{what} {self.name}"


class GangReconciler(FollowsTypes):
    """The gang reconciler as a leader-only manager part (``run`` blocks until ``stop``)."""

    name = CONTROLLER

    def __init__(
        self,
        client: KubeClient,
        *,
        definitions: LiveDefinitions,
        backend: str,
        metrics: Metrics,
        events: EventRecorder,
        namespaces: tuple[str, ...] = (),
        scheduler_name: str | None = None,
        workers: int = 4,
        resync_period: float = 600.0,
        types_interval: float = 30.0,
        informer_retry_s: float = 5.0,
        cache: SharedCache | None = None,
        tracker: CoveredTypes | None = None,
        quarantine: Quarantine | None = None,
        scope: GangScope | None = None,
    ) -> None:
        self.client = client
        self.scope = scope
        self.quarantine = quarantine or Quarantine(metrics=metrics)
        self._init_following(
            client,
            definitions,
            cache=cache,
            tracker=tracker,
            types_interval=types_interval,
            retry_s=informer_retry_s,
            log=_LOG,
        )
        self.definitions = definitions
        self.backend = gang_backend(backend)
        self.metrics = metrics
        self.events = events
        self.namespaces: tuple[str | None, ...] = tuple(namespaces) or (None,)
        self.scheduler_name = scheduler_name
        self.workers = workers
        self.resync_period = resync_period
        self.alpha_stale_grace_s = ALPHA_STALE_GRACE_S
        self.queue: WorkQueue[Key] = WorkQueue(CONTROLLER, metrics)
        self.writer = GroupWriter(client, self._group_resources, cache=self)
        self._lock = threading.RLock()
        self._types: dict[GroupKind, Watched] = {}
        self._groups: dict[GVK, Watched] = {}  # the backend's served group resources
        self._pods: Watched | None = None
        self._top_level = TopLevel(client, (), readable=frozenset())
        self._chains = OwnerChains(client, readable=frozenset())
        self._options: BackendOptions = controller_options(self.backend.name, scheduler_name=scheduler_name)
        self._refreshed = threading.Event()
        self._stop = threading.Event()
        self._invalid_reported: set[tuple[str, int]] = set()
        self._deleted_pods: dict[Key, dict[str, Any]] = {}
        # Extension E3: references read from the shared cache; a referenced object's change
        # brings back every workload that reads it.
        self.references = ReferenceIndex(
            client, self.cache, namespaces=self.namespaces, on_change=self._reference_changed
        )

    # -- readiness and introspection ------------------------------------------------------------
    def ready(self) -> bool:
        """Types read at least once and every informer synced (the manager's readiness check)."""
        if not self._refreshed.is_set():
            return False
        with self._lock:
            watched = self._all_watched()
        return all(w.synced for w in watched)

    def _all_watched(self) -> list[Watched]:
        return [*self._types.values(), *self._groups.values(), *([self._pods] if self._pods else [])]

    def watched_types(self) -> dict[GroupKind, GVK]:
        with self._lock:
            return {gk: w.resource.gvk for gk, w in self._types.items()}

    # -- running --------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        self._stop = stop
        if self.scope is not None:
            self.scope.listen(self._namespace_changed)

        def release() -> list[Watched]:
            with self._lock:
                watched = self._all_watched()
                self._types, self._groups, self._pods = {}, {}, None
            self.references.close()
            return watched

        self._reconcile_following(stop, CONTROLLER, release)

    def resync(self) -> None:
        """Every workload of every watched type back into the queue."""
        with self._lock:
            watched = list(self._types.values())
        for w in watched:
            self._enqueue_all(w)

    def _enqueue_all(self, w: Watched) -> None:
        for obj in w.objects():
            self._enqueue_object(w.resource.gvk, obj)

    def _enqueue_object(self, gvk: GVK, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        self.queue.add(Key(gvk, str(meta.get("namespace") or ""), str(meta.get("name") or "")))

    # -- types ----------------------------------------------------------------------------------
    def _usable(self, definition: StoredDefinition) -> bool:
        karta = definition.karta
        if gang_format(karta) is None:
            return False
        try:
            model.validate_or_raise(karta)
        except KartaError as exc:
            marker = (definition.name, id(karta))
            if marker not in self._invalid_reported:
                self._invalid_reported.add(marker)
                _LOG.warning(
                    "definition is not usable; its type is not reconciled",
                    extra={"definition": definition.name, "error": str(exc)},
                )
            return False
        return True

    def _coverage(self, coverage: Coverage) -> None:
        """Take and release references so that they match the served, covered, usable types."""
        store = coverage.store
        wanted = {gk: c for gk, c in coverage.types.items() if self._usable(c.definition)}
        resources = list(coverage.resources)
        self._options = self._backend_options(resources)
        readable = readable_owner_kinds(d.karta for d in store.definitions)
        top_level = TopLevel.of(self.client, store, readable=readable, gangs=True)
        requeue: list[Watched] = []
        stopped: list[Watched] = []
        started: list[tuple[Watched, _TypedHandler, dict[str, Any]]] = []
        with self._lock:
            self._top_level = top_level
            self._chains = OwnerChains(self.client, readable=readable)
            for gk in list(self._types):
                current = self._types[gk]
                target = wanted.get(gk)
                if target is None or target.resource.gvk != current.resource.gvk:
                    stopped.append(self._types.pop(gk))
                    _LOG.info("type no longer reconciled", extra={"type": current.resource.token})
                elif current.definition is None or not same_definition(current.definition, target.definition):
                    current.definition = target.definition
                    requeue.append(current)
            for gk, target in wanted.items():
                if gk not in self._types:
                    w = self._types[gk] = Watched(target.resource, target.definition)
                    started.append((w, self._workload_handler, {}))
                    _LOG.info(
                        "reconciling type",
                        extra={"type": target.resource.token, "definition": target.definition.name},
                    )
            # The backend's group resources, for edits and deletions of our objects.
            group_gvks = {
                r.gvk: r
                for r in resources
                if r.group == self.backend.api_group
                and r.plural in self.backend.resources
                and r.supports("list", "watch")
                and self._group_version(r)
            }
            for gvk in list(self._groups):
                if gvk not in group_gvks:
                    stopped.append(self._groups.pop(gvk))
            for gvk, rtype in group_gvks.items():
                if gvk not in self._groups:
                    w = self._groups[gvk] = Watched(rtype, None)
                    started.append(
                        (
                            w,
                            self._group_handler,
                            {"label_selector": MANAGED_SELECTOR, "indexes": (OWNER_INDEX,)},
                        )
                    )
            # Pods, when a definition finds its gangs from them (alpha; E1 indexes observed).
            alpha = any(
                w.definition is not None and gangs_follow_pods(w.definition.karta)
                for w in self._types.values()
            )
            if alpha and self._pods is None:
                pod_type = next((r for r in resources if r.gvk == _POD), None)
                if pod_type is not None:
                    # Full pods, not metadata: the platform metrics read the same cache.
                    self._pods = Watched(pod_type, None)
                    started.append((self._pods, self._pod_handler, {}))
            elif not alpha and self._pods is not None:
                stopped.append(self._pods)
                self._pods = None
        for w in stopped:
            w.release()
        for w, handler, how in started:
            self._watch(w, handler, **how)
        for w in requeue:
            self._enqueue_all(w)
        self._refreshed.set()

    def _group_version(self, rtype: ResourceType) -> bool:
        """The one version of the group resources we render (Workload API: the chosen release)."""
        return self.backend.renders_version(self._options, rtype.kind, rtype.version)

    def _backend_options(self, resources: list[ResourceType]) -> BackendOptions:
        return controller_options(self.backend.name, resources, scheduler_name=self.scheduler_name)

    def _group_resources(self) -> list[ResourceType]:
        with self._lock:
            return [w.resource for w in self._groups.values()]

    def _synced_groups(self, rtype: ResourceType) -> Watched | None:
        with self._lock:
            w = self._groups.get(rtype.gvk)
        return w if w is not None and w.synced else None

    def cached_object(
        self, rtype: ResourceType, namespace: str, name: str
    ) -> Mapping[str, Any] | Literal[False] | None:
        """A group object from its synced informer (False: not there; None: no synced cache)."""
        w = self._synced_groups(rtype)
        if w is None:
            return None
        return w.get(namespace, name) or False

    def owned_objects(self, rtype: ResourceType, namespace: str, uid: str) -> list[dict[str, Any]] | None:
        """Our objects of ``rtype`` in ``namespace`` owned by ``uid``, from the informer's owner
        index once synced (else None)."""
        w = self._synced_groups(rtype)
        if w is None:
            return None
        return [
            obj
            for watch in w.watches.values()
            for obj in watch.by_index(OWNER_INDEX, uid)
            if (obj.get("metadata") or {}).get("namespace") == namespace
        ]

    def _watch(
        self,
        w: Watched,
        handler: _TypedHandler,
        *,
        label_selector: str | None = None,
        indexes: tuple[str, ...] = (),
    ) -> None:
        """References on the shared cache for ``w``: one per watched namespace (the handler is
        given the objects already cached first)."""
        rtype = w.resource
        for ns in self.namespaces if rtype.namespaced else (None,):
            w.watches[ns] = self.cache.watch(
                rtype,
                namespace=ns,
                label_selector=label_selector,
                handler=_bound(handler, rtype),
                indexes=indexes,
            )

    # -- event handlers (informer threads: quick) ------------------------------------------------
    def _namespace_changed(self, namespace: Mapping[str, Any]) -> None:
        """A namespace's scope label changed: its workloads come into the scope or leave it."""
        with self._lock:
            watched = list(self._types.values())
        listed = ((w.resource.gvk, obj) for w in watched for obj in w.objects())
        for gvk, ns, name in namespace_keys(namespace, listed):
            self.queue.add(Key(gvk, ns, name))

    def _workload_handler(
        self, rtype: ResourceType, kind: str, obj: dict[str, Any], _old: dict[str, Any] | None
    ) -> None:
        if kind == "DELETED":
            meta = obj.get("metadata") or {}
            self.references.forget(
                Key(rtype.gvk, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            )
            return  # the group objects go by garbage collection (ownerReference with the UID)
        self._enqueue_object(rtype.gvk, obj)

    def _reference_changed(self, reader: object) -> None:
        """A referenced object (extension E3) a workload reads changed: that workload again."""
        if isinstance(reader, Key):
            self.queue.add(reader)

    def _group_handler(
        self, _rtype: ResourceType, kind: str, obj: dict[str, Any], _old: dict[str, Any] | None
    ) -> None:
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        if kind == "DELETED":
            self.writer.forget(
                str(obj.get("apiVersion") or ""),
                str(obj.get("kind") or ""),
                namespace,
                str(meta.get("name") or ""),
            )
        with self._lock:
            reconciled = {gk: w.resource.gvk for gk, w in self._types.items()}
        for gvk, ns, name in owner_keys(obj, reconciled):
            self.queue.add(Key(gvk, ns, name))

    def _pod_handler(
        self, _rtype: ResourceType, kind: str, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> None:
        if kind == "MODIFIED" and old is not None:
            labels = (obj.get("metadata") or {}).get("labels")
            if labels == (old.get("metadata") or {}).get("labels"):
                return  # status updates do not change gang membership
        if controller_ref(obj) is None:
            return
        meta = obj.get("metadata") or {}
        key = Key(_POD, str(meta.get("namespace") or ""), str(meta.get("name") or ""), pod=True)
        if kind == "DELETED":  # gone from the cache: its owners are read from the last state seen
            with self._lock:
                self._deleted_pods[key] = obj
        self.queue.add(key)

    # -- reconcile ------------------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        if key.pod:
            self._resolve_pod(key)
            return None
        with self._lock:
            w = self._types.get(key.gvk.group_kind)
            top_level = self._top_level
            chains = self._chains
            options = self._options
        if w is None or w.definition is None:
            return None  # no usable definition covers the type any more: its objects are left
        obj = w.get(key.namespace, key.name)
        if obj is None:
            return None  # deleted: garbage collection removes its group objects
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return None
        if not top_level.is_top_level(obj):
            return None
        if self.scope is not None and not self.scope.decide(obj).in_scope:
            self._out_of_scope(obj, key, chains)
            return None
        definition = w.definition
        if self.quarantine.holds(definition):
            return None  # not evaluated: its group objects stay as last written
        karta = definition.karta
        evaluator = evaluator_for(definition)
        try:
            model.validate_or_raise(karta)
            resolution = self.references.resolve(key, karta, obj, evaluator)
            if resolution is None:
                return REFERENCES_RETRY_S  # a referenced kind's cache has not synced yet
            self._reference_problems(obj, resolution)
            evaluator = resolution.evaluator(evaluator)
            factory = extract.ComponentFactory(karta, obj, evaluator=evaluator)
            pods: list[dict[str, Any]] = []
            if gangs_follow_pods(karta):
                pods, warnings = workload_pods(self.client, obj, chains=chains)
                if warnings:
                    raise ClusterError("; ".join(warnings))
            plan = compute_gang_plan(factory, pods, evaluator=evaluator)
            errors = [d.message for d in plan.diagnostics if d.is_error]
            if errors:
                raise _PlanError("; ".join(errors))
            rendering = render.render(self.backend.name, factory, pods=pods, plan=plan, options=options)
        except ClusterError:
            raise  # the cluster, not the workload: retried with back-off
        except KartaError as exc:
            self.quarantine.breached(definition, exc, part=CONTROLLER)
            self._render_failed(obj, w.resource.gvk, definition, str(exc))
            return None  # the workload or the definition must change first (or the next resync)
        if rendering.owner_patch is not None:
            self._patch_owner(obj, w.resource, rendering.owner_patch)
        # Alpha gangs come from pods, and the pod-admission webhook may create a pod's group just
        # before the pod is stored (and before pod lists show it): a young group missing from the
        # plan is given time before it counts as stale.
        follows = gangs_follow_pods(karta)
        grace = self.alpha_stale_grace_s if follows else 0.0
        result = self.writer.sync(
            obj,
            list(rendering.objects),
            namespace=key.namespace,
            stale_grace_s=grace,
            pods=self._pods_of(obj, chains, pods if follows else None),
        )
        self._report(obj, result)
        if result.failed:
            raise _WriteError(f"{len(result.failed)} group object(s) not written: {'; '.join(result.failed)}")
        return result.deferred

    def _out_of_scope(self, obj: Mapping[str, Any], key: Key, chains: OwnerChains) -> None:
        """A workload outside the scope: its group objects, if any, deleted once no pod waits on them."""
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        owned = [
            o for r in self._group_resources() for o in (self.owned_objects(r, key.namespace, uid) or [])
        ]
        if not owned:
            return
        names = {str((o.get("metadata") or {}).get("name") or "") for o in owned}
        pods, warnings = workload_pods(self.client, obj, chains=chains)
        if warnings:
            raise ClusterError("; ".join(warnings))
        waiting = sorted(str((p.get("metadata") or {}).get("name")) for p in pods if _waits_on(p, names))
        if waiting:
            self.events.normal(
                obj,
                "GangScopeLeft",
                f"outside the gang-scheduling scope: its {self.backend.name} group objects are kept "
                f"until no pod waits on them ({', '.join(waiting[:5])}{' …' if len(waiting) > 5 else ''})",
            )
            return
        result = self.writer.sync(obj, [], namespace=key.namespace)
        self._report(obj, result)
        if result.failed:
            raise _WriteError(f"{len(result.failed)} group object(s) not deleted: {'; '.join(result.failed)}")

    def _pods_of(
        self, obj: Mapping[str, Any], chains: OwnerChains, listed: list[dict[str, Any]] | None
    ) -> Callable[[], Sequence[Mapping[str, Any]] | None]:
        """The workload's pods for the writer (an immutable change: are any of its gang's bound?),
        listed only when asked; None when the list was refused."""

        def pods() -> Sequence[Mapping[str, Any]] | None:
            if listed is not None:
                return listed
            found, warnings = workload_pods(self.client, obj, chains=chains)
            return None if warnings else found

        return pods

    def _resolve_pod(self, key: Key) -> None:
        """Enqueue the top-level workload of a pod (its controller chain, depth ≤ 6)."""
        with self._lock:
            pods = self._pods
            types = dict(self._types)
            chains = self._chains
        if pods is None:
            return
        with self._lock:
            deleted = self._deleted_pods.pop(key, None)
        pod = pods.get(key.namespace, key.name) or deleted
        if pod is None:
            return
        chain = chains.walk(pod)
        for link in reversed(chain.links):  # the topmost covered owner
            w = types.get(GroupKind(link.group, link.kind))
            if w is not None:
                # Only a definition whose gangs come from pods has a plan that pods change.
                if w.definition is not None and gangs_follow_pods(w.definition.karta):
                    self.queue.add(Key(w.resource.gvk, key.namespace, link.name))
                return

    def _patch_owner(self, obj: Mapping[str, Any], rtype: ResourceType, patch: Mapping[str, Any]) -> None:
        """KAI mode B: ``kai.scheduler/skip-podgrouper`` on the workload, once."""
        meta = obj.get("metadata") or {}
        wanted = (patch.get("metadata") or {}).get("annotations") or {}
        have = meta.get("annotations") or {}
        if all(have.get(k) == v for k, v in wanted.items()):
            return
        self.client.patch(rtype, str(meta.get("name")), dict(patch), namespace=meta.get("namespace"))

    def _reference_problems(self, obj: Mapping[str, Any], resolution: Resolution) -> None:
        """Extension E3: a referenced object that is not there is a Warning event
        ``ReferenceNotFound`` (the gang follows what the definition computes with null, so no
        stale group is kept); a reference that could not be read (forbidden, not served) is an
        error: nothing is written (``GangRenderFailed`` names the reference and its kind)."""
        errors = [p.message for p in resolution.errors]
        if errors:
            raise _ReferenceError("; ".join(errors))
        for problem in resolution.problems:
            self.events.warning(obj, "ReferenceNotFound", problem.message)

    def _render_failed(
        self, obj: Mapping[str, Any], gvk: GVK, definition: StoredDefinition, message: str
    ) -> None:
        self.metrics.gang_render_errors.labels(group=gvk.group, kind=gvk.kind).inc()
        self.events.warning(
            obj,
            "GangRenderFailed",
            f"cannot render {self.backend.name} group objects with definition {definition.name}: {message}",
        )
        _LOG.warning(
            "cannot render group objects; nothing written",
            extra={"controller": CONTROLLER, "key": _label(obj), "error": message},
        )

    def _report(self, obj: Mapping[str, Any], result: WriteResult) -> None:
        backend = self.backend.name
        for outcome, items in (
            ("applied", result.applied),
            ("unchanged", result.unchanged),
            ("deleted", result.deleted),
            ("replaced", result.replaced),
            ("failed", result.failed),
        ):
            if items:
                self.metrics.gang_objects.labels(backend=backend, outcome=outcome).inc(len(items))
        for item in result.immutable:
            self.metrics.gang_immutable_changes.labels(backend=backend).inc()
            self.events.warning(
                obj,
                "GangImmutableChange",
                f"{item}: the {backend} object cannot change this field, and replacing it now could "
                "split the gang; it was left as it is (it is replaced once none of the gang's pods "
                "is bound; delete the object to have it re-created)",
            )
        for item in result.replaced:
            self.events.normal(
                obj,
                "GangObjectReplaced",
                f"{item}: the {backend} object cannot change this field; none of the gang's pods "
                "was bound, so it was deleted and created again",
            )
        if result.applied or result.deleted or result.replaced:
            _LOG.info(
                "group objects written",
                extra={
                    "controller": CONTROLLER,
                    "key": _label(obj),
                    "applied": result.applied,
                    "deleted": result.deleted,
                    "replaced": result.replaced,
                },
            )


class _PlanError(KartaError):
    """An error diagnostic of the gang plan (a pod the plan could not place)."""


class _ReferenceError(KartaError):
    """A reference of the workload could not be read (extension E3): forbidden, not served."""


class _WriteError(ClusterError):
    """Some group objects could not be written; the reconcile is retried."""


_TypedHandler = Callable[[ResourceType, str, dict[str, Any], dict[str, Any] | None], None]


def _bound(handler: _TypedHandler, rtype: ResourceType) -> Handler:
    def bound(kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        handler(rtype, kind, obj, old)

    return bound


def _waits_on(pod: Mapping[str, Any], groups: set[str]) -> bool:
    """A pod not bound to a Node, not finished, that names one of ``groups`` (a label or annotation
    value, or the Workload API's ``spec.schedulingGroup``/``workloadRef``): without its group the
    scheduler would never place it."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    if spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    values: list[Any] = [*(meta.get("labels") or {}).values(), *(meta.get("annotations") or {}).values()]
    for field_name in ("schedulingGroup", "workloadRef"):
        ref = spec.get(field_name)
        if isinstance(ref, Mapping):
            values.extend(ref.values())
    return any(isinstance(v, str) and v in groups for v in values)


def _label(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace"), meta.get("name")
    return f"{obj.get('kind')} {ns}/{name}" if ns else f"{obj.get('kind')} {name}"


def workload_rules(
    kartas: Sequence[model.Karta], *, backend: str, plurals: Mapping[tuple[str, str], str] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The RBAC rules of a gang ``backend`` (none for ``none``) for the definitions ``kartas``, and
    notes on guessed plurals: the workloads and their pods read (the covered types' caches of this
    reconciler and of the platform metrics; :func:`karta.rbac.build_rbac` without its Karta rule),
    the owner walk's ``get`` (:func:`karta.controller.runtime.owners.owner_rules`: the pod webhook
    and alpha gangs), the backend's group objects (its registry record's rule), and the record's
    ``workload_verbs`` on the workloads (``kai``: patch, the skip-podgrouper annotation), and the
    namespaces read by the gang-scheduling scope (:func:`~karta.controller.runtime.scope.scope_rules`)."""
    if backend == NO_BACKEND:
        return [], []
    plurals = plurals or {}
    (role, *_), notes = build_rbac(
        kartas, name="karta-controller", backends=(backend,), plurals=plurals, owners=False
    )
    rules = [r for r in role["rules"] if r["apiGroups"] != ["run.ai"]]
    read: dict[str, set[str]] = {}
    for each in rules[:-1]:  # the last rule is the backend's
        read.setdefault(each["apiGroups"][0], set()).update(each["resources"])
    rules[-1:-1] = owner_rules(kartas, read=read, plurals=plurals)
    rules.extend(scope_rules())  # the gang-scheduling scope reads the namespaces' labels
    verbs = gang_backend(backend).workload_verbs
    if verbs:
        # The workloads only: the kinds their references read (extension E3) stay read-only.
        roots = {(k.root.kind.group, k.root.kind.kind) for k in kartas if k.root.kind is not None}
        referenced = {
            (group, plurals.get((group, kind)) or plural_guess(kind))
            for karta in kartas
            for group, _, kind in referenced_kinds(karta)
            if (group, kind) not in roots
        }
        written = {
            group: {n for n in names if (group, n) not in referenced} - ({"pods"} if group == "" else set())
            for group, names in read.items()
        }
        rules.extend(rule(group, sorted(names), verbs) for group, names in sorted(written.items()) if names)
    return rules, notes
