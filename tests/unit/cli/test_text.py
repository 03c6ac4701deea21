"""The one escaping rule of kli's human output (:mod:`karta.cli.text`), the table renderer and the
message lines that use it, and JSON/YAML output that stays exact (and never a traceback)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from karta.cli.errors import CliError, one_line
from karta.cli.output import dump_json, dump_yaml, warn
from karta.cli.text import printable, printable_lines
from karta.cli.views.get import Table
from karta.cli.views.table import fit_list, render, widths

UNSAFE = [chr(c) for c in [*range(0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, 0x2028, 0x2029]]
UNSAFE += [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]]


@pytest.mark.parametrize("char", UNSAFE, ids=lambda c: f"U+{ord(c):04X}")
def test_every_control_character_is_escaped(char: str) -> None:
    code = ord(char)
    expected = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    assert printable(f"a{char}b") == f"a{expected}b"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]52;c;SGVsbG8=\x07", "\\x1b]52;c;SGVsbG8=\\x07"),  # OSC 52: the clipboard
        ("\x1b]0;title\x1b\\", "\\x1b]0;title\\x1b\\"),  # OSC 0 ended by ST
        ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # CSI: clear, home
        ("\x9b31m", "\\x9b31m"),  # 8-bit CSI
        ("tab\there\r\n", "tab\\x09here\\x0d\\x0a"),
        ("\x7f", "\\x7f"),
        ("plain text, ünïcødé, 日本語, \\x1b literally", "plain text, ünïcødé, 日本語, \\x1b literally"),
    ],
)
def test_sequences_cannot_survive(raw: str, shown: str) -> None:
    assert printable(raw) == shown


@given(st.text())
def test_escaping_is_idempotent_and_leaves_nothing_unsafe(text: str) -> None:
    once = printable(text)
    assert printable(once) == once
    assert not any(ch in once for ch in UNSAFE)
    assert printable_lines(text).split("\n") == [printable(line) for line in text.split("\n")]


def test_the_table_measures_escaped_cells_so_columns_align() -> None:
    rows = [["NAME", "PHASE"], ["a\x1b[31mb", "Running"], ["plain", "Failed\x07"]]
    lines = render(rows)
    cell = "a\\x1b[31mb"  # 10 characters once escaped: the column's width
    assert lines == [f"{'NAME':<10}   PHASE", f"{cell}   Running", f"{'plain':<10}   Failed\\x07"]
    assert widths(rows) == [len("a\\x1b[31mb"), len("Failed\\x07")]
    assert fit_list(["a\x1b", "b", "c"], 9) == "a\\x1b, +2"


def test_the_get_table_escapes_and_still_fits_and_colours() -> None:
    view = {
        "name": "job\x1b]52;c;SGVsbG8=\x07",
        "namespace": "ns\x9b2J",
        "phases": ["Running"],
        "gpus": 1,
        "components": [{"name": "w\x1b[31m", "replicas": 2}],
        "createdAt": None,
    }
    text = Table(show_type=False, wide=False, now=lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC)).render(
        [view]
    )
    assert "\x1b" not in text and "\x9b" not in text
    assert "job\\x1b]52;c;SGVsbG8=\\x07" in text and "w\\x1b[31m:2" in text
    coloured = Table(show_type=False, wide=False, colour=True).render([view])
    assert "\x1b[32mRunning\x1b[0m" in coloured  # kli's own colour is kept
    assert coloured.count("\x1b") == 2


def test_message_lines_are_one_line_and_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    assert one_line("first\x1b]52;c;x\x07\nsecond") == "first\\x1b]52;c;x\\x07 second"
    warn("pod p\x1b[2J is \u202eevil")
    assert capsys.readouterr().err == "warning: pod p\\x1b[2J is \\u202eevil\n"


def test_json_and_yaml_stay_exact() -> None:
    data = {"name": "job\x1b]52;c;SGVsbG8=\x07\x9b", "n": 1}
    assert json.loads(dump_json(data)) == data
    assert yaml.safe_load(dump_yaml(data)) == data
    assert "\x1b" not in dump_json(data) and "\x1b" not in dump_yaml(data)  # both escape ESC themselves


def test_json_output_writes_what_orjson_cannot() -> None:
    assert json.loads(dump_json({"big": 2**70})) == {"big": 2**70}
    deep: list[object] = []
    value: list[object] = deep
    for _ in range(400):  # deeper than orjson writes
        value.append([])
        value = value[0]  # type: ignore[assignment]
    assert dump_json(deep).count("[") == 401
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert json.loads(dump_json({"at": when, "big": 2**70})) == {"at": when.isoformat(), "big": 2**70}


def test_output_nested_beyond_printing_is_an_error_not_a_traceback() -> None:
    deep: list[object] = []
    value: list[object] = deep
    for _ in range(100_000):
        value.append([])
        value = value[0]  # type: ignore[assignment]
    with pytest.raises(CliError, match="cannot print the result as JSON: it is nested too deeply"):
        dump_json(deep)
    with pytest.raises(CliError, match="cannot print the result as YAML: it is nested too deeply"):
        dump_yaml(deep)
