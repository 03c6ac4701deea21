"""The commented YAML writer: loads back to the same data, comments above their keys."""

from __future__ import annotations

import yaml
from hypothesis import given
from hypothesis import strategies as st

from karta.scaffold.render import to_commented_yaml


def test_comments_sit_above_keys_and_list_items() -> None:
    data = {"a": {"b": 1, "c": [{"d": "x", "e": ["y"]}, {"f": {"g": "h: i"}}]}, "z": {}}
    comments = {("a", "b"): ["TODO: one"], ("a", "c", 0): ["first item"], ("a", "c", 1, "f"): ["deep"]}
    text = to_commented_yaml(data, comments=comments, header=["head"])
    assert yaml.safe_load(text) == data
    lines = text.splitlines()
    assert lines[0] == "# head"
    assert lines[lines.index("  # TODO: one") + 1] == "  b: 1"
    assert lines[lines.index("  # first item") + 1] == "  - {d: x, e: [y]}"
    assert lines[lines.index("  # deep") + 1] == "  - f: {g: 'h: i'}"
    assert "z: {}" in lines


def test_long_comments_wrap() -> None:
    text = to_commented_yaml({"k": 1}, comments={("k",): ["word " * 40]}, header=[])
    assert all(len(line) <= 100 for line in text.splitlines())
    assert yaml.safe_load(text) == {"k": 1}


keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=8)
scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
trees = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(keys, trees, max_size=4))
def test_round_trips(data: dict[str, object]) -> None:
    assert yaml.safe_load(to_commented_yaml(data, comments={}, header=[])) == (data or None)
