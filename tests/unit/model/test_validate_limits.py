"""Validation as an admission check (issue 9): the size limits are findings, first and alone, with
their paths; within them a definition validates as before; beyond them nothing else walks it."""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.hang_guard import HANG_GUARD_S

from karta.errors import ValidationError
from karta.model import Karta, load_kartas, validate_karta, validate_or_raise
from karta.model.validate_structure import (
    MAX_COMPONENT_DEPTH,
    MAX_COMPONENTS,
    MAX_DEFINITION_BYTES,
    MAX_DEFINITION_NESTING,
)

STATUS = {
    "phaseDefinition": {"path": ".status.phase"},
    "statusMappings": {"running": [{"byPhase": "Running"}]},
}


def chain(depth: int, *, extra: int = 0, **root: Any) -> Karta:
    """A root with a chain of ``depth`` children, each owned by the one before, and ``extra``
    children of the root."""
    children: list[dict[str, Any]] = [
        {"name": f"c{i}", "ownerRef": f"c{i - 1}" if i > 1 else "root"} for i in range(1, depth + 1)
    ]
    children += [{"name": f"x{i}", "ownerRef": "root"} for i in range(extra)]
    rc = {"name": "root", "kind": {"group": "a.io", "version": "v1", "kind": "K"}, "statusDefinition": STATUS}
    return Karta.model_validate(
        {
            "metadata": {"name": "chain", **root},
            "spec": {"structureDefinition": {"rootComponent": rc, "childComponents": children}},
        }
    )


def messages(karta: Karta) -> list[str]:
    return [f.message for f in validate_karta(karta) if f.is_error]


def test_a_chain_at_the_depth_limit_is_valid_and_one_deeper_is_a_finding() -> None:
    assert messages(chain(MAX_COMPONENT_DEPTH)) == []
    (finding,) = validate_karta(chain(MAX_COMPONENT_DEPTH + 1))
    assert finding.message == (
        f"component 'c{MAX_COMPONENT_DEPTH + 1}' is {MAX_COMPONENT_DEPTH + 1} owner levels below the "
        f"root; at most {MAX_COMPONENT_DEPTH} levels of owner -> child nesting are allowed"
    )
    assert finding.location == f"spec.structureDefinition.childComponents[{MAX_COMPONENT_DEPTH}].ownerRef"


def test_components_up_to_the_limit_are_valid_and_one_more_is_a_finding() -> None:
    assert messages(chain(1, extra=MAX_COMPONENTS - 2)) == []
    (finding,) = validate_karta(chain(1, extra=MAX_COMPONENTS - 1))
    assert f"has {MAX_COMPONENTS + 1} components; at most {MAX_COMPONENTS}" in finding.message
    assert finding.location == "spec.structureDefinition.childComponents"


def test_a_500_deep_chain_gets_both_findings_and_nothing_else() -> None:
    karta = chain(500)
    start = time.perf_counter()
    found = messages(karta)
    assert time.perf_counter() - start < HANG_GUARD_S
    assert len(found) == 2
    assert "501 components" in found[0] and "'c33' is 33 owner levels" in found[1]
    with pytest.raises(ValidationError, match="501 components"):
        validate_or_raise(karta)


def test_a_huge_chain_with_a_cycle_is_limits_only_and_linear() -> None:
    children = [{"name": f"c{i}", "ownerRef": f"c{i + 1}"} for i in range(20_000)]
    children.append({"name": "c20000", "ownerRef": "c0"})  # one long cycle, never reaching the root
    karta = chain(0).model_copy(
        update={
            "spec": Karta.model_validate(
                {
                    "spec": {
                        "structureDefinition": {
                            "rootComponent": {"name": "root"},
                            "childComponents": children,
                        }
                    }
                }
            ).spec
        }
    )
    start = time.perf_counter()
    assert any("20,002 components" in m for m in messages(karta))
    assert time.perf_counter() - start < HANG_GUARD_S


def test_the_definition_size_and_nesting_limits() -> None:
    big = chain(1, annotations={f"a{i}": "x" * 1024 for i in range(MAX_DEFINITION_BYTES // 1024 + 1)})
    (finding,) = validate_karta(big)
    assert "MiB; at most 4 MiB are allowed" in finding.message
    assert messages(chain(1, annotations={f"a{i}": "x" * 1024 for i in range(3 * 1024)})) == []

    def nested(depth: int) -> Any:
        value: Any = {}
        for _ in range(depth):
            value = {"k": value}
        return value

    deep = chain(1, managedFields=[nested(MAX_DEFINITION_NESTING + 1)])
    (finding,) = validate_karta(deep)
    assert f"nested more than {MAX_DEFINITION_NESTING} levels" in finding.message
    assert messages(chain(1, managedFields=[nested(MAX_DEFINITION_NESTING - 4)])) == []


def test_duplicate_keys_of_list_items_keep_paths_relative_to_the_item() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: run.ai/v1alpha1\n  kind: Karta\n  metadata: {name: a, name: b}\n"
        "  spec: {structureDefinition: {rootComponent: {name: r}}}\n"
    )
    (result,) = load_kartas(text, strict=False, source_name="list.yaml")
    (finding,) = [f for f in result.findings if "duplicate" in f.message]
    assert finding.location == "metadata.name"
    assert (
        finding.message
        == 'duplicate key "metadata.name" (line 6, column 23): a key may appear only once in a mapping'
    )
