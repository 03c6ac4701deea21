"""Three engine points found by cases this project had not seen (issue 24, item 4).

* Numbers above 2**53 in the input behave as the doubles the original sees (docs/spec/format.md#jq-dialect:
  it converts its input to generic JSON values, numbers as IEEE-754 doubles):
  ``9007199254740993`` compares equal to ``9007199254740992`` and prints as it, on the fast path,
  the generated code, libjq, the metered fast path and the sandbox, through the component factory
  and the status extraction, and for objects read from YAML and JSON text. The input object
  itself is never changed (a write-back keeps its numbers).
* A builtin, variable or format gojq lacks is refused by every evaluation as the original refuses
  it (``failed to compile JQ expression '<e>': function not defined: keys_unsorted/0``), plus
  ours: what is missing, that gojq lacks it, and what to write instead.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from karta.errors import JqCompileError
from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.jq._values import as_double, as_input
from karta.model import karta_from_dict
from karta.model.documents import read_documents

TRUSTED = Evaluator(trusted=True)
LIBJQ = Evaluator(trusted=True, fast_path=False)
UNTRUSTED = Evaluator()
ENGINES = {"fast path": TRUSTED, "libjq": LIBJQ, "metered": UNTRUSTED}

MAX = 1.7976931348623157e308
BIG = 9007199254740993  # 2**53 + 1: no double holds it
DATA = {"a": BIG, "b": 2**53, "list": [BIG, 1], "deep": {"x": [{"y": -BIG}]}, "huge": 2**64 + 1}

CASES: list[tuple[str, Any]] = [
    (".a", [2**53]),
    (".a == 9007199254740992", [True]),
    (".a == .b", [True]),
    (".list[0] == .b", [True]),
    (".deep.x[0].y == -9007199254740992", [True]),
    (".a | tostring", ["9007199254740992"]),
    ('"\\(.a)"', ["9007199254740992"]),
    (".list | tojson", ["[9007199254740992,1]"]),
    ("{x: .a} | .x", [2**53]),
    ("[.a, .b] | unique | length", [1]),
    (".a - .b", [0]),
    (".huge == .b * 2048", [True]),  # 2**64 + 1 is the double 2**64
]


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize(("expression", "expected"), CASES, ids=[c[0] for c in CASES])
def test_input_numbers_above_2_53_are_the_originals_doubles(
    engine: str, expression: str, expected: Any
) -> None:
    data = copy.deepcopy(DATA)
    assert ENGINES[engine].evaluate(expression, data) == expected
    assert data == DATA  # the input is read, never changed


def test_the_sandbox_sees_the_doubles_too() -> None:
    # ``splits`` is unbounded: an untrusted evaluator runs it in the sandbox worker.
    assert UNTRUSTED.engine_of('[.a | tostring | splits("x")]') == "sandbox"
    assert UNTRUSTED.evaluate('[.a | tostring | splits("x")]', DATA) == [["9007199254740992"]]
    assert UNTRUSTED.evaluate('.a == 9007199254740992 and ("x" | test("x"))', DATA) == [True]


def test_a_session_converts_its_object_once_and_libjq_reads_the_converted_text() -> None:
    with LIBJQ.session(DATA):
        assert LIBJQ.evaluate(".a", DATA) == [2**53]
        assert LIBJQ.paths(".list[] | select(. == 9007199254740992)", DATA) == [["list", 0]]


def test_the_conversion_keeps_the_object_when_nothing_needs_it() -> None:
    plain = {"a": 1, "s": "12345678901234567890", "n": 4503599627370496, "f": 1e300, "t": True}
    assert as_input(plain) is plain  # a long digit run inside a string, numbers below 2**53
    converted = as_input(DATA)
    assert converted is not DATA and converted["a"] == 2**53 and DATA["a"] == BIG
    assert as_double(BIG) == 2**53 and as_double(-BIG) == -(2**53)
    assert as_double(2**64 + 1) == 1.8446744073709552e19
    assert as_double(10**400) == MAX and as_double(-(10**400)) == -MAX
    assert as_input(True) is True and as_input(BIG) == 2**53
    deep: Any = BIG
    for _ in range(2000):  # deeper than orjson serialises: the walk is iterative
        deep = [deep]
    out = as_input(deep)
    for _ in range(2000):
        out = out[0]
    assert out == 2**53


DEFINITION = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "big"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "root",
                "kind": {"group": "example.com", "version": "v1", "kind": "Big"},
                "scaleDefinition": {"replicasPath": ".spec.count"},
                "statusDefinition": {
                    "statusMappings": {
                        "running": [
                            {
                                "byExpression": {
                                    "expression": ".spec.count == 9007199254740992",
                                    "expectedResult": "true",
                                }
                            }
                        ]
                    }
                },
            }
        }
    },
}
WORKLOAD_YAML = """\
apiVersion: example.com/v1
kind: Big
metadata: {name: w, namespace: ns}
spec:
  count: 9007199254740993
