"""The jq tokenizer: turns expression text into a flat list of :class:`Token` objects.

Owns the lexical rules of jq as used by Karta definitions: identifiers (with ``::`` module
qualifiers), keywords, ``.field`` tokens, ``$name`` bindings, ``@format`` names, numbers, string
literals with escapes and ``\\(...)`` interpolation, operators and ``#`` comments.

String tokens carry their interpolated parts already tokenized (a nested token list ending in an
``EOF`` token), so the parser never re-scans text; interpolations nest at most ``max_nesting``
deep (the parser's limit). An integer literal with more digits than Python converts to ``int``
becomes a double, as a number beyond the double range does (``inf``). Every token records its
0-based offset in the original expression. Errors are raised as :class:`LexError` (offset +
detail); the parser turns them into :class:`karta.errors.JqParseError`.
"""

from __future__ import annotations

from typing import Final

__all__ = ["KEYWORDS", "LexError", "Token", "tokenize"]

KEYWORDS: Final = frozenset(
    {
        "as",
        "def",
        "if",
        "then",
        "elif",
        "else",
        "end",
        "and",
        "or",
        "reduce",
        "foreach",
        "try",
        "catch",
        "label",
        "break",
        "import",
        "include",
        "module",
    }
)

# Token kinds. Operators and punctuation use their own text as kind.
IDENT: Final = "IDENT"  # value: name (str); keywords use kind KEYWORD
KEYWORD: Final = "KEYWORD"  # value: the keyword
FIELD: Final = "FIELD"  # ``.name``; value: name
VAR: Final = "VAR"  # ``$name``; value: name without ``$`` (``__loc__`` for ``$__loc__``)
FORMAT: Final = "FORMAT"  # ``@name``; value: name without ``@``
NUMBER: Final = "NUMBER"  # value: int | float
STRING: Final = "STRING"  # value: tuple of str | list[Token]
EOF: Final = "EOF"

# Longest first, so that e.g. ``?//`` wins over ``?`` and ``//=`` over ``//``.
_OPERATORS: Final = (
    "?//",
    "//=",
    "|=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "==",
    "!=",
    "<=",
    ">=",
    "//",
    "..",
    ".",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    "|",
    ",",
    ":",
    ";",
    "=",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "%",
    "?",
)

_SIMPLE_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


class LexError(Exception):
    """A lexical error at ``pos`` (0-based offset) with a human-readable ``detail``."""

    def __init__(self, detail: str, pos: int) -> None:
        super().__init__(detail)
        self.detail = detail
        self.pos = pos


class Token:
    """One token: ``kind`` (see the module constants or the operator text), ``value``, ``pos``."""

    __slots__ = ("kind", "pos", "value")

    def __init__(self, kind: str, value: object, pos: int) -> None:
        self.kind = kind
        self.value = value
        self.pos = pos

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.value!r}, {self.pos})"

    def value_str(self) -> str:
        """The value of a name-like token (IDENT, KEYWORD, FIELD, VAR, FORMAT) as ``str``."""
        return str(self.value)

    def describe(self) -> str:
        """How the token is named in error messages."""
        if self.kind == EOF:
            return "end of expression"
        if self.kind in (IDENT, KEYWORD):
            return f"'{self.value}'"
        if self.kind == FIELD:
            return f"'.{self.value}'"
        if self.kind == VAR:
            return f"'${self.value}'"
        if self.kind == FORMAT:
            return f"'@{self.value}'"
        if self.kind == NUMBER:
            return f"number {self.value!r}"
        if self.kind == STRING:
            return "string"
        return f"'{self.kind}'"


def _is_ident_start(c: str) -> bool:
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z")


def _is_ident_char(c: str) -> bool:
    return _is_ident_start(c) or ("0" <= c <= "9")


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


