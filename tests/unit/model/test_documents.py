"""The one reader of untrusted YAML/JSON text (issue 9): the same values as PyYAML's safe loader
(differential, hypothesis), every duplicate key with its JSON path, the limits (size, nesting,
entries, values, aliases) and the numbers JSON can hold, each as a DocumentError with the place."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hang_guard import HANG_GUARD_S

from karta.model import load_karta
from karta.model.documents import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_VALUES,
    DocumentError,
    read_bytes,
    read_documents,
)


def values(text: str, *, source: str = "in.yaml", **kw: Any) -> list[Any]:
    return [d.value for d in read_documents(text, source=source, **kw)]


def pyyaml(text: str) -> list[Any]:
    return [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d is not None]


# --------------------------------------------------------------------------- same values as PyYAML

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        ["yes", "No", "on", "~", "null", "0x1F", "017", "1:30", "1_000", "2001-12-14", "=", "<<"]
    ),
)
DATA = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(data=DATA, flow=st.booleans())
def test_same_values_as_pyyaml_for_whatever_pyyaml_writes(data: Any, flow: bool) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow)
    assert values(text, timestamps=True) == pyyaml(text)


@settings(max_examples=200, deadline=None)
@given(data=DATA)
def test_json_text_reads_as_json(data: Any) -> None:
    text = json.dumps({"v": data})  # a document is an object (a top-level scalar reads as YAML)
    expected = [json.loads(text)]
    assert values(text) == expected
    assert values(text, duplicates=True) == expected  # the YAML loop, which records duplicates


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: [x, {c: d}]\n",
        "x: &a {p: 1, q: 2}\ny: &b {q: 3, r: 4}\nz:\n  <<: [*a, *b]\n  p: 9\n",
        "base: &b {k: v}\nm:\n  <<: *b\n  k: own\n",
        "---\n---\na: 1\n---\nb: 2\n",
        "a: 0b101\nb: 0x1F\nc: 017\nd: 1:30\ne: 1.5\nf: -1_000\ng: 190:20:30.15\n",
        "a: 2001-12-14T21:59:43.10-05:00\nb: 2001-12-14\n",
        "? complex\n: value\n'quoted': \"text\"\n",
        "a: !!str 12\nb: !!int '12'\nc: !!float '1'\n",
    ],
)
def test_yaml_features_read_as_pyyaml_reads_them(text: str) -> None:
    assert values(text, timestamps=True) == pyyaml(text)


# --------------------------------------------------------------------------- plain scalars, no pattern


def _by_patterns(value: str) -> str:
    from karta.model import documents

    for tag, regexp in documents._implicit_resolvers().get(value[:1] if value else "", ()):
        if regexp.match(value):
            return tag
    return documents._STR


def test_pyyamls_resolver_table_is_the_one_the_fast_answers_are_for() -> None:
    # a PyYAML whose implicit resolvers differ (tags, patterns, order) turns the fast answers off:
    # still correct, slower to start; this test says so
    from karta.model import documents

    assert documents._default_resolvers(documents._implicit_resolvers())


def test_plain_scalars_get_the_tag_the_patterns_give() -> None:
    import random

    from karta.model import documents

    words = [
        *documents._BOOL_WORDS, *documents._NULL_WORDS, "0", "00", "08", "017", "0x1F", "0b101", "1:30",
        "190:20:30.15", "2001-12-14", "2001-12-14T21:59:43.10-05:00", "2001-12-14 21:59:43 -5", "1e3",
        "1.5e+3", "1_000", "500m", "16Gi", "1Ki", "12345678901234567890", "n", "y", "yes ", "nul", "9:60",
        "1\u0661", "Yes\t", "nvidia.com/gpu", "name", "train-7", "On", "oN", "~x",
        "6d1e0c7a-51f2-4c2e-9a55-0b3d00000007", "0x1f_A", "0b10_1", "1e-3", "1.5E+3", "2024-01-01T00:00:00Z",
    ]  # fmt: skip
    rnd = random.Random(23)
    alphabet = "0123456789_.:+-eEinfINFaAbxcdBCDTtZ \tyYnNoOsSrRuUlLmMkKGgPp~\u0661"
    values = {w[:k] for w in words for k in range(len(w) + 1)}
    values |= {
        rnd.choice(["0x", "0b", *"0123456789nNyYtTfFoO~"])
        + "".join(rnd.choices(alphabet, k=rnd.randint(0, 8)))
        for _ in range(20_000)
    }
    answered = 0
    for value in sorted(values):
        tag = documents._plain_tag(value)
        if tag is not None:
            answered += 1
            assert tag == _by_patterns(value), value
    assert answered > len(values) // 2


def test_a_changed_resolver_table_is_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    from karta.model import documents

    table = {k: list(v) for k, v in documents._implicit_resolvers().items()}
    table["t"] = [("tag:yaml.org,2002:null", re.compile(r"^true$"))]
    monkeypatch.setattr(documents, "_implicit_resolvers", lambda: table)
    assert values("a: true\nb: True\nc: 8\n") == [{"a": None, "b": True, "c": 8}]  # T: its own resolvers


def test_a_manifest_is_read_without_compiling_the_resolver_patterns() -> None:
    import subprocess
    import sys

    manifest = Path(__file__).parents[3] / "examples" / "workloads" / "pytorchjob-train-7.yaml"
    probe = (
        "from karta.model.documents import read_documents\n"
        "from karta._pyyaml import yaml\n"
        f"docs = read_documents(open({str(manifest)!r}).read(), source='w')\n"
        "patterns = [r for rs in yaml.resolver.Resolver.yaml_implicit_resolvers.values() for _, r in rs]\n"
        "patterns.append(yaml.constructor.SafeConstructor.timestamp_regexp)\n"
        "compiled = [type(p).__name__ != '_LazyPattern' or p._compiled is not None for p in patterns]\n"
        "print(len(docs), sum(compiled))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "0"]


def test_timestamps_stay_strings_unless_asked() -> None:
    assert values("a: 2001-12-14\n") == [{"a": "2001-12-14"}]


def test_document_positions_count_empty_documents() -> None:
    docs = read_documents("---\n---\na: 1\n---\nb: 2\n", source="x")
    assert [d.number for d in docs] == [2, 3]


# --------------------------------------------------------------------------- duplicate keys


def dups(text: str) -> list[tuple[str, int, int]]:
    return [
        (d.path, d.line, d.column)
        for doc in read_documents(text, source="x", duplicates=True)
        for d in doc.duplicates
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\na: 2\n", [("a", 2, 1)]),
        ("a:\n  b: 1\n  c: 2\n  b: 3\n", [("a.b", 4, 3)]),
        ("l:\n- x: 1\n- y: 1\n  y: 2\n", [("l[1].y", 4, 3)]),
        ("a: {b: {c: 1, c: 2}}\n", [("a.b.c", 1, 15)]),
        ("m:\n  k: [{z: 1, z: 2}]\n  k: 3\n", [("m.k[0].z", 2, 14), ("m.k", 3, 3)]),
        ('a:\n  "odd key": 1\n  "odd key": 2\n', [('a["odd key"]', 3, 3)]),
        ("a: 1\n---\nb: 1\nb: 2\n", [("b", 4, 1)]),
        ('{"a": 1, "a": 2}', [("a", 0, 0)]),  # JSON: no position
        ('{"l": [{"x": {"y": 1, "y": 2}}], "z": 0}', [("l[0].x.y", 0, 0)]),
        ("base: &b {k: v}\nm:\n  <<: *b\n  k: own\n", []),  # a merge is not a duplicate
    ],
)
def test_duplicate_keys_at_every_depth(text: str, expected: list[tuple[str, int, int]]) -> None:
    assert dups(text) == expected


KEYS = st.from_regex(r"k[a-z]{0,4}", fullmatch=True)  # no YAML implicit type starts with k
TREE = st.recursive(
    st.integers(0, 9),
    lambda inner: st.dictionaries(KEYS, inner, min_size=1, max_size=4),
    max_leaves=20,
)


def _mappings(node: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The paths of every mapping in ``node``."""
    if not isinstance(node, dict):
        return []
    out = [path]
    for key, value in node.items():
        out += _mappings(value, (*path, key))
    return out


