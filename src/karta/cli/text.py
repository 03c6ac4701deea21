"""Terminal-safe text: the one escaping rule for what ``kli`` prints in its human formats (issue 9).

Names, status messages, condition reasons, definitions and error texts come from cluster users; a
workload whose status message holds ``ESC ] 52 ; c ; ... BEL`` must not write the reader's
clipboard, and one holding ``ESC [ 2 J`` must not clear the screen. So every table cell and every
line of the human formats (tables, describe, inspect, verify, validate, and the ``error:``,
``warning:`` and ``hint:`` lines) goes through :func:`printable`, which shows each of these
characters escaped, as ``\\xNN`` below U+0100 and as ``\\uNNNN`` above:

- the C0 controls U+0000 to U+001F (TAB, CR and LF included: a cell is one line, and ``kli`` puts
  its own line breaks between lines) and DEL U+007F;
- the C1 controls U+0080 to U+009F (CSI U+009B and OSC U+009D among them);
- the characters that break or reorder a line: U+2028, U+2029, U+061C, U+200E, U+200F and the
  bidirectional embeddings, overrides and isolates U+202A to U+202E and U+2066 to U+2069.

An ESC (U+001B) thus prints as the four characters ``\\x1b`` and the rest of its sequence as plain
text: no sequence survives. Everything else (any other Unicode, the backslash itself) prints as it
is. The rule is idempotent (escaped text has nothing left to escape), so a cell escaped twice is
unchanged. JSON and YAML output is not touched: it is data, escaped by its own rules.
"""

from __future__ import annotations

import re

__all__ = ["plural", "printable", "printable_lines"]

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character escaped (see the module docstring); one line."""
    if _UNSAFE.search(text) is None:  # the common case: nothing to do
        return text
    return _UNSAFE.sub(_escape, text)


def printable_lines(text: str) -> str:
    """Each line of ``text`` through :func:`printable`, the ``\\n`` between them kept."""
    return "\n".join(printable(line) for line in text.split("\n"))


def plural(count: int, word: str) -> str:
    """``1 check``, ``2 checks``, ``0 checks``: a count and its noun (English ``-s`` plural)."""
    return f"{count} {word}{'' if count == 1 else 's'}"
