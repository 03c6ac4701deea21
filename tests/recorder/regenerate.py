"""``python -m tests.recorder.regenerate [--root DIR]``: recompute karta's reading of every
fixture from its stored object (offline) after a reviewed change of reading; the objects and the
judged states are left as recorded. Review the diff (``git diff tests/recorded``) before committing."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .fixtures import RECORDED, fixture_files, load_fixture, reading_of, write_fixture


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.recorder.regenerate", description=__doc__)
    parser.add_argument("--root", type=Path, default=RECORDED)
    ns = parser.parse_args(argv)
    changed = 0
    for path in fixture_files(ns.root):
        fixture = load_fixture(path)
        reading = reading_of(fixture["object"])
        if reading != fixture["reading"]:
            fixture["reading"] = reading
            write_fixture(path, fixture)
            changed += 1
            print(f"changed: {path.relative_to(ns.root)}")
    print(f"{changed} reading(s) regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
