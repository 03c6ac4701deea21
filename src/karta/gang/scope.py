"""The gang-scheduling scope (docs/controller/gang-reconciler.md, "Scope"): whether karta-controller
manages a workload's gangs, from one label on its namespace and one on the workload itself.

The label is :data:`SCOPE_LABEL` (``karta.run.ai/gang-scheduling``), on both objects:

- namespace ``enabled``: every workload of the namespace is in scope, except those labelled
  ``disabled`` (the per-workload opt-out);
- namespace ``opt-in``: only the workloads labelled ``enabled`` are in scope;
- namespace ``disabled``: none is, whatever the workload says;
- namespace without the label (or with another value): with the mode ``opt-in`` (the default of
  ``--gang-scope``) none is, whatever the workload says; with the mode ``all`` it is read as
  ``enabled``.

A workload's own ``enabled`` counts only in a namespace that lets workloads opt in (``enabled``,
``opt-in``, or unlabelled under ``all``): the pod webhook is only called for pods of those
namespaces (its namespaceSelector, :func:`namespace_selector`), so a workload elsewhere could not
have its pods bound. ``kube-system`` and the namespaces the caller excludes (the controller's own,
in a cluster) are never in scope.

:func:`gang_scope` is the one decision: the gang reconciler, the pod webhook, the escaped-pod pass,
the platform metrics, ``kli describe`` and the web view call it. Pure: labels in, a record out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from karta._records import record

__all__ = [
    "ALWAYS_EXCLUDED",
    "DISABLED",
    "ENABLED",
    "NAMESPACE_OPT_IN",
    "SCOPE_LABEL",
    "SCOPE_MODES",
    "ScopeDecision",
    "gang_scope",
    "namespace_selector",
    "scope_report",
]

SCOPE_LABEL: Final = "karta.run.ai/gang-scheduling"
ENABLED: Final = "enabled"
DISABLED: Final = "disabled"
NAMESPACE_OPT_IN: Final = "opt-in"
SCOPE_MODES: Final = ("opt-in", "all")
ALWAYS_EXCLUDED: Final = ("kube-system",)
_NAMESPACE_NAME: Final = "kubernetes.io/metadata.name"


@record
class ScopeDecision:
    """``in_scope`` and why, in one sentence naming the label (or the namespace) that decided."""

    in_scope: bool
    reason: str


def _label(labels: Mapping[str, Any] | None) -> str | None:
    value = labels.get(SCOPE_LABEL) if isinstance(labels, Mapping) else None
    return value if isinstance(value, str) else None


def gang_scope(
    *,
    mode: str,
    namespace: str,
    namespace_labels: Mapping[str, Any] | None,
    workload_labels: Mapping[str, Any] | None,
    excluded: Collection[str] = (),
) -> ScopeDecision:
    """Whether a workload in ``namespace`` is in the gang-scheduling scope for the ``mode``
    (``opt-in`` or ``all``; anything else is read as ``opt-in``, the safe one)."""
    if namespace in ALWAYS_EXCLUDED or namespace in excluded:
        return ScopeDecision(False, f"namespace {namespace} is never gang-scheduled by karta")
    ns_value = _label(namespace_labels)
    wl_value = _label(workload_labels)
    if ns_value == DISABLED:
        return ScopeDecision(False, f"namespace {namespace} is labelled {SCOPE_LABEL}={DISABLED}")
    if ns_value not in (ENABLED, NAMESPACE_OPT_IN) and mode != "all":
        told = f" (the workload's {SCOPE_LABEL}={wl_value} needs it)" if wl_value == ENABLED else ""
        return ScopeDecision(
            False,
            f"namespace {namespace} is not labelled {SCOPE_LABEL}={ENABLED} or "
            f"{NAMESPACE_OPT_IN} and the scope is opt-in{told}",
        )
    if wl_value == DISABLED:
        return ScopeDecision(False, f"the workload is labelled {SCOPE_LABEL}={DISABLED}")
    if wl_value == ENABLED:
        return ScopeDecision(True, f"the workload is labelled {SCOPE_LABEL}={ENABLED}")
    if ns_value == NAMESPACE_OPT_IN:
        return ScopeDecision(
            False,
            f"namespace {namespace} is labelled {SCOPE_LABEL}={NAMESPACE_OPT_IN} and the workload "
            f"is not labelled {SCOPE_LABEL}={ENABLED}",
        )
    if ns_value == ENABLED:
        return ScopeDecision(True, f"namespace {namespace} is labelled {SCOPE_LABEL}={ENABLED}")
    return ScopeDecision(True, f"the scope is all and namespace {namespace} does not opt out")


def namespace_selector(mode: str, *, excluded: Collection[str] = ()) -> dict[str, Any]:
    """The pod webhook's ``namespaceSelector`` for the ``mode``: exactly the namespaces where a
    workload can be in scope (never ``kube-system`` nor ``excluded``)."""
    names = sorted({*ALWAYS_EXCLUDED, *excluded})
    expressions: list[dict[str, Any]] = [{"key": _NAMESPACE_NAME, "operator": "NotIn", "values": names}]
    if mode == "all":
        expressions.append({"key": SCOPE_LABEL, "operator": "NotIn", "values": [DISABLED]})
    else:
        expressions.append({"key": SCOPE_LABEL, "operator": "In", "values": [ENABLED, NAMESPACE_OPT_IN]})
    return {"matchExpressions": expressions}


def scope_report(
    *,
    mode: str | None,
    namespace: str,
    namespace_labels: Mapping[str, Any] | None,
    workload_labels: Mapping[str, Any] | None,
    excluded: Collection[str] = (),
) -> dict[str, Any]:
    """The scope as ``kli describe`` and the web view show it: ``{inScope, reason}`` plus ``mode``
    when known. A reader that does not know the controller's mode (``mode`` None: kli) gives the
    decision both modes agree on, else ``inScope`` null and what each mode decides. ``excluded``:
    the controller's excluded namespaces, when the reader knows them (its web view)."""
    modes = (mode,) if mode is not None else SCOPE_MODES
    decisions = {
        m: gang_scope(
            mode=m,
            namespace=namespace,
            namespace_labels=namespace_labels,
            workload_labels=workload_labels,
            excluded=excluded,
        )
        for m in modes
    }
    first = decisions[modes[0]]
    out: dict[str, Any] = {}
    if mode is not None:
        out["mode"] = mode
    if all(d.in_scope == first.in_scope for d in decisions.values()):
        out.update(inScope=first.in_scope, reason=first.reason)
        return out
    out["inScope"] = None
    out["reason"] = "; ".join(
        f"with --gang-scope {m}: {'in' if d.in_scope else 'outside'} the scope ({d.reason})"
        for m, d in decisions.items()
    )
    return out
