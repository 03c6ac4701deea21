"""Structural validation of a Karta: section 14.1 steps 2 to 6, plus the CRD rules on selectors,
and the size limits every definition must keep (issue 9).

Owns: the limits (:func:`check_limits`: components, component chain depth, the definition's size
and nesting), name uniqueness, root rules, owner references, per-component rules (pod spec styles,
instance selectors, component type selectors with their CEL variants and label syntax) and the
ownership cycle check. The orchestration (order, short circuits) lives in
:mod:`karta.model.validate`.

The limits make validation an admission check: a definition within them can be evaluated by code
that follows the component tree (the workload tree, gang arithmetic, the views) without reaching
Python's recursion limit or spending unbounded time, and one beyond them is a finding, never a
crash later.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from karta.model.base import Model
from karta.model.findings import Finding, Severity
from karta.model.names import label_key_error, label_value_error
from karta.model.schema import join_path
from karta.model.types import ComponentDefinition, Karta, SuspendAction

ROOT_PATH = "spec.structureDefinition.rootComponent"
CHILDREN_PATH = "spec.structureDefinition.childComponents"

MAX_COMPONENTS = 256
"""Components of one definition, the root included (the catalog's largest has 12)."""
MAX_COMPONENT_DEPTH = 32
"""Levels of owner → child nesting below the root (the catalog's deepest chain has 2)."""
MAX_DEFINITION_BYTES = 4 * 1024 * 1024
"""The size of a definition: the characters of its strings and keys, and a few per value (close
to its JSON size). A Karta in a cluster is below etcd's 1.5 MiB object limit."""
MAX_DEFINITION_NESTING = 128
"""Nested objects and arrays in a definition's free-form parts (metadata, status conditions)."""


def component_paths(karta: Karta) -> list[tuple[str, ComponentDefinition]]:
    """Every component with its JSON field path: root first, then children in definition order."""
    out = [(ROOT_PATH, karta.root)]
    out.extend((f"{CHILDREN_PATH}[{i}]", c) for i, c in enumerate(karta.children))
    return out


def action_lists(karta: Karta) -> Iterator[tuple[str, ComponentDefinition, str, tuple[SuspendAction, ...]]]:
    """Every component's ``suspendActions`` and ``resumeActions``: (component path, component,
    the list's field name, the list), components in order."""
    for path, comp in component_paths(karta):
        suspend = comp.suspend_definition
        if suspend is not None:
            yield path, comp, "suspendActions", suspend.suspend_actions
            yield path, comp, "resumeActions", suspend.resume_actions


def _error(message: str, location: str) -> Finding:
    return Finding(Severity.ERROR, message, location)


def check_limits(karta: Karta) -> list[Finding]:
    """The size limits: at most :data:`MAX_COMPONENTS` components, no component more than
    :data:`MAX_COMPONENT_DEPTH` owner levels below the root, at most :data:`MAX_DEFINITION_BYTES`
    and :data:`MAX_DEFINITION_NESTING` levels of nesting. Linear in the definition's size, without
    recursion, whatever the definition (cycles included)."""
    findings: list[Finding] = []
    count = 1 + len(karta.children)
    if count > MAX_COMPONENTS:
        findings.append(
            _error(
                f"the definition has {count:,} components; at most {MAX_COMPONENTS} are allowed "
                "(root included)",
                CHILDREN_PATH,
            )
        )
    findings.extend(_check_depth(karta))
    size, nesting = _extent(karta)
    if size > MAX_DEFINITION_BYTES:
        findings.append(
            _error(
                f"the definition is about {size / (1024 * 1024):.1f} MiB; at most "
                f"{MAX_DEFINITION_BYTES // (1024 * 1024)} MiB are allowed",
                "",
            )
        )
    if nesting > MAX_DEFINITION_NESTING:
        findings.append(
            _error(
                f"the definition is nested more than {MAX_DEFINITION_NESTING} levels deep "
                "(in its metadata or status)",
                "",
            )
        )
    return findings


def _check_depth(karta: Karta) -> list[Finding]:
    """The first child (in definition order) more than :data:`MAX_COMPONENT_DEPTH` owner levels
    below the root; chains that end in a cycle or a missing owner are left to steps 4 and 6."""
    owners = {c.name: c.owner_ref for c in karta.children}
    root = karta.root.name
    depth: dict[str, int] = {root: 0}
    stranded: set[str] = set()  # components whose owners never reach the root
    for index, child in enumerate(karta.children):
        chain: list[str] = []
        current: str | None = child.name
        seen: set[str] = set()
        while current is not None and not (current in depth or current in seen or current in stranded):
            seen.add(current)
            chain.append(current)
            current = owners.get(current)
        if current is None or current not in depth:
            stranded.update(chain)  # a missing owner or a cycle: reported by their own checks
            continue
        base = depth[current]
        for offset, name in enumerate(reversed(chain), start=1):
            depth[name] = base + offset
        level = depth[child.name]
        if level > MAX_COMPONENT_DEPTH:
            return [
                _error(
                    f"component '{child.name}' is {level} owner levels below the root; at most "
                    f"{MAX_COMPONENT_DEPTH} levels of owner -> child nesting are allowed",
                    f"{CHILDREN_PATH}[{index}].ownerRef",
                )
            ]
    return []


def _extent(karta: Karta) -> tuple[int, int]:
    """``(size, nesting)`` of a definition (see :data:`MAX_DEFINITION_BYTES`), iteratively; the
    walk stops counting once both limits are passed."""
    size = 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(karta, 0)]
    while stack:
        value, depth = stack.pop()
        size += 2
        if isinstance(value, str):
            size += len(value)
        elif isinstance(value, Model):
            stack.extend((v, depth) for k, v in value if v is not None)
            size += 12 * len(value.__dict__)
        elif isinstance(value, dict):
            deepest = max(deepest, depth + 1)
            for k, v in value.items():
                size += len(k) + 3 if isinstance(k, str) else 8
                stack.append((v, depth + 1))
        elif isinstance(value, list | tuple):
            deepest = max(deepest, depth + 1)
            stack.extend((v, depth + 1) for v in value)
        else:
            size += 6
        if size > MAX_DEFINITION_BYTES and deepest > MAX_DEFINITION_NESTING:
            break
    return size, deepest


