"""``-f DIR`` walks a directory boundedly: no symbolic-link loops, vanished or unreadable entries
passed over, and a cap on the entries looked at (a ``-R /`` is refused, not walked)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from karta.cli import inputs
from karta.cli.errors import UsageError


def test_files_in_name_order_and_subdirectories_only_with_recursive(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text("a: 1\n")
    (tmp_path / "a.JSON").write_text("{}\n")
    (tmp_path / "notes.txt").write_text("x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.yml").write_text("a: 1\n")
    assert inputs.input_files(str(tmp_path)) == [str(tmp_path / "a.JSON"), str(tmp_path / "b.yaml")]
    assert inputs.input_files(str(tmp_path), recursive=True)[-1] == str(tmp_path / "sub" / "c.yml")


def test_a_symbolic_link_loop_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("a: 1\n")
    os.symlink(tmp_path, tmp_path / "loop")
    assert inputs.input_files(str(tmp_path), recursive=True) == [str(tmp_path / "a.yaml")]


def test_unreadable_subdirectories_are_passed_over(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("a: 1\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.yaml").write_text("a: 1\n")
    locked.chmod(0)
    try:
        found = inputs.input_files(str(tmp_path), recursive=True)
    finally:
        locked.chmod(0o755)
    assert str(tmp_path / "a.yaml") in found


def test_too_many_entries_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "MAX_DIRECTORY_ENTRIES", 5)
    for i in range(6):
        (tmp_path / f"{i}.yaml").write_text("a: 1\n")
    with pytest.raises(UsageError, match="more than 5 entries"):
        inputs.input_files(str(tmp_path))
