"""Running flows and writing or comparing their fixtures."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

from karta.kube import KubeClient

from . import registry
from .fixtures import RECORDED, Fixture, definition_for, fixture_dir, load_fixture, write_fixture
from .session import Session

__all__ = ["compare", "run_flow", "selected", "stored", "write_flow"]


def selected(operator: str, kind: str | None = None, flow: str | None = None) -> Iterator[tuple[str, str]]:
    """(kind, flow) pairs of ``operator``, narrowed to ``kind`` and ``flow`` when given."""
    table = registry.flows(operator)
    if kind is not None and kind not in table:
        raise SystemExit(f"error: {operator} has no flows for kind {kind!r} (known: {', '.join(table)})")
    for each_kind, kind_flows in table.items():
        if kind not in (None, each_kind):
            continue
        if flow is not None and flow not in kind_flows and kind is not None:
            raise SystemExit(f"error: {kind} has no flow {flow!r} (known: {', '.join(kind_flows)})")
        for name in kind_flows:
            if flow in (None, name):
                yield each_kind, name


def run_flow(client: KubeClient, operator: str, kind: str, flow: str, *, quiet: float = 3.0) -> list[Fixture]:
    """Run one flow in a namespace and on Nodes of its own; its fixtures, labelled with where
    they belong (operator, version, definition, flow)."""
    op = registry.OPERATORS[operator]
    session = Session(client, registry.judges(operator)[kind], quiet=quiet).open()
    try:
        registry.flows(operator)[kind][flow](session)
    finally:
        session.close()
    for fixture in session.fixtures:
        if fixture["kind"] != kind:
            raise RuntimeError(f"flow {kind}/{flow} recorded a {fixture['kind']}")
        fixture.update(
            operator=operator,
            version=op.version,
            definition=definition_for(fixture["object"]).metadata.name,
            flow=flow,
        )
    return session.fixtures


def _path(fixture: Fixture, root: Path) -> Path:
    where = fixture_dir(fixture["operator"], fixture["version"], fixture["definition"], fixture["flow"], root)
    return where / f"{fixture['step']:02d}-{fixture['label']}.json"


def write_flow(fixtures: list[Fixture], root: Path = RECORDED) -> list[Path]:
    """Replace the flow's fixture directory with ``fixtures``."""
    if not fixtures:
        return []
    directory = _path(fixtures[0], root).parent
    shutil.rmtree(directory, ignore_errors=True)
    paths = []
    for fixture in fixtures:
        path = _path(fixture, root)
        write_fixture(path, fixture)
        paths.append(path)
    return paths


def stored(operator: str, kind: str, flow: str, root: Path = RECORDED) -> list[Fixture]:
    """The fixtures of one flow as recorded in the repository."""
    op = registry.OPERATORS[operator]
    found = sorted(root.glob(f"{operator}/{op.version}/*/{flow}/[0-9][0-9]-*.json"))
    fixtures = [load_fixture(p) for p in found]
    return [f for f in fixtures if f["kind"] == kind]


def compare(recorded: list[Fixture], expected: list[Fixture]) -> list[str]:
    """Differences between a live re-recording and the stored fixtures of the same flow: the
    labels in order, and per state the judged status and karta's reading."""
    problems: list[str] = []
    labels = [f["label"] for f in recorded]
    wanted = [f["label"] for f in expected]
    if labels != wanted:
        return [f"states {labels} != stored {wanted}"]
    for got, want in zip(recorded, expected, strict=True):
        where = f"{got['step']:02d}-{got['label']}"
        if got["judged"]["status"] != want["judged"]["status"]:
            problems.append(f"{where}: judged {got['judged']} != stored {want['judged']}")
        if got["reading"] != want["reading"]:
            problems.append(f"{where}: karta's reading changed: {got['reading']} != stored {want['reading']}")
    return problems
