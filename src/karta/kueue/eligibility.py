"""Whether karta can be Kueue's adapter for a definition (docs/kueue.md section 3.1).

A definition is managed only whole, never half: the root component must be able to hold the
workload (``suspendActions``) and start it (``resumeActions``), and every pod-bearing component
must be able to receive the admitted flavor's node labels through a write-back path (a pod template,
a pod spec, or a fragmented pod spec with a ``nodeAffinityPath``; a path that reads a referenced
object, extension E3, is not one: karta never writes it). The first missing piece is the
reason, one sentence naming the field: it is the Karta's condition message and ``kli``'s warning.

Notes are what an eligible definition cannot carry (it is still managed): a fragmented pod spec has
no tolerations field, so an admission whose flavor or admission check brings tolerations fails for
it (:mod:`karta.kueue.patches` reports that admission); without labels (a pod spec without
``metadataPath``, a fragmented pod spec without ``labelsPath``) Kueue's ``kueue.x-k8s.io/podset``
pod label is not written.
"""

from __future__ import annotations

from karta._records import record
from karta.jq.bound import bound_names
from karta.model.types import ComponentDefinition, Karta

__all__ = ["Eligibility", "eligibility"]


@record(slots=True)
class Eligibility:
    """``reason`` is None when the definition can be managed; ``notes`` are its limits."""

    reason: str | None
    notes: tuple[str, ...] = ()

    @property
    def eligible(self) -> bool:
        return self.reason is None


def _write_target(component: ComponentDefinition, references: frozenset[str]) -> tuple[str | None, list[str]]:
    """Why the component cannot receive a node selector (None when it can), and its notes."""
    spec = component.spec_definition
    if spec is None:
        return None, []
    for field, path in (
        ("podTemplateSpecPath", spec.pod_template_spec_path),
        ("podSpecPath", spec.pod_spec_path),
    ):
        read = bound_names(path, references) if path else ()
        if read:
            return (
                f"component {component.name}'s {field} reads a referenced object "
                f"({', '.join('$' + name for name in read)}, extension E3): karta never writes one, so "
                "the admitted flavor's node labels cannot be written into its pods",
                [],
            )
    if spec.pod_template_spec_path:
        return None, []
    if spec.pod_spec_path:
        if spec.metadata_path:
            return None, []
        return None, [
            f"component {component.name} has a podSpecPath without metadataPath: the pod labels and "
            "annotations of an admission (Kueue's kueue.x-k8s.io/podset label among them) are not "
            "written, and an admission check that sets some is refused"
        ]
    fragments = spec.fragmented_pod_spec_definition
    if fragments is None:
        return None, []
    if not fragments.node_affinity_path:
        return (
            f"component {component.name}'s fragmentedPodSpecDefinition has no nodeAffinityPath: the "
            "admitted flavor's node labels cannot be written into its pods",
            [],
        )
    notes = [
        f"component {component.name} has a fragmented pod spec, which has no tolerations field: an "
        "admission whose flavor or admission check brings tolerations is refused; the flavor's node "
        "labels are written as a required node affinity"
    ]
    if not fragments.labels_path:
        notes.append(
            f"component {component.name}'s fragmentedPodSpecDefinition has no labelsPath: the pod "
            "labels of an admission (Kueue's kueue.x-k8s.io/podset label among them) are not written"
        )
    return None, notes


def eligibility(karta: Karta) -> Eligibility:
    """Whether the definition can be managed through Kueue, and why not."""
    root = karta.root
    suspend = root.suspend_definition
    if suspend is None or not suspend.suspend_actions:
        return Eligibility(
            f"the root component {root.name} has no suspendDefinition.suspendActions: karta cannot "
            "hold the workload until Kueue admits it"
        )
    if not suspend.resume_actions:
        return Eligibility(
            f"the root component {root.name} has no suspendDefinition.resumeActions: karta cannot "
            "start the workload when Kueue admits it"
        )
    pod_bearing = [c for c in karta.components if c.is_pod_bearing]
    if not pod_bearing:
        return Eligibility(
            "no component has a specDefinition with a pod template, pod spec or fragmented pod spec: "
            "a Kueue Workload needs at least one PodSet"
        )
    notes: list[str] = []
    references = frozenset(r.name for r in karta.spec.structure_definition.references)
    for component in pod_bearing:
        reason, more = _write_target(component, references)
        if reason is not None:
            return Eligibility(reason)
        notes.extend(more)
    return Eligibility(None, tuple(notes))
