"""karta._pyyaml: PyYAML imported with its Reader's NON_PRINTABLE pattern compiled on first use.

The pattern is only used by PyYAML's pure-Python reader; karta reads through libyaml. These tests
pin that the stand-in is the same pattern, that the pure-Python reader still rejects what it
rejected, and that nothing else is touched."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from karta import _pyyaml

_PROBE = """
import json, re
compile_ = re.compile
from karta._pyyaml import yaml
from yaml.reader import Reader, ReaderError
before = (type(Reader.NON_PRINTABLE).__name__, Reader.NON_PRINTABLE._compiled is None)
try:
    yaml.load("a: b\\x01", Loader=yaml.SafeLoader)  # the pure-Python reader
    rejected = ""
except ReaderError as exc:
    rejected = str(exc).splitlines()[0]
accepted = yaml.load("a: é", Loader=yaml.SafeLoader)
print(json.dumps({"before": before, "rejected": rejected, "accepted": accepted,
    "compiled": type(Reader.NON_PRINTABLE._compiled).__name__, "restored": re.compile is compile_}))
"""


def test_the_pattern_is_compiled_on_its_first_use_and_rejects_what_it_did() -> None:
    import json

    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True).stdout
    result = json.loads(out)
    assert result["before"] == ["_LazyPattern", True]
    assert result["rejected"] == "unacceptable character #x0001: special characters are not allowed"
    assert result["accepted"] == {"a": "é"}
    assert result["compiled"] == "Pattern"
    assert result["restored"]


def test_the_stand_in_is_pyyamls_own_pattern() -> None:
    # PyYAML's source of the pattern: a change there leaves the pattern compiled eagerly (the
    # stand-in is only used for this exact source), and this test says so
    from yaml.reader import Reader

    assert Reader.NON_PRINTABLE.pattern == _pyyaml._NON_PRINTABLE


@pytest.mark.parametrize("text", ["plain", "tab\there", "\x85\xa0", "\ud7ff", "\U0001f600"])
def test_the_stand_in_matches_as_the_pattern_does(text: str) -> None:
    lazy = _pyyaml._LazyPattern(_pyyaml._NON_PRINTABLE)
    real = re.compile(_pyyaml._NON_PRINTABLE)
    assert bool(lazy.search(text)) == bool(real.search(text))
    assert bool(lazy.search(text + "\x07")) and bool(real.search(text + "\x07"))
