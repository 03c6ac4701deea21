"""Reference bombs through ``kli inspect -f --ref`` (issue 26, extension E3): a list reference
matching 100,000 objects (with a selector and without one), a referenced object of 3 MB, and
reference expressions that try to multiply; every run ends in time with a clear error naming the
reference and the limit, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.hostile.harness import Case, assert_all_fine, run_cases

DEFINITION = (
    Path(__file__).resolve().parents[1] / "unit" / "cli" / "references" / "definition.yaml"
).read_text()
WORKLOAD = (Path(__file__).resolve().parents[1] / "unit" / "cli" / "references" / "workload.yaml").read_text()
LABELS = {"example.com/run": "run1", "tier": "trainer"}


def _config(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"c{i}", "namespace": "team", "labels": LABELS},
        **extra,
    }


def _case(name: str, refs: list[str], *, definition: str = DEFINITION, codes: tuple[int, ...] = (1,)) -> Case:
    files = {"def.yaml": definition, "w.yaml": WORKLOAD} | {f"refs{i}.json": r for i, r in enumerate(refs)}
    argv = ["inspect", "-f", "w.yaml", "--definition", "def.yaml", "-o", "json"]
    argv += [a for i in range(len(refs)) for a in ("--ref", f"refs{i}.json")]
    return Case(f"references/{name}", argv, files=files, codes=codes, seconds=60.0)


def test_reference_bombs_end_with_a_clear_error() -> None:
    # kli reads at most 10,000 entries per list of a file: ten files of 10,000 each
    many = [
        json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": [_config(f * 10_000 + i) for i in range(10_000)]}
        )
        for f in range(10)
    ]
    huge = json.dumps(_config(0, data={"blob": "x" * (3 << 20)}))
    doc = yaml.safe_load(DEFINITION)
    ref = doc["spec"]["structureDefinition"]["references"][0]
    ref["lookup"]["nameExpression"] = ".metadata.name * 100000000 | length | tostring"
    multiplying = yaml.safe_dump(doc)
    doc = yaml.safe_load(DEFINITION)
    doc["spec"]["structureDefinition"]["references"][1]["list"] = {}  # every ConfigMap (E3.6)
    every = yaml.safe_dump(doc)
    cases = [
        _case("list-100000", many),
        _case("object-3MB", [huge]),
        _case("name-expression-bomb", [huge], definition=multiplying),
        _case("list-without-selector-100000", many, definition=every),
    ]
    outcomes = run_cases(cases)
    assert_all_fine(outcomes)
    assert (
        "reference 'configs' (ConfigMap v1) matches 100,000 objects; at most 1,000 are allowed"
        in outcomes[0].err
    )
    assert "reference 'configs' (ConfigMap v1): an object of" in outcomes[1].err
    assert "at most 1,048,576 per object" in outcomes[1].err
    assert "error: JQ execution error for expression '.metadata.name * 100000000 | length | tostring': " in (
        outcomes[2].err
    )
    assert "output budget exceeded" in outcomes[2].err
    # a list without a selector is bounded exactly like one with a selector
    assert (
        "reference 'configs' (ConfigMap v1) matches 100,000 objects; at most 1,000 are allowed"
        in outcomes[3].err
    )
