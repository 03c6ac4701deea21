"""One workload described (docs/spec/format.md#kli-describe): the ``kli describe`` report and the web view's
workload page both come from here, live (:func:`describe_live`: the object, its pods and Events) or
from a file (:func:`describe_file`: desired replicas, no pods).

The workload is read once (:func:`karta.report.summarize`); the report is
:func:`karta.report.describe_report` with, live, :func:`karta.report.live_details` and, when the
definition has gang instructions, ``gang``: live, the gang state of :mod:`karta.report.gang_state`
(``{error}`` when it is unknown: some pods could not be read, the plan cannot be computed); from a
file, ``{"error": "no pods in file mode"}``: bound pods are never guessed without the pods. Live,
with gang instructions and the namespace's labels read (:class:`ScopeInput`), ``gangScope``: whether
karta-controller manages the workload's gangs (:func:`karta.gang.scope.scope_report`; docs/controller/
gang-reconciler.md "Scope"). Pure: objects in, records out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta._records import record
from karta.report.rows import describe_report
from karta.report.summary import Summary, summarize

if TYPE_CHECKING:
    from karta.definitions import StoredDefinition
    from karta.jq import Evaluator
    from karta.report.contracts import DescribeReport
    from karta.report.gang_state import GangState
    from karta.report.live import LiveDetails  # imported by describe_live: a file has no live details
    from karta.report.owner_tree import OwnerTree, Resolve
    from karta.report.queue import PendingInput
    from karta.report.rows import WorkloadRows

__all__ = [
    "FILE_MODE_GANG",
    "Described",
    "ScopeInput",
    "describe_file",
    "describe_live",
    "external_selectors_of",
    "gang_scope_report",
    "nested_gang",
]

FILE_MODE_GANG = "no pods in file mode"
"""Why a workload described from a file has no gang state (its pods are not known)."""


@record
class ScopeInput:
    """What the gang-scheduling scope of a live workload is decided from, as its reader knows it:
    the labels of its namespace (None: not read, ``unread`` says why), and the controller's
    ``--gang-scope`` mode and excluded namespaces when the reader knows them (the controller's web
    view); ``kli`` does not (``mode`` None: what each mode decides, when they differ)."""

    namespace_labels: Mapping[str, Any] | None
    unread: str | None = None
    mode: str | None = None
    excluded: tuple[str, ...] = ()


def gang_scope_report(
    definition: StoredDefinition, obj: Mapping[str, Any], scope: ScopeInput
) -> dict[str, Any] | None:
    """``{inScope, reason[, mode]}`` of a namespaced workload whose definition has gang
    instructions (None otherwise: no gang to manage); ``inScope`` null when it cannot be decided
    (the namespace's labels could not be read, or the mode is not known and the modes differ)."""
    from karta.gang import gang_format
    from karta.gang.scope import scope_report

    meta = obj.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    if gang_format(definition.karta) is None or not isinstance(namespace, str) or not namespace:
        return None
    if scope.namespace_labels is None:
        out: dict[str, Any] = {"mode": scope.mode} if scope.mode is not None else {}
        out.update(inScope=None, reason=f"the labels of namespace {namespace} are not known: {scope.unread}")
        return out
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return scope_report(
        mode=scope.mode,
        namespace=namespace,
        namespace_labels=scope.namespace_labels,
        workload_labels=labels if isinstance(labels, Mapping) else None,
        excluded=scope.excluded,
    )


def external_selectors_of(
    definition: StoredDefinition, obj: Mapping[str, Any], *, evaluator: Evaluator | None = None
) -> dict[str, dict[str, str]]:
    """Extension E2: the label map of each external component of ``obj`` that has pods to list
    (:func:`karta.extract.external.external_selectors`); ``{}`` for a definition without one.
    Raises :class:`~karta.errors.KartaError` when an expression fails."""
    from karta.definitions.evaluators import evaluator_for
    from karta.extract import ComponentFactory
    from karta.extract.external import external_selectors
    from karta.model.validate_external import external_components

    if not external_components(definition.karta):
        return {}
    evaluator = evaluator if evaluator is not None else evaluator_for(definition)
    return external_selectors(ComponentFactory(definition.karta, dict(obj), evaluator=evaluator))


def nested_gang(owner: str) -> dict[str, Any]:
    """The ``gang`` of a workload whose pods are in the gang of ``owner`` (``Kind/name``), the
    topmost workload of its owner chain with gang instructions: none of its own (the one rule of
    karta-controller's gang reconciler and pod binding, :mod:`karta.report.owner_tree`)."""
    text = f"in the gang of {owner}, its topmost owner with gang instructions (none of its own)"
    return {"ownedBy": owner, "text": text}


@record
class Described:
    """The report, and what a text view renders it with (the tree and rows, the gang state)."""

    report: DescribeReport
    built: WorkloadRows
    gang: GangState | None = None
    owners: OwnerTree | None = None  # live, with owned workloads: the owner tree


def describe_live(
    definition: StoredDefinition,
    obj: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    events: Iterable[Mapping[str, Any]],
    *,
    events_read: bool,
    warnings: Sequence[str],
    gpu_resources: Sequence[str],
    pods_complete: bool = True,
    evaluator: Evaluator | None = None,
    scope: ScopeInput | None = None,
    external_pods: Sequence[Mapping[str, Any]] = (),
    kueue_workloads: Sequence[Mapping[str, Any]] | None = None,
    kueue_pending: PendingInput | None = None,
    owned: Sequence[Mapping[str, Any]] = (),
    resolve: Resolve | None = None,
    lineage: Mapping[str, Sequence[str]] | None = None,
    owned_by: str | None = None,
    gang_owner: str | None = None,
) -> Described:
    """A live workload with its ``pods`` (``pods_complete`` False: only some could be read) and
    ``events`` (``events_read`` False: they could not be read); ``warnings`` say what could not be
    read; ``scope``: its namespace's labels, for ``gangScope`` (None: not shown);
    ``external_pods``: the pods listed for its external components (extension E2);
    ``kueue_workloads``: the Kueue Workloads read for it, for ``queue`` (None: not read, not
    shown; :mod:`karta.report.queue`); ``kueue_pending``: its LocalQueue's pending list, for the
    position of a pending Workload (:func:`karta.report.queue.pending_query`); ``owned``: the
    objects it may own through other kinds (:func:`karta.kube.owned_workloads`, or a cache's) and
    ``resolve`` their definitions, for ``ownerTree`` (:mod:`karta.report.owner_tree`; present when
    it owns at least one workload; ``lineage``: each pod's owners' UIDs, nearest first);
    ``owned_by``: ``Kind/name`` of the top-level workload that owns it (its topmost controller of
    a covered kind, :meth:`karta.kube.TopLevel.top_owner`), for ``ownedBy``; ``gang_owner``:
    ``Kind/name`` of the workload whose gang its pods are in (its topmost controller whose
    definition has gang instructions, :meth:`~karta.kube.TopLevel.of` with ``gangs``; None: it
    owns its gang, if its definition has gang instructions): ``gang`` then says its pods are in
    that workload's gang instead of counting a gang of its own (karta-controller makes none for
    it) and there is no ``gangScope``. Raises
    :class:`~karta.errors.KartaError` when the definition cannot read the object."""
    read = summarize(
        definition,
        obj,
        gpu_resources=gpu_resources,
        pods=pods,
        pods_complete=pods_complete,
        evaluator=evaluator,
        external_pods=external_pods,
    )
    from karta.report.live import live_details

    live = live_details(obj, [dict(p) for p in pods], events, warnings=warnings, events_read=events_read)
    report = _report(definition, obj, read, live=live)
    gang = read.gang_report()
    if gang is not None:
        report["gang"] = gang
    if owned_by is not None:
        report["ownedBy"] = owned_by
    if gang_owner is not None and gang is not None:
        report["gang"] = nested_gang(gang_owner)
    in_scope = gang_scope_report(definition, obj, scope) if scope is not None and gang_owner is None else None
    if in_scope is not None:
        report["gangScope"] = in_scope
    if kueue_workloads is not None:
        from karta.report.queue import queue_detail

        queue = queue_detail(obj, kueue_workloads, kueue_pending)
        if queue is not None:
            report["queue"] = queue.to_dict()
    owners = None
    if resolve is not None:
        from karta.report.owner_tree import build_owner_tree

        owners = build_owner_tree(
            obj,
            definition,
            objects=owned,
            pods=pods,
            resolve=resolve,
            gpu_resources=gpu_resources,
            lineage=lineage,
            in_gang=gang_owner is not None,
        )
        if owners.nested:
            report["ownerTree"] = owners.to_dict()
    return Described(report, read.built, read.gang, owners)


def describe_file(
    definition: StoredDefinition,
    obj: Mapping[str, Any],
    *,
    gpu_resources: Sequence[str],
    evaluator: Evaluator | None = None,
    pods: Sequence[Mapping[str, Any]] | None = None,
) -> Described:
    """A workload read from a file: its tree with desired replicas, no live details, and a gang
    state that is unknown (:data:`FILE_MODE_GANG`) when the definition has gang instructions;
    with ``pods`` (given with the file: the workload's, and those its external components select,
    extension E2) they are placed as live pods are and the gang state is computed from them."""
    read = summarize(definition, obj, gpu_resources=gpu_resources, evaluator=evaluator, pods=pods)
    report = _report(definition, obj, read)
    if pods is not None:
        gang = read.gang_report()
        if gang is not None:
            report["gang"] = gang
    elif read.gang_error is not None:  # gang instructions, and no pods to count
        report["gang"] = {"error": FILE_MODE_GANG}
    return Described(report, read.built, read.gang)


def _report(
    definition: StoredDefinition, obj: Mapping[str, Any], read: Summary, *, live: LiveDetails | None = None
) -> DescribeReport:
    """The report of a workload read (live when ``live`` is given, else file mode)."""
    return describe_report(
        obj=obj,
        definition=definition.name,
        origin=definition.origin,
        tree=read.built.tree,
        rows=read.built.rows,
        file_mode=live is None,
        live=live,
        pods_complete=read.built.pods_complete,
    )
