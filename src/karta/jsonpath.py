"""kubectl's JSONPath dialect, the subset ``kli`` offers, over JSON data (dicts, lists, scalars).

Two entry points: :func:`parse_template` for ``-o jsonpath=TEMPLATE`` (text with ``{...}``
actions, rendered by :meth:`Template.render`) and :func:`parse_path` for one path
(``custom-columns`` cells and ``--sort-by``; kubectl's relaxed form: ``{.a.b}``, ``.a.b`` or
``a.b``), whose :meth:`Path.find` returns every value it reaches.

The subset, as kubectl spells it:

- ``$`` the root, ``@`` (or ``.`` alone) the current object; ``.name`` and ``['name']`` a field
  (``\\.`` escapes a dot in a name: ``.metadata.annotations.kubernetes\\.io/name``);
- ``..name`` every ``name`` field below (recursive descent); ``*``, ``.*`` or ``[*]`` every
  element of a list or value of a mapping;
- ``[n]`` (negative counts from the end), ``[start:end]`` and ``[start:end:step]`` (step > 0),
  ``['a','b']`` and ``[0,2]`` unions;
- ``[?(@.path)]`` elements where the path exists, ``[?(@.path OP literal)]`` with ``==``, ``!=``,
  ``<``, ``<=``, ``>``, ``>=`` and a number, a quoted string, ``true``, ``false`` or ``null``;
- in templates: ``{range PATH}...{end}`` (the body once per value, lists flattened one level),
  ``{"text"}`` or ``{'text'}`` literals with ``\\n``, ``\\t``, ``\\r``, ``\\\\`` and quote escapes;
  text outside actions is printed as it is.

Evaluation follows kubectl with its default ``--allow-missing-template-keys``: a field that is
missing, an index out of range or a step through a value of the wrong type yields nothing
(never an error). Several values of one action are joined by a space; a string prints as it is,
anything else as compact JSON with sorted keys (``null``, ``true``, ``{"a":"1"}``). Anything else
(functions such as ``length()``, ``=~``, ``&&``, arithmetic, comparing two paths) is a
:class:`~karta.errors.JsonPathError` that quotes the template and says what is not supported.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from karta.errors import JsonPathError

__all__ = ["Path", "Template", "parse_path", "parse_template", "render_value"]


# ------------------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class _Field:
    name: str


@dataclass(frozen=True)
class _Names:
    names: tuple[str, ...]


@dataclass(frozen=True)
class _Wildcard:
    pass


@dataclass(frozen=True)
class _Descend:
    """``..``: the value and everything below it; the next step picks among them."""


@dataclass(frozen=True)
class _Indices:
    indices: tuple[int, ...]


@dataclass(frozen=True)
class _Slice:
    start: int | None
    stop: int | None
    step: int


@dataclass(frozen=True)
class _Filter:
    path: Path
    op: str | None  # None: the path exists
    literal: Any = None


_Step: TypeAlias = _Field | _Names | _Wildcard | _Descend | _Indices | _Slice | _Filter


@dataclass(frozen=True)
class Path:
    """One parsed path: :meth:`find` gives every value it reaches from ``data``."""

    source: str
    absolute: bool  # starts at the root ($) rather than at the current object
    steps: tuple[_Step, ...]

    def find(self, data: Any, *, root: Any = None) -> list[Any]:
        """The values this path reaches in ``data`` (``root`` is what ``$`` names; default
        ``data``), in document order; none when it reaches nothing."""
        values = [data if not self.absolute or root is None else root]
        for step in self.steps:
            values = list(_apply(step, values, root if root is not None else data))
            if not values:
                break
        return values


def _apply(step: _Step, values: list[Any], root: Any) -> Iterator[Any]:
    for value in values:
        if isinstance(step, _Field):
            if isinstance(value, dict) and step.name in value:
                yield value[step.name]
        elif isinstance(step, _Names):
            if isinstance(value, dict):
                yield from (value[n] for n in step.names if n in value)
        elif isinstance(step, _Wildcard):
            yield from _children(value)
        elif isinstance(step, _Descend):
            yield from _descendants(value)
        elif isinstance(step, _Indices):
            if isinstance(value, list):
                for i in step.indices:
                    if -len(value) <= i < len(value):
                        yield value[i]
        elif isinstance(step, _Slice):
            if isinstance(value, list):
                yield from value[step.start : step.stop : step.step]
        elif isinstance(value, list):
            yield from (item for item in value if _holds(step, item, root))


def _children(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from value.values()
    elif isinstance(value, list):
        yield from value


def _descendants(value: Any) -> Iterator[Any]:
    """``value`` and every value nested in it, depth first, without recursion (deep data)."""
    stack = [value]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, dict | list):
            stack.extend(reversed(list(_children(current))))


def _holds(step: _Filter, item: Any, root: Any) -> bool:
    found = step.path.find(item, root=root)
    if step.op is None:
        return bool(found)
    return any(_compare(value, step.op, step.literal) for value in found)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(value: Any, op: str, literal: Any) -> bool:
    if op in ("==", "!="):
        same = (value == literal and _number(value) == _number(literal)) and (
            isinstance(value, bool) == isinstance(literal, bool)
        )
        return same if op == "==" else not same
    if _number(value) and _number(literal):
        pair: tuple[Any, Any] = (value, literal)
    elif isinstance(value, str) and isinstance(literal, str):
        pair = (value, literal)
    else:
        return False  # ordering values of different types: no match
    return _ORDER[op](*pair)


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


# ------------------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Print:
    path: Path


@dataclass(frozen=True)
class _Range:
    path: Path
    body: tuple[_Node, ...]


_Node: TypeAlias = _Text | _Print | _Range


@dataclass(frozen=True)
class Template:
    """A parsed ``-o jsonpath=`` template."""

    source: str
    nodes: tuple[_Node, ...]

    def render(self, data: Any) -> str:
        out: list[str] = []
        _render(self.nodes, data, data, out)
        return "".join(out)


def _render(nodes: Sequence[_Node], current: Any, root: Any, out: list[str]) -> None:
    for node in nodes:
        if isinstance(node, _Text):
            out.append(node.text)
        elif isinstance(node, _Print):
            out.append(" ".join(render_value(v) for v in node.path.find(current, root=root)))
        else:
            for value in node.path.find(current, root=root):
                for item in value if isinstance(value, list) else [value]:
                    _render(node.body, item, root, out)


def render_value(value: Any) -> str:
    """One value as kubectl prints it: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False, default=str)


