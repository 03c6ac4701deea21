"""``python -m tests.recorder.regenerate [--root DIR] [--judged]``: recompute karta's reading of
every fixture from its stored object (offline) after a reviewed change of reading; with
``--judged``, also the judged state after a reviewed change of a judge. The objects are left as
recorded. Review the diff (``git diff tests/recorded``) before committing."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import registry
from .fixtures import RECORDED, fixture_files, load_fixture, reading_of, write_fixture


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.recorder.regenerate", description=__doc__)
    parser.add_argument("--root", type=Path, default=RECORDED)
    parser.add_argument("--judged", action="store_true", help="also re-judge every stored object")
    ns = parser.parse_args(argv)
    changed = 0
    for path in fixture_files(ns.root):
        fixture = load_fixture(path)
        before = dict(fixture)
        fixture["reading"] = reading_of(fixture["object"])
        if ns.judged:
            judge = registry.judges(fixture["operator"])[fixture["kind"]]
            fixture["judged"] = judge(fixture["object"]).to_dict()
        if fixture != before:
            write_fixture(path, fixture)
            changed += 1
            print(f"changed: {path.relative_to(ns.root)}")
    print(f"{changed} fixture(s) regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