def check_unique_names(karta: Karta) -> list[Finding]:
    """Step 2: ``component name <x> is not unique`` (no quotes), once per repeated name."""
    seen: set[str] = set()
    reported: set[str] = set()
    findings = []
    for path, comp in component_paths(karta):
        if comp.name in seen and comp.name not in reported:
            reported.add(comp.name)
            findings.append(_error(f"component name {comp.name} is not unique", join_path(path, "name")))
        seen.add(comp.name)
    return findings


def check_root(karta: Karta) -> list[Finding]:
    """Step 3: full kind (group may be empty only for ``Pod``), no owner, a status definition."""
    root = karta.root
    findings = []
    gvk = root.kind
    if gvk is None or not gvk.version or not gvk.kind or (not gvk.group and gvk.kind != "Pod"):
        findings.append(
            _error("root component must have full kind (group, version, kind)", join_path(ROOT_PATH, "kind"))
        )
    if root.owner_ref:
        findings.append(_error("root component cannot have owner ref", join_path(ROOT_PATH, "ownerRef")))
    if root.status_definition is None:
        findings.append(
            _error("root component must have status definition", join_path(ROOT_PATH, "statusDefinition"))
        )
    return findings


def check_children(karta: Karta) -> list[Finding]:
    """Step 4: every child names an existing owner."""
    names = {c.name for c in karta.components}
    findings = []
    for i, child in enumerate(karta.children):
        where = f"{CHILDREN_PATH}[{i}].ownerRef"
        if not child.owner_ref:
            findings.append(_error(f"child component '{child.name}' has no owner ref", where))
        elif child.owner_ref not in names:
            findings.append(
                _error(
                    f"child component '{child.name}' has owner ref to non-existing component "
                    f"'{child.owner_ref}'",
                    where,
                )
            )
    return findings


