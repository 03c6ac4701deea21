"""Fuzzing: mutated definitions and arbitrary text never raise anything but DefinitionError."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_data import fuller, gang

from karta.errors import DefinitionError
from karta.model import load_karta, load_kartas, validate_karta

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
_jq_like = st.text(alphabet='.[]|()$"{}:,=+-*/%?<>!@ abcdelrusx0123456789\\\n', max_size=24)


def _base() -> dict[str, Any]:
    data = fuller()
    gang(data)["podGroups"] = [
        {"name": "g", "members": [{"componentName": "worker", "groupByKeyPaths": [".a"], "filters": [".b"]}]}
    ]
    return data


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.extend(_paths(value, (*prefix, i)))
    return out


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


@st.composite
def _mutated(draw: st.DrawFn) -> dict[str, Any]:
    data = _base()
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(data, path)
        key = path[-1]
        action = draw(st.sampled_from(["delete", "retype", "unknown", "jq", "duplicate"]))
        if action == "delete":
            del parent[key]
        elif action == "retype":
            parent[key] = draw(_json)
        elif action == "unknown" and isinstance(parent[key], dict):
            parent[key][draw(st.text(max_size=6))] = draw(_json)
        elif action == "jq" and isinstance(parent[key], str):
            parent[key] = draw(_jq_like)
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
    return data


def _exercise(data: Any, strict: bool) -> None:
    try:
        result = load_karta(data, strict=strict)
    except DefinitionError:
        return
    for finding in result.findings:
        assert isinstance(finding.message, str) and finding.message
    validate_karta(result.karta)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated(), st.booleans())
def test_mutated_definitions_never_raise(data: dict[str, Any], strict: bool) -> None:
    _exercise(data, strict)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=60), st.binary(max_size=40), _json))
def test_arbitrary_input_gives_definition_errors_only(source: Any) -> None:
    if isinstance(source, (str, bytes)):
        for strict in (True, False):
            try:
                results = load_kartas(source, strict=strict)
            except DefinitionError:
                results = []
            for result in results:
                validate_karta(result.karta)
    _exercise(source, True)
