"""Every recorded fixture (tests/recorded, written by ``python -m tests.recorder``) replayed
offline: karta's primary status equals the state the operator's own fields give (the judge's,
recomputed and equal to the recorded one), and karta's whole reading equals the recorded reading.
A changed reading is a reviewed diff: ``python -m tests.recorder.regenerate`` (tests/recorded/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.recorder import registry
from tests.recorder.fixtures import RECORDED, fixture_files, load_fixture, reading_of

FIXTURES = fixture_files()


def _id(path: Path) -> str:
    return str(path.relative_to(RECORDED))


def test_the_matrix_is_recorded() -> None:
    kinds = {(f.parts[-5], load_fixture(f)["kind"]) for f in FIXTURES}
    assert len(kinds) >= 1, "no fixtures under tests/recorded"


@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_fixture_is_where_it_says(path: Path) -> None:
    fixture = load_fixture(path)
    op = registry.OPERATORS[fixture["operator"]]
    expected = RECORDED / op.name / op.version / fixture["definition"] / fixture["flow"]
    assert path.parent == expected
    assert path.name == f"{fixture['step']:02d}-{fixture['label']}.json"


@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_judge_is_reproducible(path: Path) -> None:
    fixture = load_fixture(path)
    judge = registry.judges(fixture["operator"])[fixture["kind"]]
    assert judge(fixture["object"]).to_dict() == fixture["judged"]


@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_karta_reading_is_the_recorded_one(path: Path) -> None:
    fixture = load_fixture(path)
    assert reading_of(fixture["object"]) == fixture["reading"], (
        "regenerate: python -m tests.recorder.regenerate"
    )


@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_karta_primary_is_the_judged_state(path: Path) -> None:
    fixture = load_fixture(path)
    primary = reading_of(fixture["object"])["status"]["primary"]
    judged = fixture["judged"]
    assert primary == judged["status"], f"karta {primary}, judged {judged['status']}: {judged['why']}"