def check_components(karta: Karta) -> list[Finding]:
    """Step 5: names, pod spec styles, instance selectors, component type selectors."""
    findings: list[Finding] = []
    for path, comp in component_paths(karta):
        if not comp.name:
            findings.append(_error("component name is empty", join_path(path, "name")))
        spec = comp.spec_definition
        if spec is not None:
            styles = (
                bool(spec.pod_template_spec_path),
                bool(spec.pod_spec_path),
                spec.fragmented_pod_spec_definition is not None,
            )
            if sum(styles) > 1:
                findings.append(
                    _error(
                        f"component '{comp.name}' has multiple pod spec definitions",
                        join_path(path, "specDefinition"),
                    )
                )
        has_instance_selector = comp.pod_selector is not None and (
            comp.pod_selector.component_instance_selector is not None
        )
        if comp.instance_id_path and not has_instance_selector:
            findings.append(
                _error(
                    f"component '{comp.name}' has instance id path but no pod component instance selector",
                    join_path(path, "instanceIdPath"),
                )
            )
        elif has_instance_selector and not comp.instance_id_path:
            findings.append(
                _error(
                    f"component '{comp.name}' has pod component instance selector but no instance id path",
                    f"{path}.podSelector.componentInstanceSelector",
                )
            )
        findings.extend(_check_type_selector(comp, path))
    return findings


def _check_type_selector(comp: ComponentDefinition, path: str) -> list[Finding]:
    selector = comp.pod_selector.component_type_selector if comp.pod_selector is not None else None
    if selector is None:
        return []
    where = f"{path}.podSelector.componentTypeSelector"
    name = comp.name
    findings = []
    if selector.key_path == "":
        findings.append(
            _error(
                f"component '{name}' has an empty keyPath in componentTypeSelector: "
                "keyPath must be at least 1 character long",
                join_path(where, "keyPath"),
            )
        )
    if not selector.key_path and selector.match_labels is None:
        findings.append(
            _error(
                f"component '{name}' has neither keyPath nor matchLabels in componentTypeSelector: "
                "at least one of keyPath or matchLabels must be set",
                where,
            )
        )
    if selector.match_labels is not None and not selector.match_labels:
        findings.append(
            _error(
                f"component '{name}' has empty matchLabels in componentTypeSelector: "
                "matchLabels must have at least 1 entry",
                join_path(where, "matchLabels"),
            )
        )
    if selector.value is not None and not selector.key_path:
        findings.append(
            _error(
                f"component '{name}' has value without keyPath in componentTypeSelector: "
                "value requires keyPath",
                join_path(where, "value"),
            )
        )
    for key in sorted(selector.match_labels or {}):
        value = (selector.match_labels or {})[key]
        entry = join_path(join_path(where, "matchLabels"), key)
        reason = label_key_error(key)
        if reason is not None:
            findings.append(
                _error(
                    f"component '{name}' has an invalid matchLabels key: Invalid value: \"{key}\": {reason}",
                    entry,
                )
            )
        reason = label_value_error(value)
        if reason is not None:
            findings.append(
                _error(
                    f"component '{name}' has an invalid matchLabels value for key \"{key}\": "
                    f'Invalid value: "{value}": {reason}',
                    entry,
                )
            )
    return findings


def check_cycles(karta: Karta) -> list[Finding]:
    """Step 6: follow owner references to the root; report only the first loop found."""
    owners = {c.name: c.owner_ref for c in karta.children}
    for path, comp in component_paths(karta):
        seen = {comp.name}
        current = owners.get(comp.name)
        while current:
            if current in seen:
                return [
                    _error(
                        f"ownership cycle detected involving component {current}", join_path(path, "ownerRef")
                    )
                ]
            seen.add(current)
            current = owners.get(current)
    return []


def check_additional_kinds(karta: Karta) -> list[Finding]:
    """CRD list-map key of ``additionalChildKinds`` is ``kind``: duplicates are rejected."""
    seen: set[str] = set()
    findings = []
    for i, gvk in enumerate(karta.spec.structure_definition.additional_child_kinds):
        if gvk.kind in seen:
            findings.append(
                _error(
                    f"duplicate additionalChildKinds kind '{gvk.kind}'",
                    f"spec.structureDefinition.additionalChildKinds[{i}]",
                )
            )
        seen.add(gvk.kind)
    return findings


def check_action_lists(karta: Karta) -> list[Finding]:
    """CRD: ``suspendActions`` and ``resumeActions`` need at least one item."""
    findings = []
    for path, comp, alias, actions in action_lists(karta):
        if not actions:
            findings.append(
                _error(
                    f"component '{comp.name}' has no {alias}: {alias} must have at least 1 item",
                    join_path(join_path(path, "suspendDefinition"), alias),
                )
            )
    return findings
