"""Regenerate the golden extracted views of the corpus (tests/catalog/golden/*.json).

Run from the repository root: ``.venv/bin/python tests/catalog/regen_golden.py``. Review every changed
file against its manifest before committing: the goldens are the reviewed expectation, not a snapshot.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_view import (
    GOLDEN,
    WORKLOADS,
    definition_for,
    golden_path,
    golden_view,
    relative,
    workload_documents,
)


def main() -> int:
    if not WORKLOADS.is_dir():
        print(f"corpus not found at {WORKLOADS}", file=sys.stderr)
        return 1
    GOLDEN.mkdir(parents=True, exist_ok=True)
    expected = set()
    for path, index, doc in workload_documents():
        karta = definition_for(doc)
        if karta is None:
            print(f"no built-in definition for {relative(path)} document {index}", file=sys.stderr)
            return 1
        view = golden_view(path, index, karta, doc)
        target = golden_path(path, index)
        expected.add(target)
        text = json.dumps(view, indent=2, sort_keys=False) + "\n"
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
            print(f"wrote {target.relative_to(GOLDEN.parent)}")
    for stale in sorted(set(GOLDEN.glob("*.json")) - expected):
        stale.unlink()
        print(f"removed {stale.relative_to(GOLDEN.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
