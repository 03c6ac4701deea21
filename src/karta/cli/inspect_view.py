"""Builds the ``kli inspect`` view (a plain dict, the documented JSON contract) and its table form
(fitted to :data:`TABLE_WIDTH` columns: the header on two lines, container lists cut to ``+N``)."""

from __future__ import annotations

from typing import Any

from karta.cli.errors import CliError

TABLE_WIDTH = 100


def build_view(
    karta: Any,
    obj: dict[str, Any],
    pods: list[dict[str, Any]],
    *,
    trusted: bool,
    diagnostics: list[dict[str, str]],
) -> tuple[dict[str, Any], int]:
    """Return ``(view, number of error diagnostics)``; extraction errors raise :class:`CliError`."""
    from karta.errors import ExtractionError, JqError, KartaError, StatusError
    from karta.extract import ComponentFactory, PodQuerier
    from karta.gang import compute_gang_plan
    from karta.jq import Evaluator

    evaluator = Evaluator(trusted=trusted)
    factory = ComponentFactory(karta, obj, evaluator=evaluator)
    meta = _mapping(obj.get("metadata"))
    view: dict[str, Any] = {
        "definition": karta.metadata.name,
        "workload": {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
        },
    }
    try:
        status = factory.root().status()
        view["status"] = _status(status)
        if status is not None:
            diagnostics.extend(d.to_dict() for d in status.diagnostics)
        view["components"] = [_component(factory.component(c.name)) for c in karta.components]
    except (ExtractionError, StatusError, JqError) as exc:
        raise CliError(str(exc)) from None

    try:
        plan = compute_gang_plan(factory, pods, evaluator=evaluator)
        view["gang"] = plan.to_dict()
        diagnostics.extend(d.to_dict() for d in getattr(plan, "diagnostics", []))
    except KartaError as exc:
        view["gang"] = {"gangs": []}
        diagnostics.append(
            {"severity": "error", "message": str(exc), "location": "spec.optimizationInstructions"}
        )

    gang_of: dict[str, str] = {}
    for gang in view["gang"].get("gangs", []):
        for member in gang.get("members", []):
            gang_of.setdefault(member, gang["name"])
    view["pods"] = [_pod(karta, factory, pod, evaluator, gang_of, diagnostics) for pod in pods]
    _ = PodQuerier  # imported here so a missing export fails early, not per pod
    view["diagnostics"] = diagnostics
    failed = sum(1 for d in diagnostics if d.get("severity") == "error")
    return view, failed


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _status(status: Any) -> dict[str, Any] | None:
    if status is None:
        return None
    return {
        "phase": status.phase,
        "conditions": [
            {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
            for c in status.conditions
        ],
        "matched": [str(m) for m in status.matched],
        "primary": str(status.primary),
    }


def _component(component: Any) -> dict[str, Any]:
    definition = component.definition
    kind = definition.kind
    instances = []
    for instance_id, extracted in component.extracted_instances().items():
        entry: dict[str, Any] = {"id": instance_id}
        for key, value in (
            ("podTemplateSpec", extracted.pod_template_spec),
            ("podSpec", extracted.pod_spec),
            ("metadata", extracted.metadata),
            ("fragmentedPodSpec", extracted.fragmented_pod_spec),
        ):
            if value is not None:
                entry[key] = value
        scale = extracted.scale
        entry["scale"] = {
            "replicas": scale.replicas if scale else None,
            "minReplicas": scale.min_replicas if scale else None,
            "maxReplicas": scale.max_replicas if scale else None,
        }
        instances.append(entry)
    return {
        "name": definition.name,
        "kind": {"group": kind.group, "version": kind.version, "kind": kind.kind}
        if kind is not None
        else None,
        "owner": definition.owner_ref or None,
        "instances": instances,
    }


def _pod(
    karta: Any,
    factory: Any,
    pod: dict[str, Any],
    evaluator: Any,
    gang_of: dict[str, str],
    diagnostics: list[dict[str, str]],
) -> dict[str, Any]:
    from karta.errors import KartaError
    from karta.extract import PodQuerier
    from karta.gang import StructureSummary, infer_pod_component

    meta = _mapping(pod.get("metadata"))
    name = str(meta.get("name") or meta.get("generateName") or "<unnamed>")
    row: dict[str, Any] = {"name": name, "component": None, "instance": None, "replica": None, "gang": None}
    querier = PodQuerier(pod, evaluator=evaluator)
    try:
        component = infer_pod_component(StructureSummary(karta), querier)
    except KartaError as exc:
        diagnostics.append({"severity": "warning", "message": str(exc), "location": f"pods/{name}"})
        return row
    row["component"] = component
    definition = factory.component(component).definition
    selector = definition.pod_selector
    try:
        if selector is not None and selector.component_instance_selector is not None:
            row["instance"] = querier.matching_instance_id(
                definition, factory.component(component).instance_ids()
            )
        if selector is not None and selector.replica_selector is not None:
            row["replica"] = querier.extract_replica_key(definition)
    except KartaError as exc:
        diagnostics.append({"severity": "warning", "message": str(exc), "location": f"pods/{name}"})
    row["gang"] = gang_of.get(name)
    return row


# --- table ----------------------------------------------------------------------------------------


def render_table(view: dict[str, Any]) -> str:
    w = view["workload"]
    head = f"{w['kind']}/{w['name'] or '<none>'}   namespace: {w['namespace'] or '<none>'}"
    definition = f"definition: {view['definition']}"
    if len(head) + 3 + len(definition) <= TABLE_WIDTH:
        lines = [f"{head}   {definition}", ""]
    else:
        lines = [head, definition, ""]
    status = view.get("status")
    if status is not None:
        phase = status["phase"] if status["phase"] is not None else "<none>"
        lines.append(
            f"Status: {status['primary']}   matched: {', '.join(status['matched'])}   phase: {phase}"
        )
        for c in status["conditions"]:
            extra = f" ({c['reason']})" if c.get("reason") else ""
            lines.append(f"  condition {c['type']}={c['status']}{extra}")
        lines.append("")
    lines.append("Components:")
    children: dict[str | None, list[dict[str, Any]]] = {}
    for comp in view["components"]:
        children.setdefault(comp["owner"], []).append(comp)
    tree: list[str] = []
    for root in children.get(None, []):
        tree.append(_component_line(root))
        _subtree(root, children, "", tree)
    lines += [_fit_list(line) for line in tree]
    gangs = view["gang"].get("gangs", [])
    lines.append("")
    if gangs:
        lines.append("Gangs:")
        for gang in gangs:
            if gang.get("subGroups"):
                parts = ", ".join(f"{s['name']} min {s['minMember']}" for s in gang["subGroups"])
                lines.append(f"  {gang['name']}: minSubGroup {gang.get('minSubGroup')} ({parts})")
            else:
                lines.append(f"  {gang['name']}: minMember {gang['minMember']}")
            if gang.get("members"):
                lines.append(_fit_list(f"    members: {', '.join(gang['members'])}", "members: "))
    else:
        lines.append("Gangs: <none>")
    if view["pods"]:
        lines += ["", "Pods:"]
        keys = ("name", "component", "instance", "replica", "gang")
        rows: list[list[str]] = [[k.upper() for k in keys]]
        for p in view["pods"]:
            rows.append([str(p[k]) if p[k] is not None else "-" for k in keys])
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        for r in rows:
            lines.append("  " + "   ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip())
    if view["diagnostics"]:
        lines += ["", "Diagnostics:"]
        for d in view["diagnostics"]:
            where = f" (at {d['location']})" if d.get("location") else ""
            lines.append(f"  {d['severity']}: {d['message']}{where}")
    return "\n".join(lines) + "\n"


def _fit_list(line: str, label: str = "containers: ", width: int = TABLE_WIDTH) -> str:
    """A line ending in ``<label>a, b, c`` cut to ``width``: whole names, then ``+N``."""
    if len(line) <= width or label not in line:
        return line
    start, _, listed = line.rpartition(label)
    names = listed.split(", ")
    for keep in range(len(names) - 1, -1, -1):
        text = f"{start}{label}{', '.join([*names[:keep], f'+{len(names) - keep}'])}"
        if len(text) <= width:
            return text
    return text


def _component_line(comp: dict[str, Any]) -> str:
    kind = comp["kind"]
    if kind is None:
        kind_text = "(virtual)"
    else:
        kind_text = ".".join(p for p in (kind["kind"], kind["version"], kind["group"]) if p)
    text = f"{comp['name']}  {kind_text}"
    instances = comp["instances"]
    if len(instances) == 1 and instances[0]["id"] == "":
        text += _instance_cells(instances[0])
    return text


def _instance_cells(inst: dict[str, Any]) -> str:
    s = inst["scale"]
    cells = [
        f"{label}: {s[key]}"
        for label, key in (("replicas", "replicas"), ("min", "minReplicas"), ("max", "maxReplicas"))
        if s[key] is not None
    ]
    summary = _pod_summary(inst)
    if summary:
        cells.append(summary)
    return "".join(f"   {c}" for c in cells)


def _subtree(
    comp: dict[str, Any],
    children: dict[str | None, list[dict[str, Any]]],
    prefix: str,
    lines: list[str],
) -> None:
    rows: list[tuple[str, dict[str, Any] | None]] = []
    instances = comp["instances"]
    if not (len(instances) == 1 and instances[0]["id"] == ""):
        rows += [(f"[{inst['id']}]{_instance_cells(inst)}", None) for inst in instances]
    rows += [(_component_line(child), child) for child in children.get(comp["name"], [])]
    for index, (text, child) in enumerate(rows):
        last = index == len(rows) - 1
        lines.append(f"{prefix}{'`-- ' if last else '|-- '}{text}")
        if child is not None:
            _subtree(child, children, prefix + ("    " if last else "|   "), lines)


def _pod_summary(inst: dict[str, Any]) -> str:
    spec: Any = None
    if isinstance(inst.get("podTemplateSpec"), dict):
        spec = inst["podTemplateSpec"].get("spec")
    elif isinstance(inst.get("podSpec"), dict):
        spec = inst["podSpec"]
    elif isinstance(inst.get("fragmentedPodSpec"), dict):
        frag = inst["fragmentedPodSpec"]
        containers = list(frag.get("containers") or [])
        if isinstance(frag.get("container"), dict):
            containers.append(frag["container"])
        spec = {"containers": containers}
    if not isinstance(spec, dict):
        return ""
    names = [str(c.get("name", "?")) for c in spec.get("containers") or [] if isinstance(c, dict)]
    return f"containers: {', '.join(names)}" if names else "containers: <none>"
