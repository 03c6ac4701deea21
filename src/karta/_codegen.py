"""Generated Python source: the one place that compiles and ``exec``s code karta generates.

The generators (jq expressions in :mod:`karta.jq.codegen`, extraction functions in
:mod:`karta.extract.compiled`, status functions in :mod:`karta.status.generated`, shape checkers in
:mod:`karta.extract.convert`, the syntax-tree ``__init__`` methods of :mod:`karta.jq.syntax`) hand
their source to :func:`compile_source`. It compiles the source under a unique file name
(``<karta-generated-N: what>``) and registers the text in :mod:`linecache`, so that tracebacks,
``pdb`` and ``inspect.getsource`` show the generated lines; the entry is dropped when the namespace
the code runs in is garbage-collected.

``KARTA_CODEGEN`` (read once, when this module is imported) is a comma-separated list of words:

* ``on`` (also unset or empty): generate code, from the second use of what it compiles (an
  expression, a definition's status or a component's extraction): the first use runs the general
  code, so that a command that evaluates a definition once (``kli inspect -f``, ``describe -f``,
  ``gang -f``: one object) does not pay for compiling code it runs once (:func:`due`);
* ``eager``: generate on the first use (the test suite runs this way, so that every use goes
  through the generated code);
* ``off``: generate nothing: every generator's own fallback runs instead (the fast-path closures,
  the general extraction and status code, the composed shape checkers, plain ``__init__``
  methods), with identical results;
* ``dump``: print every generated source to stderr as it is compiled, and every generation that
  failed or was declined (an expression outside the fast path, for one), with the reason;
* ``strict``: a generation that fails (an exception that is not a decline: a bug in a generator)
  raises instead of falling back; the test suite runs this way (``tests/conftest.py``). Without
  it the generator falls back to the general code, whose results are exact.

Unknown words are ignored, and named once on stderr.

A source beyond the limits of Python's compiler (100 nested ``if``, 100 nested ``//`` or ``if``
in a jq expression: ``too many levels of indentation``, ``too many statically nested blocks``, a
``RecursionError`` or ``MemoryError`` while compiling) raises :class:`Declined` here, at the one
place every generator compiles through; generators hand it to :func:`failed`, which reports it as
a decline, so the general code runs instead, also under ``strict``.
"""

from __future__ import annotations

import contextlib
import itertools
import linecache
import os
import sys
from typing import Any, Final, NamedTuple

__all__ = [
    "MODE",
    "Declined",
    "Mode",
    "compile_source",
    "declined",
    "due",
    "enabled",
    "failed",
    "parse_mode",
]

_WORDS: Final = ("on", "off", "dump", "strict", "eager")


class Mode(NamedTuple):
    """The meaning of one ``KARTA_CODEGEN`` value (see the module docstring)."""

    generate: bool
    dump: bool
    strict: bool
    unknown: tuple[str, ...]
    eager: bool = False


def parse_mode(value: str) -> Mode:
    """The :class:`Mode` of a ``KARTA_CODEGEN`` value."""
    words = [w.strip().lower() for w in value.split(",") if w.strip()]
    unknown = tuple(w for w in words if w not in _WORDS)
    return Mode(
        generate="off" not in words,
        dump="dump" in words,
        strict="strict" in words,
        unknown=unknown,
        eager="eager" in words,
    )


MODE: Mode = parse_mode(os.environ.get("KARTA_CODEGEN", ""))
if MODE.unknown:
    print(
        f"karta: KARTA_CODEGEN: ignoring {', '.join(map(repr, MODE.unknown))} (known: {', '.join(_WORDS)})",
        file=sys.stderr,
    )

_numbers = itertools.count(1)

# What Python's compiler says when a source exceeds its own limits (not a bug in a generator).
_LIMIT_MESSAGES: Final = (
    "too many levels of indentation",
    "too many statically nested blocks",
    "too many nested parentheses",
    "too many nested",
    "too complex",
    "maximum recursion depth",
)


class Declined(Exception):
    """A generated source that Python cannot compile because of the compiler's own limits (nesting,
    indentation, recursion depth, memory): the generator falls back to its general code. Every
    generator reports it through :func:`failed`, which treats it as a decline, also under
    ``strict``."""


def enabled() -> bool:
    """False under ``KARTA_CODEGEN=off``: generators must then take their non-generated path."""
    return MODE.generate


def due(uses: int) -> bool:
    """Whether to generate code for something used ``uses`` times before (counted by the caller):
    from the second use (``uses >= 1``), or from the first under ``eager``. Before that the
    caller runs its general code, whose results are the same."""
    return uses >= 1 or MODE.eager


class _Registration:
    """Drops the :mod:`linecache` entry of one generated source when its namespace dies."""

    __slots__ = ("filename",)

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown linecache may be gone
            linecache.cache.pop(self.filename, None)


def compile_source(source: str, namespace: dict[str, Any], *, what: str) -> None:
    """Compile ``source`` and run it in ``namespace`` (which then holds what it defines).

    ``what`` names the code in its file name (``<karta-generated-N: what>``) and in dumps.
    """
    label = " ".join(what.split())
    if len(label) > 80:
        label = label[:77] + "..."
    filename = f"<karta-generated-{next(_numbers)}: {label}>"
    if MODE.dump:
        print(f"# --- {filename}\n{source}\n", file=sys.stderr)
    try:
        code = compile(source, filename, "exec")
    except (SyntaxError, RecursionError, MemoryError) as exc:  # IndentationError is a SyntaxError
        if isinstance(exc, SyntaxError) and not any(m in str(exc.msg) for m in _LIMIT_MESSAGES):
            raise  # invalid source: a bug in the generator
        raise Declined(f"{what}: {type(exc).__name__}: {exc}") from exc
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace["__karta_source__"] = _Registration(filename)
    exec(code, namespace)


def failed(what: str, exc: BaseException) -> None:
    """Report a generation that failed with ``exc`` (call it from the ``except`` block).

    Under ``strict`` it re-raises ``exc``; otherwise the caller falls back to its general code
    (``dump`` prints the traceback first). A :class:`Declined` is not a failure: it is reported as
    a decline and never raises.
    """
    if isinstance(exc, Declined):
        declined(what, exc)
        return
    if MODE.strict:
        raise exc
    if MODE.dump:
        import traceback

        text = "".join(traceback.format_exception(exc))
        print(f"# --- karta codegen: {what}: failed, falling back\n{text}", file=sys.stderr)


def declined(what: str, reason: object) -> None:
    """Report a generation declined on purpose (under ``dump`` only): not an error."""
    if MODE.dump:
        print(f"# --- karta codegen: {what}: declined ({reason})", file=sys.stderr)
