"""Tokenizer: token kinds, values and offsets, numbers, string escapes, interpolation, errors."""

from __future__ import annotations

import pytest

from karta.jq.lexer import EOF, LexError, Token, tokenize


def kinds(text: str) -> list[tuple[str, object]]:
    return [(t.kind, t.value) for t in tokenize(text)[:-1]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (".", [(".", None)]),
        ("..", [("..", None)]),
        (".a.b", [("FIELD", "a"), ("FIELD", "b")]),
        (".end", [("FIELD", "end")]),
        (".[0]", [(".", None), ("[", None), ("NUMBER", 0), ("]", None)]),
        ("$x", [("VAR", "x")]),
        ("$__loc__", [("VAR", "__loc__")]),
        ("$__loc__x", [("VAR", "__loc__x")]),
        ("$mod::x", [("VAR", "mod::x")]),
        ("@base64", [("FORMAT", "base64")]),
        ("length", [("IDENT", "length")]),
        ("mod::fn", [("IDENT", "mod::fn")]),
        ("if then elif else end", [("KEYWORD", w) for w in ("if", "then", "elif", "else", "end")]),
        ("and or", [("KEYWORD", "and"), ("KEYWORD", "or")]),
        ("not", [("IDENT", "not")]),
        ("break", [("KEYWORD", "break")]),
        ("a?//b", [("IDENT", "a"), ("?//", None), ("IDENT", "b")]),
        (".a //= 1", [("FIELD", "a"), ("//=", None), ("NUMBER", 1)]),
        ("|= += -= *= /= %=", [(op, None) for op in ("|=", "+=", "-=", "*=", "/=", "%=")]),
        ("== != <= >= < >", [(op, None) for op in ("==", "!=", "<=", ">=", "<", ">")]),
        ("1 # comment\n+ 2", [("NUMBER", 1), ("+", None), ("NUMBER", 2)]),
        ("# only a comment", []),
    ],
)
def test_token_kinds(text: str, expected: list[tuple[str, object]]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("0", 0),
        ("1.5", 1.5),
        ("1e12", 1e12),
        ("1E-2", 0.01),
        (".5", 0.5),
        ("1.", 1.0),
        ("2.5e+3", 2500.0),
        ("12345678901234567890", 12345678901234567890),
    ],
)
def test_numbers(text: str, value: float) -> None:
    (tok,) = tokenize(text)[:-1]
    assert tok.kind == "NUMBER"
    assert tok.value == value
    assert type(tok.value) is type(value)


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (r'"abc"', "abc"),
        (r'""', ""),
        (r'"a\nb\tc"', "a\nb\tc"),
        (r'"\"\\\/"', '"\\/'),
        (r'"\b\f\r"', "\b\f\r"),
        (r'"\u00e9"', "é"),
        (r'"\u00E9"', "é"),
        (r'"\ud83d\ude00"', "\U0001f600"),
        (r'"\udc00x"', "\ufffdx"),
        (r'"\ud83dx"', "\ufffdx"),
        ('"raw\nnewline"', "raw\nnewline"),
        ('"é # not a comment"', "é # not a comment"),
    ],
)
def test_string_escapes(source: str, value: str) -> None:
    (tok,) = tokenize(source)[:-1]
    assert tok.kind == "STRING"
    assert tok.value == (value,)


def test_interpolation_is_tokenized_in_place() -> None:
    (tok,) = tokenize(r'"a\(.b + 1)c"')[:-1]
    parts = tok.value
    assert isinstance(parts, tuple)
    assert parts[0] == "a"
    assert parts[2] == "c"
    inner = parts[1]
    assert isinstance(inner, list)
    assert [(t.kind, t.value) for t in inner] == [("FIELD", "b"), ("+", None), ("NUMBER", 1), (EOF, None)]
    # offsets are offsets into the whole expression
    assert [t.pos for t in inner] == [4, 7, 9, 10]


def test_nested_interpolation_and_parentheses() -> None:
    (tok,) = tokenize(r'"x\("y\((1))")"')[:-1]
    parts = tok.value
    assert isinstance(parts, tuple)
    inner = parts[1]
    assert isinstance(inner, list)
    assert inner[0].kind == "STRING"
    nested = inner[0].value
    assert isinstance(nested, tuple)
    assert [t.kind for t in nested[1]] == ["(", "NUMBER", ")", EOF]


def test_positions() -> None:
    toks = tokenize('.a | $x, "s" // 10')
    assert [(t.kind, t.pos) for t in toks] == [
        ("FIELD", 0),
        ("|", 3),
        ("VAR", 5),
        (",", 7),
        ("STRING", 9),
        ("//", 13),
        ("NUMBER", 16),
        (EOF, 18),
    ]


@pytest.mark.parametrize(
    ("text", "pos", "detail"),
    [
        ('"abc', 0, "unterminated string"),
        ('.a | "abc', 5, "unterminated string"),
        (r'"\q"', 1, "invalid escape"),
        (r'"\u12"', 1, "invalid \\u escape"),
        (r'"\(1', 4, "unterminated string interpolation"),
        (r'"\(1"', 4, "unterminated string"),
        (r'"\()"', 3, "empty string interpolation"),
        ("$", 0, "'$' must be followed"),
        ("$ x", 0, "'$' must be followed"),
        ("@", 0, "'@' must be followed"),
        (".a ^ 1", 3, "unexpected character '^'"),
        ("`", 0, "unexpected character"),
    ],
)
def test_lex_errors(text: str, pos: int, detail: str) -> None:
    with pytest.raises(LexError) as info:
        tokenize(text)
    assert info.value.pos == pos
    assert detail in info.value.detail


def test_describe() -> None:
    assert Token(EOF, None, 0).describe() == "end of expression"
    assert Token("|", None, 0).describe() == "'|'"
    assert Token("FIELD", "a", 0).describe() == "'.a'"
    assert Token("VAR", "x", 0).describe() == "'$x'"
