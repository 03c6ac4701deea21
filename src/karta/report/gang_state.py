"""A live workload's gang state: how many of its pods are bound to a Node against the minimum its
gang plan asks for, sub-group minimums included (docs/spec/gang-backends.md#gang-plan). The one answer
``kli get -o wide|json|yaml``, ``kli describe``, the web view's rows and the platform metrics give.

A gang's effective minimum is :func:`karta.gang.flat_min`: its own ``minMember``, or, when it has
sub-groups (whose gang-level ``minMember`` is 0 and ``minSubGroup`` is every sub-group), the sum of
the sub-groups' minimums. A gang's minimum is met when its bound members reach that minimum and
every sub-group's bound members reach the sub-group's; the workload's when it has a gang and every
gang's is met. A workload with several gangs (a split, docs/format-extensions.md E1, or alpha keys)
also has each gang's bound/minimum (``per_gang``). A pod is bound when ``spec.nodeName`` is set.

The state is only ever computed from every pod of the workload: read without its pods, or with only
some of them (a pod list refused, owners unreadable), it is unknown (:func:`read_gang` says why),
never a count of what happened to be seen.

Pure: a definition, an object and its pods in, a :class:`GangState` out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karta._records import record

if TYPE_CHECKING:
    from karta.definitions import StoredDefinition
    from karta.gang.plan import GangPlan
    from karta.jq import Evaluator
    from karta.model import Karta

__all__ = [
    "INCOMPLETE_PODS",
    "GangState",
    "OneGangState",
    "SubGroupState",
    "gang_report",
    "gang_state",
    "read_gang",
    "report_of",
    "workload_gang",
]

INCOMPLETE_PODS = "some of its pods could not be read"
"""Why the gang state of a workload whose pods were only partly read is unknown."""


@record(slots=True)
class SubGroupState:
    """One sub-group of a gang: its minimum and its bound members."""

    name: str
    minimum: int
    bound: int

    @property
    def met(self) -> bool:
        return self.bound >= self.minimum


@record(slots=True)
class OneGangState:
    """One gang of a workload with several (a split, extension E1, or alpha keys): its name, its
    effective minimum, its bound members and its members seen."""

    name: str
    minimum: int
    bound: int
    pods: int

    @property
    def met(self) -> bool:
        return self.bound >= self.minimum


@record(slots=True)
class GangState:
    """The gangs of one workload: ``minimum`` the effective minimums summed, ``bound`` the bound
    pods, ``pods`` the pods seen, ``met`` whether every gang's minimum (and every sub-group's) is
    met; ``sub_groups`` those of every gang, in plan order."""

    gangs: int
    minimum: int
    bound: int
    pods: int
    met: bool
    sub_groups: tuple[SubGroupState, ...] = ()
    per_gang: tuple[OneGangState, ...] = ()

    def text(self) -> str:
        """``3/12 bound, min 12 not met (master 1/1, worker 2/11)``: the sub-groups in
        parentheses (bound/minimum) when the minimum is not met; with several gangs, each gang's
        bound/minimum after it (``8/12 bound, min 12 not met; gangs: lws-0 4/4, lws-1 4/4,
        lws-2 0/4``)."""
        out = f"{self.bound}/{self.pods} bound, min {self.minimum} {'met' if self.met else 'not met'}"
        if not self.met and self.sub_groups:
            out += " (" + ", ".join(f"{s.name} {s.bound}/{s.minimum}" for s in self.sub_groups) + ")"
        if self.per_gang:
            out += "; gangs: " + ", ".join(f"{g.name} {g.bound}/{g.minimum}" for g in self.per_gang)
        return out

    def to_dict(self) -> dict[str, Any]:
        """``{gangs, minMember, scheduled, minimumMet}``: the keys the web view's row has."""
        return {
            "gangs": self.gangs,
            "minMember": self.minimum,
            "scheduled": self.bound,
            "minimumMet": self.met,
        }

    def to_report(self) -> dict[str, Any]:
        """The ``gang`` of ``kli get`` and ``kli describe`` JSON: :meth:`to_dict`,
        the pods seen, ``subGroups`` (name, minMember, scheduled) when any, ``perGang`` (name,
        minMember, scheduled, pods, minimumMet) when there are several gangs, and the text."""
        out = {**self.to_dict(), "pods": self.pods}
        if self.sub_groups:
            out["subGroups"] = [
                {"name": s.name, "minMember": s.minimum, "scheduled": s.bound} for s in self.sub_groups
            ]
        if self.per_gang:
            out["perGang"] = [
                {
                    "name": g.name,
                    "minMember": g.minimum,
                    "scheduled": g.bound,
                    "pods": g.pods,
                    "minimumMet": g.met,
                }
                for g in self.per_gang
            ]
        out["text"] = self.text()
        return out


