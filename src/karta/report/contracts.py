"""The JSON contracts of the reports, as TypedDicts: what ``kli inspect``, ``kli get`` and ``kli
describe`` print with ``-o json`` (docs/reference/commands/inspect.md, "stable contract") and what
other consumers (the controller, a web view) receive. Key order is the printed order;
``NotRequired`` keys are omitted when empty. The parts that lower layers own are theirs: findings
(:mod:`karta.model.findings`), scales (:mod:`karta.extract.types`), requests
(:mod:`karta.extract.requests`) and gang plans (:mod:`karta.gang.plan`).

The TypedDicts exist for type checkers only; at run time each name is :class:`dict` (what the
reports are). Defining them costs a ``compile`` of every annotation (``typing.ForwardRef``), about
a millisecond of every command's start-up for a module that holds no behaviour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from karta.extract.types import RequestsDict, ScaleDict
    from karta.gang.plan import GangPlanDict
    from karta.model.findings import FindingDict

__all__ = [
    "ComponentCount",
    "ComponentReport",
    "ConditionDetail",
    "ConditionReport",
    "DescribeComponent",
    "DescribeReport",
    "DescribeResources",
    "EventReport",
    "InspectReport",
    "InstanceReport",
    "KindDict",
    "PendingPods",
    "PodPlacement",
    "PodReport",
    "ReplicaCounts",
    "StatusReport",
    "WorkloadRef",
    "WorkloadSummary",
    "WorkloadView",
]


if TYPE_CHECKING:

    class KindDict(TypedDict):
        group: str
        version: str
        kind: str

    class WorkloadRef(TypedDict):
        apiVersion: str | None
        kind: str | None
        name: str | None
        namespace: str | None

    # --- kli inspect ----------------------------------------------------------------------------------

    class ConditionReport(TypedDict):
        type: str
        status: str
        reason: str | None
        message: str | None

    class StatusReport(TypedDict):
        phase: str | None
        conditions: list[ConditionReport]
        matched: list[str]
        primary: str
        stale: NotRequired[bool]  # present (true) only when observedGeneration < generation

    class InstanceReport(TypedDict):
        id: str
        podTemplateSpec: NotRequired[dict[str, Any]]
        podSpec: NotRequired[dict[str, Any]]
        metadata: NotRequired[dict[str, Any]]
        fragmentedPodSpec: NotRequired[dict[str, Any]]
        scale: ScaleDict

    class ComponentReport(TypedDict):
        name: str
        kind: KindDict | None
        owner: str | None
        instances: list[InstanceReport]

    class PodPlacement(TypedDict):
        """Where one pod belongs: its component, instance, replica and gang (None: not found)."""

        name: str
        component: str | None
        instance: str | None
        replica: str | None
        gang: str | None

    class InspectReport(TypedDict):
        """Everything the engine derives from one workload object and its pods."""

        definition: str
        workload: WorkloadRef
        status: StatusReport | None
        components: list[ComponentReport]
        gang: GangPlanDict
        pods: list[PodPlacement]
        diagnostics: list[FindingDict]

    # --- kli get --------------------------------------------------------------------------------------

    class ComponentCount(TypedDict):
        name: str
        replicas: int

    class WorkloadView(TypedDict):
        """The fields of docs/spec/format.md#kli-get's ``View``: a workload, its definition and phases."""

        name: str | None
        namespace: str | None
        kind: str | None
        apiVersion: str | None
        createdAt: str | None
        definition: str
        origin: str
        phases: list[str]

    class WorkloadSummary(WorkloadView):
        """One workload as a row (the View, plus GPUs and components; in ``kli get -o
        wide|json|yaml``, when its definition has gang instructions, its gang state, ``{error}``
        when unknown; when it carries Kueue's queue label, ``queue``: the dict of ``kli
        describe``'s, state ``Unknown`` when its Workloads could not be read)."""

        gpus: int
        components: list[ComponentCount]
        gang: NotRequired[dict[str, Any]]
        queue: NotRequired[dict[str, Any]]

    # --- kli describe ---------------------------------------------------------------------------------

    class PodReport(TypedDict):
        name: str
        phase: str
        ready: bool
        node: str | None
        reason: NotRequired[str]
        resources: RequestsDict

    class ReplicaCounts(TypedDict):
        desired: int
        current: int | None  # None: the pods could not all be read (``podsComplete`` false)
        ready: int | None

    class DescribeComponent(TypedDict):
        name: str
        kind: NotRequired[KindDict]
        replicas: ReplicaCounts
        resources: RequestsDict
        nodes: NotRequired[list[str]]
        pods: NotRequired[list[PodReport]]
        children: NotRequired[list[DescribeComponent]]

    class DescribeResources(RequestsDict):
        pods: int

    class ConditionDetail(TypedDict):
        """One of the workload's ``status.conditions``, as ``kubectl describe`` lists them."""

        type: str
        status: str
        reason: str
        message: str
        lastTransitionTime: str | None

    class PendingPods(TypedDict):
        """Pending pods not scheduled, for one reason and message of PodScheduled=False (both empty:
        no scheduling decision yet)."""

        count: int
        reason: str
        message: str
        pods: list[str]

    # An Event of the workload or of its pods (identical Events of several pods merged); "from" is a
    # Python keyword, hence the functional form.
    EventReport = TypedDict(
        "EventReport",
        {
            "type": str,
            "reason": str,
            "from": str,
            "objects": list[str],
            "message": str,
            "count": int,
            "firstSeen": str | None,
            "lastSeen": str | None,
        },
    )

    class DescribeReport(WorkloadView):
        """A workload's component tree with replicas, pods and requests (17.6): the View, plus these.
        Live only: ``podsComplete`` (false when some pods could not be read, the counts are then
        unknown), ``conditions``, ``pendingPods``, ``events`` (``eventsOmitted`` older ones left out)
        ``warnings`` (what could not be read; also on stderr). ``gang`` when the definition has
        gang instructions: the gang state, ``{error}`` when unknown (from a file: no pods); live,
        ``gangScope``: ``{inScope, reason[, mode]}``, whether karta-controller manages its gangs
        (``inScope`` null: undecided, the reason says what each ``--gang-scope`` decides); live,
        when Kueue manages it: ``queue``: ``{queue, workload, state, clusterQueue, reason, message[,
        notes][, position: {clusterQueue, localQueue, clusterQueueName, localQueueName, text}][,
        positionNote]}`` (:mod:`karta.report.queue`; the position of a pending Workload, from 1);
        live, ``ownerTree`` when it owns workloads of other kinds (:mod:`karta.report.owner_tree`)
        and ``ownedBy`` (``Kind/name``) when a top-level workload owns it (``gang.ownedBy`` names
        the topmost owner with gang instructions when its pods are in that one's gang)."""

        fileMode: bool
        stale: NotRequired[bool]  # present (true) only when the root status is stale
        resources: DescribeResources
        components: list[DescribeComponent]
        podsComplete: NotRequired[bool]
        conditions: NotRequired[list[ConditionDetail]]
        pendingPods: NotRequired[list[PendingPods]]
        events: NotRequired[list[EventReport] | None]  # None: the Events could not be read
        eventsOmitted: NotRequired[int]
        warnings: NotRequired[list[str]]
        gang: NotRequired[dict[str, Any]]  # gang instructions: the gang state ({error}: unknown)
        gangScope: NotRequired[dict[str, Any]]  # live, gang instructions: in the gang scope or not
        queue: NotRequired[dict[str, Any]]  # live, Kueue: the queue, its Workload, the admission state
        ownerTree: NotRequired[dict[str, Any]]  # live, owning workloads of other kinds: report.owner_tree
        ownedBy: NotRequired[str]  # live, owned by a top-level workload (Kind/name)
else:
    KindDict = dict
    WorkloadRef = dict
    ConditionReport = dict
    StatusReport = dict
    InstanceReport = dict
    ComponentReport = dict
    PodPlacement = dict
    InspectReport = dict
    ComponentCount = dict
    WorkloadView = dict
    WorkloadSummary = dict
    PodReport = dict
    ReplicaCounts = dict
    DescribeComponent = dict
    DescribeResources = dict
    ConditionDetail = dict
    PendingPods = dict
    DescribeReport = dict
    EventReport = dict
