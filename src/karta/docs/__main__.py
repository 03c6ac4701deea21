"""``python -m karta.docs [--check]``: write (or verify) the generated reference pages of the site.

Rewrites ``docs/reference/kli.md`` and ``docs/reference/karta-controller-flags.md`` from the
commands' declarations (:mod:`karta.docs`); ``--check`` changes nothing and exits 1 naming each
stale page. Run it after changing a command, a flag or its help.
"""

from __future__ import annotations

import sys

from karta._generated import write_or_check
from karta.docs import pages


def main(argv: list[str]) -> int:
    if [a for a in argv if a != "--check"]:
        print("usage: python -m karta.docs [--check]", file=sys.stderr)
        return 2
    check = "--check" in argv
    results = [
        write_or_check(path, text, check=check, command="python -m karta.docs")
        for path, text in pages().items()
    ]
    return max(results)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
