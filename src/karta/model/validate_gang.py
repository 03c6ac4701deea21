"""Validation of gang-scheduling instructions: section 14.1 step 7 and R10, plus CRD list-map keys.

Owns: alpha member components exist; extension E1 (``podGroup.split``, docs/format-extensions.md):
the split component, ``by``, the number and source of its keys, its sub-groups, and the note that
KAI's own Karta reader ignores it; sub-group components exist, are DNS labels and have a scale
in their subtree; topology constraints (KAI's rules); ``pg-<uid>-<name>`` stays a DNS-1123
subdomain; duplicate pod-group names, member and sub-group component names, and set entries.
"""

from __future__ import annotations

from karta.model.findings import Finding, Severity
from karta.model.names import dns_label_error, dns_subdomain_error
from karta.model.types import (
    SPLIT_BY,
    SPLIT_INDEXES,
    ComponentDefinition,
    GangSplit,
    Karta,
    TopologyConstraint,
)

GANG_PATH = "spec.optimizationInstructions.gangScheduling"
SPLIT_PATH = f"{GANG_PATH}.podGroup.split"
SPLIT_WHEN_PATH = f"{SPLIT_PATH}.when"
SPLIT_SIZE_PATH = f"{SPLIT_PATH}.replicaSizePath"
_EXAMPLE_UID = "00000000-0000-0000-0000-000000000000"  # KAI names pod groups pg-<top owner UID>-<name>


def _error(message: str, location: str) -> Finding:
    return Finding(Severity.ERROR, message, location)


def check_alpha_members(karta: Karta) -> list[Finding]:
    """Step 7: every alpha member names a root or child component."""
    gang = karta.gang
    if gang is None:
        return []
    names = {c.name for c in karta.components}
    findings = []
    for i, group in enumerate(gang.pod_groups):
        for j, member in enumerate(group.members):
            if member.component_name not in names:
                findings.append(
                    _error(
                        f"pod-group member component '{member.component_name}' is not defined "
                        "(should be a root or child component)",
                        f"{GANG_PATH}.podGroups[{i}].members[{j}].componentName",
                    )
                )
    return findings


def check_sub_groups(karta: Karta) -> list[Finding]:
    """R10: sub-group components exist and are usable as KAI SubGroup names."""
    gang = karta.gang
    if gang is None or gang.pod_group is None:
        return []
    names = {c.name for c in karta.components}
    findings = []
    for i, sub in enumerate(gang.pod_group.sub_groups):
        where = f"{GANG_PATH}.podGroup.subGroups[{i}].componentName"
        name = sub.component_name
        if not name:
            findings.append(_error("subgroup component name cannot be empty", where))
            continue
        if name not in names:
            findings.append(_error(f"sub-group component '{name}' is not defined", where))
        reason = dns_label_error(name)
        if reason is not None:
            findings.append(_error(f"component name '{name}' is not a valid sub-group name: {reason}", where))
    return findings


def _topology(constraint: TopologyConstraint | None, where: str) -> list[Finding]:
    if constraint is None:
        return []
    findings = []
    if not constraint.topology_name:
        findings.append(_error("topology constraint must include topology name", where))
    if not constraint.required_topology_level and not constraint.preferred_topology_level:
        findings.append(
            _error("topology constraint must include preferred or required topology level", where)
        )
    return findings


def check_pod_group(karta: Karta) -> list[Finding]:
    """R10: pod-group name and topology constraints of the current format."""
    gang = karta.gang
    if gang is None or gang.pod_group is None:
        return []
    group = gang.pod_group
    findings = []
    where = f"{GANG_PATH}.podGroup.name"
    if not group.name:
        findings.append(_error("podGroup.name must not be empty", where))
    else:
        rendered = f"pg-{_EXAMPLE_UID}-{group.name}"
        reason = dns_subdomain_error(rendered)
        if reason is not None:
            findings.append(
                _error(
                    f"podGroup.name '{group.name}' does not keep the pod-group name pg-<uid>-<name> "
                    f"a valid DNS-1123 subdomain: {reason}",
                    where,
                )
            )
    findings.extend(_topology(group.topology, f"{GANG_PATH}.podGroup.topology"))
    for i, sub in enumerate(group.sub_groups):
        findings.extend(_topology(sub.topology, f"{GANG_PATH}.podGroup.subGroups[{i}].topology"))
    return findings