def _render(
    node: Any, target: tuple[str, ...], key: str, path: tuple[str, ...] = (), depth: int = 0
) -> list[str]:
    """Block YAML of ``node``, repeating ``key`` (as ``key: 0``) in the mapping at ``target``."""
    lines = []
    for k, value in node.items():
        pad = "  " * depth
        if isinstance(value, dict):
            lines.append(f"{pad}{k}:")
            lines += _render(value, target, key, (*path, k), depth + 1)
        else:
            lines.append(f"{pad}{k}: {value}")
        if path == target and k == key:
            lines.append(f"{pad}{k}: 0")
    return lines


@settings(max_examples=200, deadline=None)
@given(tree=st.dictionaries(KEYS, TREE, min_size=1, max_size=4), data=st.data())
def test_a_repeated_key_is_found_at_whatever_depth(tree: dict[str, Any], data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(_mappings(tree)))
    node: Any = tree
    for part in target:
        node = node[part]
    key = data.draw(st.sampled_from(sorted(node)))
    text = "\n".join(_render(tree, target, key)) + "\n"
    assert [p for p, _, _ in dups(text)] == [".".join((*target, key))]
    assert values(text) == pyyaml(text)  # the later value wins, as in PyYAML


def test_a_definitions_duplicate_keys_are_error_findings() -> None:
    text = (
        "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: d}\nspec:\n  structureDefinition:\n"
        "    rootComponent:\n      name: a\n      name: b\n"
        "      kind: {group: g, version: v1, kind: K, kind: L}\n"
    )
    result = load_karta(text, source_name="d.yaml")
    found = {(f.location, f.is_error) for f in result.findings if "duplicate key" in f.message}
    assert found == {
        ("spec.structureDefinition.rootComponent.name", True),
        ("spec.structureDefinition.rootComponent.kind.kind", True),
    }
    assert not result.ok


