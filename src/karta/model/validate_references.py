"""Validation of extension E3, ``structureDefinition.references`` (docs/format-extensions.md):
names (jq variable names, unique, not jq's own ``$ENV``/``$__loc__``), the GVK, exactly one of
``lookup``/``list``, the selectors, the limit on their number, references no expression reads
(a warning) and the note that other consumers ignore the field.

A reference's own expressions are checked with every other (14.2, object-side) by
:mod:`karta.model.validate_expressions`, with no reference declared: they see only the workload,
so no reference can depend on another and cycles are impossible by construction. ``$names`` an
expression reads but no reference declares are that module's compile errors
(``$x is not defined``), named with their expression and field.
"""

from __future__ import annotations

import re

from karta.model.findings import Finding, Severity
from karta.model.types import Karta

__all__ = [
    "MAX_REFERENCES",
    "REFERENCES_NOTE",
    "REFERENCES_PATH",
    "check_references",
    "declared_references",
    "is_literal",
    "is_reference_field",
]

REFERENCES_PATH = "spec.structureDefinition.references"
MAX_REFERENCES = 16
"""At most this many references per definition (:class:`karta.references.ReferenceLimits`)."""

REFERENCES_NOTE = (
    "structureDefinition.references is karta extension E3 (related objects bound as $<name>): other "
    "Karta readers ignore it and a cluster whose Karta CRD is not karta's drops the field, so the "
    "expressions that read a reference fail to compile there"
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
_VERSION = re.compile(r"v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?")
_GROUP = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def declared_references(karta: Karta) -> frozenset[str]:
    """The names of the definition's references (bound as ``$name`` in its expressions)."""
    return frozenset(r.name for r in karta.spec.structure_definition.references if r.name)


def is_reference_field(location: str) -> bool:
    """Whether a ``{jq}`` field belongs to a reference (it sees only the workload)."""
    return location.startswith(REFERENCES_PATH + "[")


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def is_literal(value: str) -> bool:
    """Whether a selector value of a list reference is a literal: a valid Kubernetes label value
    (at most 63 characters, alphanumerics, ``-``, ``_``, ``.``, beginning and ending with an
    alphanumeric, or empty). Anything else (``.metadata.name``, ``$x``, ``(true)``) cannot be a
    label value, so it is a jq expression, evaluated on the workload."""
    return len(value) <= 63 and _LABEL_VALUE.fullmatch(value) is not None


def check_references(karta: Karta, used: frozenset[str]) -> list[Finding]:
    """Every finding of ``references``; ``used``: the ``$names`` the definition's expressions
    (those outside the references) read."""
    refs = karta.spec.structure_definition.references
    findings: list[Finding] = []
    if not refs:
        return findings
    findings.append(Finding(Severity.NOTE, REFERENCES_NOTE, REFERENCES_PATH))
    if len(refs) > MAX_REFERENCES:
        findings.append(
            Finding(
                Severity.ERROR,
                f"the definition has {len(refs)} references; at most {MAX_REFERENCES} are allowed",
                REFERENCES_PATH,
            )
        )
    from karta.jq.builtin_table import PREDEFINED_VARIABLES

    known = "/".join(_OPERATORS)
    seen: set[str] = set()
    for i, ref in enumerate(refs):
        where = f"{REFERENCES_PATH}[{i}]"
        errors: list[tuple[str, str]] = []
        if not _NAME.fullmatch(ref.name):
            errors.append(
                (f"reference name '{ref.name}' is not a jq variable name ([A-Za-z_][A-Za-z0-9_]*)", ".name")
            )
        elif ref.name in PREDEFINED_VARIABLES:
            errors.append((f"reference name '{ref.name}' shadows jq's own ${ref.name}", ".name"))
        elif ref.name in seen:
            errors.append((f"duplicate reference name '{ref.name}'", ".name"))
        seen.add(ref.name)
        gvk = ref.gvk
        if gvk is None:
            errors.append((f"reference '{ref.name}' has no gvk", ".gvk"))
        else:
            if gvk.group and not _GROUP.fullmatch(gvk.group):
                errors.append(
                    (f"reference '{ref.name}': gvk.group '{gvk.group}' is not an API group", ".gvk.group")
                )
            if not _VERSION.fullmatch(gvk.version):
                errors.append(
                    (
                        f"reference '{ref.name}': gvk.version '{gvk.version}' is not an API version",
                        ".gvk.version",
                    )
                )
            if not _KIND.fullmatch(gvk.kind):
                errors.append(
                    (f"reference '{ref.name}': gvk.kind '{gvk.kind}' is not a Kind (CamelCase)", ".gvk.kind")
                )
        if (ref.lookup is None) == (ref.list is None):
            errors.append((f"reference '{ref.name}' must have exactly one of lookup or list", ""))
        if ref.lookup is not None and not ref.lookup.name_expression.strip():
            errors.append(
                (f"reference '{ref.name}': lookup.nameExpression is empty", ".lookup.nameExpression")
            )
        if ref.list is not None:
            # No selector (``list: {}``) is Kubernetes' empty selector: every object of the kind in
            # the namespace (cluster-scoped: in the cluster), bounded by the objects-per-list limit
            # (E3.3.6) like any other list; a KServe runtime carries no label to select it by.
            for j, req in enumerate(ref.list.match_expressions):
                at = f".list.matchExpressions[{j}]"
                if req.operator not in _OPERATORS:
                    errors.append(
                        (
                            f"reference '{ref.name}': unknown operator '{req.operator}' ({known})",
                            at,
                        )
                    )
                elif req.operator in ("In", "NotIn") and not req.values:
                    errors.append((f"reference '{ref.name}': operator {req.operator} needs values", at))
                elif req.operator in ("Exists", "DoesNotExist") and req.values:
                    errors.append((f"reference '{ref.name}': operator {req.operator} takes no values", at))
        findings.extend(Finding(Severity.ERROR, message, where + suffix) for message, suffix in errors)
        if ref.name and _NAME.fullmatch(ref.name) and ref.name not in used:
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"reference '{ref.name}' is never used: no expression reads ${ref.name}",
                    where,
                )
            )
    return findings
