"""The ``kli inspect`` text over :class:`karta.report.InspectReport`: the header (on two lines when
long), the status, the component tree with scales and containers (without the components the
object does not have: :func:`karta.report.absent_components`), the gangs, where each pod
belongs and the diagnostics; on a terminal the container and member lists are cut to its width
(``+N``), elsewhere nothing is cut (:func:`karta.cli.views.table.fit_width`).
Every line is escaped (:func:`karta.cli.text.printable`) before it is fitted: names, status
messages, reasons and diagnostics come from the workload and the definition.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from karta.cli.text import printable
from karta.cli.views.table import TABLE_WIDTH, fit_list, render

if TYPE_CHECKING:
    from karta.report import InspectReport
    from karta.report.contracts import ComponentReport, InstanceReport

__all__ = ["render_table"]


def render_table(
    view: InspectReport, *, width: int | None = None, absent: Collection[str] = frozenset()
) -> str:
    """The text report; lists cut to ``width`` when one is given (a terminal's). The components
    named in ``absent`` (:func:`karta.report.absent_components`) and those below them are left out."""
    w = view["workload"]
    head = printable(f"{w['kind']}/{w['name'] or '<none>'}   namespace: {w['namespace'] or '<none>'}")
    definition = printable(f"definition: {view['definition']}")
    if len(head) + 3 + len(definition) <= TABLE_WIDTH:
        lines = [f"{head}   {definition}", ""]
    else:
        lines = [head, definition, ""]
    status = view.get("status")
    if status is not None:
        phase = status["phase"] if status["phase"] is not None else "<none>"
        stale = "   (stale: status.observedGeneration < metadata.generation)" if status.get("stale") else ""
        lines.append(
            f"Status: {status['primary']}   matched: {', '.join(status['matched'])}   phase: {phase}{stale}"
        )
        for c in status["conditions"]:
            extra = f" ({c['reason']})" if c.get("reason") else ""
            lines.append(f"  condition {c['type']}={c['status']}{extra}")
        lines.append("")
    lines.append("Components:")
    children: dict[str | None, list[ComponentReport]] = {}
    for comp in view["components"]:
        if comp["name"] not in absent:
            children.setdefault(comp["owner"], []).append(comp)
    tree: list[str] = []
    for root in children.get(None, []):
        tree.append(_component_line(root))
        _subtree(root, children, "", tree)
    lines += [_fit_list(printable(line), width=width) for line in tree]
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
                members = printable(f"    members: {', '.join(gang['members'])}")
                lines.append(_fit_list(members, "members: ", width=width))
    else:
        lines.append("Gangs: <none>")
    if view["pods"]:
        lines += ["", "Pods:"]
        rows: list[list[str]] = [["NAME", "COMPONENT", "INSTANCE", "REPLICA", "GANG"]]
        for p in view["pods"]:
            cells = (p["name"], p["component"], p["instance"], p["replica"], p["gang"])
            rows.append([str(c) if c is not None else "-" for c in cells])
        lines.extend(render(rows, indent="  "))
    if view["diagnostics"]:
        lines += ["", "Diagnostics:"]
        for d in view["diagnostics"]:
            where = f" (at {d['location']})" if d.get("location") else ""
            lines.append(f"  {d['severity']}: {d['message']}{where}")
    return "\n".join(printable(line) for line in lines) + "\n"


def _fit_list(line: str, label: str = "containers: ", *, width: int | None) -> str:
    """A line ending in ``<label>a, b, c`` cut to ``width``: whole names, then ``+N``."""
    if width is None or len(line) <= width or label not in line:
        return line
    start, _, listed = line.rpartition(label)
    names = listed.split(", ")
    cut = fit_list(names, width, prefix=start + label)
    return cut if cut is not None else f"{start}{label}+{len(names)}"


def _component_line(comp: ComponentReport) -> str:
    kind = comp["kind"]
    if kind is None:
        kind_text = "(virtual)"
    else:
        kind_text = ".".join(p for p in (kind["kind"], kind["version"], kind["group"]) if p)
    text = f"{comp['name']}  {kind_text}"
    if _single(comp):
        text += _instance_cells(comp["instances"][0])
    return text


def _single(comp: ComponentReport) -> bool:
    """One implicit instance, or one named after its component (a role the object has, such as
    KServe's transformer): its cells go on the component's line."""
    instances = comp["instances"]
    return len(instances) == 1 and instances[0]["id"] in ("", comp["name"])


def _instance_cells(inst: InstanceReport) -> str:
    s = inst["scale"]
    scale = (("replicas", s["replicas"]), ("min", s["minReplicas"]), ("max", s["maxReplicas"]))
    cells = [f"{label}: {value}" for label, value in scale if value is not None]
    summary = _pod_summary(inst)
    if summary:
        cells.append(summary)
    return "".join(f"   {c}" for c in cells)


def _subtree(
    comp: ComponentReport,
    children: dict[str | None, list[ComponentReport]],
    prefix: str,
    lines: list[str],
) -> None:
    rows: list[tuple[str, ComponentReport | None]] = []
    if not _single(comp):
        rows += [(f"[{inst['id']}]{_instance_cells(inst)}", None) for inst in comp["instances"]]
    rows += [(_component_line(child), child) for child in children.get(comp["name"], [])]
    for index, (text, child) in enumerate(rows):
        last = index == len(rows) - 1
        lines.append(f"{prefix}{'`-- ' if last else '|-- '}{text}")
        if child is not None:
            _subtree(child, children, prefix + ("    " if last else "|   "), lines)


def _pod_summary(inst: InstanceReport) -> str:
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