# --------------------------------------------------------------------------- limits


def test_nesting_up_to_the_limit_reads_and_one_more_is_an_error() -> None:
    assert values("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    with pytest.raises(DocumentError, match="nested too deeply") as err:
        values("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert err.value.hint  # (JSON text: orjson gives no position for it)
    block = "".join("  " * i + "k:\n" for i in range(MAX_DEPTH + 1)) + "  " * (MAX_DEPTH + 1) + "v\n"
    with pytest.raises(DocumentError, match="nested too deeply"):
        values(block)
    with pytest.raises(DocumentError, match="nested too deeply"):  # libyaml's own limit, far deeper
        values("[" * 5000 + "]" * 5000)
    with pytest.raises(DocumentError, match="nested too deeply"):  # JSON through orjson
        values(json.dumps(_nested(MAX_DEPTH + 1)))


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("kind", ["list", "mapping", "documents", "json list", "json mapping"])
def test_entries_up_to_the_limit_read_and_one_more_is_an_error(kind: str) -> None:
    def text(n: int) -> str:
        if kind == "list":
            return "".join("- x\n" for _ in range(n))
        if kind == "mapping":
            return "".join(f"k{i}: x\n" for i in range(n))
        if kind == "documents":
            return "".join(f"---\nd: {i}\n" for i in range(n))
        if kind == "json list":
            return json.dumps(list(range(n)))
        return json.dumps({f"k{i}": i for i in range(n)})

    assert read_documents(text(MAX_ITEMS), source="x")
    with pytest.raises(DocumentError, match=f"more than {MAX_ITEMS:,}"):
        read_documents(text(MAX_ITEMS + 1), source="x")


def test_a_million_item_list_stops_at_the_item_limit() -> None:
    big = "items:\n" + "- {}\n" * 1_000_000
    start = time.perf_counter()
    with pytest.raises(DocumentError, match="more than 10,000 entries") as err:
        read_documents(big, source="pods.yaml")
    assert time.perf_counter() - start < HANG_GUARD_S
    assert err.value.line == MAX_ITEMS + 2  # the first item too many, where it starts


def test_an_alias_bomb_is_counted_not_expanded() -> None:
    bomb = ["a0: &a0 [x, x, x, x]"]
    bomb += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 8)}]" for i in range(1, 9)]
    start = time.perf_counter()
    with pytest.raises(DocumentError, match="aliases"):
        read_documents("\n".join(bomb), source="x")
    assert time.perf_counter() - start < HANG_GUARD_S
    assert MAX_VALUES == 2_000_000


def test_a_recursive_alias_is_an_error() -> None:
    with pytest.raises(DocumentError, match=r"\*x is inside its own anchor"):
        values("a: &x\n  b: *x\n")


@pytest.mark.parametrize(
    ("text", "problem"),
    [("a: *nope\n", "undefined alias"), ("a: &x 1\nb: &x 2\n", "duplicate anchor")],
)
def test_alias_errors(text: str, problem: str) -> None:
    with pytest.raises(DocumentError, match=problem):
        values(text)


