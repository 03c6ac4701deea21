"""The vendored corpus (tests/corpus): every file has its source row in SOURCES.md, and no project
directory shadows one of the shared corpus (a manifest is named the same way in both)."""

from __future__ import annotations

import pytest
from catalog_view import VENDORED, VENDORED_WORKLOADS, WORKLOADS

SOURCES = VENDORED / "SOURCES.md"


def _files() -> list[str]:
    return sorted(
        str(p.relative_to(VENDORED))
        for p in VENDORED.rglob("*")
        if p.is_file() and p != SOURCES and not p.name.startswith(".")
    )


def test_every_vendored_file_names_its_source() -> None:
    rows = {
        line.split("|")[1].strip().strip("`")
        for line in SOURCES.read_text().splitlines()
        if line.startswith("| `")
    }
    assert [f for f in _files() if f not in rows] == [], "add a row to tests/corpus/SOURCES.md"
    assert sorted(rows - set(_files())) == [], "a row names a file that is not there"


@pytest.mark.skipif(not WORKLOADS.is_dir(), reason=f"shared corpus not found at {WORKLOADS}")
def test_no_vendored_project_shadows_the_shared_corpus() -> None:
    vendored = {p.name for p in VENDORED_WORKLOADS.iterdir() if p.is_dir()}
    shared = {p.name for p in WORKLOADS.iterdir() if p.is_dir()}
    assert vendored & shared == set()
