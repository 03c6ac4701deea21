"""``python -m karta.catalog [--check]``: write (or verify) the catalog's index, ``_index.py``, the
documentation's table of kinds (docs/reference/catalog.md) and the README's short one.

Owns the command that keeps ``src/karta/catalog/_index.py`` equal to what the YAML files of
``src/karta/catalog/data`` say (slug, root GVK and component names of each), and the catalog
page's block between ``<!-- kinds:begin -->`` and ``<!-- kinds:end -->`` equal to
:func:`karta.catalog.render_kinds_table`, and the README's block between
``<!-- kinds-summary:begin -->`` and ``<!-- kinds-summary:end -->`` equal to
:func:`karta.catalog.render_kinds_summary`. Run it after adding or changing a built-in definition;
``--check`` exits 1 when either is stale.
"""

from __future__ import annotations

import sys

from karta._generated import write_or_check, write_or_check_block
from karta.catalog import (
    INDEX_FILE,
    KINDS_BEGIN,
    KINDS_END,
    KINDS_PAGE,
    README_FILE,
    SUMMARY_BEGIN,
    SUMMARY_END,
    render_index,
    render_kinds_summary,
    render_kinds_table,
)
from karta.errors import DefinitionError


def main(argv: list[str]) -> int:
    if [a for a in argv if a != "--check"]:
        print("usage: python -m karta.catalog [--check]", file=sys.stderr)
        return 2
    check = "--check" in argv
    command = "python -m karta.catalog"
    try:
        index, table, summary = render_index(), render_kinds_table(), render_kinds_summary()
    except DefinitionError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    index_rc = write_or_check(INDEX_FILE, index, check=check, command=command)
    table_rc = write_or_check_block(KINDS_PAGE, KINDS_BEGIN, KINDS_END, table, check=check, command=command)
    summary_rc = write_or_check_block(
        README_FILE, SUMMARY_BEGIN, SUMMARY_END, summary, check=check, command=command
    )
    return index_rc or table_rc or summary_rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
