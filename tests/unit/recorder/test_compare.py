"""How a live re-recording is compared with the stored fixtures (the e2e drift test's verdict)."""

from __future__ import annotations

import copy
from typing import Any

from tests.recorder.record import compare, differences


def _fixture(label: str, status: str, primary: str) -> dict[str, Any]:
    reading = {"status": {"primary": primary, "matched": [primary]}, "components": [{"name": "a"}]}
    return {"step": 1, "label": label, "judged": {"status": status, "why": "w"}, "reading": reading}


def test_same_states_same_readings_compare_equal() -> None:
    stored = [_fixture("running", "Running", "Running")]
    assert compare(copy.deepcopy(stored), stored) == []


def test_other_states_are_one_problem() -> None:
    assert compare(
        [_fixture("pending", "Initializing", "Initializing")], [_fixture("running", "Running", "Running")]
    ) == ["states ['pending'] != stored ['running']"]


def test_changed_judgement_and_reading_name_where() -> None:
    now = _fixture("running", "Initializing", "Resuming")
    problems = compare([now], [_fixture("running", "Running", "Running")])
    assert len(problems) == 2
    assert problems[0].startswith("01-running: judged")
    assert ".status.primary: 'Resuming' != 'Running'" in problems[1]


def test_differences_walk_objects_and_lists() -> None:
    assert differences({"a": [1, {"b": 2}], "c": {}}, {"a": [1, {"b": 3}]}) == [
        ".a[1].b: 2 != 3",
        ".c: {} != '(absent)'",
    ]
    assert differences([1], [1, 2]) == [".: [1] != [1, 2]"]