def test_a_source_over_the_size_limit_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:  # sparse: no time or disk spent
        handle.truncate(MAX_BYTES + 1)
    with pytest.raises(DocumentError, match="larger than 64 MiB") as err:
        read_bytes(path)
    assert str(err.value).startswith(f"cannot read {path}:")
    with pytest.raises(DocumentError, match="larger than 64 MiB"):
        read_bytes("/dev/zero")  # endless: still bounded
    with pytest.raises(DocumentError, match="larger than 64 MiB"):
        read_documents(" " * (MAX_BYTES + 1), source="text")
    path.write_bytes(b"a: 1")
    assert read_bytes(path) == b"a: 1"


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("text", "problem", "line", "column"),
    [
        ("a:\n  b: 1" + "0" * 5000 + "\n", "integer of 5,001 digits", 2, 6),
        ("a: -" + "9" * 4400 + "\n", "digits", 1, 4),
        ("a: 1" + "0" * 400 + "\n", "too large for a JSON number", 1, 4),
        ("a: 1.0e+400\n", "too large for a JSON number", 1, 4),
        ("a: .inf\n", "not a JSON number", 1, 4),
        ("a: -.Inf\n", "not a JSON number", 1, 4),
        ("a: .nan\n", "not a JSON number", 1, 4),
        ('{"a": ' + "1" * 5000 + "}", "integer of 5,000 digits", 1, 7),  # JSON read as YAML: an int
        ("a: !!binary aGVsbG8=\n", "!!binary is not supported", 1, 4),
        ("a: !!set {x: null}\n", "!!set is not supported", 1, 4),
        ("a: !custom x\n", "!custom is not supported", 1, 4),
        ("a: !!bool maybe\n", "not a boolean", 1, 4),
        ("a: !!int twelve\n", "not an integer", 1, 4),
        ("a: !!timestamp 2001-13-45\n", "not a valid timestamp", 1, 4),
    ],
)
def test_values_json_cannot_hold_are_errors_with_their_place(
    text: str, problem: str, line: int, column: int
) -> None:
    with pytest.raises(DocumentError, match=problem) as err:
        values(text, timestamps=True)
    assert (err.value.line, err.value.column) == (line, column)
    assert str(err.value).startswith(f"cannot parse in.yaml (line {line}, column {column}): ")
    assert len(str(err.value)) < 300  # a 5,000-digit number is not repeated in full


@pytest.mark.parametrize(
    ("text", "column"),
    [('{"a": 1e400}', 7), ('{"a": NaN}', 7), ('{"a": [-Infinity]}', 9), ('{"a": ' + "1" * 5000 + "}", 7)],
)
def test_a_json_file_with_numbers_json_cannot_hold_is_an_error(text: str, column: int) -> None:
    with pytest.raises(DocumentError, match="a number JSON data cannot hold") as err:
        values(text, source="in.json")
    assert (err.value.line, err.value.column) == (1, column)


def test_yaml_flow_style_keeps_yaml_meanings() -> None:
    assert values("[NaN, 1e400, Infinity]") == [["NaN", "1e400", "Infinity"]]  # strings in YAML


def test_integers_beyond_64_bits_read_as_doubles_as_json_readers_do() -> None:
    assert values(f"a: {2**64 - 1}\nb: {-(2**63)}\n") == [{"a": 2**64 - 1, "b": -(2**63)}]
    assert values(f"a: {2**64}\nb: {-(2**63) - 1}\n") == [{"a": float(2**64), "b": float(-(2**63) - 1)}]
    assert values(json.dumps({"a": 2**64})) == [{"a": float(2**64)}]  # orjson agrees


# --------------------------------------------------------------------------- speed


def test_a_multi_megabyte_definition_loads_without_hanging() -> None:
    children = [
        {
            "name": f"c{i}",
            "ownerRef": "root",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "specDefinition": {
                "podTemplateSpecPath": " // ".join(f'.spec.alt{j}["c{i}"].template' for j in range(60))
            },
            "podSelector": {
                "componentTypeSelector": {"matchLabels": {f"l{k}.example.com/r": f"v{k}" for k in range(40)}}
            },
        }
        for i in range(250)
    ]
    definition = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "big", "annotations": {f"note-{k}": "x" * 400 for k in range(6000)}},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "root",
                    "kind": {"group": "acme.ai", "version": "v1", "kind": "Big"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {"running": [{"byPhase": "Running"}]},
                    },
                },
                "childComponents": children,
            }
        },
    }
    text = yaml.safe_dump(definition, sort_keys=False)
    assert len(text) > 3 * 1024 * 1024
    start = time.perf_counter()
    result = load_karta(text, source_name="big.yaml")
    elapsed = time.perf_counter() - start
    assert result.karta is not None and not result.errors
    assert elapsed < HANG_GUARD_S, f"{len(text) / 1e6:.1f} MB took {elapsed:.2f} s"
