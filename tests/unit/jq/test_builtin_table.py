"""The builtin table is the one place that knows the builtins: the name check, the safety validator,
the fast path and the code generator all read it (karta.jq.builtin_table)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from karta.jq import builtin_table, operations
from karta.jq import syntax as A
from karta.jq.builtin_table import BUILTIN_ARITIES, BUILTINS, PREDEFINED_VARIABLES, Builtin
from karta.jq.codegen import Emitter, is_single
from karta.jq.fastpath import Unsupported, compile_node, run_paths
from karta.jq.fastpath import calls as fast_calls
from karta.jq.parser import parse
from karta.jq.safety import assignability_reason, check_safety, is_bounded
from karta.jq.scope_check import compile_check

SRC = Path(__file__).resolve().parents[3] / "src" / "karta"


def _call(name: str, arity: int) -> A.Call:
    return A.Call(name, tuple(A.Identity() for _ in range(arity)))


def _expected_issues(builtin: Builtin, arity: int) -> list[tuple[str, str]]:
    name = builtin.name
    if builtin.effect == "deletes":
        return [("error", f"{name} function is not allowed")]
    if builtin.excessive:
        return [("error", f"function '{name}' may produce excessive output and is not allowed")]
    if builtin.effect == "process":
        reason = "definitions must not affect or read the evaluating process"
        return [("error", f"function '{name}' is not allowed: {reason}")]
    if builtin.lacks_in_gojq(arity):
        reason = "the original implementation and KAI Scheduler would reject the definition"
        return [("error", f"function '{name}' is not in gojq: {reason}")]
    if builtin.effect == "environment" and arity == 0:
        return [("warning", f"'{name}' makes the result depend on the evaluating process")]
    if not builtin.terminates:
        return [("warning", f"function '{name}' may not terminate")]
    if arity in builtin.gojq_since:
        since = builtin.gojq_since[arity]
        reason = (
            "the original implementation and KAI Scheduler reject the definition when they are built with"
        )
        return [
            ("warning", f"function '{name}/{arity}' is in gojq only since {since}: {reason} an older gojq")
        ]
    return []


def test_the_name_check_reads_the_table() -> None:
    assert {b.name: b.arities for b in BUILTINS.values() if b.arities} == BUILTIN_ARITIES
    for builtin in BUILTINS.values():
        for arity in range(5):
            detail = compile_check(_call(builtin.name, arity))
            assert (detail is None) == (arity in builtin.arities), (builtin.name, arity)
    assert compile_check(A.Var("ENV")) is None and compile_check(A.Var("nope")) == "$nope is not defined"
    assert set(PREDEFINED_VARIABLES) == {"ENV", "__loc__"}


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_safety_rejections_and_warnings_follow_the_record(name: str) -> None:
    builtin = BUILTINS[name]
    for arity in sorted({0, 1, *builtin.arities}):
        issues = [(i.severity, i.reason) for i in check_safety(_call(name, arity))]
        assert issues == _expected_issues(builtin, arity), (name, arity)
        assert is_bounded(_call(name, arity)) == (not builtin.is_unbounded(arity)), (name, arity)
        reason = assignability_reason(_call(name, arity))
        assert (reason is None) == (arity in builtin.path_args), (name, arity)


def test_changing_a_record_changes_the_validator(monkeypatch: pytest.MonkeyPatch) -> None:
    length = BUILTINS["length"]
    assert check_safety(parse("length")) == [] and is_bounded(parse("length"))
    assert assignability_reason(parse("length")) is not None
    monkeypatch.setitem(
        BUILTINS, "length", length._replace(excessive=True, unbounded=True, path_args={0: ()})
    )
    assert [i.reason for i in check_safety(parse("length"))] == [
        "function 'length' may produce excessive output and is not allowed"
    ]
    assert not is_bounded(parse("length"))
    assert assignability_reason(parse("length")) is None
    monkeypatch.setitem(PREDEFINED_VARIABLES, "ENV", PREDEFINED_VARIABLES["ENV"]._replace(effect=""))
    assert check_safety(parse("$ENV")) == []


def test_the_fast_path_supports_exactly_what_the_table_says() -> None:
    table = {(b.name, arity) for b in BUILTINS.values() for arity in b.fast}
    assert table == fast_calls.SUPPORTED
    for builtin in BUILTINS.values():
        for arity in range(5):
            try:
                compile_node(_call(builtin.name, arity))
            except Unsupported:
                assert (builtin.name, arity) not in table
            else:
                assert (builtin.name, arity) in table
    assert run_paths(compile_node(parse("strings")), "s") == [[]]  # a selector keeps its path


def test_every_implementation_named_by_the_table_exists() -> None:
    kinds = set()
    for builtin in BUILTINS.values():
        for arity, fast in builtin.fast.items():
            kinds.add(fast.kind)
            if fast.kind == "builder":
                assert callable(getattr(fast_calls, fast.impl)), fast
                if fast.native:
                    assert callable(getattr(Emitter, f"_inline_{fast.impl}")), fast
            else:
                assert fast.impl in operations.__all__, fast
                assert fast.kind == "selector" or arity in (0, 1), fast
            assert not fast.inline or fast.kind == "value", fast
    assert kinds == {"value", "selector", "builder"}


def test_the_code_generator_reads_the_table() -> None:
    for builtin in BUILTINS.values():
        for arity in range(4):
            fast = builtin.fast.get(arity)
            # A value function with arguments: one output per output of its argument.
            single = fast is not None and (fast.single or (fast.kind == "value" and arity > 0))
            assert is_single(_call(builtin.name, arity)) == single
            if fast is not None and fast.kind == "value" and arity > 0:
                assert not is_single(A.Call(builtin.name, (A.Comma(A.Identity(), A.Identity()),)))
    for name in A.KEYWORD_CONSTANTS:
        assert is_single(A.Call(name))


def _name_lists(path: Path) -> list[tuple[int, list[str]]]:
    """Displays (set, list, tuple, dict keys) in ``path`` holding three or more builtin names."""
    tree = ast.parse(path.read_text())
    exports = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Set | ast.List | ast.Tuple) and id(node) not in exports:
            items: list[ast.expr | None] = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = list(node.keys)
        else:
            continue
        names = [e.value for e in items if isinstance(e, ast.Constant) and e.value in BUILTINS]
        if len(names) >= 3:
            found.append((node.lineno, names))
    return found


def test_no_other_module_keeps_a_list_of_builtin_names() -> None:
    table = Path(builtin_table.__file__).resolve()
    offenders = {
        str(path.relative_to(SRC)): lists
        for path in sorted(SRC.rglob("*.py"))
        if path.resolve() != table and (lists := _name_lists(path))
    }
    assert offenders == {}
