"""The ``kli`` and ``kubectl-kli`` console scripts: :func:`karta.cli.main.main` run as a process.

What belongs to the process and not to :func:`~karta.cli.main.main` (which tests and other Python
code call in-process, and which must leave the interpreter as it found it):

* the cyclic garbage collector's first threshold is raised (:data:`GC_THRESHOLD` container
  allocations between young collections instead of 700) before click and the library are
  imported: start-up allocates tens of thousands of long-lived objects (modules, functions,
  classes) and the default threshold collects them over and over for nothing. Cycles are still
  collected, so memory stays bounded in a long run (``kli ui``, ``kli get --watch``);
* at the end, once standard output and standard error are flushed, the process exits without the
  interpreter's teardown (freeing every module, class and function one by one, ~10 ms of a
  one-object command), unless something asked for work at exit: an :mod:`atexit` handler
  (``logging``, ``weakref.finalize``, temporary directories), or a thread other than the main
  one. Then it exits as usual.

Both are start-up costs measured by ``bench/offline.py``.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable

__all__ = ["GC_THRESHOLD", "kubectl_main", "leave", "main"]

GC_THRESHOLD = 50_000

gc.set_threshold(GC_THRESHOLD)


def main() -> None:
    """The ``kli`` console script."""
    from karta.cli.main import main as run

    _run(run)


def kubectl_main() -> None:
    """The ``kubectl-kli`` console script (``kli`` as the kubectl plugin ``kubectl kli``)."""
    from karta.cli.main import kubectl_main as run

    _run(run)


def _run(run: Callable[[], int]) -> None:
    try:
        code: object = run()
    except SystemExit as exc:
        code = exc.code
    except BrokenPipeError:  # the last flush of output nobody reads: as main() treats it
        code = 0
    leave(code)


def leave(code: object) -> None:
    """Flush the standard streams and exit with ``code`` (as :func:`sys.exit` reads it), skipping
    the interpreter's teardown when nothing needs it (see the module docstring)."""
    status = _status(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:  # the reader went away (``kli get | head``): nothing more to say
            from karta.cli.streams import quiet

            quiet(stream)
        except OSError as exc:  # a full disk, an I/O error: the output is not all there, so say so
            from karta.cli.streams import output_error, quiet, say

            quiet(stream)
            if stream is sys.stdout:
                say(output_error(exc))
            status = status or 1
        except ValueError:  # a stream closed before the exit: nothing left to flush
            pass
    if _nothing_at_exit():
        os._exit(status)
    sys.exit(status)


def _status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")  # what sys.exit prints for a message
    return 1


def _nothing_at_exit() -> bool:
    import atexit

    pending = getattr(atexit, "_ncallbacks", None)  # CPython's count of registered handlers
    if pending is None or pending() != 0:
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1