def check_sub_group_scale(karta: Karta) -> list[Finding]:
    """R10 (warning): a sub-group whose subtree has no scale definition has a gang minimum of 0."""
    gang = karta.gang
    if gang is None or gang.pod_group is None:
        return []
    by_name = {c.name: c for c in karta.components}
    children: dict[str, list[str]] = {}
    for child in karta.children:
        if child.owner_ref:
            children.setdefault(child.owner_ref, []).append(child.name)
    findings = []
    for i, sub in enumerate(gang.pod_group.sub_groups):
        if sub.component_name not in by_name:
            continue
        seen: set[str] = set()
        stack = [sub.component_name]
        scaled = False
        while stack and not scaled:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            scaled = by_name[name].scale_definition is not None
            stack.extend(children.get(name, ()))
        if not scaled:
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"component '{sub.component_name}' must expose a replica scale definition: "
                    "no component in its subtree has a scaleDefinition, "
                    "so its sub-group minimum is not known",
                    f"{GANG_PATH}.podGroup.subGroups[{i}].componentName",
                )
            )
    return findings


def check_duplicates(karta: Karta) -> list[Finding]:
    """CRD list-map and set keys: pod-group names, member and sub-group components, set entries."""
    gang = karta.gang
    if gang is None:
        return []
    findings = []
    if gang.pod_group is not None:
        seen: set[str] = set()
        for i, sub in enumerate(gang.pod_group.sub_groups):
            if sub.component_name in seen:
                findings.append(
                    _error(
                        f"duplicate sub-group component '{sub.component_name}'",
                        f"{GANG_PATH}.podGroup.subGroups[{i}].componentName",
                    )
                )
            seen.add(sub.component_name)
    group_names: set[str] = set()
    for i, group in enumerate(gang.pod_groups):
        where = f"{GANG_PATH}.podGroups[{i}]"
        if group.name in group_names:
            findings.append(_error(f"duplicate pod-group name '{group.name}'", f"{where}.name"))
        group_names.add(group.name)
        members: set[str] = set()
        for j, member in enumerate(group.members):
            mwhere = f"{where}.members[{j}]"
            if member.component_name in members:
                findings.append(
                    _error(
                        f"duplicate pod-group member component '{member.component_name}' "
                        f"in pod group '{group.name}'",
                        f"{mwhere}.componentName",
                    )
                )
            members.add(member.component_name)
            for alias, entries in (
                ("groupByKeyPaths", member.group_by_key_paths),
                ("filters", member.filters),
            ):
                entries_seen: set[str] = set()
                for k, entry in enumerate(entries):
                    if entry in entries_seen:
                        findings.append(
                            _error(f"duplicate {alias} entry '{entry}'", f"{mwhere}.{alias}[{k}]")
                        )
                    entries_seen.add(entry)
    return findings


def split_key_count(split: GangSplit, component: ComponentDefinition) -> int:
    """How many keys a pod of a split gang has (extension E1): the instance id, the replica index,
    or both (``by: replica`` on a multi-instance component: the id, then the index)."""
    if split.by == "replica" and component.instance_id_path:
        return 2
    return 1


def default_key_paths(split: GangSplit, component: ComponentDefinition) -> tuple[str, ...] | None:
    """The key paths of a split without ``groupByKeyPaths``: the split component's
    ``componentInstanceSelector.idPath`` and/or ``replicaSelector.keyPath``, in key order; None when
    the component's pod selector lacks one of them."""
    selector = component.pod_selector
    paths: list[str] = []
    if split.by == "instance" or component.instance_id_path:
        instance = selector.component_instance_selector if selector is not None else None
        if instance is None or not instance.id_path:
            return None
        paths.append(instance.id_path)
    if split.by == "replica":
        replica = selector.replica_selector if selector is not None else None
        if replica is None or not replica.key_path:
            return None
        paths.append(replica.key_path)
    return tuple(paths)


