"""Writing one workload's group objects: server-side apply, immutable fields, stale objects.

:class:`GroupWriter` takes the objects a renderer produced for one workload (complete: the caller
never hands over a half-computed set) and makes the cluster match them:

- each object is read, compared with the live one on the backend's **immutable fields**
  (:func:`immutable_differences`, from the backend's registry record;
  docs/spec/gang-backends.md#object-rules and #workload-api-v1beta1, docs/controller/gang-reconciler.md)
  and, when one differs, **replaced** (deleted, then created) when the caller gave the workload's pods
  and none of them holds it (:func:`holding_pods`: a bound pod of that gang, or for a kind the backend's
  record ``held_while_named``, any pod naming it), otherwise skipped and reported (``immutable``: a
  Warning event on the workload and ``karta_gang_immutable_changes``): never forced. A replaced
  object whose deletion waits on a finalizer is created once it is gone (``deferred``);
- otherwise it is written by server-side apply as field manager ``karta`` **with force**: the fields
  we set are ours, so when another field manager changed one of them the next reconcile takes it
  back (without force the apply would stop at a 409 conflict and the object would stay diverged).
  Fields we never set stay the other manager's. A 422 naming an immutable field (a rule our table
  does not know) is treated like an immutable change;
- ``applied`` / ``unchanged`` is told by the resourceVersion (a no-op apply does not bump it);
- objects that carry our ``app.kubernetes.io/managed-by`` label and an ownerReference to this
  workload's UID but are not in the set are deleted (listed by label selector per namespace).

With a :class:`GroupCache` (the reconciler's synced informers of the group resources) the writer
sends no read at all: the live object and the workload's objects come from the cache, and an apply
is skipped when the object is exactly what our last apply left (the same desired object, and the
cache at the resourceVersion that apply returned: nobody changed it since). That is what keeps a
burst cheap: each workload is reconciled again when its own group objects appear, and a resync
touches every workload. A cached object may be a little behind the server, so a difference on an
immutable field seen in the cache is confirmed with a GET before it is reported.

**Admission mode** (:meth:`GroupWriter.ensure`, the pod webhook: the objects must exist before the
pod is answered, within its deadline, and the gang reconciler stays the one that converges them):
no force (an object another manager, or an immutable field, holds with other values is used as it
is: a 409 or 422 on an object that exists is ``unchanged``), the kinds of the backend's record
``create_only`` (the Workload API's Workload) only created when missing, nothing deleted, an
object applied alike (from the same generation of the workload) less than :data:`APPLIED_TTL_S`
ago (:data:`HELD_APPLIED_TTL_S` where the scheduler holds a pod whose group is missing) not
applied again, and it stops at the
first failure or once the deadline has passed (``out_of_time``). An object with gang minimums
(the record's ``minimums``) is read first and never lowered (:func:`lowered_minimums`): the pod's
rendering may come from a workload read a few seconds ago, before a scale-up the reconciler has
already written, and lowering is the reconciler's alone.

The pure parts (:func:`immutable_differences`, :func:`holding_pods`, :func:`lowered_minimums`,
:func:`owned_by`, :func:`stale_objects`) are unit tested; the writing needs a cluster.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from karta.controller.runtime.logs import logger
from karta.errors import ApiError, ClusterError
from karta.kube.client import KubeClient
from karta.kube.resources import ResourceType
from karta.render.backends import BACKENDS, GangBackend
from karta.render.common import MANAGED_BY

__all__ = [
    "APPLIED_TTL_S",
    "FIELD_MANAGER",
    "HELD_APPLIED_TTL_S",
    "MANAGED_SELECTOR",
    "GroupCache",
    "GroupWriter",
    "WriteResult",
    "age_s",
    "fingerprint",
    "holding_pods",
    "immutable_differences",
    "lowered_minimums",
    "owned_by",
    "stale_objects",
]

FIELD_MANAGER: Final = "karta"
APPLIED_TTL_S: Final = 30.0  # admission mode: an object applied alike this recently is not applied again
# ... where the backend's scheduler holds a pod whose group object is missing (the Workload API): a
# group object deleted since our write is the gang reconciler's to write again (it watches them) and
# no pod binds without it meanwhile, so reading and writing it again on a pod's admission buys
# nothing; it cost three API round trips every 30 s per workload, the webhook's p99 under a burst.
HELD_APPLIED_TTL_S: Final = 600.0
_ADMISSION_MEMO: Final = 4096
_REPLACE_RETRY_S: Final = 1.0  # a replaced object waiting on its finalizers is looked at again after
_SHOWN_PODS: Final = 5
MANAGED_SELECTOR: Final = ",".join(f"{k}={v}" for k, v in MANAGED_BY.items())
_LOG = logger("gangs")

_MISSING = object()
_NO_ENTRY = object()


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    return group, str(obj.get("kind") or "")


def _backend(group: str) -> GangBackend | None:
    """The registry record of the backend whose objects are of API ``group``."""
    return next((b for b in BACKENDS.values() if b.api_group == group), None)


def _at(obj: Any, path: Sequence[str]) -> Any:
    value: Any = obj
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _each(obj: Any, path: Sequence[str], label: str = "") -> dict[str, Any]:
    """The values at ``path`` by their label (``spec.x[name].y``): ``*`` is each entry of a
    list-map (by ``name``) or of a mapping (by key). A missing value is :data:`_MISSING`; a
    ``*`` over nothing gives no value."""
    if "*" not in path:
        return {label + ".".join(path): _at(obj, path)}
    star = list(path).index("*")
    head, tail = path[:star], path[star + 1 :]
    prefix = label + ".".join(head)
    container = _at(obj, head)
    if isinstance(container, Mapping):
        entries = [(str(key), value) for key, value in container.items()]
    elif isinstance(container, list):
        entries = [
            (str(item.get("name")), item)
            for item in container
            if isinstance(item, Mapping) and "name" in item
        ]
    else:
        return {}
    out: dict[str, Any] = {}
    for key, value in entries:
        if tail:
            out.update(_each(value, tail, f"{prefix}[{key}]."))
        else:
            out[f"{prefix}[{key}]"] = value
    return out


def _names(value: Any) -> list[str] | None:
    if value is _MISSING or value is None:
        return None
    if not isinstance(value, list):
        return []
    return [str(item.get("name")) for item in value if isinstance(item, Mapping)]


def _keys(value: Any) -> list[str] | None:
    return sorted(value) if isinstance(value, Mapping) else None


def _covers(live: Any, desired: Any) -> bool:
    """Whether ``live`` holds ``desired``: every desired key with an equal value (the server adds
    defaults, e.g. ``disruptionMode``, that we do not set); lists element by element."""
    if isinstance(desired, Mapping):
        return isinstance(live, Mapping) and all(
            k in live and _covers(live[k], v) for k, v in desired.items()
        )
    if isinstance(desired, list):
        return (
            isinstance(live, list)
            and len(live) == len(desired)
            and all(_covers(a, b) for a, b in zip(live, desired, strict=True))
        )
    return bool(live == desired)


def immutable_differences(live: Mapping[str, Any], desired: Mapping[str, Any]) -> list[str]:
    """The immutable fields of ``desired`` that differ from the live object, as ``spec.x`` paths
    (empty: the apply may go ahead): those its backend's record declares
    (:meth:`karta.render.GangBackend.immutable_fields`). A field we do not set is not compared;
    with ``*``, an entry the live object does not have is not compared either (a new or gone
    entry is the ``names_only`` rule's)."""
    group, kind = _group_kind(desired)
    backend = _backend(group)
    if backend is None:
        return []
    out: list[str] = []
    for rule in backend.immutable_fields(str(desired.get("apiVersion") or ""), kind):
        have_all = _each(live, rule.path)
        for label, want in _each(desired, rule.path).items():
            have = have_all.get(label, _NO_ENTRY)
            if have is _NO_ENTRY:
                continue  # an entry the live object does not have
            if rule.names_only:
                want_names, have_names = _names(want), _names(have)
                if (
                    want_names is not None
                    and have_names is not None
                    and sorted(want_names) != sorted(have_names)
                ):
                    out.append(f"{label}[*].name")
            elif rule.keys_only:
                if want is not _MISSING and _keys(want) != _keys(have):
                    out.append(label)
            elif want is not _MISSING and (have is _MISSING or not _covers(have, want)):
                out.append(label)
    return out


def lowered_minimums(live: Mapping[str, Any], desired: Mapping[str, Any]) -> list[str]:
    """The gang minimums (the backend's record ``minimums``) that ``desired`` would lower on the
    live object, as ``spec.x`` paths with both values."""
    group, kind = _group_kind(desired)
    backend = _backend(group)
    if backend is None:
        return []
    out: list[str] = []
    for rule in backend.minimum_fields(kind):
        have_all = _each(live, rule.path)
        for label, want in _each(desired, rule.path).items():
            have = have_all.get(label)
            if isinstance(want, int) and isinstance(have, int) and want < have:
                out.append(f"{label} {have} -> {want}")
    return out


def _bound(pod: Mapping[str, Any]) -> bool:
    return bool(_at(pod, ("spec", "nodeName")) not in (_MISSING, None, ""))


def holding_pods(obj: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> list[str]:
    """Of ``pods`` (the workload's), the names of those that keep ``obj`` (one of its group objects)
    from being replaced: for the kind pods name (the backend's record ``pod_group_kind``), the pods
    naming it that are bound (``spec.nodeName``), or all of them when the record says its deletion
    waits for them (``held_while_named``); for the other kinds (a Workload API Workload or
    CompositePodGroup, which every gang of the workload hangs from), every bound pod."""
    group, kind = _group_kind(obj)
    backend = _backend(group)
    name = str((obj.get("metadata") or {}).get("name") or "")
    out: list[str] = []
    for pod in pods:
        pod_name = str((pod.get("metadata") or {}).get("name") or "")
        if backend is not None and kind == backend.pod_group_kind and backend.pod_group_ref:
            if backend.pod_group_name(pod) != name:
                continue
            if kind in backend.held_while_named or _bound(pod):
                out.append(pod_name)
        elif _bound(pod):
            out.append(pod_name)
    return sorted(out)


def owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    """Whether ``obj`` carries our managed-by label and an ownerReference to ``uid``."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    if any(labels.get(k) != v for k, v in MANAGED_BY.items()):
        return False
    refs = meta.get("ownerReferences") or ()
    return any(isinstance(ref, Mapping) and ref.get("uid") == uid for ref in refs)


def stale_objects(
    existing: Iterable[Mapping[str, Any]], *, uid: str, keep: Iterable[str]
) -> list[Mapping[str, Any]]:
    """Of ``existing`` (objects of one resource), those owned by ``uid`` whose name is not in ``keep``
    and that are not being deleted already (a finalizer may hold them: deleted once is enough)."""
    wanted = set(keep)
    return [
        obj
        for obj in existing
        if owned_by(obj, uid)
        and str((obj.get("metadata") or {}).get("name")) not in wanted
        and not (obj.get("metadata") or {}).get("deletionTimestamp")
    ]


def age_s(obj: Mapping[str, Any], *, now: float | None = None) -> float:
    """Seconds since ``metadata.creationTimestamp`` (RFC 3339, UTC); infinite when unreadable."""
    stamp = str((obj.get("metadata") or {}).get("creationTimestamp") or "")
    try:
        created = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return math.inf
    return (time.time() if now is None else now) - created


def _immutable_error(exc: ApiError) -> bool:
    text = str(exc).lower()
    # 1.37's messages: "field is immutable", "item may not be added", "field cannot be cleared"
    return exc.status == 422 and any(
        word in text for word in ("immutable", "may not be added", "may not be removed", "cannot be cleared")
    )


def _defer(result: WriteResult, wait: float) -> None:
    result.deferred = wait if result.deferred is None else min(result.deferred, wait)


PodSource = Callable[[], "Sequence[Mapping[str, Any]] | None"]
"""The workload's pods, listed when first asked (None: they could not be listed)."""


class GroupCache(Protocol):
    """Synced caches of the group resources (each method: None when ``rtype`` has no synced
    cache, and the writer then asks the server)."""

    def cached_object(
        self, rtype: ResourceType, namespace: str, name: str
    ) -> Mapping[str, Any] | Literal[False] | None:
        """The cached object; False when the cache is synced and does not hold it; None: no cache."""

    def owned_objects(
        self, rtype: ResourceType, namespace: str, uid: str
    ) -> Sequence[Mapping[str, Any]] | None:
        """The cached objects of ``rtype`` in ``namespace`` with an ownerReference to ``uid``."""


def _generation_stamp(workload: Mapping[str, Any] | None) -> str:
    """The workload's uid and generation (its resourceVersion where it has no generation): what an
    admission write is remembered with."""
    meta = (workload or {}).get("metadata") or {}
    generation = meta.get("generation")
    version = f"g{generation}" if generation is not None else f"rv{meta.get('resourceVersion', '')}"
    return f"{meta.get('uid', '')}/{version}"


def fingerprint(obj: Mapping[str, Any]) -> str:
    """A digest of ``obj`` (its canonical JSON): equal for equal objects, whatever the key order."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass
class WriteResult:
    """What one sync did: counts per outcome, the immutable changes skipped, the errors."""

    applied: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    immutable: list[str] = field(default_factory=list)  # "<Kind>/<name>: <fields>; <why kept>"
    replaced: list[str] = field(default_factory=list)  # "<Kind>/<name>: <fields>": deleted, created
    failed: list[str] = field(default_factory=list)  # "<Kind>/<name>: <error>"
    # seconds until a young stale object may be deleted, or a replaced one is gone
    deferred: float | None = None
    out_of_time: bool = False  # admission mode: the deadline passed before every object was written
    kept: list[str] = field(
        default_factory=list
    )  # admission mode: written alike lately, or create-only and there


@dataclass
class GroupWriter:
    """Writes group objects for one backend (``resources``: the served group resource types the
    backend emits, for the stale-object lists)."""

    client: KubeClient
    resources: Callable[[], Sequence[ResourceType]]
    field_manager: str = FIELD_MANAGER
    # Synced caches of the group resources (None: every read goes to the server). An object the
    # cache has not seen yet is found on the next reconcile, which its own watch event triggers.
    cache: GroupCache | None = None
    # (apiVersion, kind, namespace, name) -> (fingerprint of the object we applied, the
    # resourceVersion the apply returned, when: time.monotonic()): what our last apply left.
    _applied: OrderedDict[tuple[str, str, str, str], tuple[str, str, float]] = field(
        default_factory=OrderedDict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)
    clock: Callable[[], float] = time.monotonic  # when a write was made (the memo's lifetimes)

    def forget(self, api_version: str, kind: str, namespace: str, name: str) -> None:
        """The object is gone (its watch said so): the next sync applies it again."""
        with self._lock:
            self._applied.pop((api_version, kind, namespace, name), None)

    def sync(
        self,
        workload: Mapping[str, Any],
        objects: Sequence[Mapping[str, Any]],
        *,
        namespace: str,
        stale_grace_s: float = 0.0,
        pods: PodSource | None = None,
    ) -> WriteResult:
        """Make the workload's group objects in ``namespace`` exactly ``objects``. A stale object
        younger than ``stale_grace_s`` is kept for now (``deferred``: when to look again). An
        object an immutable field keeps from changing is replaced when ``pods`` (the workload's,
        asked for only then; None: they cannot be listed) show none holding it, else reported."""
        uid = str((workload.get("metadata") or {}).get("uid") or "")
        result = WriteResult()
        keep: dict[tuple[str, str], set[str]] = {}
        listed: list[Sequence[Mapping[str, Any]] | None] = []

        def workload_pods() -> Sequence[Mapping[str, Any]] | None:
            if pods is None:
                return None
            if not listed:
                listed.append(pods())
            return listed[0]

        for obj in objects:
            name = str(obj["metadata"]["name"])
            keep.setdefault(_group_kind(obj), set()).add(name)
            label = f"{obj.get('kind')}/{name}"
            try:
                self._write(obj, namespace, label, result, workload_pods)
            except (ApiError, ClusterError) as exc:
                result.failed.append(f"{label}: {exc}")
        if not uid:
            return result
        for rtype in self.resources():
            items = self.cache.owned_objects(rtype, namespace, uid) if self.cache is not None else None
            if items is None:
                try:
                    items = self.client.list(
                        rtype, namespace=namespace, label_selector=MANAGED_SELECTOR
                    ).items
                except ClusterError as exc:
                    result.failed.append(f"list {rtype.group_resource}: {exc}")
                    continue
            names = keep.get((rtype.group, rtype.kind), set())
            for stale in stale_objects(items, uid=uid, keep=names):
                name = str(stale["metadata"]["name"])
                wait = stale_grace_s - age_s(stale)
                if wait > 0:
                    _defer(result, wait)
                    continue
                try:
                    self.client.delete(rtype, name, namespace=namespace)
                    result.deleted.append(f"{rtype.kind}/{name}")
                except ApiError as exc:
                    if exc.status != 404:
                        result.failed.append(f"delete {rtype.kind}/{name}: {exc}")
                except ClusterError as exc:
                    result.failed.append(f"delete {rtype.kind}/{name}: {exc}")
        return result

    def _live(self, rtype: ResourceType, name: str, namespace: str) -> dict[str, Any] | None:
        try:
            return self.client.get(rtype, name, namespace=namespace)
        except ApiError as exc:
            if exc.status != 404:
                raise
            return None

    def _write(
        self,
        obj: Mapping[str, Any],
        namespace: str,
        label: str,
        result: WriteResult,
        pods: PodSource,
    ) -> None:
        api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
        rtype = self.client.discovery.for_api_version(api_version, kind)
        name = str(obj["metadata"]["name"])
        memo_key = (api_version, kind, namespace, name)
        digest = fingerprint(obj)
        cached = self.cache.cached_object(rtype, namespace, name) if self.cache is not None else None
        live: Mapping[str, Any] | None
        if cached is None:
            live = self._live(rtype, name, namespace)
        else:
            live = None if cached is False else cached
            if live is not None:
                rv = str((live.get("metadata") or {}).get("resourceVersion") or "")
                with self._lock:
                    last = self._applied.get(memo_key)
                if last is not None and last[:2] == (digest, rv):
                    result.unchanged.append(label)
                    return
        if live is not None and (live.get("metadata") or {}).get("deletionTimestamp"):
            if cached is not None:
                live = self._live(rtype, name, namespace)  # the cache may be behind: ask
            if live is not None and (live.get("metadata") or {}).get("deletionTimestamp"):
                _defer(result, _REPLACE_RETRY_S)  # being deleted (a replacement): created once gone
                return
        if live is not None:
            differences = immutable_differences(live, obj)
            if differences and cached is not None:
                live = self._live(rtype, name, namespace)  # the cache may be behind: ask
                differences = immutable_differences(live, obj) if live is not None else []
            if differences:
                self._replace(obj, rtype, namespace, label, ", ".join(differences), result, pods)
                return
        before = str(((live or {}).get("metadata") or {}).get("resourceVersion") or "")
        try:
            applied = self.client.apply(obj, field_manager=self.field_manager, force=True)
        except ApiError as exc:
            if _immutable_error(exc) and live is not None:
                self._replace(obj, rtype, namespace, label, str(exc), result, pods)
                return
            if _immutable_error(exc):
                result.immutable.append(f"{label}: {exc}")
                return
            raise
        after = str((applied.get("metadata") or {}).get("resourceVersion") or "")
        self._remember(memo_key, digest, after)
        (result.unchanged if live is not None and before == after else result.applied).append(label)

    def _replace(
        self,
        obj: Mapping[str, Any],
        rtype: ResourceType,
        namespace: str,
        label: str,
        what: str,
        result: WriteResult,
        pods: PodSource,
    ) -> None:
        """An immutable change: delete and create ``obj`` when no pod holds it (:func:`holding_pods`),
        else report it. The delete may wait on a finalizer: then it is created on a later sync."""
        listed = pods()
        if listed is None:
            result.immutable.append(f"{label}: {what}; kept: the workload's pods could not be listed")
            return
        holding = holding_pods(obj, listed)
        if holding:
            shown = ", ".join(holding[:_SHOWN_PODS]) + (", ..." if len(holding) > _SHOWN_PODS else "")
            result.immutable.append(f"{label}: {what}; kept: pods {shown} hold it")
            return
        name = str(obj["metadata"]["name"])
        try:
            self.client.delete(rtype, name, namespace=namespace)
        except ApiError as exc:
            if exc.status != 404:
                raise
        self.forget(str(obj["apiVersion"]), str(obj["kind"]), namespace, name)
        gone = self._live(rtype, name, namespace)
        if gone is not None:
            result.replaced.append(f"{label}: {what}; deleted, created once its finalizers let go")
            _defer(result, _REPLACE_RETRY_S)
            return
        applied = self.client.apply(obj, field_manager=self.field_manager, force=True)
        rv = str((applied.get("metadata") or {}).get("resourceVersion") or "")
        self._remember((str(obj["apiVersion"]), str(obj["kind"]), namespace, name), fingerprint(obj), rv)
        result.replaced.append(f"{label}: {what}")

    def _remember(
        self, key: tuple[str, str, str, str], digest: str, rv: str, *, bounded: bool = False
    ) -> None:
        with self._lock:
            self._applied[key] = (digest, rv, self.clock())
            self._applied.move_to_end(key)
            while bounded and len(self._applied) > _ADMISSION_MEMO:
                self._applied.popitem(last=False)

    # -- admission mode ---------------------------------------------------------------------------
    def ensure(
        self,
        objects: Sequence[Mapping[str, Any]],
        *,
        deadline: float | None = None,
        workload: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """Admission mode (module docstring): make sure ``objects`` exist, without force, the
        record's ``create_only`` kinds only when missing; stop at the first failure, or when
        ``deadline`` (``time.monotonic()``) has passed (``out_of_time``). ``workload``: the object
        they were rendered from; a write is trusted again only for the same generation of it."""
        result = WriteResult()
        stamp = _generation_stamp(workload)
        for obj in objects:
            if deadline is not None and time.monotonic() > deadline:
                result.out_of_time = True
                return result
            meta = obj.get("metadata") or {}
            namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
            label = f"{obj.get('kind')}/{name}"
            try:
                self._ensure_one(obj, namespace, name, label, result, stamp)
            except (ApiError, ClusterError) as exc:
                result.failed.append(f"{label}: {exc}")
                return result
        return result

    def _ensure_one(
        self, obj: Mapping[str, Any], namespace: str, name: str, label: str, result: WriteResult, stamp: str
    ) -> None:
        api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
        key = (api_version, kind, namespace, name)
        # The same object from another generation of the workload is not "written alike": between
        # the two, a scale-down may have let the reconciler lower what this write had raised.
        digest = f"{fingerprint(obj)}@{stamp}"
        backend = _backend(_group_kind(obj)[0])
        trusted = HELD_APPLIED_TTL_S if backend is not None and backend.holds_missing_group else APPLIED_TTL_S
        with self._lock:
            last = self._applied.get(key)
        if last is not None and last[0] == digest and self.clock() - last[2] < trusted:
            result.kept.append(label)
            return
        rtype = self.client.discovery.for_api_version(api_version, kind)
        if backend is not None and kind in backend.create_only and self._exists(rtype, name, namespace):
            self._remember(key, digest, "", bounded=True)
            result.kept.append(label)
            return
        if backend is not None and backend.minimum_fields(kind):
            live = self._live(rtype, name, namespace)
            lowered = lowered_minimums(live, obj) if live is not None else []
            if lowered:
                # Rendered from a workload read before a scale-up the reconciler has written.
                _LOG.info(
                    "group object kept: admission never lowers a minimum",
                    extra={"object": label, "minimums": lowered},
                )
                self._remember(key, digest, "", bounded=True)
                result.kept.append(label)
                return
        try:
            self.client.apply(obj, field_manager=self.field_manager)
        except ApiError as exc:
            if exc.status not in (409, 422) or not self._exists(rtype, name, namespace):
                raise
            # Held with other values (another manager, or an immutable field): used as it is.
            _LOG.info("group object kept as it is", extra={"object": label, "error": str(exc)})
            result.unchanged.append(label)
        else:
            result.applied.append(label)
        self._remember(key, digest, "", bounded=True)

    def _exists(self, rtype: ResourceType, name: str, namespace: str) -> bool:
        try:
            return self._live(rtype, name, namespace) is not None
        except ClusterError:
            return False
