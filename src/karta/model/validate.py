"""The Karta validator: every finding of a definition, in a stable order, never raising.

Order (section 14.1 first, then 14.2, then our [fix] additions of section 19):

1. ``karta is nil``; then the size limits (:func:`~karta.model.validate_structure.check_limits`:
   components, component chain depth, size and nesting; issue 9): any finding there stops
   validation, so that nothing else walks a definition beyond them;
2. component name uniqueness (any finding stops validation);
3. root, 4. children, 5. every component (with the CRD's component type selector rules);
6. the ownership cycle check, only when 3-5 found nothing (first cycle only);
7. alpha pod-group members;
8. expression safety of every ``{jq}`` field (14.2);
then R2 (status and action values), R6 (assignability), R10 (sub-groups, topology, pod-group
name, sub-group scale), extension E1 (``podGroup.split``) and the CRD list rules (duplicates,
empty action lists).
"""

from __future__ import annotations

from karta.model.findings import Finding, Severity
from karta.model.types import Karta
from karta.model.validate_expressions import check_expressions
from karta.model.validate_external import check_external_pods
from karta.model.validate_gang import (
    check_alpha_members,
    check_duplicates,
    check_pod_group,
    check_split,
    check_sub_group_scale,
    check_sub_groups,
)
from karta.model.validate_status import check_action_values, check_status
from karta.model.validate_structure import (
    check_action_lists,
    check_additional_kinds,
    check_children,
    check_components,
    check_cycles,
    check_limits,
    check_root,
    check_unique_names,
)
from karta.model.validity import mark_valid, validate_or_raise

__all__ = ["mark_valid", "validate_karta", "validate_or_raise"]


def validate_karta(karta: Karta | None, *, write_back: bool = True) -> list[Finding]:
    """All findings of ``karta`` (errors and warnings) in the order of the module docstring.

    ``write_back=False`` leaves out the warnings about write-back paths that are not assignable
    (R6, all warnings): for callers that never write through them (``kli inspect``, ``describe``,
    ``gang``, ``verify``); ``kli validate`` keeps them."""
    if karta is None:
        return [Finding(Severity.ERROR, "karta is nil", "")]
    findings = check_limits(karta)
    if findings:
        return findings
    findings = check_unique_names(karta)
    if findings:
        return findings
    structural = check_root(karta) + check_children(karta) + check_components(karta)
    findings.extend(structural)
    if not structural:
        findings.extend(check_cycles(karta))
    findings.extend(check_alpha_members(karta))
    safety, assignability = check_expressions(karta)
    findings.extend(safety)
    findings.extend(check_status(karta))
    findings.extend(check_action_values(karta))
    if write_back:
        findings.extend(assignability)
    findings.extend(check_sub_groups(karta))
    findings.extend(check_pod_group(karta))
    findings.extend(check_sub_group_scale(karta))
    findings.extend(check_split(karta))
    findings.extend(check_external_pods(karta))
    findings.extend(check_duplicates(karta))
    findings.extend(check_additional_kinds(karta))
    findings.extend(check_action_lists(karta))
    return findings
