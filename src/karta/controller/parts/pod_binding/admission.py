"""Pod binding at admission (docs/spec/gang-backends.md#modes, mode B option 2): the mutating webhook on Pod
CREATE at :data:`PATH` that points each pod of a covered workload at its gang's group object.

From the pod alone (its owner references and labels: the workload's own controller is never waited
for) :class:`PodBinder` resolves the gang's owner (:class:`~karta.controller.runtime.owners.OwnerCache`:
the topmost owner whose definition has gang instructions, :meth:`PodBinder.top`), the definition
for its GVK (:class:`~karta.definitions.DefinitionStore`), and renders the
backend's objects and this pod's binding with the library (:func:`karta.render.render` with the pod,
so alpha gangs, discoverable only from pods, are rendered too). :class:`PodAdmission` is the webhook
handler: it writes the rendered group objects with the gang reconciler's writer in admission mode
(:meth:`~karta.controller.runtime.group_writer.GroupWriter.ensure`: server-side apply as ``karta``
without force, an object the API server already holds with other values accepted as it is, the
record's ``create_only`` kinds, a Workload API Workload, only created when missing) so that the
pod never points at a group that does not exist, then answers with a JSON patch:

- Workload API: ``spec.schedulingGroup.podGroupName`` (immutable after creation, the reason this
  webhook exists);
- Volcano: annotations ``scheduling.k8s.io/group-name`` and ``volcano.sh/task-spec``;
- coscheduling: label ``scheduling.x-k8s.io/pod-group``;
- KAI (mode B): annotation ``pod-group-name``, label ``kai.scheduler/subgroup-name`` and the
  record's admission annotation ``kai.scheduler/skip-podgrouper: "true"`` on the pod (KAI's
  pod-grouper reads it on the pod or any owner; on the pod we need not patch the workload);

plus ``spec.schedulerName`` (the backend's, or ``--scheduler-name``). The options are the gang
reconciler's (:func:`karta.render.backends.controller_options`), from the resources the API server
serves (:class:`~karta.controller.runtime.served.ServedOptions`: the Workload API version), so
that both render the same objects and bindings. A pod that belongs to no covered
workload, or to a workload outside the gang-scheduling scope
(:class:`~karta.controller.runtime.scope.GangScope`, the top owner's labels and its namespace's),
is allowed unchanged.

**Never a partial gang** (docs/controller/pod-binding.md). Without a scope (``scope`` None) every
failure (an owner that cannot be read, an ambiguous definition, an extraction or jq budget error,
an API error, more than :data:`HANDLING_TIMEOUT_S` seconds) allows the pod unchanged. With one,
only a workload known to be outside the scope fails open; for the others a failure **denies** the
pod (the workload's controller creates it again, with back-off, and says so in a ``FailedCreate``
event carrying our message), except that when the binding is known and only the group objects
could not be written, a backend whose scheduler holds pods of a missing group
(``holds_missing_group``: the Workload API) gets the bound pod admitted: the gang reconciler writes
the group and the scheduler binds the gang then. Every failure counts
``karta_unbound_pods{reason}`` and writes a Warning event on the workload when known
(asynchronously: the answer never waits for it). Hostile input never raises. A
definition the process's :class:`~karta.controller.runtime.quarantine.Quarantine` holds is not
evaluated (reason ``quarantined``); every budget breach is told to it.
Dry-run requests get the patch without any object being written.

**References (extension E3).** A workload whose definition reads related objects is evaluated with
them bound from the shared cache (:class:`~karta.kube.reference_index.ReferenceIndex`), never read
from the API per pod. So that the first pod of such a kind is answered with its gang, the referenced
kinds are watched from when the definition is loaded (:class:`ReferenceWarmup`, a part on every
replica: at start, at every definitions change, and every :data:`WARMUP_RETRY_S` for a kind not
served yet), not from the first pod; a pod that comes before a kind has synced waits for it within
its own budget, until :data:`REFERENCES_RESERVE_S` before the answer's deadline (what rendering and
writing the group objects need), never on a kind whose watch fails (forbidden, not served: reported
at once), and is then refused (reason ``references``, naming the kinds not synced) like any pod
whose workload cannot be read.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from karta.controller.runtime.events import EventRecorder
from karta.controller.runtime.group_writer import GroupWriter, WriteResult
from karta.controller.runtime.logs import logger
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.owners import OwnerCache, OwnerWalk
from karta.controller.runtime.quarantine import Quarantine
from karta.controller.runtime.webhook.review import Answer, allow, deny, json_pointer
from karta.definitions import DefinitionStore, StoredDefinition, evaluator_for
from karta.errors import (
    ClusterError,
    ExtractionError,
    GangError,
    JqBudgetError,
    JqError,
    KartaError,
    NoDefinitionError,
    PodQueryError,
    ResolutionError,
)
from karta.extract import ComponentFactory
from karta.gang import SCOPE_LABEL, compute_gang_plan, gang_format
from karta.kube.client import KubeClient
from karta.kube.reference_index import ReferenceIndex
from karta.model import GVK
from karta.model.findings import Severity
from karta.render import BackendOptions, render
from karta.render.backends import controller_options, gang_backend

if TYPE_CHECKING:
    from karta.controller.runtime.scope import GangScope
    from karta.jq import Evaluator

__all__ = [
    "EVENT_REASON",
    "HANDLING_TIMEOUT_S",
    "PATH",
    "REFERENCES_RESERVE_S",
    "WARMUP_RETRY_S",
    "WEBHOOK_NAME",
    "Binding",
    "BindingFailure",
    "PodAdmission",
    "PodBinder",
    "ReferenceWarmup",
    "binding_patch",
    "conflicting_group",
    "missing_binding",
    "pod_webhook",
]

PATH: Final = "/mutate--v1-pod"
WEBHOOK_NAME: Final = "pods.karta.run.ai"
HANDLING_TIMEOUT_S: Final = 4.0  # the API server gives the webhook 5 s
EVENT_REASON: Final = "PodNotBound"
# Extension E3: a pod whose referenced kinds have not synced waits for them until this long before
# its answer's deadline (rendering and writing the group objects take the rest).
REFERENCES_RESERVE_S: Final = 1.5
WARMUP_RETRY_S: Final = 30.0  # the warm-up again (a referenced kind served later, a failed discovery)
_POLL_S: Final = 0.1  # how often the warm-up's wait looks at the stop and a poke
_LOG = logger("pods")


class BindingFailure(Exception):
    """The pod belongs to a covered workload but cannot be bound: ``reason`` is the metric label."""

    def __init__(self, reason: str, message: str, workload: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.workload = workload


@dataclass(frozen=True)
class Binding:
    """A pod of a covered workload: the workload, its definition, the rendered group objects and this
    pod's binding as a merge patch (``{metadata: {labels, annotations}, spec}``; None when the pod is
    in no gang, e.g. a component outside the gang)."""

    workload: dict[str, Any]
    definition: StoredDefinition
    objects: tuple[dict[str, Any], ...]
    patches: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # the plan's errors: pods whose gang the definition cannot decide

    def patch_for(self, pod_name: str) -> dict[str, Any] | None:
        return self.patches.get(pod_name)


def _fixed(options: BackendOptions) -> Callable[[], BackendOptions]:
    return lambda: options


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _describe(obj: Mapping[str, Any]) -> str:
    meta = _metadata(obj)
    name = meta.get("name") or f"{meta.get('generateName') or ''}<generated>"
    return f"{meta.get('namespace') or ''}/{name}" if meta.get("namespace") else str(name)


class PodBinder:
    """Resolves pods to their bindings (no writes): the part the webhook and the escaped-pod pass share."""

    def __init__(
        self,
        *,
        store: Callable[[], DefinitionStore],
        owners: OwnerCache,
        backend: str,
        scheduler_name: str | None = None,
        options: Callable[[], BackendOptions] | None = None,
        quarantine: Quarantine | None = None,
        references: ReferenceIndex | None = None,
    ) -> None:
        self.store = store
        # Extension E3: a definition's references answered from the shared cache only (no API
        # read per request); without one, a workload whose definition has references fails.
        self.references = references
        self.quarantine = quarantine or Quarantine()
        self.owners = owners
        self.backend = backend
        self.record = gang_backend(backend)
        self.scheduler_name = scheduler_name
        # The controller's options for the served resources; without a source, those for none.
        self.options: Callable[[], BackendOptions] = options or _fixed(
            controller_options(backend, scheduler_name=scheduler_name)
        )

    def covers_anything(self) -> bool:
        """Whether any definition has gang instructions (else no pod can need a binding)."""
        return any(gang_format(d.karta) is not None for d in self.store().definitions)

    def top(self, pod: Mapping[str, Any], *, deadline: float | None = None) -> OwnerWalk:
        """The pod's owner walk, ended at the gang's owner: the topmost owner whose definition has
        gang instructions (a Katib Experiment's Trial, a CronJob's Job; the owners above it only
        contain it); the whole walk when none has (or it could not be walked to its end: then
        :meth:`definition` decides). From the walk's owners alone: no API call more."""
        return self.gang_root(self.owners.walk(pod, deadline=deadline))

    def gang_root(self, walk: OwnerWalk) -> OwnerWalk:
        """``walk`` re-rooted at its topmost owner whose definition has gang instructions."""
        if walk.error is not None or len(walk.owners) != len(walk.links):
            return walk
        for index in range(len(walk.links) - 1, -1, -1):
            link, owner = walk.links[index], walk.owners[index]
            if self._lookup(link.api_version, link.kind, workload=owner) is not None:
                return walk if index == len(walk.links) - 1 else walk.rooted_at(index)
        return walk

    def fresh(self, walk: OwnerWalk) -> OwnerWalk:
        """``walk`` with its top owner (the workload) read from the server now: the cached one may
        predate a scale change whose new pods these are, and the group objects written before the
        pod is answered must carry the new minimums (the owners in between stay cached)."""
        if walk.top is None or not walk.links or walk.top_read:
            return walk
        link = walk.links[-1]
        try:
            top = self.owners.read_fresh(link)
        except ClusterError as exc:
            raise BindingFailure("owner", f"cannot read {link.kind} {link.name}: {exc}", walk.top) from exc
        return OwnerWalk(walk.links, top, walk.error, top_read=True)

    def definition(self, walk: OwnerWalk) -> StoredDefinition | None:
        """The definition for the top owner's GVK (:meth:`top`: the gang's owner) when it has gang
        instructions, else None. A chain
        that could not be walked to its end is a failure only when what was read is covered."""
        top = walk.top
        if walk.error is not None:
            # Covered if any owner on the way (by reference) has a definition with a gang.
            for link in walk.links:
                stored = self._lookup(link.api_version, link.kind)
                if stored is not None:
                    raise BindingFailure("owner", walk.error, top)
            return None
        if top is None:
            return None
        return self._lookup(str(top.get("apiVersion") or ""), str(top.get("kind") or ""), workload=top)

    def _lookup(
        self, api_version: str, kind: str, *, workload: Mapping[str, Any] | None = None
    ) -> StoredDefinition | None:
        if not api_version or not kind:
            return None
        try:
            stored = self.store().definition_for(GVK.of(api_version, kind))
        except NoDefinitionError:
            return None
        except ResolutionError as exc:
            if workload is None:
                return None
            raise BindingFailure("definition", str(exc), workload) from exc
        return stored if gang_format(stored.karta) is not None else None

    def bind(
        self,
        walk: OwnerWalk,
        stored: StoredDefinition,
        pods: Sequence[Mapping[str, Any]],
        *,
        deadline: float | None = None,
    ) -> Binding:
        """Render the workload's objects and the bindings of ``pods`` (pods of that workload).
        ``deadline`` (:func:`time.monotonic`, the admission answer's): referenced kinds not synced
        yet are waited for until :data:`REFERENCES_RESERVE_S` before it (None: not waited for)."""
        workload = walk.top
        assert workload is not None
        if self.quarantine.holds(stored):
            raise BindingFailure(
                "quarantined",
                f"{stored.name}: the definition is quarantined (its evaluations breached their budget)",
                workload,
            )
        try:
            evaluator = self._evaluator(stored, workload, deadline)
            factory = ComponentFactory(stored.karta, workload, evaluator=evaluator)
            plan = compute_gang_plan(factory, pods, evaluator=factory.evaluator)
            rendering = render(self.backend, factory, pods=pods, plan=plan, options=self.options())
        except JqBudgetError as exc:
            self.quarantine.breached(stored, exc, part="pod-binding")
            raise BindingFailure("budget", f"{stored.name}: {exc}", workload) from exc
        except _ReferencesUnread as exc:
            raise BindingFailure("references", f"{stored.name}: {exc}", workload) from exc
        except (ExtractionError, JqError, PodQueryError) as exc:
            raise BindingFailure("extraction", f"{stored.name}: {exc}", workload) from exc
        except GangError as exc:
            raise BindingFailure("render", f"{stored.name}: {exc}", workload) from exc
        except KartaError as exc:
            raise BindingFailure("extraction", f"{stored.name}: {exc}", workload) from exc
        except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as exc:
            # A workload object of the wrong shape must not become a traceback.
            raise BindingFailure(
                "extraction", f"{stored.name}: cannot evaluate the workload: {exc}", workload
            ) from exc
        patches = {
            item.pod: self.record.admission_patch(item.patch, scheduler_name=self.scheduler_name)
            for item in rendering.pod_patches
        }
        return Binding(
            workload=workload,
            definition=stored,
            objects=rendering.objects,
            patches=patches,
            warnings=rendering.warnings,
            errors=tuple(d.message for d in plan.diagnostics if d.severity is Severity.ERROR),
        )

    def _evaluator(
        self, stored: StoredDefinition, workload: Mapping[str, Any], deadline: float | None = None
    ) -> Evaluator:
        """The definition's evaluator with the workload's references (extension E3) bound from
        the shared cache; a reference not readable, or a cache not synced yet (after waiting for
        it until :data:`REFERENCES_RESERVE_S` before ``deadline``), is unknown data:
        :class:`_ReferencesUnread` (the request fails as for any unknown data)."""
        evaluator = evaluator_for(stored)
        if not stored.karta.spec.structure_definition.references:
            return evaluator
        if self.references is None:
            raise _ReferencesUnread("its references cannot be read here (no cache of referenced objects)")
        resolution = self.references.resolve(None, stored.karta, workload, evaluator)
        if resolution is None and deadline is not None:
            started = time.monotonic()
            pending = self.references.wait_synced(stored.karta, deadline - REFERENCES_RESERVE_S)
            if not pending:
                resolution = self.references.resolve(None, stored.karta, workload, evaluator)
            if resolution is None:
                waited = time.monotonic() - started
                raise _ReferencesUnread(
                    f"the cache of its referenced kinds ({', '.join(pending) or 'unknown'}) "
                    f"has not synced yet (waited {waited:.1f}s)"
                )
        if resolution is None:
            raise _ReferencesUnread("the cache of its referenced objects has not synced yet")
        if resolution.errors:
            raise _ReferencesUnread("; ".join(p.message for p in resolution.errors))
        return resolution.evaluator(evaluator)


