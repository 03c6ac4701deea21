"""The jq AST nodes behave as frozen, slotted dataclasses (they are built without the decorator)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from karta.jq import syntax


def _node_classes() -> list[type]:
    return [v for v in vars(syntax).values() if isinstance(v, type) and issubclass(v, syntax._Frozen)]


def test_every_node_class_is_a_dataclass_with_slots() -> None:
    classes = _node_classes()
    assert syntax.Index in classes and syntax.ObjectPattern in classes
    for cls in classes:
        assert dataclasses.is_dataclass(cls), cls
        assert isinstance(cls.__dict__["__slots__"], tuple)


def test_fields_signature_and_match_args() -> None:
    names = [f.name for f in dataclasses.fields(syntax.If)]
    assert names == ["pos", "cond", "then", "elifs", "else_"]
    pos = dataclasses.fields(syntax.If)[0]
    assert (pos.default, pos.compare, pos.kw_only) == (0, False, True)
    assert syntax.If.__match_args__ == ("cond", "then", "elifs", "else_")
    signature = str(inspect.signature(syntax.If))
    assert signature == "(cond: 'Node', then: 'Node', elifs: 'tuple[tuple[Node, Node], ...]' = (), " + (
        "else_: 'Node | None' = None, *, pos: 'int' = 0) -> None"
    )


def test_equality_and_hash_ignore_pos() -> None:
    a = syntax.Index(syntax.Identity(), syntax.Literal("a"), pos=0)
    b = syntax.Index(syntax.Identity(pos=3), syntax.Literal("a", pos=3), pos=3)
    assert a == b and hash(a) == hash(b)
    assert a != syntax.Index(syntax.Identity(), syntax.Literal("b"))
    assert syntax.Pipe(a, a) != syntax.Comma(a, a)
    assert syntax.Identity() == syntax.Identity(pos=9) and hash(syntax.Identity()) == hash(())


def test_repr_is_the_dataclass_repr() -> None:
    node = syntax.Try(syntax.Var("x", pos=1), pos=1)
    assert repr(node) == "Try(pos=1, body=Var(pos=1, name='x'), catch=None)"
    assert repr(syntax.VarPattern("a")) == "VarPattern(name='a')"


def test_frozen() -> None:
    node = syntax.Literal(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.value = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del node.value  # type: ignore[misc]
    with pytest.raises(AttributeError):
        node.other = 1  # type: ignore[attr-defined]


def test_copy_pickle_replace_asdict() -> None:
    node = syntax.Call("f", (syntax.Literal(1, pos=2),), pos=0)
    assert copy.copy(node) == node and copy.deepcopy(node) == node
    again = pickle.loads(pickle.dumps(node))
    assert again == node and again.args[0].pos == 2
    assert dataclasses.replace(node, name="g") == syntax.Call("g", (syntax.Literal(1),))
    assert dataclasses.asdict(syntax.Var("x", pos=4)) == {"pos": 4, "name": "x"}


def test_pattern_match() -> None:
    match syntax.Binary("+", syntax.Identity(), syntax.Literal(1)):
        case syntax.Binary("+", syntax.Identity(), syntax.Literal(value)):
            assert value == 1
        case _:
            pytest.fail("no match")