def parse_template(source: str) -> Template:
    """Parse a ``-o jsonpath=`` template (see the module docstring); a syntax error or a
    construct outside the subset raises :class:`JsonPathError` quoting ``source``."""
    stack: list[tuple[Path | None, list[_Node]]] = [(None, [])]
    position = 0
    while position < len(source):
        start = source.find("{", position)
        if start < 0:
            stack[-1][1].append(_Text(source[position:]))
            break
        if start > position:
            stack[-1][1].append(_Text(source[position:start]))
        end = _action_end(source, start)
        if end < 0:
            raise _error(source, f"the action at character {start + 1} is not closed with '}}'")
        action = source[start + 1 : end].strip()
        position = end + 1
        if not action:
            raise _error(source, f"empty action '{{}}' at character {start + 1}")
        if action == "end":
            if len(stack) == 1:
                raise _error(source, "{end} without a {range ...} to close")
            path, body = stack.pop()
            assert path is not None
            stack[-1][1].append(_Range(path, tuple(body)))
        elif action.startswith("range ") or action == "range":
            path_text = action[len("range") :].strip()
            if not path_text:
                raise _error(source, "{range} needs a path, as in {range .items[*]}")
            stack.append((_parse_path(path_text, source), []))
        elif action[0] in "\"'":
            stack[-1][1].append(_Text(_literal_text(action, source)))
        else:
            stack[-1][1].append(_Print(_parse_path(action, source)))
    if len(stack) > 1:
        raise _error(source, "a {range ...} is not closed with {end}")
    return Template(source, tuple(stack[0][1]))


def parse_path(source: str) -> Path:
    """Parse one path in kubectl's relaxed form (``{.a.b}``, ``.a.b`` or ``a.b``); errors as
    :func:`parse_template`."""
    text = source.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if not text:
        raise _error(source, "the path is empty; expected a field path such as .metadata.name")
    if "{" in text or "}" in text:
        raise _error(source, "expected one path, not a template with several actions")
    return _parse_path(text, source)


def _error(source: str, why: str) -> JsonPathError:
    return JsonPathError(f"invalid JSONPath {source!r}: {why}")


