"""PyYAML, imported without compiling the patterns a one-object command need not compile: import
``yaml`` from here (``from karta._pyyaml import yaml``) where start-up matters.

Importing PyYAML compiles ``yaml.reader.Reader.NON_PRINTABLE``, a character class spanning the
whole of Unicode (about 5 ms), the implicit resolvers' patterns of ``yaml.resolver`` (bool, float,
int, merge, null, timestamp, value, yaml) and ``yaml.constructor``'s ``timestamp_regexp``: together
about as much again, a tenth of what a one-object ``kli`` command spends importing. Only PyYAML's
pure-Python reader uses the first (``Reader.check_printable``); karta reads YAML through libyaml
(the C loader, which checks the characters itself) wherever PyYAML has it. karta's own YAML reader
(:mod:`karta.model.documents`) answers the plain scalars most files hold (words, whole numbers,
quantities such as ``500m``) without the resolvers' patterns, exactly as they would (it checks that
the table is PyYAML's), and the timestamp pattern is only used for a timestamp. So while ``yaml`` is
first imported, each of these patterns (``re.compile`` called from ``yaml.reader`` with that exact
source, or from ``yaml.resolver`` or ``yaml.constructor``) is handed out as a :class:`_LazyPattern`,
compiled on its first use: PyYAML's own loaders and resolvers still get the same patterns, then.
Every other call of ``re.compile`` in that window (another thread's too) is ``re.compile``'s own.
"""

from __future__ import annotations

import re
import sys
from typing import Any

__all__ = ["yaml"]

_NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


_LAZY_MODULES = frozenset({"yaml.resolver", "yaml.constructor"})  # every pattern they compile


class _LazyPattern:
    """A compiled pattern's stand-in, compiled on its first use (``pattern``, its source, is read
    without compiling it)."""

    __slots__ = ("_compiled", "_flags", "pattern")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.pattern = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # search, match, flags, ...: the compiled pattern's
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self._flags)
        return getattr(compiled, name)


def _import() -> None:
    if "yaml" in sys.modules:
        return
    compile_ = re.compile

    def lazy_compile(pattern: Any, flags: Any = 0) -> Any:
        if isinstance(pattern, str):
            module = sys._getframe(1).f_globals.get("__name__")
            reader = module == "yaml.reader" and pattern == _NON_PRINTABLE and not flags
            if reader or module in _LAZY_MODULES:
                return _LazyPattern(pattern, flags)
        return compile_(pattern, flags)

    re.compile = lazy_compile
    try:
        import yaml  # noqa: F401
    finally:
        re.compile = compile_


_import()

import yaml  # noqa: E402 (imported above, with the pattern left uncompiled)
