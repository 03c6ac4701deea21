"""PyYAML, imported without compiling the one pattern karta never uses: import ``yaml`` from here
(``from karta._pyyaml import yaml``) where start-up matters.

Importing PyYAML compiles ``yaml.reader.Reader.NON_PRINTABLE``, a character class spanning the
whole of Unicode: about 5 ms, a tenth of what a one-object ``kli`` command spends importing.
Only PyYAML's pure-Python reader uses it (``Reader.check_printable``); karta reads YAML through
libyaml (the C loader, which checks the characters itself) wherever PyYAML has it. So while
``yaml`` is first imported, that one pattern (called from ``yaml.reader`` with that exact
source) is handed out as a :class:`_LazyPattern`, compiled on its first use: the pure-Python
reader (PyYAML without libyaml) still gets the same pattern, then. Every other call of
``re.compile`` in that window (another thread's too) is ``re.compile``'s own.
"""

from __future__ import annotations

import re
import sys
from typing import Any

__all__ = ["yaml"]

_NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


class _LazyPattern:
    """A compiled pattern's stand-in, compiled on its first use."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # search, match, pattern, ...: the compiled pattern's
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source)
        return getattr(compiled, name)


def _import() -> None:
    if "yaml" in sys.modules:
        return
    compile_ = re.compile

    def lazy_compile(pattern: Any, flags: Any = 0) -> Any:
        if (
            pattern == _NON_PRINTABLE
            and not flags
            and sys._getframe(1).f_globals.get("__name__") == "yaml.reader"
        ):
            return _LazyPattern(pattern)
        return compile_(pattern, flags)

    re.compile = lazy_compile
    try:
        import yaml  # noqa: F401
    finally:
        re.compile = compile_


_import()

import yaml  # noqa: E402 (imported above, with the pattern left uncompiled)
