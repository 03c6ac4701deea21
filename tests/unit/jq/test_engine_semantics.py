"""One semantics whichever engine runs an expression (docs/spec/format.md#jq-dialect, R11): the fast path and
libjq (``Evaluator(fast_path=False)``, which runs karta.jq.printer.gojq_program) agree on every
catalog and conformance expression, also when the objects the expression reads were built inside
it, and on generated expressions that mix object construction, iteration and serialisation;
every object libjq iterates or prints is in sorted key order, as in gojq.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jq as libjq
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import karta.catalog as catalog
from karta.errors import JqError
from karta.extract import ComponentFactory
from karta.jq import Evaluator, _libjq
from karta.jq import syntax as A
from karta.jq._values import dumps
from karta.jq.builtin_table import BUILTINS
from karta.jq.evaluator import plan_for
from karta.jq.parser import parse
from karta.jq.printer import HELPERS, gojq_program, to_jq
from karta.jq.safety import _walk
from karta.model import karta_from_dict
from karta.model.validate_expressions import jq_fields

FAST = Evaluator(trusted=True)
LIBJQ = Evaluator(trusted=True, fast_path=False)


def _libjq_program(expression: str, data: Any) -> list[Any]:
    """All outputs of the program libjq runs for ``expression`` (:func:`gojq_program`), straight
    from libjq: for observers (``keys_unsorted``) that every evaluation refuses, as gojq lacks them."""
    return list(libjq.compile(gojq_program(parse(expression))).input_text(_libjq.to_json_text(data)).all())


# Rebuilds its input with every object constructed in reverse key order: libjq, left alone, would
# keep that order; the fast path and gojq iterate in sorted order whatever the construction order.
REBUILD = (
    'def _rebuilt: if type == "object" then . as $o | reduce (keys | reverse)[] as $k ({}; '
    '. + {($k): ($o[$k] | _rebuilt)}) elif type == "array" then map(_rebuilt) else . end; '
)


def reversed_objects(value: Any) -> Any:
    """``value`` with every dict built in reverse key order (what REBUILD builds, in Python)."""
    if isinstance(value, dict):
        return {k: reversed_objects(value[k]) for k in sorted(value, reverse=True)}
    if isinstance(value, list):
        return [reversed_objects(v) for v in value]
    return value


def outcome(ev: Evaluator, expression: str, data: Any) -> tuple[str, Any]:
    try:
        return "ok", [dumps(x) for x in ev.evaluate(expression, data)]
    except JqError as exc:
        return "error", type(exc).__name__


def assert_engines_agree(expression: str, data: Any) -> None:
    fast = outcome(FAST, expression, data)
    ref = outcome(LIBJQ, expression, data)
    assert fast == ref or fast[0] == ref[0] == "error", f"{expression!r} on {dumps(data)[:200]}"
    # The same expression on objects the program builds itself, in reverse key order.
    built = outcome(LIBJQ, f"{REBUILD}_rebuilt | ({expression})", data)
    fast_built = outcome(FAST, expression, reversed_objects(data))
    assert fast_built == fast, expression  # the fast path never depends on construction order
    assert built == fast or built[0] == fast[0] == "error", f"built objects: {expression!r}"


# --- the catalog and the conformance cases -------------------------------------------------------

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "workloads"


@functools.cache
def _corpus_by_kind() -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for path in sorted(CORPUS.glob("*/*.yaml")):
        with path.open("rb") as handle:
            for doc in yaml.safe_load_all(handle):
                if isinstance(doc, dict) and "kind" in doc:
                    out.setdefault((str(doc.get("apiVersion")), str(doc["kind"])), []).append(doc)
    return out


def _pod_for(expression: str) -> dict[str, Any]:
    """A pod whose labels and annotations hold every string the expression names."""
    words = [
        n.value for n in _walk(parse(expression)) if isinstance(n, A.Literal) and isinstance(n.value, str)
    ]
    labels = {w: f"{w}-0" if i % 2 else "worker" for i, w in enumerate(words)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p-0", "labels": labels, "annotations": labels, "ownerReferences": []},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
    }


def _bound(karta: Any, expression: str) -> str:
    """``expression`` with the definition's references (extension E3) bound to null, as a
    workload read without them has them."""
    names = [r.name for r in karta.spec.structure_definition.references]
    return "".join(f"null as ${name} | " for name in names) + expression if names else expression


def _catalog_cases() -> Iterator[tuple[str, str, Any]]:
    for slug, karta in zip(catalog.catalog_slugs(), catalog.catalog_definitions(), strict=True):
        kind = karta.spec.structure_definition.root_component.kind
        assert kind is not None
        api_version = f"{kind.group}/{kind.version}" if kind.group else kind.version
        docs = _corpus_by_kind().get((api_version, kind.kind), [])[:2]
        for field in jq_fields(karta):
            pod_side = "podSelector" in field.location or ".podGroups[" in field.location
            inputs = [_pod_for(field.expression)] if pod_side else docs or [{}]
            for i, data in enumerate(inputs):
                yield f"{slug}:{field.location}#{i}", _bound(karta, field.expression), data


def _conformance_cases() -> Iterator[tuple[str, str, Any]]:
    from tests.conformance._cases import all_cases, karta_of

    for case in all_cases():
        if "expr" in case.data:
            yield case.id, case.data["expr"], case.data.get("input")
        try:
            karta = karta_of(case)
        except Exception:  # the validator cases hold definitions that do not load
            continue
        if karta is None:
            continue
        obj = case.data.get("object", {})
        for field in jq_fields(karta):
            pod_side = "podSelector" in field.location or ".podGroups[" in field.location
            data = (case.data.get("pod") or _pod_for(field.expression)) if pod_side else obj
            yield f"{case.id}:{field.location}", field.expression, data


def _may_run_forever(node: A.Node) -> bool:
    for n in _walk(node):
        if isinstance(n, A.Call) and n.name in BUILTINS:
            builtin = BUILTINS[n.name]
            if builtin.excessive or not builtin.terminates:
                return True
        if isinstance(n, A.RecurseAll):
            return True
    return False


def _valid(cases: Iterator[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
    out = []
    for name, expression, data in cases:
        try:
            plan = plan_for(expression)
        except JqError:
            continue  # parse and compile errors are the same on both engines by construction
        if plan.node is None or _may_run_forever(plan.node):
            continue  # the cases of the time limit (reduce range(1e12) ...): no deadline here
        out.append((name, expression, data))
    return out


CATALOG = _valid(_catalog_cases())
CONFORMANCE = _valid(_conformance_cases())


def test_the_differential_sees_every_catalog_expression() -> None:
    expressions = {e for _, e, _ in CATALOG}
    every = {_bound(k, f.expression) for k in catalog.catalog_definitions() for f in jq_fields(k)}
    assert expressions == every and len(every) > 200
    assert len(CONFORMANCE) > 100


@pytest.mark.parametrize(("name", "expression", "data"), CATALOG, ids=[c[0] for c in CATALOG])
def test_catalog_expressions_agree_on_both_engines(name: str, expression: str, data: Any) -> None:
    assert_engines_agree(expression, data)


@pytest.mark.parametrize(("name", "expression", "data"), CONFORMANCE, ids=[c[0] for c in CONFORMANCE])
def test_conformance_expressions_agree_on_both_engines(name: str, expression: str, data: Any) -> None:
    assert_engines_agree(expression, data)


# --- the cases of the review ------------------------------------------------------------------


def test_tostring_of_a_built_object_is_the_same_text_on_both_engines() -> None:
    for ev in (FAST, LIBJQ):
        assert ev.evaluate("{b: 1, a: 2} | tostring", None) == ['{"a":2,"b":1}']
        assert ev.evaluate('{b: 1, a: 2} | "\\(.)"', None) == ['{"a":2,"b":1}']
        assert ev.evaluate("{b: {d: 1, c: 2}, a: [{z: 0, y: 1}]} | tojson", None) == [
            '{"a":[{"y":1,"z":0}],"b":{"c":2,"d":1}}'
        ]
    # libjq left alone keeps the construction order: the difference the rewrite removes
    assert libjq.compile("{b: 1, a: 2} | tostring").input_text("null").first() == '{"b":1,"a":2}'


def test_a_by_expression_on_a_built_object_matches_alike() -> None:
    expression = (
        '({phase: .status.phase, ready: true} | tostring) == "{\\"phase\\":\\"Running\\",\\"ready\\":true}"'
    )
    assert plan_for(expression).fast is not None
    data = {"status": {"phase": "Running"}}
    assert FAST.evaluate(expression, data) == LIBJQ.evaluate(expression, data) == [True]


BUILDERS = {
    "construction": "{zeta: 1, alpha: 2, mid: 3}",
    "merge": "{zeta: 1} + {alpha: 2} + {mid: 3}",
    "deep merge": "{x: {zeta: 1}} * {x: {alpha: 2}}",
    "from_entries": '[{key: "zeta", value: 1}, {key: "alpha", value: 2}] | from_entries',
    "with_entries": '{a: 1, b: 2} | with_entries(.key |= if . == "a" then "zeta" else "alpha" end)',
    "add": "[{zeta: 1}, {alpha: 2}] | add",
    "setpath": '{zeta: 1} | setpath(["alpha"]; 2)',
    "assignment": "{zeta: 1} | .alpha = 2",
    "map_values": "{zeta: 1, alpha: 2} | map_values(. + 1)",
    "INDEX": '[{n: "zeta"}, {n: "alpha"}] | INDEX(.n)',
    "capture": '"za" | capture("(?<zeta>z)(?<alpha>a)")',
    "fromjson": '"{\\"zeta\\": 1, \\"alpha\\": 2}" | fromjson',
    "pick": "{zeta: 1, alpha: 2} | pick(.zeta, .alpha)",
    "reduce": 'reduce ("zeta", "alpha") as $k ({}; . + {($k): 1})',
    "match": '"za" | match("(?<zeta>z)(?<alpha>a)") | .captures[0]',
}
OBSERVERS = [
    "keys_unsorted",
    "to_entries | map(.key)",
    "[.[]]",
    "tostring",
    "tojson",
    "[paths]",
    "[.. | numbers]",
]


@pytest.mark.parametrize("builder", sorted(BUILDERS))
@pytest.mark.parametrize("observer", OBSERVERS)
def test_every_object_libjq_builds_is_in_sorted_key_order(builder: str, observer: str) -> None:
    expression = f"({BUILDERS[builder]}) | {observer}"
    # keys_unsorted, which gojq lacks, every evaluation refuses: the program libjq runs shows its order.
    unsorted = observer == "keys_unsorted"
    result = _libjq_program(expression, None) if unsorted else LIBJQ.evaluate(expression, None)
    keys = LIBJQ.evaluate(f"({BUILDERS[builder]}) | keys", None)[0]
    if observer == "keys_unsorted":
        assert result == [keys]
    if observer == "to_entries | map(.key)":
        assert result == [keys]
    if observer != "keys_unsorted" and plan_for(expression).fast is not None:
        assert FAST.evaluate(expression, None) == result


def test_sub_sees_its_capture_object_sorted() -> None:
    expression = '"ab" | sub("(?<y>a)(?<x>b)"; tostring)'
    assert LIBJQ.evaluate(expression, None) == ['{"x":"b","y":"a"}']


def test_env_is_empty_on_both_engines_as_gojq_makes_it() -> None:
    for ev in (FAST, LIBJQ, Evaluator(trusted=False)):
        for expression in ("env", "$ENV", "env.PATH", "$ENV | length"):
            try:
                out = ev.evaluate(expression, None)
            except JqError:  # outside what the fast path runs and what the sandbox takes: fine
                continue
            assert out in ([{}], [None], [0]), expression
    assert LIBJQ.evaluate(". as $ENV | $ENV", 5) == [5]  # a binding of the name is left alone
    assert LIBJQ.evaluate("def env: 7; env", None) == [7]


def test_number_literals_render_alike() -> None:
    for expression, expected in [
        ("1.0 | tostring", "1"),
        ("1e2 | tostring", "100"),
        ("1.5 | tostring", "1.5"),
        ("1e-7 | tostring", "1e-07"),
        ("[3.0, 1e17] | tojson", "[3,1e+17]"),
        ("100000000000000000000 | tostring", "100000000000000000000"),
    ]:
        assert FAST.evaluate(expression, None) == LIBJQ.evaluate(expression, None) == [expected], expression


# --- the instance-id pairing of the review, end to end ------------------------------------------

PAIRING_KARTA: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "example-dev-pair-v1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "pair",
                "kind": {"group": "example.dev", "version": "v1", "kind": "Pair"},
                "statusDefinition": {
                    "phaseDefinition": {"path": ".status.phase"},
                    "statusMappings": {"running": [{"byPhase": "Running"}]},
                },
            },
            "childComponents": [
                {
                    "name": "service",
                    "ownerRef": "pair",
                    # test(): libjq. The object is built by the expression: zeta first.
                    "instanceIdPath": (
                        "{zeta: .spec.zeta, alpha: .spec.alpha} | to_entries[] "
                        '| select(.key | test("^[a-z]+$")) | .key'
                    ),
                    # the fast path
                    "specDefinition": {
                        "podTemplateSpecPath": "{zeta: .spec.zeta, alpha: .spec.alpha} | .[] | .template"
                    },
                    "scaleDefinition": {
                        "replicasPath": "{zeta: .spec.zeta, alpha: .spec.alpha} | .[] | .replicas"
                    },
                    "podSelector": {"componentInstanceSelector": {"idPath": '.metadata.labels["svc"]'}},
                }
            ],
        }
    },
}

PAIRING_WORKLOAD: dict[str, Any] = {
    "apiVersion": "example.dev/v1",
    "kind": "Pair",
    "metadata": {"name": "p", "namespace": "default", "uid": "u"},
    "spec": {
        "zeta": {"replicas": 1, "template": {"spec": {"containers": [{"name": "zeta"}]}}},
        "alpha": {"replicas": 3, "template": {"spec": {"containers": [{"name": "alpha"}]}}},
    },
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast path", "libjq only"])
def test_instances_pair_with_their_own_pod_spec_and_replicas(fast_path: bool) -> None:
    karta = karta_from_dict(PAIRING_KARTA)
    evaluator = Evaluator(trusted=True, fast_path=fast_path)
    factory = ComponentFactory(karta, PAIRING_WORKLOAD, evaluator=evaluator)
    service = factory.component("service")
    assert service.instance_ids() == ["alpha", "zeta"]
    templates = service.pod_template_specs()
    assert templates is not None
    assert {k: v["spec"]["containers"][0]["name"] for k, v in templates.items()} == {
        "alpha": "alpha",
        "zeta": "zeta",
    }
    scales = service.scales()
    assert scales is not None
    assert {k: v.replicas for k, v in scales.items()} == {"alpha": 3, "zeta": 1}


# --- generated expressions: construction, iteration, serialisation -----------------------------

KEYS = ["zeta", "alpha", "mid", "b", "a"]
objects_src = st.lists(
    st.tuples(st.sampled_from(KEYS), st.sampled_from(["1", ".", ".x", '"s"', "[2, 1]", "null"])),
    min_size=1,
    max_size=4,
)


def _object(entries: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{k}: ({v})" for k, v in entries) + "}"


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(st.tuples(st.sampled_from(KEYS), inner), min_size=1, max_size=3).map(_object),
        st.tuples(inner, inner).map(lambda t: f"({t[0]}) + ({t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"[{t[0]}, {t[1]}]"),
        inner.map(lambda e: f"({e}) | to_entries"),
        inner.map(lambda e: f"({e}) | from_entries?"),
        inner.map(lambda e: f"({e}) | with_entries(.)?"),
        inner.map(lambda e: f"[({e}) | .[]?]"),
        inner.map(lambda e: f"({e}) | keys?"),
        inner.map(lambda e: f"({e}) | tostring"),
        inner.map(lambda e: f"({e}) | tojson"),
        inner.map(lambda e: f'"<\\({e})>"'),
        inner.map(lambda e: f"[({e}) | .[]?] | add?"),
        inner.map(lambda e: f"({e}) | map_values(.)?"),
        inner.map(lambda e: f"({e}) | first(.[]?)"),
        st.tuples(inner, st.sampled_from(KEYS)).map(lambda t: f"({t[0]}) as $o | $o.{t[1]}?"),
    )


generated = st.recursive(
    st.one_of(objects_src.map(_object), st.sampled_from([".", ".x", "1", '"s"', "null", "[]", "{}"])),
    _extend,
    max_leaves=6,
)
inputs = st.sampled_from([None, {"x": {"b": 1, "a": 2}}, {"x": [{"zeta": 1, "alpha": 0}]}, {"x": "s"}])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expression=generated, data=inputs)
def test_generated_expressions_agree_and_libjq_keeps_every_object_sorted(expression: str, data: Any) -> None:
    assert_engines_agree(expression, data)
    try:
        LIBJQ.evaluate(expression, data)
        observer = f"[({expression}) | .. | objects | keys_unsorted == keys] | all"
        sorted_everywhere = _libjq_program(observer, data)
    except (JqError, ValueError):
        return
    assert sorted_everywhere == [True], expression


# --- the printer -----------------------------------------------------------------------------


def test_the_gojq_program_starts_with_the_helpers_and_prints_the_tree_faithfully() -> None:
    node = parse("{b: .x, a: 1} | keys_unsorted")
    program = gojq_program(node)
    assert program.startswith(HELPERS)
    assert parse(to_jq(node)) == node
