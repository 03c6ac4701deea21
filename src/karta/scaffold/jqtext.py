"""The jq text of a draft: string literals, field access and paths built from CRD names.

A CRD's property names (and its group, in the instance label) are data, never code. A name is
written ``.name`` only when it is an identifier jq reads as a field there (``[A-Za-z_][A-Za-z0-9_]*``;
keywords such as ``.if`` are fields too, in our parser and in jq 1.7+), else as a string literal
index ``["..."]`` (``.["..."]`` at the start of a path) in which ``"`` and ``\\`` are escaped (so
``\\(`` can never open an interpolation) and every character that is not printable (controls, line
and paragraph separators, format characters such as bidirectional marks, unassigned code points,
surrogates, whitespace other than the space) is written ``\\uXXXX`` (a surrogate pair beyond the
BMP; the rule is :mod:`karta.scaffold.escape`'s). The draft's jq therefore carries no control
character and no line break of the CRD's.

:func:`jq_path` is the one place a path is built; :func:`jq_scoped` and the instance ids of
``karta.scaffold.draft`` are made of its results and of fixed jq text. Pure: strings in, strings out.
(``karta.jq`` has no string-literal writer; this one is the scaffold's own.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from karta.scaffold.escape import escaped, jq_code

__all__ = ["Step", "jq_field", "jq_path", "jq_scoped", "jq_string"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = '"\\'  # the quote and the backslash itself, so that a name's backslash-paren stays text


class Step(Protocol):
    """One step of a path (``karta.scaffold.schema.Segment``): a field, iterated or not."""

    @property
    def name(self) -> str: ...

    @property
    def iterate(self) -> str | None: ...


def jq_string(text: str) -> str:
    """``text`` as a jq string literal (with its quotes) that evaluates to exactly ``text``.

    A lone surrogate (possible only in a Python string) is escaped too; jq reads it as U+FFFD.
    """
    return f'"{escaped(text, code=jq_code, backslashed=_QUOTED)}"'


def jq_field(name: str) -> str:
    """Access to the field ``name`` after a term: ``.name`` or ``["name"]``."""
    return f".{name}" if _IDENT.fullmatch(name) else f"[{jq_string(name)}]"


def jq_path(segments: Iterable[Step], base: str = "") -> str:
    """An assignable jq path from ``base`` (the input when empty): ``.spec.pytorchReplicaSpecs[]?.template``.

    Each segment is a field (:func:`jq_field`), followed by ``[]?`` when it iterates. Without a
    base, a path that would start with ``[`` starts with ``.[`` (``["x"]`` alone is an array).
    """
    out = [base]
    for seg in segments:
        out.append(jq_field(seg.name))
        if seg.iterate:
            out.append("[]?")
    text = "".join(out)
    if base:
        return text
    return text if text.startswith(".") else f".{text}"


def jq_scoped(segments: Sequence[Step], default: str | None = None) -> str:
    """One result per instance: ``<iterating prefix> | (<rest> // default)``.

    ``//`` must not see the whole stream (it would drop the null entries), so the part after the
    last iteration is applied per entry.
    """
    last = max((i for i, s in enumerate(segments) if s.iterate), default=-1)
    prefix, rest = segments[: last + 1], segments[last + 1 :]
    tail = jq_path(rest)
    if default is not None:
        tail = f"{tail} // {default}"
    if last < 0:
        return tail
    return f"{jq_path(prefix)} | {tail if default is None else f'({tail})'}"
