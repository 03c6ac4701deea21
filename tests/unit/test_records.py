"""``karta._records.record`` behaves as :func:`dataclasses.dataclass` for every feature it accepts:
each pair below is the same class body under both decorators, and every test compares them."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, ClassVar

import pytest

from karta import _codegen, _records
from karta._records import record


def _pair(make: Callable[[Callable[..., Any]], type[Any]], **params: Any) -> tuple[type[Any], type[Any]]:
    """The class ``make`` defines, once with dataclass and once with record (same parameters)."""
    real = make(dataclass(**{"frozen": True, **params}))
    return real, make(record(**params) if params else record)


def _frozen_slots(deco: Callable[..., Any]) -> type[Any]:
    @deco
    class Point:
        """A point."""

        x: int
        y: int = 0
        tags: tuple[str, ...] = ()
        note: str = field(default="", compare=False, repr=False)
        items: list[int] = field(default_factory=list, compare=False)
        kind: ClassVar[str] = "point"

        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

    return Point


def _mutable(deco: Callable[..., Any]) -> type[Any]:
    @deco
    class Box:
        size: int
        label: str = "box"
        extra: dict[str, int] = field(default_factory=dict)
        only_kw: bool = field(default=False, kw_only=True)

    return Box


def _with_post_init(deco: Callable[..., Any]) -> type[Any]:
    @deco
    class Span:
        start: int
        end: int = 0

        def __post_init__(self) -> None:
            if self.end < self.start:
                object.__setattr__(self, "end", self.start)

    return Span


@record(slots=True)
class PickledSlots:
    a: int
    b: tuple[str, ...] = ()


@record
class PickledPlain:
    a: int
    b: str = ""


@pytest.fixture(params=["generated", "closure"])
def init_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ``__init__`` paths: generated code, and the closure of ``KARTA_CODEGEN=off``."""
    if request.param == "closure":
        monkeypatch.setattr(_codegen, "enabled", lambda: False)
    return str(request.param)


@pytest.mark.parametrize("slots", [False, True])
def test_frozen_records_behave_as_frozen_dataclasses(init_path: str, slots: bool) -> None:
    real, rec = _pair(_frozen_slots, slots=slots)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}),
        ((1, 2), {}),
        ((1,), {"tags": ("a",), "note": "n"}),
        ((), {"x": 3, "y": 4}),
    ]
    for args, kwargs in calls:
        a, b = real(*args, **kwargs), rec(*args, **kwargs)
        assert repr(a) == repr(b)
        assert (a.x, a.y, a.tags, a.note, a.items) == (b.x, b.y, b.tags, b.note, b.items)
        assert hash(a) == hash(b)  # both hash the tuple of compared fields
        assert b == rec(*args, **kwargs) and b != a and b.norm() == a.norm()
        assert b == rec(*args, **{**kwargs, "note": "other"})  # compare=False
        with pytest.raises(FrozenInstanceError):
            b.x = 5
        with pytest.raises(FrozenInstanceError):
            del b.y
        assert copy.deepcopy(b) == b and copy.copy(b) == b
        assert dataclasses.replace(b, y=9) == rec(b.x, 9, b.tags, b.note, b.items)
        assert dataclasses.asdict(b) == dataclasses.asdict(a)
    assert rec(1).items is not rec(1).items  # a fresh default per instance
    assert [f.name for f in dataclasses.fields(rec)] == [f.name for f in dataclasses.fields(real)]
    assert dataclasses.is_dataclass(rec) and dataclasses.is_dataclass(rec(1))
    assert rec.__match_args__ == real.__match_args__ == ("x", "y", "tags", "note", "items")
    assert rec.kind == "point" and rec.__doc__ == "A point." and rec.__name__ == "Point"
    assert hasattr(rec(1), "__dict__") is hasattr(real(1), "__dict__") is (not slots)
    for bad_args, bad_kwargs in [((), {}), ((1, 2, 3, 4, 5, 6), {}), ((1,), {"x": 2}), ((1,), {"z": 1})]:
        with pytest.raises(TypeError):
            real(*bad_args, **bad_kwargs)
        with pytest.raises(TypeError):
            rec(*bad_args, **bad_kwargs)
    if init_path == "generated":  # the closure of KARTA_CODEGEN=off takes (*args, **kwargs)
        assert str(inspect.signature(rec)) == str(inspect.signature(real))
    match rec(1, 2):
        case rec(x, y):
            assert (x, y) == (1, 2)


def test_mutable_records_behave_as_mutable_dataclasses(init_path: str) -> None:
    real, rec = _pair(_mutable, frozen=False)
    a, b = real(1, only_kw=True), rec(1, only_kw=True)
    assert (a.size, a.label, a.extra, a.only_kw) == (b.size, b.label, b.extra, b.only_kw)
    b.size = 7
    assert b.size == 7 and b == rec(7, only_kw=True) and b != rec(7)
    assert rec.__hash__ is None and real.__hash__ is None  # eq without frozen: unhashable
    assert rec.label == real.label == "box"  # a default stays a class attribute, as in a dataclass
    assert not hasattr(rec, "extra") and not hasattr(real, "extra")
    assert rec.__match_args__ == real.__match_args__ == ("size", "label", "extra")
    with pytest.raises(TypeError):
        rec(1, "l", {}, True)  # only_kw is keyword-only