def _action_end(source: str, start: int) -> int:
    """The index of the ``}`` closing the action that opens at ``start``, or -1."""
    end = _outside_quotes(source, start + 1, "{}")
    return end if end >= 0 and source[end] == "}" else -1


def _outside_quotes(text: str, start: int, stops: str) -> int:
    """The index of the first character of ``stops`` at or after ``start`` that is not inside a
    quoted string (backslash escapes respected), or -1."""
    quote = ""
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in stops:
            return i
        i += 1
    return -1


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


def _read_quoted(text: str, start: int, source: str) -> tuple[str, int]:
    """The string literal opening at ``text[start]`` and the index after its closing quote."""
    quote = text[start]
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt not in _ESCAPES:
                raise _error(
                    source, f"unknown escape '\\{nxt}' in a string (known: \\n \\t \\r \\\\ \\\" \\')"
                )
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        if ch == quote:
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise _error(source, f"the string starting with {text[start:]!r} is not closed with {quote}")


def _literal_text(action: str, source: str) -> str:
    text, after = _read_quoted(action, 0, source)
    if action[after:].strip():
        raise _error(source, f"unexpected {action[after:].strip()!r} after the string in {{{action}}}")
    return text


# ------------------------------------------------------------------------------------- paths

_NAME_STOP = set(".[]{}(),'\" \t=!<>&|+*?@$~")
_OPS = ("==", "!=", "<=", ">=", "<", ">")


def _parse_path(text: str, source: str) -> Path:
    parser = _PathParser(text, source)
    return parser.parse()


