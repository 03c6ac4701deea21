"""karta._pyyaml: PyYAML imported with its Reader's NON_PRINTABLE pattern, its implicit resolvers'
patterns and its constructor's timestamp pattern compiled on first use.

NON_PRINTABLE is only used by PyYAML's pure-Python reader; karta reads through libyaml. These tests
pin that the stand-ins are the same patterns, that the pure-Python reader still rejects what it
rejected, that PyYAML's loaders resolve and construct as before, and that nothing else is touched."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

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


_RESOLVER_PROBE = """
import json, re
compile_ = re.compile
IMPORT
patterns = [r for rs in yaml.resolver.Resolver.yaml_implicit_resolvers.values() for _, r in rs]
patterns.append(yaml.constructor.SafeConstructor.timestamp_regexp)
kinds = sorted({type(p).__name__ for p in patterns})
text = "a: yes\\nb: 0x1F\\nc: 1.5e+3\\nd: ~\\ne: 2001-12-14T21:59:43.10-05:00\\ng: 1:30\\nh: 6d1e\\n"
loaded = {k: repr(v) for k, v in yaml.safe_load(text).items()}
flags = sorted({p.flags for p in patterns})
print(json.dumps({"kinds": kinds, "loaded": loaded, "flags": flags, "restored": re.compile is compile_}))
"""


def test_resolver_and_timestamp_patterns_are_compiled_on_first_use_and_resolve_as_before() -> None:
    import json

    def probe(module: str) -> dict[str, Any]:
        code = _RESOLVER_PROBE.replace("IMPORT", module)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        result: dict[str, Any] = json.loads(out)
        return result

    lazy, plain = probe("from karta._pyyaml import yaml"), probe("import yaml")
    assert lazy["kinds"] == ["_LazyPattern"] and plain["kinds"] == ["Pattern"]
    assert lazy["loaded"] == plain["loaded"] and lazy["loaded"]["h"] == "'6d1e'"
    assert lazy["flags"] == plain["flags"]  # compiled with PyYAML's flags (verbose)
    assert lazy["restored"]
