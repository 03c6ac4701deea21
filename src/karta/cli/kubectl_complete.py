"""``kubectl_complete-kli``: shell completion of ``kubectl kli ...`` through kubectl (1.26+).

kubectl completes a plugin's arguments by running an executable named
``kubectl_complete-<plugin>`` found on PATH with the words typed after the plugin's name (the last
one, possibly empty, being the word to complete) and reading cobra's ``__complete`` answer: one
candidate a line (``value<TAB>description``), then ``:<directive>``. This module answers from
kli's own click completion (the same callbacks as ``kli completion``: commands, flags, choices,
definition names, TYPEs and, with a cluster, NAMEs and namespaces). It never prints an error:
anything that goes wrong answers ``:1`` (cobra's ShellCompDirectiveError, no completions).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Final

__all__ = ["DEFAULT", "ERROR", "FILTER_DIRS", "NO_FILE_COMP", "answer", "main"]

# cobra's ShellCompDirective values (spf13/cobra completions.go)
ERROR: Final = 1
NO_FILE_COMP: Final = 4
FILTER_DIRS: Final = 16
DEFAULT: Final = 0  # let the shell complete file names


def _one_line(text: str) -> str:
    return " ".join(text.split())


def answer(words: Sequence[str]) -> str:
    """cobra's ``__complete`` answer for ``kubectl kli <words>`` (the last word is completed)."""
    from click.shell_completion import ShellComplete

    from karta.cli.main import cli

    args, incomplete = list(words[:-1]), words[-1] if words else ""
    items = ShellComplete(cli, {}, "kli", "_KLI_COMPLETE").get_completions(args, incomplete)
    kinds = {item.type for item in items}
    if "file" in kinds:
        return f":{DEFAULT}\n"
    if "dir" in kinds:
        return f":{FILTER_DIRS}\n"
    lines = [
        f"{item.value}\t{_one_line(item.help)}" if item.help else str(item.value)
        for item in items
        if "\n" not in str(item.value)
    ]
    return "".join(f"{line}\n" for line in lines) + f":{NO_FILE_COMP}\n"


def main(argv: list[str] | None = None) -> int:
    """The ``kubectl_complete-kli`` console script; always exits 0 (kubectl reads the directive)."""
    words = sys.argv[1:] if argv is None else argv
    try:
        text = answer(words)
    except Exception:  # a completion never fails loudly
        text = f":{ERROR}\n"
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