class ReferenceWarmup:
    """Extension E3: the referenced kinds of every definition with gang instructions watched from
    when it is loaded (:meth:`ReferenceIndex.warm`), so that the pod webhook answers the first pod
    of such a kind with its gang. A part on every replica (the webhook serves on each): at start,
    whenever the definitions change (:meth:`poke`, a :meth:`LiveDefinitions.subscribe` callback:
    quick, the work happens here) and every :data:`WARMUP_RETRY_S`. Never blocks admission: it
    only takes the caches; what failed is logged once per message."""

    name = "pod-references"

    def __init__(self, binder: PodBinder, *, retry_s: float = WARMUP_RETRY_S) -> None:
        self.binder = binder
        self.retry_s = retry_s
        self._wake = threading.Event()
        self.warmed: set[tuple[str, str, str]] = set()  # the kinds taken so far (tests, logs)
        self._reported: set[str] = set()

    def poke(self, _store: object = None) -> None:
        self._wake.set()

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self._wake.clear()
            self.warm_once()
            # Until poked, the retry or the stop (which must end the part at once: a shutdown waits
            # for it), whichever comes first.
            until = time.monotonic() + self.retry_s
            while not (stop.is_set() or self._wake.is_set()) and time.monotonic() < until:
                stop.wait(_POLL_S)

    def warm_once(self) -> None:
        references = self.binder.references
        if references is None:
            return
        for stored in self.binder.store().definitions:
            karta = stored.karta
            if not karta.spec.structure_definition.references or gang_format(karta) is None:
                continue
            if stored.problems:  # never used to bind a pod: nothing to watch for it
                continue
            try:
                kinds = references.warm(karta)
            except Exception as exc:  # a discovery error: retried at the next round
                message = f"{stored.name}: cannot watch its referenced kinds yet: {exc}"
                if message not in self._reported:
                    self._reported.add(message)
                    _LOG.warning("references warm-up failed", extra={"error": message})
                continue
            new = [k for k in kinds if k not in self.warmed]
            if new:
                self.warmed.update(new)
                _LOG.info(
                    "watching referenced kinds",
                    extra={"definition": stored.name, "kinds": ", ".join("/".join(k) for k in new)},
                )


