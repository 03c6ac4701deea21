"""The jq parser: expression text to the syntax tree of :mod:`karta.jq.syntax`.

A recursive-descent parser with precedence climbing for the binary operators, following the
grammar of jq 1.7/1.8 (lowest to highest precedence): ``|`` (right-assoc; ``def``, ``label`` and
``as`` bindings extend to the end of the enclosing pipe), ``,``, ``//`` (right-assoc), the
assignment operators (non-assoc), ``or``, ``and``, comparisons (non-assoc), ``+ -``, ``* / %``,
unary minus, then terms with their postfix suffixes (``.x``, ``[e]``, ``[a:b]``, ``[]``, ``?``).

Object values are jq's restricted form: any expression without a top-level ``,``, ``def``,
``label`` or ``as`` binding (``{a: .b | length, c: .d // 1}``). ``try`` takes a postfix term as
body and handler (``try .a + 1`` is ``(try .a) + 1``), as in jq.

Shorthands are desugared as documented in :mod:`karta.jq.syntax`. Errors are raised as
:class:`karta.errors.JqParseError` with 1-based line and column of the offending token.
"""

from __future__ import annotations

import functools
from typing import Final

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

__all__ = ["parse", "parse_cached"]

_COMMA: Final = 2
_ASSIGN: Final = 4
_COMPARE: Final = 7
_MULTIPLY: Final = 9

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


class _Parser:
    __slots__ = ("i", "tokens")

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0

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
        tok = self.peek()
        if tok.kind == EOF:
            raise _SyntaxError("empty expression (top-level program not given)", tok.pos)
        if tok.kind == KEYWORD and tok.value in ("module", "import", "include"):
            return self.directive()
        node = self.pipe()
        if self.peek().kind != EOF:
            raise self.unexpected(expected="end of expression")
        return node

    def directive(self) -> syntax.Node:
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
        if self.peek().kind == EOF:
            raise _SyntaxError("top-level program not given", self.peek().pos)
        body = self.program()
        return syntax.ModuleDirective(word, path, body, pos=tok.pos)

    # --- expressions ------------------------------------------------------------------------

    def pipe(self, restricted: bool = False) -> syntax.Node:
        """An expression at the lowest precedence. ``restricted`` is jq's object-value form."""
        tok = self.peek()
        if not restricted and tok.kind == KEYWORD:
            if tok.value == "def":
                return self.funcdef()
            if tok.value == "label":
                return self.label()
        left = self.binary(_COMMA, restricted=restricted, allow_def=True)
        if self.peek().kind == "|":
            self.advance()
            right = self.pipe(restricted)
            return syntax.Pipe(left, right, pos=left.pos)
        return left

    def binary(self, min_level: int, *, restricted: bool, allow_def: bool) -> syntax.Node:
        left = self.unary(restricted=restricted, allow_def=allow_def)
        while True:
            tok = self.peek()
            op = _op_of(tok)
            info = _BINARY.get(op)
            if info is None:
                return left
            level, assoc = info
            if level < min_level or (restricted and level == _COMMA):
                return left
            self.advance()
            if assoc == _RIGHT:
                right = self.binary(level, restricted=restricted, allow_def=False)
            else:
                right = self.binary(level + 1, restricted=restricted, allow_def=level == _COMMA)
            if level == _COMMA:
                left = syntax.Comma(left, right, pos=left.pos)
            elif level == _ASSIGN:
                left = syntax.Assign(op, left, right, pos=left.pos)
            else:
                left = syntax.Binary(op, left, right, pos=left.pos)
            if assoc == _NONASSOC:
                nxt = _BINARY.get(_op_of(self.peek()))
                if nxt is not None and nxt[0] == level:
                    raise self.unexpected()

    def unary(self, *, restricted: bool, allow_def: bool) -> syntax.Node:
        tok = self.peek()
        if tok.kind == "-":
            self.advance()
            operand = self.binary(_MULTIPLY, restricted=restricted, allow_def=False)
            return syntax.Neg(operand, pos=tok.pos)
        if allow_def and not restricted and tok.kind == KEYWORD:
            if tok.value == "def":
                return self.funcdef()
            if tok.value == "label":
                return self.label()
        return self.postfix(allow_bind=not restricted)

    def funcdef(self) -> syntax.Node:
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
        rest = self.pipe()
        return syntax.FuncDef(str(name_tok.value), tuple(params), body, rest, pos=start.pos)

    def label(self) -> syntax.Node:
        start = self.advance()
        name_tok = self.peek()
        if name_tok.kind != VAR or name_tok.value == "__loc__":
            raise self.unexpected(expected="a label name '$name'")
        self.advance()
        self.expect("|")
        body = self.pipe()
        return syntax.Label(str(name_tok.value), body, pos=start.pos)

    def postfix(self, *, allow_bind: bool) -> syntax.Node:
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
            elif kind == KEYWORD and tok.value == "as" and allow_bind:
                self.advance()
                patterns = self.patterns()
                self.expect("|")
                body = self.pipe()
                return syntax.Bind(term, patterns, body, pos=term.pos)
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
                sub = _Parser(part)
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
        tok = self.peek()
        if tok.kind == "-":
            self.advance()
            return syntax.Neg(self.try_body(), pos=tok.pos)
        return self.postfix(allow_bind=False)

    def try_(self) -> syntax.Node:
        start = self.advance()
        body = self.try_body()
        handler: syntax.Node | None = None
        if self.is_keyword("catch"):
            self.advance()
            handler = self.try_body()
        return syntax.Try(body, handler, pos=start.pos)

    def reduce_foreach(self) -> syntax.Node:
        start = self.advance()
        source = self.postfix(allow_bind=False)
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
            return syntax.Reduce(source, patterns[0], init, update, pos=start.pos)
        extract: syntax.Node | None = None
        if self.peek().kind == ";":
            self.advance()
            extract = self.pipe()
        self.expect(")")
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


def _error(expression: str, detail: str, pos: int) -> JqParseError:
    line, col = _line_col(expression, pos)
    return JqParseError(
        f"failed to parse JQ expression '{expression}': {detail} (line {line}, column {col})",
        expression=expression,
        line=line,
        column=col,
    )


def parse(expression: str) -> syntax.Node:
    """Parse a jq program into its syntax tree; raises :class:`JqParseError` on syntax errors."""
    try:
        tokens = tokenize(expression)
        return _Parser(tokens).program()
    except LexError as exc:
        raise _error(expression, exc.detail, exc.pos) from None
    except _SyntaxError as exc:
        raise _error(expression, exc.detail, exc.pos) from None
    except RecursionError:
        raise _error(expression, "expression is nested too deeply", 0) from None


@functools.lru_cache(maxsize=4096)
def parse_cached(expression: str) -> syntax.Node:
    """:func:`parse` with a cache keyed by the expression text (the tree is immutable)."""
    return parse(expression)
