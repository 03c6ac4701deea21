"""CLI-level errors: each carries its exit code and a one-line message for stderr."""

from __future__ import annotations

from karta.cli import exitcodes


class CliError(Exception):
    """An error to report as ``error: <message>`` with a given exit code (never a traceback)."""

    def __init__(self, message: str, *, code: int = exitcodes.FAILURE, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


class UsageError(CliError):
    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, code=exitcodes.USAGE, hint=hint)