class _ReferencesUnread(KartaError):
    """A workload's references (extension E3) could not be read from the cache."""


def binding_patch(pod: Mapping[str, Any], merge: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON patch (RFC 6902) that gives ``pod`` the binding ``merge`` (only what differs)."""
    ops: list[dict[str, Any]] = []
    meta = _metadata(pod)
    wanted_meta = merge.get("metadata") or {}
    for section in ("labels", "annotations"):
        wanted = wanted_meta.get(section) or {}
        if not wanted:
            continue
        current = meta.get(section)
        if not isinstance(current, Mapping) or not current:
            ops.append({"op": "add", "path": json_pointer("metadata", section), "value": dict(wanted)})
            continue
        for key, value in wanted.items():
            if current.get(key) != value:
                ops.append({"op": "add", "path": json_pointer("metadata", section, key), "value": value})
    spec = pod.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    for key, value in (merge.get("spec") or {}).items():
        if spec.get(key) != value:
            ops.append({"op": "add", "path": json_pointer("spec", key), "value": value})
    return ops


def missing_binding(pod: Mapping[str, Any], merge: Mapping[str, Any]) -> list[str]:
    """What of the binding ``merge`` the pod lacks, as readable field paths (empty: bound). The
    scheduler name is not part of the binding here: only the group reference is."""
    ops = binding_patch(pod, merge)
    out: list[str] = []
    for op in ops:
        path = str(op["path"])
        if path == "/spec/schedulerName":
            continue
        if isinstance(op["value"], Mapping) and path.startswith("/metadata/"):
            out.extend(f"{path[1:].replace('/', '.')}.{k}" for k in op["value"])
        else:
            out.append(path[1:].replace("/", ".").replace("~1", "/").replace("~0", "~"))
    return out


def conflicting_group(pod: Mapping[str, Any], merge: Mapping[str, Any], fields: Sequence[str]) -> bool:
    """The pod already names a different group in one of ``fields``, immutable spec fields (the
    backend record's ``pod_group_fields``), set by its creator."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return False
    for key in fields:
        wanted = (merge.get("spec") or {}).get(key)
        if wanted is not None and spec.get(key) not in (None, wanted):
            return True
    return False


class PodAdmission:
    """The webhook handler (:data:`~karta.controller.runtime.webhook.review.Handler`) for :data:`PATH`."""

    def __init__(
        self,
        binder: PodBinder,
        client: KubeClient,
        *,
        metrics: Metrics,
        events: EventRecorder,
        timeout: float = HANDLING_TIMEOUT_S,
        workers: int = 16,
        namespaces: tuple[str, ...] = (),
        scope: GangScope | None = None,
    ) -> None:
        self.binder = binder
        self.scope = scope
        self.client = client
        self.metrics = metrics
        self.events = events
        self.timeout = timeout
        self.namespaces = frozenset(namespaces)  # empty: every namespace
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pod-admission")
        self._event_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pod-admission-events")
        # The gang reconciler's writer, in admission mode (no stale objects: resources unused).
        self.writer = GroupWriter(client, lambda: ())

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._event_pool.shutdown(wait=False, cancel_futures=True)

    # --- the handler ----------------------------------------------------------------------------

    def __call__(self, request: Mapping[str, Any]) -> Answer:
        deadline = time.monotonic() + self.timeout
        progress: dict[str, Any] = {}
        try:
            future = self._pool.submit(self._handle, request, deadline, progress)
        except RuntimeError:  # shutting down: in a gang scope, refused as if unreachable (never unbound)
            if self.scope is not None:
                return deny(
                    "karta: the pod webhook is shutting down; the pod is created again by its controller",
                    code=503,
                )
            return allow()
        try:
            return future.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            progress["late"] = True
            if progress.get("bound") is not None:  # the binding is known, the group objects not
                return self._bound_without_objects(request, progress)
            return self._unbound(
                request,
                BindingFailure(
                    "timeout",
                    f"no binding within {self.timeout:g}s (owner reads, rendering and group objects)",
                    progress.get("workload"),
                ),
            )

    def _handle(self, request: Mapping[str, Any], deadline: float, progress: dict[str, Any]) -> Answer:
        try:
            return self._admit(request, deadline, progress)
        except BindingFailure as failure:
            if progress.get("late"):
                return allow()  # answered already (__call__)
            return self._unbound(request, failure, in_scope=progress.get("in_scope", True))
        except Exception as exc:  # never a traceback to the API server: unbound (or denied), logged
            _LOG.exception("pod admission failed", extra={"pod": _describe(_pod_of(request) or {})})
            if progress.get("late"):
                return allow()
            internal = BindingFailure("internal", str(exc), progress.get("workload"))
            return self._unbound(request, internal, in_scope=progress.get("in_scope", True))

    def _admit(self, request: Mapping[str, Any], deadline: float, progress: dict[str, Any]) -> Answer:
        pod = _pod_of(request)
        if pod is None:
            return allow()
        if self.namespaces and _metadata(pod).get("namespace") not in self.namespaces:
            return allow()  # outside --namespace: the workload is not ours to gang-schedule
        if not self.binder.covers_anything():
            return allow()
        walk = self.binder.top(pod, deadline=deadline)
        if walk.error is not None and "out of time" in walk.error:
            raise BindingFailure("timeout", walk.error, walk.top)
        stored = self.binder.definition(walk)
        if stored is None:
            return allow()
        progress["workload"] = walk.top
        if self.scope is not None:
            decision = self.scope.decide(walk.top or {})
            if not decision.in_scope:
                return allow()  # outside the gang-scheduling scope: not ours
            progress["in_scope"] = True
        walk = self.binder.fresh(walk)
        binding = self.binder.bind(walk, stored, [pod], deadline=deadline)
        name = str(_metadata(pod).get("name") or "")
        merge = binding.patch_for(name)
        if merge is None:
            if binding.errors:  # the definition cannot tell this pod's gang: never scheduled alone
                raise BindingFailure(
                    "no-gang", f"{stored.name}: {'; '.join(binding.errors)}", binding.workload
                )
            return allow()  # not in any gang of the workload (e.g. a component outside the gang)
        if conflicting_group(pod, merge, self.binder.record.pod_group_fields):
            return allow(
                warnings=[f"karta: the pod already names a scheduling group; left as it is ({name})"]
            )
        patch = binding_patch(pod, merge)
        progress["bound"] = patch
        if not request.get("dryRun"):
            try:
                self._ensure_objects(binding, deadline)
            except BindingFailure as failure:
                progress["failure"] = failure
                return self._bound_without_objects(request, progress)
        if time.monotonic() > deadline:
            raise BindingFailure("timeout", "out of time after writing the group objects", binding.workload)
        return allow(patch)

    def _bound_without_objects(self, request: Mapping[str, Any], progress: dict[str, Any]) -> Answer:
        """The binding is known, the group objects are not written: the pod is admitted bound when
        its scheduler holds it until its group exists, else it is unbound (no scope) or denied."""
        failure = progress.get("failure") or BindingFailure(
            "timeout", f"group objects not written within {self.timeout:g}s", progress.get("workload")
        )
        if self.scope is not None and self.binder.record.holds_missing_group:
            self.metrics.unbound_pods.labels(reason=failure.reason).inc()
            message = (
                f"pod {_describe(_sent(request))} admitted with its gang binding before its group object "
                f"exists ({failure.reason}: {failure.message}); the scheduler holds it until the gang "
                "reconciler writes the group"
            )
            self._event(failure.workload, message)
            return allow(progress["bound"], warnings=[f"karta: {message}"[:512]])
        return self._unbound(request, failure, in_scope=bool(progress.get("in_scope")))

    # --- group objects --------------------------------------------------------------------------

    def _ensure_objects(self, binding: Binding, deadline: float) -> None:
        """The group objects exist (the writer's admission mode), or a BindingFailure."""
        result = self.writer.ensure(binding.objects, deadline=deadline, workload=binding.workload)
        self._count(result)
        if result.out_of_time:
            raise BindingFailure("timeout", "out of time writing the group objects", binding.workload)
        if result.failed:
            raise BindingFailure("api", f"cannot write {result.failed[0]}", binding.workload)

    def _count(self, result: WriteResult) -> None:
        for outcome, items in (
            ("applied", result.applied),
            ("unchanged", result.unchanged),
            ("failed", result.failed),
        ):
            if items:
                self.metrics.gang_objects.labels(backend=self.binder.backend, outcome=outcome).inc(len(items))

    # --- failures -------------------------------------------------------------------------------

    def _unbound(
        self, request: Mapping[str, Any], failure: BindingFailure, *, in_scope: bool = True
    ) -> Answer:
        """A failure: the pod admitted unbound without a scope, else denied unless its workload is
        known to be outside the scope (``in_scope`` False: not decided yet counts as in)."""
        pod = _sent(request)  # as sent: no placeholder name in messages
        self.metrics.unbound_pods.labels(reason=failure.reason).inc()
        if self.scope is not None and in_scope:
            if failure.reason == "no-gang":
                message = (
                    f"pod {_describe(pod)} refused: its gang cannot be decided ({failure.message}); "
                    f"give the pod what its definition reads, or label its workload "
                    f"{SCOPE_LABEL}=disabled to schedule it without a gang"
                )
            else:
                message = (
                    f"pod {_describe(pod)} refused: its gang binding cannot be made now ({failure.reason}): "
                    f"{failure.message}; created again by its controller, it is bound then"
                )
            _LOG.warning(
                "pod refused unbound",
                extra={"pod": _describe(pod), "reason": failure.reason, "error": failure.message},
            )
            self._event(failure.workload, message)
            return deny(f"karta: {message}"[:1024], code=503)
        message = (
            f"pod {_describe(pod)} admitted without its gang binding ({failure.reason}): {failure.message}"
        )
        _LOG.warning(
            "pod admitted unbound",
            extra={"pod": _describe(pod), "reason": failure.reason, "error": failure.message},
        )
        self._event(failure.workload, message)
        return Answer(True, warnings=(f"karta: {message}"[:512],), outcome="unbound")

    def _event(self, workload: Mapping[str, Any] | None, message: str) -> None:
        if workload is not None:
            with contextlib.suppress(RuntimeError):  # shutting down
                self._event_pool.submit(self.events.warning, workload, EVENT_REASON, message)


def _sent(request: Mapping[str, Any]) -> Mapping[str, Any]:
    obj = request.get("object") if isinstance(request, Mapping) else None
    return obj if isinstance(obj, Mapping) else {}


def _pod_of(request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pod of a CREATE request (a copy with namespace and a name filled in), else None."""
    if not isinstance(request, Mapping) or request.get("operation", "CREATE") != "CREATE":
        return None
    kind = request.get("kind")
    if isinstance(kind, Mapping) and (kind.get("group"), kind.get("kind")) not in (
        ("", "Pod"),
        (None, "Pod"),
    ):
        return None
    sub = request.get("subResource")
    if sub:
        return None
    obj = request.get("object")
    if not isinstance(obj, Mapping) or obj.get("kind", "Pod") != "Pod":
        return None
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    pod = dict(obj)
    metadata = dict(meta)
    if not metadata.get("namespace") and isinstance(request.get("namespace"), str):
        metadata["namespace"] = request["namespace"]
    if not isinstance(metadata.get("name"), str) or not metadata.get("name"):
        # generateName: the name is chosen after admission; any stable key matches the pod to itself.
        stem = metadata.get("generateName") if isinstance(metadata.get("generateName"), str) else "pod-"
        uid = str(request.get("uid") or "")[:8] or "admitted"
        metadata["name"] = f"{stem}{uid}"
    pod["metadata"] = metadata
    pod.setdefault("apiVersion", "v1")
    pod.setdefault("kind", "Pod")
    return pod


def pod_webhook(
    *,
    client_config: Mapping[str, Any],
    failure_policy: str = "Ignore",
    name: str = WEBHOOK_NAME,
    namespace_selector: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``MutatingWebhookConfiguration.webhooks[]`` entry for pods (for whoever registers it):
    Pod CREATE only, ``timeoutSeconds: 5``, side effects only outside dry runs (we write group
    objects), never re-invoked, and never for kube-system."""
    selector = (
        dict(namespace_selector)
        if namespace_selector is not None
        else {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
            ]
        }
    )
    return {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": dict(client_config),
        "rules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["pods"],
                "scope": "Namespaced",
            }
        ],
        "failurePolicy": failure_policy,
        "matchPolicy": "Equivalent",
        "sideEffects": "NoneOnDryRun",
        "timeoutSeconds": 5,
        "reinvocationPolicy": "Never",
        "namespaceSelector": selector,
    }
