"""``python -m karta.catalog [--check]``: write (or verify) the catalog's index, ``_index.py``.

Owns the command that keeps ``src/karta/catalog/_index.py`` equal to what the YAML files of
``src/karta/catalog/data`` say (slug, root GVK and component names of each). Run it after adding
or changing a built-in definition; ``--check`` exits 1 when the index is stale.
"""

from __future__ import annotations

import sys

from karta._generated import write_or_check
from karta.catalog import INDEX_FILE, render_index


def main(argv: list[str]) -> int:
    if [a for a in argv if a != "--check"]:
        print("usage: python -m karta.catalog [--check]", file=sys.stderr)
        return 2
    check = "--check" in argv
    return write_or_check(INDEX_FILE, render_index(), check=check, command="python -m karta.catalog")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
