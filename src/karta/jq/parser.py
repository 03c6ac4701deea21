"""The jq parser: expression text to the syntax tree of :mod:`karta.jq.syntax`.

A recursive-descent parser for nested constructs, with iterative precedence climbing over explicit
operand and operator stacks for the operators, following the grammar of jq 1.7/1.8 (lowest to
highest precedence): ``|`` (right-assoc; ``def``, ``label`` and ``as`` bindings extend to the end
of the enclosing pipe), ``,``, ``//`` (right-assoc), the assignment operators (non-assoc), ``or``,
``and``, comparisons (non-assoc), ``+ -``, ``* / %``, unary minus, then terms with their postfix
suffixes (``.x``, ``[e]``, ``[a:b]``, ``[]``, ``?``).

Object values are jq's restricted form: any expression without a top-level ``,``, ``def``,
``label`` or ``as`` binding (``{a: .b | length, c: .d // 1}``). ``try`` takes a postfix term as
body and handler (``try .a + 1`` is ``(try .a) + 1``), as in jq.

Limits (karta's, not jq's; docs/architecture/jq-engines.md): an expression is at most
:data:`MAX_EXPRESSION_LENGTH` characters (65 536) and nests at most :data:`MAX_NESTING` levels
(128); beyond either, a :class:`JqParseError` says so. Chains do not nest: a 10 000-term ``+``,
``and``, ``,``, ``//`` or ``|`` chain, or a long run of suffixes, parses without recursion. So the
parser never needs more than a few Python frames per nesting level, and the stack of everything
that walks the tree recursively stays bounded by the nesting limit, except for the depth of long
chains (consumers that recurse over chains handle ``RecursionError`` themselves).

Shorthands are desugared as documented in :mod:`karta.jq.syntax`. Errors are raised as
:class:`karta.errors.JqParseError` with 1-based line and column of the offending token.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final, NamedTuple

from karta.errors import JqParseError
from karta.jq import syntax
from karta.jq.lexer import (
    EOF,
    FIELD,
    FORMAT,
    IDENT,
    KEYWORD,
    NUMBER,
    STRING,
    VAR,
    LexError,
    Token,
    tokenize,
)

__all__ = ["MAX_EXPRESSION_LENGTH", "MAX_NESTING", "parse", "parse_cached", "shown"]

MAX_EXPRESSION_LENGTH: Final = 65_536
"""The longest expression accepted, in characters (a :class:`JqParseError` above it)."""

MAX_NESTING: Final = 128
"""The deepest nesting accepted: nested pipes (parentheses, brackets, object entries, ``if``
branches, call arguments, string interpolations, function bodies), ``try``/``reduce``/``foreach``
and destructuring patterns each add a level; chains of operators, suffixes, ``|``, ``def``,
``label`` and ``as`` bindings do not."""

_COMMA: Final = 2
_ASSIGN: Final = 4
_COMPARE: Final = 7
_MULTIPLY: Final = 9
_NEG: Final = 8.5  # unary minus: its operand takes ``* / %`` (``-a * b`` is ``-(a * b)``)

_LEFT: Final = 0
_RIGHT: Final = 1
_NONASSOC: Final = 2

# operator -> (level, associativity); ``|`` (level 1) is handled by ``_pipe``.
_BINARY: Final[dict[str, tuple[int, int]]] = {
    ",": (_COMMA, _LEFT),
    "//": (3, _RIGHT),
    "=": (_ASSIGN, _NONASSOC),
    "|=": (_ASSIGN, _NONASSOC),
    "+=": (_ASSIGN, _NONASSOC),
    "-=": (_ASSIGN, _NONASSOC),
    "*=": (_ASSIGN, _NONASSOC),
    "/=": (_ASSIGN, _NONASSOC),
    "%=": (_ASSIGN, _NONASSOC),
    "//=": (_ASSIGN, _NONASSOC),
    "or": (5, _LEFT),
    "and": (6, _LEFT),
    "==": (_COMPARE, _NONASSOC),
    "!=": (_COMPARE, _NONASSOC),
    "<": (_COMPARE, _NONASSOC),
    "<=": (_COMPARE, _NONASSOC),
    ">": (_COMPARE, _NONASSOC),
    ">=": (_COMPARE, _NONASSOC),
    "+": (8, _LEFT),
    "-": (8, _LEFT),
    "*": (_MULTIPLY, _LEFT),
    "/": (_MULTIPLY, _LEFT),
    "%": (_MULTIPLY, _LEFT),
}


class _SyntaxError(Exception):
    def __init__(self, detail: str, pos: int) -> None:
        super().__init__(detail)
        self.detail = detail
        self.pos = pos


def _op_of(tok: Token) -> str:
    if tok.kind == KEYWORD and tok.value in ("and", "or"):
        return str(tok.value)
    return tok.kind


class _Pending(NamedTuple):
    """An operator waiting on the operator stack: its text, level, associativity, position."""

    op: str
    level: float
    assoc: int
    pos: int


def _reduce(operands: list[syntax.Node], operators: list[_Pending], bound: float) -> syntax.Node:
    """Apply the stacked operators of level ``>= bound``; return the top operand."""
    while operators and operators[-1].level >= bound:
        pending = operators.pop()
        right = operands.pop()
        if pending.level == _NEG:
            operands.append(syntax.Neg(right, pos=pending.pos))
            continue
        left = operands.pop()
        if pending.level == _COMMA:
            operands.append(syntax.Comma(left, right, pos=left.pos))
        elif pending.level == _ASSIGN:
            operands.append(syntax.Assign(pending.op, left, right, pos=left.pos))
        else:
            operands.append(syntax.Binary(pending.op, left, right, pos=left.pos))
    return operands[-1]


def _finish_with(
    operands: list[syntax.Node],
    operators: list[_Pending],
    head: Callable[[syntax.Node], syntax.Node],
    rest: syntax.Node,
) -> syntax.Node:
    operands.append(head(rest))
    return _reduce(operands, operators, 0)


def _pipe_of(left: syntax.Node, right: syntax.Node) -> syntax.Node:
    return syntax.Pipe(left, right, pos=left.pos)


def _bind_of(term: syntax.Node, patterns: tuple[syntax.Pattern, ...], body: syntax.Node) -> syntax.Node:
    return syntax.Bind(term, patterns, body, pos=term.pos)


def _funcdef_of(
    name: str, params: tuple[str, ...], body: syntax.Node, pos: int, rest: syntax.Node
) -> syntax.Node:
    return syntax.FuncDef(name, params, body, rest, pos=pos)


def _label_of(name: str, pos: int, body: syntax.Node) -> syntax.Node:
    return syntax.Label(name, body, pos=pos)


class _Parser:
    __slots__ = ("depth", "i", "tokens")

    def __init__(self, tokens: list[Token], depth: int = 0) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = depth

    # --- token helpers ----------------------------------------------------------------------

    def peek(self) -> Token:
        return self.tokens[self.i]

    def peek_at(self, k: int) -> Token:
        j = min(self.i + k, len(self.tokens) - 1)
        return self.tokens[j]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != EOF:
            self.i += 1
        return tok

    def is_keyword(self, word: str) -> bool:
        tok = self.tokens[self.i]
        return tok.kind == KEYWORD and tok.value == word

    def unexpected(self, tok: Token | None = None, expected: str | None = None) -> _SyntaxError:
        tok = tok or self.peek()
        detail = f"unexpected {tok.describe()}"
        if expected:
            detail += f", expected {expected}"
        return _SyntaxError(detail, tok.pos)

    def expect(self, kind: str, what: str | None = None) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            raise self.unexpected(tok, what or f"'{kind}'")
        return self.advance()

    def expect_keyword(self, word: str) -> Token:
        if not self.is_keyword(word):
            raise self.unexpected(expected=f"'{word}'")
        return self.advance()

    # --- program ----------------------------------------------------------------------------

    def program(self) -> syntax.Node:
        """Module directives (``module``/``import``/``include``), then the top-level pipe."""
        directives: list[tuple[str, str, int]] = []
        while True:
            tok = self.peek()
            if tok.kind == EOF:
                if directives:
                    raise _SyntaxError("top-level program not given", tok.pos)
                raise _SyntaxError("empty expression (top-level program not given)", tok.pos)
            if not (tok.kind == KEYWORD and tok.value in ("module", "import", "include")):
                break
            directives.append(self.directive())
        node = self.pipe()
        if self.peek().kind != EOF:
            raise self.unexpected(expected="end of expression")
        for word, path, pos in reversed(directives):
            node = syntax.ModuleDirective(word, path, node, pos=pos)
        return node

    def directive(self) -> tuple[str, str, int]:
        """One directive up to its ``;``: (word, path, position)."""
        tok = self.advance()
        word = str(tok.value)
        path = ""
        if word == "module":
            if self.peek().kind != "{":
                raise self.unexpected(expected="module metadata object")
            self.object_cons()
        else:
            path_tok = self.expect(STRING, "a module path string")
            parts = path_tok.value
            assert isinstance(parts, tuple)
            if len(parts) != 1 or not isinstance(parts[0], str):
                raise _SyntaxError("import path must be a constant string", path_tok.pos)
            path = parts[0]
            if word == "import":
                self.expect_keyword("as")
                if self.peek().kind not in (IDENT, VAR):
                    raise self.unexpected(expected="a module name")
                self.advance()
            if self.peek().kind == "{":
                self.object_cons()
        self.expect(";")
        return word, path, tok.pos

    # --- nesting ------------------------------------------------------------------------------

    def enter(self) -> None:
        """One more level of nesting (a nested pipe, pattern, ``try`` or ``reduce``)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            detail = f"expression nested too deeply (more than {MAX_NESTING} levels)"
            raise _SyntaxError(detail, self.peek().pos)

    # --- expressions ------------------------------------------------------------------------

    def pipe(self, restricted: bool = False) -> syntax.Node:
        """An expression at the lowest precedence. ``restricted`` is jq's object-value form.

        Iterative over ``|`` and over what extends to the end of the pipe (``def``, ``label``,
        ``as`` bindings): each of them leaves a continuation that receives the rest of the pipe,
        and the continuations are applied innermost first once the pipe ends.
        """
        self.enter()
        continuations: list[Callable[[syntax.Node], syntax.Node]] = []
        while True:
            node, rest = self.expression(restricted)
            if rest is not None:
                continuations.append(rest)
                continue
            assert node is not None
            if self.peek().kind != "|":
                break
            self.advance()
            continuations.append(functools.partial(_pipe_of, node))
        for continuation in reversed(continuations):
            node = continuation(node)
        self.depth -= 1
        return node

    def expression(
        self, restricted: bool
    ) -> tuple[syntax.Node | None, Callable[[syntax.Node], syntax.Node] | None]:
        """Binary and prefix operators by precedence climbing over explicit stacks.

        Returns ``(node, None)``, or ``(None, rest)`` when an operand extends to the end of the
        pipe (``def``/``label`` where jq allows them, a ``term as $x |`` binding): ``rest`` then
        builds the whole expression from the node of the rest of the pipe.
        """
        operands: list[syntax.Node] = []
        operators: list[_Pending] = []
        allow_def = True  # at the start and after ','
        while True:
            tok = self.peek()
            while tok.kind == "-":
                self.advance()
                operators.append(_Pending("-", _NEG, _RIGHT, tok.pos))
                allow_def = False
                tok = self.peek()
            if allow_def and not restricted and tok.kind == KEYWORD and tok.value in ("def", "label"):
                head = self.funcdef_head() if tok.value == "def" else self.label_head()
                return None, functools.partial(_finish_with, operands, operators, head)
            term = self.postfix()
            if not restricted and self.is_keyword("as"):
                self.advance()
                patterns = self.patterns()
                self.expect("|")
                bind = functools.partial(_bind_of, term, patterns)
                return None, functools.partial(_finish_with, operands, operators, bind)
            operands.append(term)
            tok = self.peek()
            op = _op_of(tok)
            info = _BINARY.get(op)
            if info is None or (restricted and info[0] == _COMMA):
                return _reduce(operands, operators, 0), None
            level, assoc = info
            _reduce(operands, operators, level if assoc == _LEFT else level + 0.5)
            if assoc == _NONASSOC and operators and operators[-1].level == level:
                raise self.unexpected(tok)
            self.advance()
            operators.append(_Pending(op, level, assoc, tok.pos))
            allow_def = level == _COMMA

    def funcdef_head(self) -> Callable[[syntax.Node], syntax.Node]:
        """``def name(params): body;``; returns the builder of the FuncDef from its rest."""
        start = self.advance()
        name_tok = self.peek()
        if name_tok.kind != IDENT:
            raise self.unexpected(expected="a function name")
        self.advance()
        params: list[str] = []
        if self.peek().kind == "(":
            self.advance()
            while True:
                p = self.peek()
                if p.kind == IDENT:
                    params.append(str(p.value))
                elif p.kind == VAR and p.value != "__loc__":
                    params.append("$" + str(p.value))
                else:
                    raise self.unexpected(expected="a parameter name")
                self.advance()
                if self.peek().kind == ";":
                    self.advance()
                    continue
                self.expect(")")
                break
        self.expect(":")
        body = self.pipe()
        self.expect(";")
        nxt = self.peek()
        if nxt.kind == EOF:
            raise _SyntaxError("top-level program not given (a def needs a body)", nxt.pos)
        return functools.partial(_funcdef_of, str(name_tok.value), tuple(params), body, start.pos)

    def label_head(self) -> Callable[[syntax.Node], syntax.Node]:
        """``label $name |``; returns the builder of the Label from its body."""
        start = self.advance()
        name_tok = self.peek()
        if name_tok.kind != VAR or name_tok.value == "__loc__":
            raise self.unexpected(expected="a label name '$name'")
        self.advance()
        self.expect("|")
        return functools.partial(_label_of, str(name_tok.value), start.pos)

    def postfix(self) -> syntax.Node:
        """A term and its suffixes (``.x``, ``[e]``, ``[a:b]``, ``[]``, ``?``); not ``as``."""
        term = self.primary()
        while True:
            tok = self.peek()
            kind = tok.kind
            if kind == FIELD:
                self.advance()
                term = syntax.Index(term, syntax.Literal(tok.value_str(), pos=tok.pos), pos=term.pos)
            elif kind == "[":
                term = self.bracket_suffix(term)
            elif kind == "?":
                self.advance()
                term = syntax.Try(term, None, pos=term.pos)
            elif kind == ".":
                nxt = self.peek_at(1)
                if nxt.kind == STRING or (nxt.kind == FORMAT and self.peek_at(2).kind == STRING):
                    self.advance()
                    term = syntax.Index(term, self.string_key(), pos=term.pos)
                elif nxt.kind == "[":
                    self.advance()
                    term = self.bracket_suffix(term, allow_slice=False)
                else:
                    raise self.unexpected(nxt, "a field name, a string or '['")
            else:
                return term

    def bracket_suffix(self, term: syntax.Node, *, allow_slice: bool = True) -> syntax.Node:
        """``[]``, ``[e]``, ``[a:b]`` after ``term``; jq has no slice after ``.a.[``."""
        self.advance()  # '['
        tok = self.peek()
        if tok.kind == "]":
            self.advance()
            return syntax.Iterate(term, pos=term.pos)
        if tok.kind == ":" and allow_slice:
            self.advance()
            end = self.pipe()
            self.expect("]")
            return syntax.Slice(term, None, end, pos=term.pos)
        index = self.pipe()
        if self.peek().kind == ":" and allow_slice:
            self.advance()
            if self.peek().kind == "]":
                self.advance()
                return syntax.Slice(term, index, None, pos=term.pos)
            end = self.pipe()
            self.expect("]")
            return syntax.Slice(term, index, end, pos=term.pos)
        self.expect("]")
        return syntax.Index(term, index, pos=term.pos)

    def primary(self) -> syntax.Node:
        tok = self.peek()
        kind = tok.kind
        pos = tok.pos
        if kind == FIELD:
            self.advance()
            return syntax.Index(syntax.Identity(pos=pos), syntax.Literal(tok.value_str(), pos=pos), pos=pos)
        if kind == ".":
            self.advance()
            nxt = self.peek()
            if nxt.kind == STRING or (nxt.kind == FORMAT and self.peek_at(1).kind == STRING):
                return syntax.Index(syntax.Identity(pos=pos), self.string_key(), pos=pos)
            return syntax.Identity(pos=pos)
        if kind == IDENT:
            return self.call()
        if kind == NUMBER:
            self.advance()
            value = tok.value
            assert isinstance(value, int | float)
            return syntax.Literal(value, pos=pos)
        if kind == STRING:
            return self.string(self.advance(), None)
        if kind == VAR:
            self.advance()
            return syntax.Var(tok.value_str(), pos=pos)
        if kind == FORMAT:
            self.advance()
            if self.peek().kind == STRING:
                return self.string(self.advance(), tok.value_str(), pos)
            return syntax.Format(tok.value_str(), pos=pos)
        if kind == "(":
            self.advance()
            inner = self.pipe()
            self.expect(")")
            return inner
        if kind == "[":
            self.advance()
            if self.peek().kind == "]":
                self.advance()
                return syntax.ArrayCons(None, pos=pos)
            body = self.pipe()
            self.expect("]")
            return syntax.ArrayCons(body, pos=pos)
        if kind == "{":
            return self.object_cons()
        if kind == "..":
            self.advance()
            return syntax.RecurseAll(pos=pos)
        if kind == KEYWORD:
            word = tok.value
            if word == "if":
                return self.if_()
            if word == "try":
                return self.try_()
            if word in ("reduce", "foreach"):
                return self.reduce_foreach()
            if word == "break":
                self.advance()
                label = self.peek()
                if label.kind != VAR or label.value == "__loc__":
                    raise self.unexpected(label, "a label name '$name'")
                self.advance()
                return syntax.Break(label.value_str(), pos=pos)
        raise self.unexpected(tok)

    def call(self) -> syntax.Node:
        tok = self.advance()
        name = tok.value_str()
        nxt = self.peek()
        if nxt.kind != "(":
            if name in syntax.KEYWORD_CONSTANTS:
                return syntax.Literal(syntax.KEYWORD_CONSTANTS[name], pos=tok.pos)
            return syntax.Call(name, (), pos=tok.pos)
        self.advance()
        args = [self.pipe()]
        while self.peek().kind == ";":
            self.advance()
            args.append(self.pipe())
        self.expect(")", "';' or ')'")
        return syntax.Call(name, tuple(args), pos=tok.pos)

    def string_key(self) -> syntax.Node:
        """A string, or a ``@format "string"``, at the current token (for ``."key"``)."""
        tok = self.advance()
        if tok.kind == FORMAT:
            return self.string(self.advance(), tok.value_str(), tok.pos)
        return self.string(tok, None)

    def string(self, tok: Token, fmt: str | None, pos: int | None = None) -> syntax.Node:
        """The node of a string token; ``pos`` overrides the position (for ``@fmt "..."``)."""
        parts = tok.value
        if pos is None:
            pos = tok.pos
        assert isinstance(parts, tuple)
        if len(parts) == 1 and isinstance(parts[0], str):
            return syntax.Literal(parts[0], pos=pos)
        out: list[str | syntax.Node] = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            else:
                sub = _Parser(part, self.depth)
                node = sub.pipe()
                if sub.peek().kind != EOF:
                    raise sub.unexpected(expected="')'")
                out.append(node)
        return syntax.StringInterp(tuple(out), fmt, pos=pos)

    def object_cons(self) -> syntax.Node:
        start = self.advance()  # '{'
        entries: list[syntax.ObjectEntry] = []
        while self.peek().kind != "}":
            entries.append(self.object_entry())
            if self.peek().kind == ",":
                self.advance()
            elif self.peek().kind != "}":
                raise self.unexpected(expected="',' or '}'")
        self.advance()
        return syntax.ObjectCons(tuple(entries), pos=start.pos)

    def object_entry(self) -> syntax.ObjectEntry:
        tok = self.peek()
        kind = tok.kind
        pos = tok.pos
        if kind == VAR:
            self.advance()
            name = tok.value_str()
            if self.peek().kind == ":" and name != "__loc__":
                self.advance()
                return syntax.ObjectEntry(syntax.Var(name, pos=pos), self.pipe(restricted=True))
            return syntax.ObjectEntry(syntax.Literal(name, pos=pos), syntax.Var(name, pos=pos))
        if kind in (IDENT, KEYWORD):
            self.advance()
            key: syntax.Node = syntax.Literal(tok.value_str(), pos=pos)
        elif kind == STRING:
            key = self.string(self.advance(), None)
        elif kind == FORMAT and self.peek_at(1).kind == STRING:
            self.advance()
            key = self.string(self.advance(), tok.value_str(), pos)
        elif kind == "(":
            self.advance()
            key = self.pipe()
            self.expect(")")
            self.expect(":")
            return syntax.ObjectEntry(key, self.pipe(restricted=True))
        else:
            raise self.unexpected(tok, "an object key")
        if self.peek().kind == ":":
            self.advance()
            return syntax.ObjectEntry(key, self.pipe(restricted=True))
        return syntax.ObjectEntry(key, syntax.Index(syntax.Identity(pos=pos), key, pos=pos))

    def if_(self) -> syntax.Node:
        start = self.advance()
        cond = self.pipe()
        self.expect_keyword("then")
        then = self.pipe()
        elifs: list[tuple[syntax.Node, syntax.Node]] = []
        else_: syntax.Node | None = None
        while True:
            if self.is_keyword("elif"):
                self.advance()
                c = self.pipe()
                self.expect_keyword("then")
                elifs.append((c, self.pipe()))
            elif self.is_keyword("else"):
                self.advance()
                else_ = self.pipe()
                self.expect_keyword("end")
                break
            elif self.is_keyword("end"):
                self.advance()
                break
            else:
                raise self.unexpected(expected="'elif', 'else' or 'end'")
        return syntax.If(cond, then, tuple(elifs), else_, pos=start.pos)

    def try_body(self) -> syntax.Node:
        """A postfix term with its prefix minuses (``try -x``)."""
        minuses: list[int] = []
        while self.peek().kind == "-":
            minuses.append(self.advance().pos)
        node = self.postfix()
        for pos in reversed(minuses):
            node = syntax.Neg(node, pos=pos)
        return node

    def try_(self) -> syntax.Node:
        self.enter()
        start = self.advance()
        body = self.try_body()
        handler: syntax.Node | None = None
        if self.is_keyword("catch"):
            self.advance()
            handler = self.try_body()
        self.depth -= 1
        return syntax.Try(body, handler, pos=start.pos)

    def reduce_foreach(self) -> syntax.Node:
        self.enter()
        start = self.advance()
        source = self.postfix()
        self.expect_keyword("as")
        pat_tok = self.peek()
        patterns = self.patterns()
        if len(patterns) != 1:
            raise _SyntaxError(f"'?//' alternatives are not supported in {start.value}", pat_tok.pos)
        self.expect("(")
        init = self.pipe()
        self.expect(";")
        update = self.pipe()
        if start.value == "reduce":
            self.expect(")")
            self.depth -= 1
            return syntax.Reduce(source, patterns[0], init, update, pos=start.pos)
        extract: syntax.Node | None = None
        if self.peek().kind == ";":
            self.advance()
            extract = self.pipe()
        self.expect(")")
        self.depth -= 1
        return syntax.Foreach(source, patterns[0], init, update, extract, pos=start.pos)

    # --- destructuring patterns ---------------------------------------------------------------

    def patterns(self) -> tuple[syntax.Pattern, ...]:
        out = [self.pattern()]
        while self.peek().kind == "?//":
            self.advance()
            out.append(self.pattern())
        return tuple(out)

    def pattern(self) -> syntax.Pattern:
        tok = self.peek()
        if tok.kind == VAR and tok.value != "__loc__":
            self.advance()
            return syntax.VarPattern(tok.value_str())
        self.enter()
        try:
            return self.compound_pattern(tok)
        finally:
            self.depth -= 1

    def compound_pattern(self, tok: Token) -> syntax.Pattern:
        if tok.kind == "[":
            self.advance()
            elements = [self.pattern()]
            while self.peek().kind == ",":
                self.advance()
                elements.append(self.pattern())
            self.expect("]", "',' or ']'")
            return syntax.ArrayPattern(tuple(elements))
        if tok.kind == "{":
            self.advance()
            entries = [self.object_pattern_entry()]
            while self.peek().kind == ",":
                self.advance()
                entries.append(self.object_pattern_entry())
            self.expect("}", "',' or '}'")
            return syntax.ObjectPattern(tuple(entries))
        raise self.unexpected(tok, "a pattern ('$name', '[...]' or '{...}')")

    def object_pattern_entry(self) -> syntax.ObjectPatternEntry:
        tok = self.peek()
        kind = tok.kind
        if kind == VAR and tok.value != "__loc__":
            self.advance()
            if self.peek().kind == ":":
                self.advance()
                return syntax.ObjectPatternEntry(None, tok.value_str(), self.pattern())
            return syntax.ObjectPatternEntry(None, tok.value_str(), None)
        if kind in (IDENT, KEYWORD):
            self.advance()
            key: syntax.Node = syntax.Literal(tok.value_str(), pos=tok.pos)
        elif kind == STRING:
            key = self.string(self.advance(), None)
        elif kind == FORMAT and self.peek_at(1).kind == STRING:
            self.advance()
            key = self.string(self.advance(), tok.value_str(), tok.pos)
        elif kind == "(":
            self.advance()
            key = self.pipe()
            self.expect(")")
        else:
            raise self.unexpected(tok, "an object pattern key")
        self.expect(":")
        return syntax.ObjectPatternEntry(key, None, self.pattern())