def check_split(karta: Karta) -> list[Finding]:
    """Extension E1: ``podGroup.split`` names a known component, ``by`` is replica or instance,
    ``instance`` needs a multi-instance component and ``replica`` one with a scale definition, the
    key paths (given, or the component's pod selector) are one per key, no sub-group contains the
    split component; and a note that KAI's own Karta reader ignores the extension. The key paths'
    and ``when``'s jq are checked with every other expression (14.2)."""
    gang = karta.gang
    split = gang.pod_group.split if gang is not None and gang.pod_group is not None else None
    if split is None:
        return []
    findings = [
        Finding(
            Severity.NOTE,
            "podGroup.split is karta extension E1 (one gang per replica or instance): KAI "
            "Scheduler's own Karta reader ignores it and makes one gang per workload, and a cluster "
            "whose Karta CRD is not karta's drops the field; karta's renderers and karta-controller "
            "honour it",
            SPLIT_PATH,
        )
    ]
    by_name = {c.name: c for c in karta.components}
    component = by_name.get(split.component_name)
    if split.by not in SPLIT_BY:
        findings.append(
            _error(f"split.by '{split.by}' must be one of {', '.join(SPLIT_BY)}", f"{SPLIT_PATH}.by")
        )
    if component is None:
        findings.append(
            _error(
                f"split component '{split.component_name}' is not defined "
                "(should be a root or child component)",
                f"{SPLIT_PATH}.componentName",
            )
        )
        return findings
    if split.by not in SPLIT_BY:
        return findings
    name = component.name
    if split.by == "instance" and not component.instance_id_path:
        findings.append(
            _error(
                f"split by instance needs a multi-instance component; '{name}' has no instanceIdPath",
                f"{SPLIT_PATH}.by",
            )
        )
        return findings
    if split.by == "replica" and component.scale_definition is None:
        findings.append(
            _error(
                f"split by replica needs the replica count of component '{name}'; it has no scaleDefinition",
                f"{SPLIT_PATH}.by",
            )
        )
    expected = split_key_count(split, component)
    what = "the instance id" if split.by == "instance" else "the replica index"
    if expected == 2:
        what = "the instance id, then the replica index"
    if split.group_by_key_paths:
        if len(split.group_by_key_paths) != expected:
            findings.append(
                _error(
                    f"split by {split.by} of component '{name}' needs {expected} groupByKeyPaths "
                    f"({what}); {len(split.group_by_key_paths)} given",
                    f"{SPLIT_PATH}.groupByKeyPaths",
                )
            )
    elif default_key_paths(split, component) is None:
        selectors = "replicaSelector.keyPath"
        if split.by == "instance":
            selectors = "componentInstanceSelector.idPath"
        if expected == 2:
            selectors = "componentInstanceSelector.idPath and replicaSelector.keyPath"
        findings.append(
            _error(
                f"split by {split.by} of component '{name}' has no groupByKeyPaths and the component's "
                f"podSelector has no {selectors} to take {what} from",
                f"{SPLIT_PATH}.groupByKeyPaths",
            )
        )
    assert gang is not None and gang.pod_group is not None
    findings.extend(_check_replica_size(split, name, karta, len(gang.pod_group.sub_groups)))
    if split.indexes is not None and split.indexes not in SPLIT_INDEXES:
        findings.append(
            _error(
                f"split.indexes '{split.indexes}' must be one of {', '.join(SPLIT_INDEXES)}",
                f"{SPLIT_PATH}.indexes",
            )
        )
    if split.indexes is not None and split.by != "replica":
        findings.append(_error("split.indexes needs split.by replica", f"{SPLIT_PATH}.indexes"))
    parents = {c.name: c.owner_ref for c in karta.children}
    ancestors: set[str] = set()
    current = parents.get(name)
    while current and current not in ancestors:
        ancestors.add(current)
        current = parents.get(current)
    for i, sub in enumerate(gang.pod_group.sub_groups):
        if sub.component_name in ancestors:
            findings.append(
                _error(
                    f"sub-group '{sub.component_name}' contains the split component '{name}': a sub-group "
                    "of a split gang must be the split component, below it, or outside its subtree",
                    f"{GANG_PATH}.podGroup.subGroups[{i}].componentName",
                )
            )
    return findings


def _check_replica_size(split: GangSplit, name: str, karta: Karta, sub_groups: int) -> list[Finding]:
    """``split.replicaSizePath`` (a replica of a component that counts pods) needs ``by: replica``,
    a split component without children (its own count is the pods) and no ``subGroups``."""
    if not split.replica_size_path:
        return []
    out: list[Finding] = []
    if split.by != "replica":
        out.append(_error("split.replicaSizePath needs split.by replica", SPLIT_SIZE_PATH))
    if any(c.owner_ref == name for c in karta.children):
        out.append(
            _error(
                f"split.replicaSizePath sizes a replica of a component that counts pods; '{name}' has "
                "child components, whose scales already size its replicas",
                SPLIT_SIZE_PATH,
            )
        )
    if sub_groups:
        out.append(
            _error(
                "split.replicaSizePath cannot be combined with podGroup.subGroups (the instances of "
                "replica size 1 join the gang of the rest, which no sub-group would cover)",
                SPLIT_SIZE_PATH,
            )
        )
    return out
