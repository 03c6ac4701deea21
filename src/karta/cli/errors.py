"""CLI-level errors: each carries its exit code and a one-line message for stderr
(:func:`one_line` makes any message one, with control characters escaped: :mod:`karta.cli.text`)."""

from __future__ import annotations

import sys

from karta.cli import exitcodes
from karta.cli.prog import spelled
from karta.cli.text import printable


class CliError(Exception):
    """An error to report as ``error: <message>`` with a given exit code (never a traceback)."""

    def __init__(self, message: str, *, code: int = exitcodes.FAILURE, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


class UsageError(CliError):
    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, code=exitcodes.USAGE, hint=hint)


def format_error(exc: CliError, *, hint: bool = True) -> str:
    """The ``error: <message>`` line (and, with ``hint``, its ``hint:`` line) of ``exc``; command
    references spelled with the program's name (:func:`karta.cli.prog.spelled`)."""
    out = f"error: {one_line(spelled(str(exc)))}\n"
    if hint and exc.hint:
        out += f"hint: {one_line(spelled(exc.hint))}\n"
    return out


def one_line(message: str) -> str:
    """A multi-line message (click's list of choices, a YAML error's excerpt) as one line, so that
    every stderr line starts with ``error:``, ``hint:`` or ``warning:``; control characters (an
    object's status text, a name) are escaped, never written to the terminal."""
    parts = [part.strip() for part in message.splitlines()]
    return printable(" ".join(part for part in parts if part and part != "^").replace(" ,", ","))


class RunFailures:
    """The failures of a run over several inputs (``-f DIR``, a file of several objects): each is
    reported as its ``error:`` line when it happens and the run goes on with the rest;
    :meth:`finish`, once everything else is done and printed, exits with the first failure's code
    (so ``-f DIR`` with an unreadable file still exits 2, as ``-f FILE`` does)."""

    def __init__(self) -> None:
        self.errors: list[CliError] = []

    def add(self, exc: CliError) -> None:
        self.errors.append(exc)
        sys.stderr.write(format_error(exc, hint=False))

    def finish(self, where: str) -> None:
        if self.errors:
            count = len(self.errors)
            raise CliError(
                f"{count} failure{'' if count == 1 else 's'} in {where}, each reported above; "
                "everything else was processed",
                code=self.errors[0].code,
            )