"""


@pytest.mark.parametrize("trusted", [True, False], ids=["generated code", "untrusted"])
def test_objects_read_from_yaml_and_json_go_through_the_factory_as_doubles(trusted: bool) -> None:
    karta = karta_from_dict(DEFINITION)
    for text in (
        WORKLOAD_YAML,
        '{"apiVersion": "example.com/v1", "kind": "Big", "metadata": {"name": "w"},'
        ' "spec": {"count": 9007199254740993}}',
    ):
        (doc,) = [d.value for d in read_documents(text, source="w.yaml")]
        assert doc["spec"]["count"] == BIG  # read exactly: the engine converts, not the reader
        evaluator = Evaluator(trusted=trusted)
        for _ in range(3):  # the first use runs the general code, later ones the generated code
            factory = ComponentFactory(karta, doc, evaluator=evaluator)
            assert factory.root().status().primary.value == "Running"
            assert factory.query(".spec.count") == [2**53]
        assert doc["spec"]["count"] == BIG


GOJQ_LACKS = [
    ("keys_unsorted", "function not defined: keys_unsorted/0", "hint: use keys"),
    ("[1] | get_search_list", "function not defined: get_search_list/0", "evaluating process"),
    ("input_line_number", "function not defined: input_line_number/0", "evaluating process"),
    ("get_jq_origin", "function not defined: get_jq_origin/0", "evaluating process"),
    ("get_prog_origin", "function not defined: get_prog_origin/0", "evaluating process"),
    ("$__loc__", "variable not defined: $__loc__", "evaluating process"),
    ("have_decnum", "function not defined: have_decnum/0", "doubles"),
    ("input", "input(s)/0 is not allowed", "no second input"),
    ("@base32d", "format not defined: @base32d", "hint: use @base64d"),
    ('@base32 "x\\(.)"', "format not defined: @base32", "hint: use @base64"),
]


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize(("expression", "theirs", "hint"), GOJQ_LACKS, ids=[c[0] for c in GOJQ_LACKS])
def test_what_gojq_lacks_is_refused_as_the_original_words_it_plus_ours(
    engine: str, expression: str, theirs: str, hint: str
) -> None:
    with pytest.raises(JqCompileError) as caught:
        ENGINES[engine].evaluate(expression, {"a": 1})
    message = str(caught.value)
    assert message.startswith(f"failed to compile JQ expression '{expression}': {theirs} (karta: gojq, ")
    assert "the jq of the original implementation and KAI Scheduler, has no " in message
    assert hint in message


def test_a_user_definition_of_a_name_gojq_lacks_is_what_gojq_calls() -> None:
    for ev in ENGINES.values():
        assert ev.evaluate("def keys_unsorted: keys; {b: 1, a: 2} | keys_unsorted", None) == [["a", "b"]]
        assert ev.evaluate("{b: 1, a: 2} | keys", None) == [["a", "b"]]


def test_decoders_convert_once_and_decoded_evaluators_read_the_object_as_it_is() -> None:
    from karta.jq._values import decoded_input, long_digits

    plain = {"a": 1, "s": "1234567890123456"}
    assert not long_digits(b'{"a": 1, "s": "123456789012345"}') and long_digits('{"s": "1234567890123456"}')
    assert decoded_input(plain, b'{"a": 1}') is plain  # no run of 16 digits: not even looked at
    assert decoded_input(plain, b'{"a": 1, "s": "1234567890123456"}') is plain  # the run is a string
    raw = b'{"a": 9007199254740993, "list": [9007199254740993, 1]}'
    data = {"a": BIG, "list": [BIG, 1]}
    assert decoded_input(data, raw) == {"a": 2**53, "list": [2**53, 1]} and data["a"] == BIG
    decoded = Evaluator(trusted=True, decoded=True)
    # A decoded evaluator trusts its decoder: it reads what it is given, with no per-object scan.
    assert decoded.evaluate(".a == 9007199254740992", data) == [False]
    assert decoded.evaluate(".a == 9007199254740992", decoded_input(data, raw)) == [True]
    assert TRUSTED.evaluate(".a == 9007199254740992", data) == [True]  # the default checks each object
