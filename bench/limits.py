"""How the work on limit-sized inputs grows, run on demand: ``.venv/bin/python bench/limits.py``.

The unit tests only guard these inputs against hanging (``tests/hang_guard.py``); this measures
them. Each line prints the time at the limit, the time at a quarter of it, and their ratio: about
4 means the work is linear in the input (16 would be quadratic). The baseline of each line is
measured in the same run.

* parsing a jq expression of the maximum length (65,536 characters, a ``+`` chain);
* reading a YAML list of N entries past the entry limit (the reader stops at the limit, so the
  ratio should be about 1: the cost is bounded by the limit, not the input);
* loading a 3 MB definition (6,000 long annotations), against PyYAML's C loader reading the
  same text (karta's reader adds the limit and duplicate-key checks: the ratio is that overhead);
* loading and validating a definition of 8,000 chained components (over the 256-component limit;
  reading is linear, validation reports the limits without walking every chain).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import yaml

from karta.jq.parser import MAX_EXPRESSION_LENGTH, parse
from karta.model import load_karta, validate_karta
from karta.model.documents import DocumentError, read_documents


def best_s(fn: Callable[[], object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def chain(length: int) -> str:
    text = (".a + " * length)[: length - 2]
    return text[: text.rindex("+") + 1] + " 1"


def pods_list(entries: int) -> str:
    return "items:\n" + "- {}\n" * entries


def read_stopping(text: str) -> None:
    with contextlib.suppress(DocumentError):
        read_documents(text, source="bench.yaml")


def definition(components: int) -> str:
    lines = [
        "apiVersion: run.ai/v1alpha1",
        "kind: Karta",
        "metadata: {name: bench}",
        "spec:",
        "  structureDefinition:",
        "    rootComponent: {name: root, kind: {group: x.io, version: v1, kind: Root}}",
        "    childComponents:",
    ]
    owner = "root"
    for i in range(components):
        lines.append(f"    - {{name: c{i}, ownerRef: {owner}}}")
        owner = f"c{i}"
    return "\n".join(lines) + "\n"


def annotated(annotations: int) -> str:
    notes = "".join(f"    note-{k}: {'x' * 400}\n" for k in range(annotations))
    return (
        "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  name: big\n  annotations:\n"
        + notes
        + "spec:\n  structureDefinition:\n"
        + "    rootComponent: {name: root, kind: {group: x.io, version: v1, kind: Root}}\n"
    )


def load_and_validate(text: str) -> None:
    result = load_karta(text, source_name="bench.yaml")
    if result.karta is not None:
        validate_karta(result.karta)


def line(name: str, at_limit: Callable[[], object], quarter: Callable[[], object]) -> None:
    full, part = best_s(at_limit), best_s(quarter)
    print(f"{name:<58} {full * 1000:9.1f} ms  quarter {part * 1000:8.1f} ms  ratio {full / part:5.1f}")


def main() -> int:
    n = MAX_EXPRESSION_LENGTH
    line(f"parse a {n:,}-character expression", lambda: parse(chain(n)), lambda: parse(chain(n // 4)))
    big, small = pods_list(1_000_000), pods_list(250_000)
    line(
        "read a 1,000,000-entry list (stops at 10,000)",
        lambda: read_stopping(big),
        lambda: read_stopping(small),
    )
    text = annotated(7500)
    ours = best_s(lambda: load_karta(text, source_name="big.yaml"))
    pyyaml = best_s(lambda: yaml.load(text, Loader=yaml.CSafeLoader))
    name = f"load a {len(text) / 1e6:.1f} MB definition"
    print(f"{name:<58} {ours * 1000:9.1f} ms  C loader {pyyaml * 1000:7.1f} ms  ratio {ours / pyyaml:5.1f}")
    d_big, d_small = definition(8_000), definition(2_000)
    line(
        "load and validate 8,000 components",
        lambda: load_and_validate(d_big),
        lambda: load_and_validate(d_small),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
