"""Escaping CRD text wherever a draft writes it: jq string literals, YAML scalars, comments.

One rule: a character is kept when it is printable (``str.isprintable``: not a control, format,
surrogate, private-use or unassigned character, not a line or paragraph separator, not whitespace
other than the space), else it is replaced by an escape; a few characters that are special where
the text goes (``"`` and ``\\`` in quoted strings) get a backslash. The escape of a code point is
the caller's (jq's ``\\uXXXX`` takes a surrogate pair beyond the BMP, YAML has ``\\UXXXXXXXX``).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["escaped", "jq_code", "yaml_code"]


def jq_code(code: int) -> str:
    """jq's (and JSON's) ``\\uXXXX``; a UTF-16 surrogate pair beyond the BMP."""
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def yaml_code(code: int) -> str:
    """YAML's ``\\uXXXX`` or ``\\UXXXXXXXX`` (also how a comment shows the character)."""
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def escaped(text: str, *, code: Callable[[int], str], backslashed: str = "") -> str:
    """``text`` with every non-printable character escaped by ``code`` and ``backslashed`` ones
    preceded by a backslash; the text itself when nothing needs escaping."""
    if text.isprintable() and not any(ch in text for ch in backslashed):
        return text
    out: list[str] = []
    for ch in text:
        if ch in backslashed:
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(code(ord(ch)))
    return "".join(out)
