"""The standard streams when writing to them fails: which errors mean the output could not be
written, the one line that says so, and how to silence a stream that cannot take more.

Shared by :func:`karta.cli.main.main` (a write that fails while a command runs, when the output
is larger than the stream's buffer) and :mod:`karta.cli.entry` (the last flush). A reader that
went away (``kli get | head``, :class:`BrokenPipeError`) is not an error; a full disk or an I/O
error is, because what was written is not the whole output.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import TypeGuard

__all__ = ["output_error", "quiet", "say", "unwritable_output"]

# what write(2) on a regular file or a device reports when the bytes did not go anywhere
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def unwritable_output(exc: BaseException) -> TypeGuard[OSError]:
    """Whether ``exc`` is a failed write of a standard stream rather than of a named file (whose
    error carries its file name) or a broken pipe."""
    return (
        isinstance(exc, OSError)
        and not isinstance(exc, BrokenPipeError)
        and exc.errno in _WRITE_ERRNOS
        and exc.filename is None
    )


def output_error(exc: OSError) -> str:
    """The line that reports it."""
    return f"error: cannot write the output: {exc}\n"


def say(message: str) -> None:
    """Write ``message`` to standard error, as far as that still works."""
    try:
        sys.stderr.write(message)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def quiet(stream: object) -> None:
    """Point a standard stream that cannot be flushed at /dev/null, so that what is left in its
    buffer, and the interpreter's own final flush, say nothing more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        fileno = stream.fileno()  # type: ignore[attr-defined]
        os.dup2(devnull, fileno)
    except (AttributeError, OSError, ValueError):
        pass
    finally:
        os.close(devnull)
