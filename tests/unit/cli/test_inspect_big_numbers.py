"""``kli inspect -f``: a file's integers beyond 2**53 are the original's doubles (issue 24, item 4),
converted where kli decodes the file (``karta.cli.inputs.read_documents``): kli's evaluators are
``decoded`` and read the object as it is."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.unit.jq.test_gojq_engine_points import DEFINITION

BIG = 9007199254740993  # 2**53 + 1: no double holds it


def _definition() -> dict[str, Any]:
    definition: dict[str, Any] = copy.deepcopy(DEFINITION)
    del definition["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"]  # replicas are int32
    return definition


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "w.yaml",
            f"apiVersion: example.com/v1\nkind: Big\nmetadata: {{name: w}}\nspec:\n  count: {BIG}\n",
        ),
        (
            "w.json",
            json.dumps(
                {
                    "apiVersion": "example.com/v1",
                    "kind": "Big",
                    "metadata": {"name": "w"},
                    "spec": {"count": BIG},
                }
            ),
        ),
    ],
)
def test_a_file_with_9007199254740993_is_read_as_the_double(
    kli, tmp_path: Path, name: str, text: str
) -> None:
    definition = tmp_path / "big.yaml"
    definition.write_text(yaml.safe_dump(_definition()))
    workload = tmp_path / name
    workload.write_text(text)
    r = kli("inspect", "-f", str(workload), "--definition", str(definition), "-o", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["status"]["primary"] == "Running"  # .spec.count == 9007199254740992


def test_a_file_without_long_numbers_is_what_it_was(kli, tmp_path: Path) -> None:
    definition = tmp_path / "big.yaml"
    definition.write_text(yaml.safe_dump(_definition()))
    workload = tmp_path / "w.yaml"
    # 19 digits in a string, 2**53 - 1 as the count: nothing to convert, the count stays exact
    workload.write_text(
        "apiVersion: example.com/v1\nkind: Big\nmetadata: {name: w, uid: '1234567890123456789'}\n"
        "spec:\n  count: 9007199254740991\n"
    )
    r = kli("inspect", "-f", str(workload), "--definition", str(definition), "-o", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["status"]["primary"] != "Running"