def _bound(pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec")
    return isinstance(spec, Mapping) and bool(spec.get("nodeName"))


def _name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata")
    return str(meta.get("name") or "") if isinstance(meta, Mapping) else ""


def gang_state(plan: GangPlan, pods: Sequence[Mapping[str, Any]]) -> GangState:
    """The state of ``plan`` (computed with ``pods``, so that its members are their names)."""
    from karta.gang.plan import flat_min

    bound_names = {_name(p) for p in pods if _bound(p)}
    subs: list[SubGroupState] = []
    each: list[OneGangState] = []
    met = bool(plan.gangs)
    for gang in plan.gangs:
        here = [
            SubGroupState(sub.name, sub.min_member, sum(m in bound_names for m in sub.members))
            for sub in gang.sub_groups
        ]
        members_bound = sum(m in bound_names for m in gang.members)
        met = met and members_bound >= flat_min(gang) and all(s.met for s in here)
        subs.extend(here)
        each.append(OneGangState(gang.qualified_name, flat_min(gang), members_bound, len(gang.members)))
    return GangState(
        gangs=len(plan.gangs),
        minimum=sum(flat_min(g) for g in plan.gangs),
        bound=sum(1 for p in pods if _bound(p)),
        pods=len(pods),
        met=met,
        sub_groups=tuple(subs),
        per_gang=tuple(each) if len(each) > 1 else (),
    )


def workload_gang(
    karta: Karta, obj: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], *, evaluator: Evaluator
) -> GangState | None:
    """The gang state of ``obj`` and its ``pods`` read through ``karta``; None when the definition
    has no gang instructions. Raises :class:`~karta.errors.KartaError` when the plan cannot be
    computed."""
    from karta.extract import ComponentFactory
    from karta.gang import compute_gang_plan, gang_format

    if gang_format(karta) is None:
        return None
    from karta.extract.external import external_selectors, split_external

    factory = ComponentFactory(karta, dict(obj), evaluator=evaluator)
    # extension E2: the pods of external components (given offline with the workload's) are not
    # the workload's own: they are never gang members nor counted as its pods
    own, _ = split_external(external_selectors(factory), pods)
    pod_list = [dict(p) for p in own]
    return gang_state(compute_gang_plan(factory, pod_list, evaluator=evaluator), pod_list)


def read_gang(
    karta: Karta,
    obj: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]] | None,
    *,
    pods_complete: bool = True,
    evaluator: Evaluator,
) -> tuple[GangState | None, str | None]:
    """``(state, None)``; ``(None, why)`` when the state is unknown (read without its pods, ``pods``
    None; only some of them, ``pods_complete`` False; the plan cannot be computed); ``(None,
    None)`` when the definition has no gang instructions."""
    from karta.errors import KartaError
    from karta.gang import gang_format

    if gang_format(karta) is None:
        return None, None
    if pods is None:
        return None, "read without its pods"
    if not pods_complete:
        return None, INCOMPLETE_PODS
    try:
        return workload_gang(karta, obj, pods, evaluator=evaluator), None
    except KartaError as exc:
        return None, f"cannot compute its gang plan: {exc}"


def report_of(state: GangState | None, unknown: str | None) -> dict[str, Any] | None:
    """The ``gang`` field of ``kli get`` and ``kli describe`` JSON for a :func:`read_gang` answer:
    :meth:`GangState.to_report`, ``{error}`` when unknown, None without gang instructions."""
    if unknown is not None:
        return {"error": unknown}
    return state.to_report() if state is not None else None


def gang_report(
    definition: StoredDefinition,
    obj: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]] | None,
    *,
    pods_complete: bool = True,
    evaluator: Evaluator | None = None,
) -> dict[str, Any] | None:
    """:func:`report_of` :func:`read_gang` for ``obj`` read through ``definition`` (``evaluator``
    defaulting to the process's for the definition): what ``kli get`` adds to a row it read
    without its pods once they are known."""
    from karta.definitions.evaluators import evaluator_for

    chosen = evaluator if evaluator is not None else evaluator_for(definition)
    return report_of(*read_gang(definition.karta, obj, pods, pods_complete=pods_complete, evaluator=chosen))