def _line_col(text: str, pos: int) -> tuple[int, int]:
    pos = max(0, min(pos, len(text)))
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def shown(expression: str) -> str:
    """``expression`` as error messages quote it: whole, or its start when it is over the size limit."""
    if len(expression) <= MAX_EXPRESSION_LENGTH:
        return expression
    return f"{expression[:80]}... ({len(expression)} characters)"


def _error(expression: str, detail: str, pos: int) -> JqParseError:
    line, col = _line_col(expression, pos)
    return JqParseError(
        f"failed to parse JQ expression '{shown(expression)}': {detail} (line {line}, column {col})",
        expression=expression,
        line=line,
        column=col,
    )


def parse(expression: str) -> syntax.Node:
    """Parse a jq program into its syntax tree; raises :class:`JqParseError` on syntax errors and
    on expressions over the limits (:data:`MAX_EXPRESSION_LENGTH`, :data:`MAX_NESTING`)."""
    if len(expression) > MAX_EXPRESSION_LENGTH:
        detail = f"expression too long: {len(expression)} characters (the limit is {MAX_EXPRESSION_LENGTH})"
        raise _error(expression, detail, MAX_EXPRESSION_LENGTH)
    try:
        tokens = tokenize(expression, max_nesting=MAX_NESTING)
        return _Parser(tokens).program()
    except LexError as exc:
        raise _error(expression, exc.detail, exc.pos) from None
    except _SyntaxError as exc:
        raise _error(expression, exc.detail, exc.pos) from None
    except RecursionError:  # a caller already deep in the stack; the limits keep the parser shallow
        raise _error(expression, "expression is nested too deeply", 0) from None


@functools.lru_cache(maxsize=4096)
def parse_cached(expression: str) -> syntax.Node:
    """:func:`parse` with a cache keyed by the expression text (the tree is immutable)."""
    return parse(expression)
