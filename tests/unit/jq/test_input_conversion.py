"""Hostile inputs: deep nesting and integers libjq or orjson cannot take never crash (no
RecursionError, ValueError, TypeError or "internal error"): they convert safely, run on the fast
path, or are one clear JqRuntimeError (karta.jq._libjq, karta.jq._values), also through the
catalog path that ``kli inspect``/``describe``/``verify`` use."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import karta.catalog as catalog
from karta.errors import JqRuntimeError, KartaError
from karta.jq import Evaluator, _libjq
from karta.jq._values import as_double, dumps, normalise_output, number_text
from karta.report.inspect import inspect_report

FAST = Evaluator(trusted=True)
LIBJQ = Evaluator(trusted=True, fast_path=False)
MAX = "1.7976931348623157e+308"


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


@pytest.mark.parametrize("depth", [253, 254, 300, 900, 2000, _libjq.MAX_INPUT_DEPTH - 1])
def test_deep_inputs_convert_without_recursion_and_agree(depth: int) -> None:
    data = {"spec": nested(depth, 1.0)}  # depth + 1 levels
    text = _libjq.to_json_text(data)
    assert text.startswith('{"spec":') and text.count("[") + text.count("{") == depth + 1
    for expression in ("[paths] | length", ".spec | tostring | length", "[.. | numbers]", ".metadata"):
        assert FAST.evaluate(expression, data) == LIBJQ.evaluate(expression, data), expression


def test_an_input_deeper_than_libjq_reads_is_one_clear_runtime_error() -> None:
    data = {"spec": nested(_libjq.MAX_INPUT_DEPTH + 1)}
    with pytest.raises(JqRuntimeError, match="input nested too deeply \\(libjq reads at most 5000 levels\\)"):
        _libjq.to_json_text(data)
    with pytest.raises(JqRuntimeError, match="nested too deeply"):
        LIBJQ.evaluate("[paths] | length", data)
    assert FAST.evaluate(".metadata", data) == [None]  # the fast path reads only what it needs


def test_deep_values_normalise_and_serialise_iteratively() -> None:
    deep = nested(20_000, 3.0)
    assert dumps(normalise_output(deep)) == dumps(nested(20_000, 3))  # == itself would recurse
    text = dumps(deep)
    assert text.startswith('{"k":[{"k":[') and text.count("[") == 10_000 and text.endswith("]}")


BIG = [2**63, 2**64, -(2**64) - 5, 2**70, 10**100, 10**400, -(10**400), 10**5000]


@pytest.mark.parametrize(
    "value", BIG, ids=lambda v: f"{len(str(abs(v))) if v.bit_length() < 14000 else 'huge'} digits"
)
def test_integers_beyond_64_bits_take_both_engines(value: int) -> None:
    data = {"spec": {"big": value, "name": "x"}}
    _libjq.to_json_text(data)  # no TypeError
    for expression in (".spec.name", ".spec | keys", ".spec.big | type", ".spec.big > 0"):
        assert FAST.evaluate(expression, data) == LIBJQ.evaluate(expression, data), expression
    text = FAST.evaluate(".spec.big | tostring", data)[0]
    # The original's doubles (docs/spec/format.md#jq-dialect): the nearest one, the largest double beyond the
    # double range, on both engines.
    assert text == number_text(normalise_output(as_double(value)))
    if value.bit_length() > 1024:
        assert text == (MAX if value > 0 else "-" + MAX)
    assert float(LIBJQ.evaluate(".spec.big | tostring", data)[0]) == float(text)  # libjq may print E+
    if 1024 < value.bit_length() < 14_000:  # arithmetic is with doubles, on both engines
        assert FAST.evaluate(".spec.big / 3", data) == LIBJQ.evaluate(".spec.big / 3", data)


def test_number_text_never_hits_the_int_string_limit() -> None:
    assert number_text(10**5000) == MAX
    assert number_text(-(10**5000)) == "-" + MAX
    assert number_text(2**64) == "18446744073709551616"


def test_special_floats_and_strings_convert() -> None:
    data = {"n": math.nan, "i": math.inf, "m": -math.inf, "s": "a\ud800b", "p": "\ud83d\ude00"}
    assert json.loads(_libjq.to_json_text(data)) == {
        "i": float(MAX),
        "m": -float(MAX),
        "n": None,
        "p": "\U0001f600",
        "s": "a\ufffdb",
    }


def test_values_that_are_not_json_are_a_runtime_error() -> None:
    with pytest.raises(JqRuntimeError, match="not JSON"):
        _libjq.to_json_text({"x": object()})
    assert _libjq.to_json_text({1: "a", None: "b"}) == '{"1":"a","null":"b"}'


json_like = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**200), max_value=2**200),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=5),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=json_like, depth=st.sampled_from([0, 1, 300]))
def test_input_conversion_takes_any_json_like_value(value: Any, depth: int) -> None:
    data = nested(depth, value)
    text = _libjq.to_json_text(data)
    assert LIBJQ.evaluate("type", data) == FAST.evaluate("type", data)
    assert json.loads(text) is not None or data is None


# --- the catalog path: kli inspect, describe and verify -----------------------------------------

RAYJOB = (
    Path(__file__).resolve().parents[4] / "shared" / "corpus" / "workloads" / "kuberay" / "rayjob-sample.yaml"
)


def _rayjob() -> dict[str, Any]:
    if not RAYJOB.is_file():
        pytest.skip("shared corpus not found")
    with RAYJOB.open() as handle:
        return next(d for d in yaml.safe_load_all(handle) if d and d.get("kind") == "RayJob")


HOSTILE = {
    "nested 300 deep": lambda d: d["spec"].__setitem__("extra", nested(300)),
    "nested 900 deep in metadata": lambda d: d["metadata"].__setitem__("annotations", {"x": nested(900)}),
    "a 2^64 integer": lambda d: d["spec"].__setitem__("big", 2**64),
    "a 10^5000 integer": lambda d: d["spec"].__setitem__("big", 10**5000),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("fast_path", [True, False], ids=["fast path", "libjq only"])
def test_hostile_workloads_through_the_catalog_path(name: str, fast_path: bool) -> None:
    doc = copy.deepcopy(_rayjob())
    HOSTILE[name](doc)
    karta = catalog.catalog_by_gvk("ray.io", "v1", "RayJob")
    assert karta is not None
    evaluator = Evaluator(trusted=True, fast_path=fast_path)
    report = inspect_report(karta, doc, evaluator=evaluator)
    plain = inspect_report(karta, _rayjob(), evaluator=evaluator)
    assert report["components"] == plain["components"]
    assert report["status"] == plain["status"]
    assert [d for d in report["diagnostics"] if d["severity"] == "error"] == []


def test_a_workload_deeper_than_libjq_reads_fails_cleanly_on_the_catalog_path() -> None:
    doc = copy.deepcopy(_rayjob())
    doc["spec"]["extra"] = nested(_libjq.MAX_INPUT_DEPTH + 100)
    karta = catalog.catalog_by_gvk("ray.io", "v1", "RayJob")
    assert karta is not None
    # Every RayJob expression runs as generated code on the fast path, so libjq never reads the input.
    report = inspect_report(karta, doc, evaluator=FAST)
    assert not any("input nested too deeply" in d["message"] for d in report["diagnostics"])
    assert report["status"] == inspect_report(karta, _rayjob(), evaluator=FAST)["status"]
    with pytest.raises(KartaError, match="input nested too deeply"):
        inspect_report(karta, doc, evaluator=LIBJQ)
