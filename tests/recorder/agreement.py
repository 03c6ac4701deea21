"""``python -m tests.recorder.agreement [--root DIR] [--disagreements]``: per kind, how many
recorded states karta's primary status agrees with the judged state on, computed on this
checkout (karta's primary is recomputed from each fixture's object, not read from the fixture),
so the same fixtures give before/after figures for any change of the catalog or the engine."""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from .fixtures import RECORDED, fixture_files, load_fixture, reading_of

__all__ = ["agreement", "main"]


def agreement(root: Path = RECORDED) -> tuple[dict[str, list[int]], list[str]]:
    """({kind: [agreeing, total]}, one line per disagreement: fixture, judged vs karta)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    for path in fixture_files(root):
        fixture = load_fixture(path)
        judged = fixture["judged"]["status"]
        primary = reading_of(fixture["object"])["status"]["primary"]
        tally = counts[f"{fixture['operator']} {fixture['kind']}"]
        tally[1] += 1
        if primary == judged:
            tally[0] += 1
        else:
            misses.append(
                f"{path.relative_to(root)}: judged {judged} ({fixture['judged']['why']}), karta {primary}"
            )
    return dict(counts), misses


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.recorder.agreement", description=__doc__)
    parser.add_argument("--root", type=Path, default=RECORDED)
    parser.add_argument("--disagreements", action="store_true", help="list every disagreeing fixture")
    ns = parser.parse_args(argv)
    counts, misses = agreement(ns.root)
    width = max((len(k) for k in counts), default=4)
    agree = sum(a for a, _ in counts.values())
    total = sum(t for _, t in counts.values())
    print(f"{'kind':<{width}}  agree/states")
    for kind in sorted(counts):
        a, t = counts[kind]
        print(f"{kind:<{width}}  {a:>3}/{t:<3} {100 * a / t:5.1f}%")
    if total:
        print(f"{'all':<{width}}  {agree:>3}/{total:<3} {100 * agree / total:5.1f}%")
    if ns.disagreements:
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