def test_post_init_and_inheritance(init_path: str) -> None:
    real, rec = _pair(_with_post_init)
    assert (rec(5, 1).start, rec(5, 1).end) == (real(5, 1).start, real(5, 1).end) == (5, 5)

    @record(slots=True)
    class Base:
        a: int
        b: int = 1

    @record(slots=True)
    class Child(Base):
        c: int = 2
        b: int = 5  # a redefined field keeps its place

    child = Child(0)
    assert (child.a, child.b, child.c) == (0, 5, 2)
    assert [f.name for f in dataclasses.fields(Child)] == ["a", "b", "c"]
    assert Child.__match_args__ == ("a", "b", "c") and child != Base(0, 5)
    assert repr(child).endswith("Child(a=0, b=5, c=2)")


def test_what_dataclass_refuses_is_refused_at_definition() -> None:
    with pytest.raises(TypeError, match="non-default argument"):

        @record
        class Late:
            a: int = 0
            b: int

    with pytest.raises(ValueError, match="mutable default"):

        @record
        class Shared:
            a: list[int] = []  # noqa: RUF012

    @record
    class Frozen:
        a: int

    with pytest.raises(TypeError, match="non-frozen"):

        @record(frozen=False)
        class Thawed(Frozen):
            b: int = 0

    with pytest.raises(TypeError, match="@dataclass"):

        @record
        class Hidden:
            a: int = field(default=0, init=False)


def test_a_class_defines_nothing_until_first_instantiated() -> None:
    @record
    class Lazy:
        a: int

    assert Lazy.__dict__["__init__"] is _records._lazy_init
    assert Lazy(1).a == 1
    assert Lazy.__dict__["__init__"] is not _records._lazy_init  # generated, then reused


def test_records_pickle(init_path: str) -> None:
    for value in (PickledSlots(1, ("x",)), PickledPlain(2, "y")):
        assert pickle.loads(pickle.dumps(value)) == value


def test_a_dataclass_may_subclass_a_record() -> None:
    @record(slots=True)
    class Base:
        a: int
        b: str = ""

    @dataclass(frozen=True, slots=True)
    class Child(Base):
        c: int = 0

    child = Child(1, "x", 2)
    assert (child.a, child.b, child.c) == (1, "x", 2)
    assert [f.name for f in dataclasses.fields(child)] == ["a", "b", "c"]
    assert child == Child(1, "x", 2) and hash(child) == hash(Child(1, "x", 2))
    with pytest.raises(FrozenInstanceError):
        child.a = 3
    assert Base.__dataclass_params__.frozen


def test_replace_is_dataclasses_replace_without_the_mirror() -> None:
    """``_records.replace`` gives what :func:`dataclasses.replace` gives (``__post_init__`` runs
    again, an unknown field is ``__init__``'s TypeError) and builds no dataclass mirror."""

    @record(slots=True)
    class Base:
        x: int
        tags: tuple[str, ...] = ()

    @record(slots=True)
    class Derived(Base):
        y: int = field(default=0, kw_only=True)
        seen: list[int] = field(default_factory=list, compare=False)

        def __post_init__(self) -> None:
            self.seen.append(self.x)

    d = Derived(1, ("a",), y=2)
    for changes in ({}, {"x": 5}, {"y": 7, "tags": ("b",)}):
        assert _records.replace(d, **changes) == dataclasses.replace(Derived(1, ("a",), y=2), **changes)
    fresh = Derived(1)
    assert _records.replace(fresh, x=3).seen == [1, 3]  # the same list, and __post_init__ ran
    with pytest.raises(TypeError):
        _records.replace(d, z=1)


def test_replace_builds_no_mirror() -> None:
    @record(slots=True)
    class Point:
        x: int
        y: int = 0

    assert _records.replace(Point(1), y=2) == Point(1, 2)
    assert "_record_mirror" not in Point.__dict__


def test_field_names_are_dataclasses_fields_without_the_mirror() -> None:
    """``_records.field_names`` lists what :func:`dataclasses.fields` lists (base fields first,
    a redefined field in its place, ``ClassVar`` left out) and builds no dataclass mirror."""

    @record(slots=True)
    class Base:
        x: int
        tags: tuple[str, ...] = ()
        kind: ClassVar[str] = "base"

    @record(slots=True)
    class Derived(Base):
        y: int = field(default=0, kw_only=True)
        x: int = 1

    assert _records.field_names(Derived) == ("x", "tags", "y")
    assert "_record_mirror" not in Derived.__dict__
    assert _records.field_names(Derived) == tuple(f.name for f in dataclasses.fields(Derived))
    assert _records.field_names(Base) == ("x", "tags")
