"""Validation of extension E2 (``podSelector.externalPods``, docs/format-extensions.md): where the
field makes sense, and the note that other consumers ignore it. Its jq is checked with every other
expression (14.2, object-side).

An external component shows pods the workload does not own (an operator's Helm releases): it must
be a child component with no pod specification, no scale, no child components, no type or replica
selector, and no gang instruction may name it, so that it can never feed a gang plan, a scale sum
or a pod set.
"""

from __future__ import annotations

from karta.model.findings import Finding, Severity
from karta.model.types import ComponentDefinition, Karta
from karta.model.validate_structure import component_paths

__all__ = ["EXTERNAL_NOTE", "check_external_pods", "external_components"]

EXTERNAL_NOTE = (
    "podSelector.externalPods is karta extension E2 (pods found by labels outside the owner chain): "
    "other Karta readers ignore it and a cluster whose Karta CRD is not karta's drops the field, so the "
    "component shows no pods there"
)


def external_components(karta: Karta) -> list[ComponentDefinition]:
    """The child components with ``podSelector.externalPods``, in definition order."""
    return [
        c for c in karta.children if c.pod_selector is not None and c.pod_selector.external_pods is not None
    ]


def _gang_names(karta: Karta) -> dict[str, str]:
    """Component names the gang instructions name: name -> the field that names it."""
    gang = karta.gang
    out: dict[str, str] = {}
    if gang is None:
        return out
    group = gang.pod_group
    if group is not None:
        for sub in group.sub_groups:
            out.setdefault(sub.component_name, "podGroup.subGroups")
        if group.split is not None:
            out.setdefault(group.split.component_name, "podGroup.split.componentName")
    for alpha in gang.pod_groups:
        for member in alpha.members:
            out.setdefault(member.component_name, "podGroups[].members")
    return out


def check_external_pods(karta: Karta) -> list[Finding]:
    """Errors where ``externalPods`` makes no sense; one note per use."""
    findings: list[Finding] = []
    named = _gang_names(karta)
    parents = {c.owner_ref for c in karta.children if c.owner_ref}
    for path, comp in component_paths(karta):
        selector = comp.pod_selector
        external = selector.external_pods if selector is not None else None
        if selector is None or external is None:
            continue
        where = f"{path}.podSelector.externalPods"
        findings.append(Finding(Severity.NOTE, EXTERNAL_NOTE, where))
        why = f"component '{comp.name}' has podSelector.externalPods (its pods are not the workload's own)"
        problems: list[str] = []
        if comp is karta.root:
            problems.append("the root component is the workload itself; its pods are found by owner")
        if not external.match_labels_expression.strip():
            problems.append("matchLabelsExpression is empty")
        if comp.is_pod_bearing:
            problems.append(
                "it cannot have a pod specification (specDefinition): its pods would join gangs and pod sets"
            )
        if comp.scale_definition is not None:
            problems.append(
                "it cannot have a scaleDefinition: the workload's replica counts do not include its pods"
            )
        if selector.component_type_selector is not None or selector.replica_selector is not None:
            problems.append(
                "it cannot have a componentTypeSelector or replicaSelector: its labels select its pods"
            )
        if comp.name in parents:
            problems.append("it cannot have child components")
        if comp.name in named:
            problems.append(f"{named[comp.name]} cannot name it: it is never part of the workload's gangs")
        findings.extend(Finding(Severity.ERROR, f"{why}: {p}", where) for p in problems)
    return findings
