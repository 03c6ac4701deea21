"""The source cites the project's own specifications: every ``docs/spec/<page>.md#<anchor>`` in src,
tests, examples, docs and CONTRIBUTING names an anchor the page declares (``{#anchor}``), and nothing
cites the specification documents outside the repository any more."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("format", "gang-backends")
_CITATION = re.compile(r"docs/spec/(format|gang-backends)\.md((?:#[a-z0-9-]+(?:,? (?:and )?#[a-z0-9-]+)*)?)")
_LINK = re.compile(r"\]\(((?:\.\./)?spec/|)(format|gang-backends)\.md#([a-z0-9-]+)\)")
# Built so that this file does not cite them itself.
_OUTSIDE = ("karta" + "-format.md", "shared" + "/docs")
# The tests of hack/recite_spec.py, which rewrites old citations, quote them.
_REWRITERS = {Path(__file__).resolve(), ROOT / "tests" / "unit" / "hack" / "test_recite_spec.py"}


def _anchors(page: str) -> set[str]:
    return set(re.findall(r"\{#([a-z0-9-]+)\}", (ROOT / "docs" / "spec" / f"{page}.md").read_text()))


def _files() -> list[Path]:
    found: list[Path] = [ROOT / "CONTRIBUTING.md"]
    for top, patterns in (
        ("src", ("*.py", "*.yaml")),
        ("tests", ("*.py", "*.yaml")),
        ("examples", ("*.yaml",)),
        ("docs", ("*.md",)),
    ):
        for pattern in patterns:
            found.extend((ROOT / top).rglob(pattern))
    return sorted(p for p in found if p.is_file() and ".egg-info" not in str(p))


def test_anchors_are_unique_per_page() -> None:
    for page in PAGES:
        ids = re.findall(r"\{#([a-z0-9-]+)\}", (ROOT / "docs" / "spec" / f"{page}.md").read_text())
        assert len(ids) == len(set(ids)), page


def test_every_citation_names_a_declared_anchor() -> None:
    anchors = {page: _anchors(page) for page in PAGES}
    bad = []
    count = 0
    for path in _files():
        text = path.read_text()
        for page, tail in _CITATION.findall(text):
            cited = re.findall(r"#([a-z0-9-]+)", tail)
            bad += [(path.name, page, a) for a in cited if a not in anchors[page]]
            count += len(cited)
        for _, page, anchor in _LINK.findall(text):
            if anchor not in anchors[page]:
                bad.append((path.name, page, anchor))
            count += 1
    assert not bad
    assert count > 100  # the source does cite them (a pattern that found nothing would pass)


def test_nothing_cites_the_specifications_outside_the_repository() -> None:
    bad = [
        path.relative_to(ROOT).as_posix()
        for path in _files()
        if path not in _REWRITERS and any(name in path.read_text() for name in _OUTSIDE)
    ]
    assert not bad