class _PathParser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.i = 0

    def fail(self, why: str) -> JsonPathError:
        return _error(self.source, why)

    def parse(self, *, stop: str = "") -> Path:
        """A path from the current position up to the end or to a character of ``stop``."""
        start = self.i
        absolute = False
        steps: list[_Step] = []
        text = self.text
        if self.i < len(text) and text[self.i] in "$@":
            absolute = text[self.i] == "$"
            self.i += 1
        elif self.i < len(text) and text[self.i] not in ".[" and text[self.i] not in stop:
            steps.append(_Field(self._name()))  # relaxed: a leading field without its dot
        while self.i < len(text) and text[self.i] not in stop:
            ch = text[self.i]
            if text.startswith("..", self.i):
                self.i += 2
                steps.append(_Descend())
                if self.i < len(text) and text[self.i] == "*":
                    self.i += 1
                    steps.append(_Wildcard())
                elif self.i < len(text) and text[self.i] == "[":
                    steps.append(self._bracket())
                else:
                    steps.append(_Field(self._name()))
            elif ch == ".":
                self.i += 1
                if self.i >= len(text) or text[self.i] in stop:
                    break  # "." alone, or a trailing dot: the current value
                if text[self.i] == "*":
                    self.i += 1
                    steps.append(_Wildcard())
                elif text[self.i] == "[":
                    steps.append(self._bracket())
                else:
                    steps.append(_Field(self._name()))
            elif ch == "[":
                steps.append(self._bracket())
            else:
                raise self._unexpected()
        return Path(text[start : self.i], absolute, tuple(steps))

    def _unexpected(self) -> JsonPathError:
        text, i = self.text, self.i
        rest = text[i:]
        if rest.startswith("=~"):
            return self.fail("regular expressions (=~) are not supported")
        if rest.startswith(("&&", "||")):
            return self.fail("combining filters with && or || is not supported; use one condition")
        if rest[0] in "+-*/%":
            return self.fail(f"arithmetic ({rest[0]!r}) is not supported")
        if rest[0] == "(":
            return self.fail("functions (such as length()) are not supported")
        return self.fail(f"unexpected {rest[0]!r} at {text[: i + 1]!r}")

    def _name(self) -> str:
        text = self.text
        out: list[str] = []
        while self.i < len(text):
            ch = text[self.i]
            if ch == "\\" and self.i + 1 < len(text) and text[self.i + 1] == ".":
                out.append(".")
                self.i += 2
                continue
            if ch in _NAME_STOP:
                break
            out.append(ch)
            self.i += 1
        if not out:
            if self.i < len(text):
                raise self._unexpected()
            raise self.fail(f"a field name is missing after {text!r}")
        if self.i < len(text) and text[self.i] == "(":
            raise self.fail(f"functions ({''.join(out)}()) are not supported")
        return "".join(out)

    def _bracket(self) -> _Step:
        text = self.text
        assert text[self.i] == "["
        self.i += 1
        if text.startswith("?(", self.i):
            self.i += 2
            step = self._filter()
            self._expect(")")
            self._expect("]")
            return step
        end = self._bracket_end()
        inner = text[self.i : end].strip()
        self.i = end + 1
        if inner == "*":
            return _Wildcard()
        if not inner:
            raise self.fail("empty brackets '[]'; expected an index, a slice, a 'name', * or a ?(filter)")
        if inner[0] in "\"'":
            return self._names(inner)
        if ":" in inner:
            return self._slice(inner)
        try:
            return _Indices(tuple(int(part) for part in inner.split(",")))
        except ValueError:
            raise self.fail(
                f"[{inner}] is not an index, a slice, a quoted 'name', * or a ?(filter)"
            ) from None

    def _bracket_end(self) -> int:
        end = _outside_quotes(self.text, self.i, "]")
        if end < 0:
            raise self.fail(f"'[' at {self.text[: self.i]!r} is not closed with ']'")
        return end

    def _names(self, inner: str) -> _Step:
        names: list[str] = []
        j = 0
        while True:
            name, j = _read_quoted(inner, j, self.source)
            names.append(name)
            rest = inner[j:].lstrip()
            if not rest:
                break
            if not rest.startswith(","):
                raise self.fail(f"unexpected {rest!r} in [{inner}]; expected ',' between names")
            rest = rest[1:].lstrip()
            if not rest or rest[0] not in "\"'":
                raise self.fail(f"[{inner}]: expected a quoted name after ','")
            j = len(inner) - len(rest)
        return _Field(names[0]) if len(names) == 1 else _Names(tuple(names))

    def _slice(self, inner: str) -> _Slice:
        parts = [p.strip() for p in inner.split(":")]
        if len(parts) > 3:
            raise self.fail(f"[{inner}]: a slice is [start:end] or [start:end:step]")
        try:
            numbers = [int(p) if p else None for p in parts]
        except ValueError:
            raise self.fail(f"[{inner}]: slice bounds must be integers") from None
        step = numbers[2] if len(numbers) == 3 and numbers[2] is not None else 1
        if step <= 0:
            raise self.fail(f"[{inner}]: the step of a slice must be positive")
        return _Slice(numbers[0], numbers[1], step)

    def _filter(self) -> _Filter:
        self._spaces()
        if not self.text.startswith("@", self.i):
            raise self.fail('a filter starts with @, as in [?(@.status.phase=="Running")]')
        path = self.parse(stop=")=!<> \t&|~")
        self._spaces()
        op = next((o for o in _OPS if self.text.startswith(o, self.i)), None)
        if op is None:
            if self.i < len(self.text) and self.text[self.i] != ")":
                raise self._unexpected()
            return _Filter(path, None)
        self.i += len(op)
        self._spaces()
        literal = self._literal()
        self._spaces()
        if self.i < len(self.text) and self.text[self.i] != ")":
            raise self._unexpected()
        return _Filter(path, op, literal)

    def _literal(self) -> Any:
        text = self.text
        if self.i < len(text) and text[self.i] in "\"'":
            value, self.i = _read_quoted(text, self.i, self.source)
            return value
        if self.i < len(text) and text[self.i] in "@$":
            raise self.fail("comparing two paths is not supported; compare a path with a literal")
        j = self.i
        while j < len(text) and text[j] not in ") \t":
            j += 1
        word = text[self.i : j]
        self.i = j
        if word in ("true", "false"):
            return word == "true"
        if word == "null":
            return None
        try:
            return int(word)
        except ValueError:
            pass
        try:
            number = float(word)
        except ValueError:
            raise self.fail(
                f"{word!r} is not a literal: use a number, a quoted string, true, false or null"
            ) from None
        if not math.isfinite(number):
            raise self.fail(f"{word!r} is not a finite number")
        return number

    def _spaces(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1

    def _expect(self, ch: str) -> None:
        self._spaces()
        if self.i >= len(self.text) or self.text[self.i] != ch:
            got = repr(self.text[self.i]) if self.i < len(self.text) else "the end"
            raise self.fail(f"expected {ch!r} in the filter, got {got}")
        self.i += 1
