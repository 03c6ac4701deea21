"""Static checks over the complete jq syntax tree: safety, assignability and boundedness.

Owns the tree walker (:func:`direct_children`, every node kind and every child, pattern keys
included) and three checks:

* :func:`check_safety` – the expression safety validator of docs/spec/format.md#expression-safety / R9:
  rejected constructs (``del``, generators with excessive output, ``..``, modifying operators), our own
  bans (functions that read or affect the evaluating process, ``$__loc__``, ``import``/
  ``include``/``module``, recursive ``def``), what gojq lacks (builtins and formats the table
  marks, keywords and module prefixes as function names: the original and KAI Scheduler would
  reject the definition), and warnings (``env``/``$ENV`` as 14.2 asks, ``while``/``until``,
  builtins gojq added during 0.12.x).
  Builtin names are flagged even when a user ``def`` shadows them: definitions have no reason to
  reuse those names, and flagging by name keeps the check simple and safe. Which builtin falls
  under which rule is said by :mod:`karta.jq.builtin_table` (``effect``, ``excessive``,
  ``terminates``, ``path_args``, ``unbounded``), never here.
* :func:`is_assignable` / :func:`assignability_reason` – is the expression a jq path expression
  that ``path(...)`` and assignment accept (9.5, R6)?
* :func:`is_bounded` – a conservative proof that evaluation terminates quickly with bounded output
  on any input of bounded size; the evaluator runs untrusted unbounded expressions in a killable
  worker. ``*`` counts as bounded unless an operand is a string literal (string repetition; the
  evaluator also caps repetition), and ``reduce``/``foreach`` are bounded when their parts are.
"""

from __future__ import annotations

from typing import Final, Literal

from karta._records import record
from karta.jq import syntax
from karta.jq.builtin_table import BUILTINS, FORMATS, PREDEFINED_VARIABLES, Builtin

__all__ = [
    "SafetyIssue",
    "assignability_reason",
    "check_safety",
    "direct_children",
    "is_assignable",
    "is_bounded",
    "pattern_keys",
    "pattern_variables",
    "recursive_functions",
]


@record
class SafetyIssue:
    """One finding of :func:`check_safety`; ``reason`` is the text after ``failed validation:``."""

    severity: Literal["error", "warning"]
    reason: str


# --- the tree walker --------------------------------------------------------------------------


def pattern_variables(patterns: tuple[syntax.Pattern, ...]) -> set[str]:
    """All variable names a destructuring pattern (or its ``?//`` alternatives) binds."""
    out: set[str] = set()
    stack: list[syntax.Pattern] = list(patterns)
    while stack:
        p = stack.pop()
        if isinstance(p, syntax.VarPattern):
            out.add(p.name)
        elif isinstance(p, syntax.ArrayPattern):
            stack.extend(p.elements)
        else:
            for entry in p.entries:
                if entry.key_var is not None:
                    out.add(entry.key_var)
                if entry.pattern is not None:
                    stack.append(entry.pattern)
    return out


def pattern_keys(patterns: tuple[syntax.Pattern, ...]) -> list[syntax.Node]:
    """The key expressions (``"a":``, ``(e):``) of destructuring patterns, in source order."""
    keys: list[syntax.Node] = []
    stack: list[syntax.Pattern] = list(reversed(patterns))
    while stack:
        p = stack.pop()
        if isinstance(p, syntax.ArrayPattern):
            stack.extend(reversed(p.elements))
        elif isinstance(p, syntax.ObjectPattern):
            for entry in reversed(p.entries):
                if entry.pattern is not None:
                    stack.append(entry.pattern)
            keys.extend(e.key for e in p.entries if e.key is not None)
    return keys


def direct_children(node: syntax.Node) -> list[syntax.Node]:
    """The child nodes of ``node`` in source order (pattern key expressions included)."""
    if isinstance(node, syntax.Index):
        return [node.target, node.index]
    if isinstance(node, syntax.Pipe | syntax.Comma | syntax.Binary | syntax.Assign):
        return [node.left, node.right]
    if isinstance(node, syntax.Call):
        return list(node.args)
    if isinstance(node, syntax.Slice):
        return [n for n in (node.target, node.start, node.end) if n is not None]
    if isinstance(node, syntax.Iterate):
        return [node.target]
    if isinstance(node, syntax.Neg):
        return [node.operand]
    if isinstance(node, syntax.StringInterp):
        return [p for p in node.parts if isinstance(p, syntax.Node)]
    if isinstance(node, syntax.ArrayCons):
        return [] if node.body is None else [node.body]
    if isinstance(node, syntax.ObjectCons):
        out: list[syntax.Node] = []
        for entry in node.entries:
            out.append(entry.key)
            out.append(entry.value)
        return out
    if isinstance(node, syntax.If):
        out = [node.cond, node.then]
        for cond, then in node.elifs:
            out.append(cond)
            out.append(then)
        if node.else_ is not None:
            out.append(node.else_)
        return out
    if isinstance(node, syntax.Try):
        return [node.body] if node.catch is None else [node.body, node.catch]
    if isinstance(node, syntax.Bind):
        return [node.source, *pattern_keys(node.patterns), node.body]
    if isinstance(node, syntax.Reduce):
        return [node.source, *pattern_keys((node.pattern,)), node.init, node.update]
    if isinstance(node, syntax.Foreach):
        out = [node.source, *pattern_keys((node.pattern,)), node.init, node.update]
        if node.extract is not None:
            out.append(node.extract)
        return out
    if isinstance(node, syntax.FuncDef):
        return [node.body, node.rest]
    if isinstance(node, syntax.Label):
        return [node.body]
    if isinstance(node, syntax.ModuleDirective):
        return [] if node.body is None else [node.body]
    return []  # Identity, RecurseAll, Literal, Var, Format, Break