class _Lexer:
    __slots__ = ("max_nesting", "n", "text")

    def __init__(self, text: str, max_nesting: int) -> None:
        self.text = text
        self.n = len(text)
        self.max_nesting = max_nesting

    def ident_end(self, i: int) -> int:
        """End of an identifier starting at ``i`` (which must be an identifier start)."""
        text, n = self.text, self.n
        while True:
            i += 1
            while i < n and _is_ident_char(text[i]):
                i += 1
            if i + 2 < n and text.startswith("::", i) and _is_ident_start(text[i + 2]):
                i += 2
                continue
            return i

    def tokens(self, i: int, *, in_interp: bool, nesting: int = 0) -> tuple[list[Token], int]:
        """Tokens from offset ``i``; inside an interpolation stop at the unmatched ``)``.

        ``nesting`` counts the enclosing interpolations (bounded by ``max_nesting``)."""
        if nesting > self.max_nesting:
            raise LexError(f"expression nested too deeply (more than {self.max_nesting} levels)", i)
        text, n = self.text, self.n
        out: list[Token] = []
        depth = 0
        while True:
            # whitespace and comments
            while i < n:
                c = text[i]
                if c in " \t\r\n":
                    i += 1
                elif c == "#":
                    while i < n and text[i] != "\n":
                        i += 1
                else:
                    break
            if i >= n:
                if in_interp:
                    raise LexError("unterminated string interpolation", i)
                out.append(Token(EOF, None, i))
                return out, i
            c = text[i]
            start = i
            if _is_ident_start(c):
                i = self.ident_end(i)
                word = text[start:i]
                out.append(Token(KEYWORD if word in KEYWORDS else IDENT, word, start))
            elif _is_digit(c) or (c == "." and i + 1 < n and _is_digit(text[i + 1])):
                i = self.number(i, out)
            elif c == ".":
                if i + 1 < n and _is_ident_start(text[i + 1]):
                    j = i + 2
                    while j < n and _is_ident_char(text[j]):
                        j += 1
                    out.append(Token(FIELD, text[i + 1 : j], start))
                    i = j
                elif text.startswith("..", i):
                    out.append(Token("..", None, start))
                    i += 2
                else:
                    out.append(Token(".", None, start))
                    i += 1
            elif c == "$":
                if text.startswith("$__loc__", i) and not (i + 8 < n and _is_ident_char(text[i + 8])):
                    out.append(Token(VAR, "__loc__", start))
                    i += 8
                elif i + 1 < n and _is_ident_start(text[i + 1]):
                    j = self.ident_end(i + 1)
                    out.append(Token(VAR, text[i + 1 : j], start))
                    i = j
                else:
                    raise LexError("'$' must be followed by a variable name", start)
            elif c == "@":
                j = i + 1
                while j < n and _is_ident_char(text[j]):
                    j += 1
                if j == i + 1:
                    raise LexError("'@' must be followed by a format name", start)
                out.append(Token(FORMAT, text[i + 1 : j], start))
                i = j
            elif c == '"':
                i = self.string(i, out, nesting)
            else:
                for op in _OPERATORS:
                    if text.startswith(op, i):
                        break
                else:
                    raise LexError(f"unexpected character {c!r}", start)
                if in_interp:
                    if op == "(":
                        depth += 1
                    elif op == ")":
                        if depth == 0:
                            out.append(Token(EOF, None, i))
                            return out, i + 1
                        depth -= 1
                out.append(Token(op, None, start))
                i += len(op)

    def number(self, i: int, out: list[Token]) -> int:
        text, n = self.text, self.n
        start = i
        is_float = False
        while i < n and _is_digit(text[i]):
            i += 1
        if i < n and text[i] == ".":
            is_float = True
            i += 1
            while i < n and _is_digit(text[i]):
                i += 1
        if i < n and text[i] in "eE":
            j = i + 1
            if j < n and text[j] in "+-":
                j += 1
            if j < n and _is_digit(text[j]):
                is_float = True
                i = j
                while i < n and _is_digit(text[i]):
                    i += 1
        literal = text[start:i]
        value: int | float
        if is_float:
            value = float(literal)  # beyond the double range: inf, as jq and gojq read it
        else:
            try:
                value = int(literal)
            except ValueError:  # more digits than the interpreter converts: as a double
                value = float(literal)
        out.append(Token(NUMBER, value, start))
        return i

    def string(self, i: int, out: list[Token], nesting: int) -> int:
        text, n = self.text, self.n
        start = i
        i += 1
        parts: list[str | list[Token]] = []
        buf: list[str] = []
        while True:
            if i >= n:
                raise LexError("unterminated string", start)
            c = text[i]
            if c == '"':
                i += 1
                break
            if c != "\\":
                j = i + 1
                while j < n and text[j] not in '"\\':
                    j += 1
                buf.append(text[i:j])
                i = j
                continue
            if i + 1 >= n:
                raise LexError("unterminated string", start)
            e = text[i + 1]
            if e in _SIMPLE_ESCAPES:
                buf.append(_SIMPLE_ESCAPES[e])
                i += 2
            elif e == "u":
                code, i = self.unicode_escape(i)
                if 0xD800 <= code < 0xDC00 and text.startswith("\\u", i):
                    low, j = self.unicode_escape(i)
                    if 0xDC00 <= low < 0xE000:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i = j
                if 0xD800 <= code < 0xE000:
                    code = 0xFFFD  # a lone surrogate, as jq: the replacement character
                buf.append(chr(code))
            elif e == "(":
                if buf:
                    parts.append("".join(buf))
                    buf = []
                toks, i = self.tokens(i + 2, in_interp=True, nesting=nesting + 1)
                if len(toks) == 1:
                    raise LexError("empty string interpolation", toks[0].pos)
                parts.append(toks)
            else:
                raise LexError(f"invalid escape '\\{e}' in string", i)
        if buf or not parts:
            parts.append("".join(buf))
        out.append(Token(STRING, tuple(parts), start))
        return i

    def unicode_escape(self, i: int) -> tuple[int, int]:
        digits = self.text[i + 2 : i + 6]
        if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise LexError("invalid \\u escape in string (need 4 hex digits)", i)
        return int(digits, 16), i + 6


def tokenize(text: str, *, max_nesting: int = 128) -> list[Token]:
    """All tokens of ``text``, ending with an ``EOF`` token. Raises :class:`LexError`, also for
    string interpolations nested more than ``max_nesting`` deep (the parser's nesting limit)."""
    tokens, _ = _Lexer(text, max_nesting).tokens(0, in_interp=False)
    return tokens