def _walk(node: syntax.Node) -> list[syntax.Node]:
    """All nodes of the tree in pre-order (source order), iteratively."""
    out: list[syntax.Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        children = direct_children(n)
        stack.extend(reversed(children))
    return out


# --- recursion -----------------------------------------------------------------------------


def recursive_functions(node: syntax.Node) -> list[syntax.FuncDef]:
    """The user ``def``s that call themselves, directly or through other user ``def``s.

    Calls are resolved by jq's lexical scoping (a ``def`` is visible in its own body and in the
    rest of its scope; parameters shadow functions of the same name and arity 0).
    """
    calls: dict[int, set[int]] = {}
    defs: dict[int, syntax.FuncDef] = {}
    # (node, scope, enclosing def id or None)
    Scope = dict[tuple[str, int], int | None]
    stack: list[tuple[syntax.Node, Scope, int | None]] = [(node, {}, None)]
    while stack:
        n, scope, current = stack.pop()
        if isinstance(n, syntax.FuncDef):
            fid = id(n)
            defs[fid] = n
            calls.setdefault(fid, set())
            outer = dict(scope)
            outer[(n.name, len(n.params))] = fid
            inner = dict(outer)
            for p in n.params:
                inner[(p.lstrip("$"), 0)] = None
            stack.append((n.rest, outer, current))
            stack.append((n.body, inner, fid))
            continue
        if isinstance(n, syntax.Call) and current is not None:
            target = scope.get((n.name, len(n.args)))
            if target is not None:
                calls[current].add(target)
        for child in direct_children(n):
            stack.append((child, scope, current))
    recursive: list[syntax.FuncDef] = []
    for fid, fdef in defs.items():
        seen: set[int] = set()
        todo = list(calls[fid])
        while todo:
            g = todo.pop()
            if g == fid:
                recursive.append(fdef)
                break
            if g not in seen:
                seen.add(g)
                todo.extend(calls.get(g, ()))
    return recursive


# --- safety --------------------------------------------------------------------------------


_GOJQ_REJECTS: Final = "the original implementation and KAI Scheduler would reject the definition"
_GOJQ_KEYWORDS: Final = frozenset(syntax.KEYWORD_CONSTANTS)  # keywords in gojq, names in jq


def _not_in_gojq(what: str) -> SafetyIssue:
    return SafetyIssue("error", f"{what} is not in gojq: {_GOJQ_REJECTS}")


def _gojq_since(what: str, version: str) -> SafetyIssue:
    return SafetyIssue(
        "warning",
        f"{what} is in gojq only since {version}: the original implementation and KAI Scheduler "
        "reject the definition when they are built with an older gojq",
    )


def _format_issues(name: str) -> list[SafetyIssue]:
    record = FORMATS.get(name)
    if record is None:
        return [_not_in_gojq(f"format '@{name}'")]
    return [_gojq_since(f"format '@{name}'", record.gojq_since)] if record.gojq_since else []


def _node_issues(node: syntax.Node, recursive: set[int], user: set[tuple[str, int]]) -> list[SafetyIssue]:
    if isinstance(node, syntax.Call):
        builtin = BUILTINS.get(node.name)
        arity = len(node.args)
        issues = [] if builtin is None else _call_issues(builtin, arity, (node.name, arity) in user)
        if node.name == "format" and arity == 1 and (node.name, arity) not in user:
            arg = node.args[0]
            if isinstance(arg, syntax.Literal) and isinstance(arg.value, str):
                issues.extend(_format_issues(arg.value))
        return issues
    if isinstance(node, syntax.Format):
        return _format_issues(node.name)
    if isinstance(node, syntax.StringInterp) and node.fmt is not None:
        return _format_issues(node.fmt)
    if isinstance(node, syntax.RecurseAll):
        return [SafetyIssue("error", "recursive descent operator '..' is not allowed")]
    if isinstance(node, syntax.Assign):
        return [SafetyIssue("error", f"modifying operator '{node.op}' is not allowed")]
    if isinstance(node, syntax.Var):
        variable = PREDEFINED_VARIABLES.get(node.name)
        if variable is None or not variable.effect:
            return []
        if variable.effect == "environment":
            return [
                SafetyIssue("warning", f"'${node.name}' makes the result depend on the evaluating process")
            ]
        return [SafetyIssue("error", f"variable '${node.name}' is not allowed")]
    if isinstance(node, syntax.ModuleDirective):
        return [SafetyIssue("error", "import and include are not allowed")]
    if isinstance(node, syntax.FuncDef):
        issues = []
        if id(node) in recursive:
            issues.append(SafetyIssue("error", f"recursive function '{node.name}' is not allowed"))
        names = [node.name, *(p.lstrip("$") for p in node.params)]
        for name in names:
            if name in _GOJQ_KEYWORDS or "::" in name:
                issues.append(
                    SafetyIssue("error", f"gojq does not accept '{name}' as a function name: {_GOJQ_REJECTS}")
                )
        return issues
    return []


def _call_issues(builtin: Builtin, arity: int, user_defined: bool) -> list[SafetyIssue]:
    # Flagged by name whatever the arity (a user ``def`` of the name included: see the module
    # docstring), except the environment read, which is the call without arguments, and what gojq
    # lacks: a user ``def`` of that name and arity is what gojq calls.
    name = builtin.name
    if builtin.effect == "deletes":
        return [SafetyIssue("error", f"{name} function is not allowed")]
    if builtin.excessive:
        return [SafetyIssue("error", f"function '{name}' may produce excessive output and is not allowed")]
    if builtin.effect == "process":
        return [
            SafetyIssue(
                "error",
                f"function '{name}' is not allowed: definitions must not affect or read the "
                "evaluating process",
            )
        ]
    if builtin.lacks_in_gojq(arity) and not user_defined:
        return [_not_in_gojq(f"function '{name}'")]
    if builtin.effect == "environment" and arity == 0:
        return [SafetyIssue("warning", f"'{name}' makes the result depend on the evaluating process")]
    if not builtin.terminates:
        return [SafetyIssue("warning", f"function '{name}' may not terminate")]
    since = builtin.gojq_since.get(arity)
    if since and not user_defined:
        return [_gojq_since(f"function '{name}/{arity}'", since)]
    return []


def _user_functions(nodes: list[syntax.Node]) -> set[tuple[str, int]]:
    """Every (name, arity) a user ``def`` or a parameter defines anywhere in the tree."""
    out: set[tuple[str, int]] = set()
    for n in nodes:
        if isinstance(n, syntax.FuncDef):
            out.add((n.name, len(n.params)))
            out.update((p.lstrip("$"), 0) for p in n.params)
    return out


def check_safety(node: syntax.Node) -> list[SafetyIssue]:
    """Every forbidden or suspicious construct anywhere in the tree, in tree-walk order.

    Identical issues (same severity and reason) are reported once.
    """
    recursive = {id(f) for f in recursive_functions(node)}
    nodes = _walk(node)
    user = _user_functions(nodes)
    issues: list[SafetyIssue] = []
    seen: set[SafetyIssue] = set()
    for n in nodes:
        for issue in _node_issues(n, recursive, user):
            if issue not in seen:
                seen.add(issue)
                issues.append(issue)
    return issues


# --- assignability -------------------------------------------------------------------------


class _Binding:
    """What a function name means where it is called.

    ``kind`` is ``"def"`` (a user def: ``node`` is its body, ``env`` its defining scope),
    ``"arg"`` (a filter parameter: ``node`` is the argument, ``env`` the caller's scope) or
    ``"value"`` (a ``$param`` used as a filter: it yields a value, never a path).
    """

    __slots__ = ("env", "kind", "node", "params")

    def __init__(self, kind: str, node: syntax.Node | None, params: tuple[str, ...], env: _Env) -> None:
        self.kind = kind
        self.node = node
        self.params = params
        self.env = env


_Env = dict[tuple[str, int], _Binding]

_MAX_DEPTH: Final = 200


def _path_reason(node: syntax.Node, env: _Env, depth: int) -> str | None:
    if depth > _MAX_DEPTH:
        return "the expression is too deeply nested (or recursive) to check"
    d = depth + 1
    if isinstance(node, syntax.Identity | syntax.RecurseAll | syntax.Break):
        return None
    if isinstance(node, syntax.Index | syntax.Slice | syntax.Iterate):
        return _path_reason(node.target, env, d)
    if isinstance(node, syntax.Pipe | syntax.Comma):
        return _path_reason(node.left, env, d) or _path_reason(node.right, env, d)
    if isinstance(node, syntax.Binary):
        if node.op == "//":
            return _path_reason(node.left, env, d) or _path_reason(node.right, env, d)
        return f"the result of '{node.op}' is a computed value, not a path"
    if isinstance(node, syntax.If):
        branches = [node.then, *(t for _, t in node.elifs)]
        if node.else_ is not None:
            branches.append(node.else_)
        for branch in branches:
            reason = _path_reason(branch, env, d)
            if reason:
                return reason
        return None
    if isinstance(node, syntax.Try):
        if node.catch is not None and not (
            isinstance(node.catch, syntax.Call) and node.catch.name == "empty"
        ):
            return "a catch handler's result is not a path"
        return _path_reason(node.body, env, d)
    if isinstance(node, syntax.Label):
        return _path_reason(node.body, env, d)
    if isinstance(node, syntax.Bind):
        if not all(isinstance(p, syntax.VarPattern) for p in node.patterns):
            return "destructuring bindings cannot be used in a path"
        return _path_reason(node.body, env, d)
    if isinstance(node, syntax.FuncDef):
        inner = dict(env)
        inner[(node.name, len(node.params))] = _Binding("def", node.body, node.params, inner)
        return _path_reason(node.rest, inner, d)
    if isinstance(node, syntax.Call):
        return _call_reason(node, env, d)
    if isinstance(node, syntax.ModuleDirective):
        return None if node.body is None else _path_reason(node.body, env, d)
    if isinstance(node, syntax.Literal):
        return "a literal is a value, not a path"
    if isinstance(node, syntax.Var):
        return "a variable is not a path of the input"
    if isinstance(node, syntax.ArrayCons | syntax.ObjectCons):
        return "array or object construction is not a path"
    if isinstance(node, syntax.StringInterp | syntax.Format):
        return "a string is a value, not a path"
    if isinstance(node, syntax.Neg):
        return "arithmetic is a computed value, not a path"
    if isinstance(node, syntax.Assign):
        return f"the result of '{node.op}' is not a path"
    if isinstance(node, syntax.Reduce | syntax.Foreach):
        return "reduce and foreach results are not paths"
    return "not a path expression"


def _call_reason(node: syntax.Call, env: _Env, depth: int) -> str | None:
    binding = env.get((node.name, len(node.args)))
    if binding is not None:
        if binding.kind == "value" or binding.node is None:
            return f"'${node.name}' is a value, not a path"
        if binding.kind == "arg":
            return _path_reason(binding.node, binding.env, depth + 1)
        call_env = dict(binding.env)
        for param, arg in zip(binding.params, node.args, strict=True):
            if param.startswith("$"):
                call_env[(param[1:], 0)] = _Binding("value", None, (), env)
            else:
                call_env[(param, 0)] = _Binding("arg", arg, (), env)
        return _path_reason(binding.node, call_env, depth + 1)
    builtin = BUILTINS.get(node.name)
    spec = None if builtin is None else builtin.path_args.get(len(node.args))
    if spec is None:
        return f"'{node.name}' computes a value, not a path"
    for i in spec:
        reason = _path_reason(node.args[i], env, depth + 1)
        if reason:
            return reason
    return None


def assignability_reason(node: syntax.Node) -> str | None:
    """Why ``node`` is not a jq path expression (a short phrase), or None if it is one."""
    return _path_reason(node, {}, 0)


def is_assignable(node: syntax.Node) -> bool:
    """True if values can be written through ``node`` (``path(node)`` accepts it)."""
    return assignability_reason(node) is None


# --- boundedness ---------------------------------------------------------------------------


def _is_string_value(node: syntax.Node) -> bool:
    return (isinstance(node, syntax.Literal) and isinstance(node.value, str)) or isinstance(
        node, syntax.StringInterp | syntax.Format
    )


def _unbounded_node(node: syntax.Node) -> bool:
    if isinstance(node, syntax.Call):
        builtin = BUILTINS.get(node.name)
        return builtin is not None and builtin.is_unbounded(len(node.args))
    if isinstance(node, syntax.RecurseAll | syntax.ModuleDirective):
        return True
    if isinstance(node, syntax.Var):
        variable = PREDEFINED_VARIABLES.get(node.name)
        return variable is not None and variable.unbounded
    if isinstance(node, syntax.Binary) and node.op == "*":
        return _is_string_value(node.left) or _is_string_value(node.right)
    return False


def is_bounded(node: syntax.Node) -> bool:
    """True if evaluation provably ends quickly with bounded output on any bounded input."""
    if any(_unbounded_node(n) for n in _walk(node)):
        return False
    return not recursive_functions(node)
