"""Generated extraction functions: one straight-line Python function per component definition.

:func:`compile_extraction` turns every path a full extraction of one component needs (instance
ids, whole values, fragments, scale) into one function, through :class:`karta.jq.codegen.Emitter`.
Paths of the shape ``P[] | S`` that share ``P[]`` iterate its items once, in one loop that
evaluates every ``S`` per item; the id checks, pairing checks, typed conversion (the generated
shape checkers of :mod:`karta.extract.convert`), fragment records and scale values are inlined.

The function returns a dict of the parts by name (:data:`PART_KEYS`: ``ids``, the whole-value
parts ``pod_template_spec_path``, ``pod_spec_path`` and ``metadata_path``, ``fragments``,
``scales``, and ``instances``, the id -> ExtractedInstance map; parts without a definition are
absent, and ``instances`` may be), ready to merge into a component's memo, or
None whenever anything is not plainly valid: a jq error, a path over the result limit, a count
that does not pair up, a conversion that would fail or need work (a float, a numeric string
scale). The caller then runs the general code, which produces the exact
result or error, so every error message comes from one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from karta import _codegen as codegen
from karta.errors import JqError
from karta.extract import trim as trimming
from karta.extract.cached import CLASSES, fixed_namespace, implicit_instance
from karta.extract.convert import ARRAY, OBJECT, QUANTITY_MAP, STRING, STRING_MAP, Shape, TargetType
from karta.extract.scale import INT32_MAX, INT32_MIN
from karta.extract.types import _InstanceBuilder
from karta.jq import syntax as A
from karta.jq.codegen import Emitter, fast_node, is_single, split_iteration
from karta.jq.fastpath import Unsupported

__all__ = ["PART_KEYS", "ExtractionFn", "compile_extraction"]

ExtractionFn = Callable[[Any, int], "dict[str, Any] | None"]

_WHOLE_KEYS = ("pod_template_spec_path", "pod_spec_path", "metadata_path")
PART_KEYS = ("ids", *_WHOLE_KEYS, "fragments", "scales", "instances")

WholePath = tuple[str, TargetType] | None  # (path, target) of a whole-value part, or None


def compile_extraction(
    *,
    id_path: str | None,
    whole: Sequence[WholePath],
    fragments: Sequence[tuple[str, str, TargetType]] | None,
    scale_paths: tuple[str | None, str | None, str | None] | None,
    label: str = "",
    key: str | None = None,
    names: tuple[str, ...] = (),
) -> ExtractionFn | None:
    """The generated extraction function of one component, or None when a path is outside the
    fast path (or anything else keeps it from being generated; see :mod:`karta._codegen`).
    ``label`` names the component in tracebacks and dumps. ``names``: the definition's references
    (extension E3), bound as ``$<name>`` to parameters after ``limit``, in that order (the function
    is then called ``fn(obj, limit, *values)``).

    ``whole`` lists the pod template, pod spec and metadata parts in that order; ``fragments``
    the (record key, path, target) of each fragment path in record order, or None without a
    fragmented definition. ``key``: the definition cache's key of this component
    (:mod:`karta.extract.cached`), under which the function is kept.
    """
    what = f"extraction of {label or id_path or 'a component'}"
    if not codegen.enabled():
        return None
    try:
        generator = _Generator(id_path, whole, fragments, scale_paths, recipes=key is not None, names=names)
        fn = generator.build(what)
        e = generator.e
        if key is not None and e.recipes is not None:
            codegen.store_definition(key, e.code, e.recipes, e.source)
        return fn
    except (Unsupported, JqError, RecursionError) as exc:  # outside the fast path, invalid, too deep
        codegen.declined(what, exc)
    except Exception as exc:  # a generator gap: the general code runs (raises under strict)
        codegen.failed(what, exc)
    return None


class _Generator:
    def __init__(
        self,
        id_path: str | None,
        whole: Sequence[WholePath],
        fragments: Sequence[tuple[str, str, TargetType]] | None,
        scale_paths: tuple[str | None, str | None, str | None] | None,
        *,
        recipes: bool = False,
        names: tuple[str, ...] = (),
    ) -> None:
        self.id_path = id_path
        self.whole = list(whole)
        self.fragments = fragments
        self.scale_paths = scale_paths
        self.e = Emitter(recipes=recipes)
        self.e.namespace.update(fixed_namespace())
        self.names = names
        self.params = self.e.bind_parameters(names)  # the references' values, after limit
        self.results: dict[str, str] = {}  # path -> variable holding its outputs

    def build(self, what: str) -> ExtractionFn:
        aligned = self._aligned_parts()
        if aligned is not None:
            return self._build_aligned(*aligned, what=what)
        e = self.e
        paths: list[str] = []
        for path in (
            self.id_path,
            *(w[0] for w in self.whole if w is not None),
            *(f[1] for f in self.fragments or ()),
            *(self.scale_paths or ()),
        ):
            if path is not None and path not in paths:
                paths.append(path)
        with e.block(f"def extract(v, limit{self.params}):"):
            with e.block("try:"):
                self._evaluate(paths)
            with e.block("except (JqFail, RecursionError):"):
                e.line("return None")
            for path in paths:
                e.line(f"if len({self.results[path]}) > limit: return None")
            self._ids()
            parts = [self._whole(w) for w in self.whole]
            parts.append(self._fragments())
            parts.append(self._scales())
            e.line(f"return {_parts(['ids', *parts, 'None'])}")
        fn: ExtractionFn = e.build("extract", what=what)
        return fn

    # --- the aligned form ----------------------------------------------------------------------------

    def _aligned_parts(self) -> tuple[A.Node, dict[str, A.Node], A.Node | None] | None:
        """(``P[]``, path -> ``S``, keyed ``P`` or None) when every path is ``P[] | S`` with one
        ``P[]`` and a single-valued ``S``, the id path possibly ``P | to_entries[] | .key`` (the
        sorted keys of an object ``P``, in the order of ``P[]``): every path then yields exactly
        one output per item, so the parts pair up by construction and each item is converted and
        recorded in one pass."""
        items: A.Node | None = None
        keyed: A.Node | None = None
        each: dict[str, A.Node] = {}
        if self.id_path is None:
            # One implicit instance: every path must yield exactly one output.
            for path in self._paths():
                node = fast_node(path, self.names)
                if not is_single(node):
                    return None
                each[path] = node
            return A.Identity(), each, None
        for path in self._paths():
            node = fast_node(path, self.names)
            if path == self.id_path:
                keyed = _entry_keys_of(node)
                if keyed is not None:
                    if items is not None and items != A.Iterate(keyed):
                        return None
                    items = A.Iterate(keyed)
                    continue
            split = split_iteration(node)
            if split is None or not is_single(split[1]) or (items is not None and split[0] != items):
                return None
            items = split[0]
            each[path] = split[1]
        assert items is not None
        return items, each, keyed

    def _paths(self) -> list[str]:
        paths: list[str] = []
        for path in (
            self.id_path,
            *(w[0] for w in self.whole if w is not None),
            *(f[1] for f in self.fragments or ()),
            *(self.scale_paths or ()),
        ):
            if path is not None and path not in paths:
                paths.append(path)
        return paths

    def _build_aligned(
        self, items: A.Node, each: dict[str, A.Node], keyed: A.Node | None, *, what: str
    ) -> ExtractionFn:
        e = self.e
        wholes = ["None" if w is None else e.tmp("w") for w in self.whole]
        frags = "None" if self.fragments is None else e.tmp("frags")
        scales = "None" if self.scale_paths is None else e.tmp("scales")
        lists = [name for name in (*wholes, frags, scales) if name != "None"]

        def value(path: str, item: str) -> str:
            out = e.tmp("y")
            e.emit(each[path], item, lambda x: e.line(f"{out} = {x}"))
            return out

        def body(item: str, key: str | None = None) -> None:
            if key is None:
                assert self.id_path is not None
                ident = value(self.id_path, item)
                e.line(f"if {ident}.__class__ is not str: return None")
            else:
                ident = key  # an object key: a string
            e.line(f"ids.append({ident})")
            record = [ident]
            for part, name in zip(self.whole, wholes, strict=True):
                if part is None:
                    record.append("None")
                    continue
                y = value(part[0], item)
                with e.block(f"if {y} is None:"):
                    e.line(f"{y} = {_empty(e, part[1])}()")
                with e.block("else:"):
                    _converted(e, part[1], y)
                e.line(f"{name}.append({y})")
                record.append(y)
            if self.fragments is None:
                record.append("None")
            else:
                rec = e.tmp("rec")
                e.line(f"{rec} = {{}}")
                for key, path, target in self.fragments:
                    y = value(path, item)
                    with e.block(f"if {y} is not None:"):
                        _converted(e, target, y)
                        e.line(f"if {y}: {rec}[{key!r}] = {y}")
                e.line(f"{frags}.append({rec})")
                record.append(rec)
            if self.scale_paths is None:
                record.append("None")
            else:
                values: list[str] = []
                for scale_path in self.scale_paths:
                    if scale_path is None:
                        values.append("None")
                        continue
                    y = value(scale_path, item)
                    e.line(
                        f"if {y} is not None and ({y}.__class__ is not int "
                        f"or not {INT32_MIN} <= {y} <= {INT32_MAX}): return None"
                    )
                    values.append(y)
                sc = e.tmp("sc")
                key = f"({', '.join(values)})"
                e.line(f"{sc} = _S.get({key}) or _scale{key}")
                e.line(f"{scales}.append({sc})")
                record.append(sc)
            if self.id_path is None and all(part == "None" for part in record[1:]):
                # Nothing but the implicit id: one immutable record serves every call.
                e.line(f"inst[{ident}] = {e.const(implicit_instance(), ('implicit',))}")
                return
            # new_extracted_instance, inlined, its __init__ too: slot stores, no call frame
            r = e.tmp("rec")
            e.line(f"{r} = _new(_B)")
            for slot, field_value in zip(_InstanceBuilder.__slots__, record, strict=True):
                e.line(f"{r}.{slot} = {field_value}")
            e.line(f"{r}.__class__ = _EI")
            e.line(f"inst[{ident}] = {r}")

        with e.block(f"def extract(v, limit{self.params}):"):
            e.line("ids = []")
            e.line("inst = {}")
            for name in lists:
                e.line(f"{name} = []")
            with e.block("try:"):
                if self.id_path is None:
                    e.line('key = ""')
                    body("v", "key")
                elif keyed is None:
                    e.emit(items, "v", body)
                else:
                    e.emit(keyed, "v", lambda obj: self._keyed_items(obj, body))
            with e.block("except (JqFail, RecursionError):"):
                e.line("return None")
            e.line("n = len(ids)")
            if self.id_path is None:
                e.line("if n > limit: return None")
            else:
                # Every path yields n outputs; a duplicate id collapses in inst.
                e.line('if n > limit or len(inst) != n or "" in inst: return None')
            e.line(f"return {_parts(['ids', *wholes, frags, scales, 'inst'])}")
        fn: ExtractionFn = e.build("extract", what=what)
        return fn

    def _keyed_items(self, obj: str, body: Callable[[str, str], None]) -> None:
        # Anything but an object (an array's indices are not string ids, null has no entries) is
        # left to the general code.
        e = self.e
        e.line(f"if {obj}.__class__ is not dict: return None")
        key, item = e.tmp("key"), e.tmp("item")
        with e.block(f"for {key} in sorted({obj}):"):
            e.line(f"{item} = {obj}[{key}]")
            body(item, key)

    # --- evaluating the paths ----------------------------------------------------------------------

    def _evaluate(self, paths: list[str]) -> None:
        e = self.e
        groups: dict[A.Node, list[tuple[str, A.Node]]] = {}
        for path in paths:
            node = fast_node(path, self.names)
            out = self.results[path] = e.tmp("r")
            e.line(f"{out} = []")
            split = split_iteration(node)
            if split is None:
                e.emit(node, "v", _appender(e, out))
            else:
                groups.setdefault(split[0], []).append((out, split[1]))
        for items_node, members in groups.items():
            items = e.tmp("items")
            e.line(f"{items} = []")
            e.emit(items_node, "v", _appender(e, items))
            item = e.tmp("item")
            with e.block(f"for {item} in {items}:"):
                for out, each in members:
                    e.emit(each, item, _appender(e, out))

    # --- checks and conversions ----------------------------------------------------------------------

    def _ids(self) -> None:
        e = self.e
        if self.id_path is None:
            e.line('ids = [""]')
            e.line("n = 1")
            return
        e.line(f"ids = {self.results[self.id_path]}")
        with e.block("for x in ids:"):
            e.line("if x.__class__ is not str: return None")
        e.line("n = len(ids)")
        e.line('if n != len(set(ids)) or "" in ids: return None')

    def _whole(self, part: WholePath) -> str:
        if part is None:
            return "None"
        e = self.e
        path, target = part
        raw, out = self.results[path], e.tmp("w")
        empty = _empty(e, target)
        e.line(f"if len({raw}) != n: return None")
        e.line(f"{out} = []")
        with e.block(f"for x in {raw}:"):
            with e.block("if x is None:"):
                e.line(f"{out}.append({empty}())")
            with e.block("else:"):
                _converted(e, target, "x")
                e.line(f"{out}.append(x)")
        return out

    def _fragments(self) -> str:
        if self.fragments is None:
            return "None"
        e = self.e
        out = e.tmp("frags")
        if not self.fragments:
            e.line("if n != 0: return None")  # no paths: no records, which pair up only with no ids
            e.line(f"{out} = []")
            return out
        names = []
        for _, path, _ in self.fragments:
            raw = self.results[path]
            e.line(f"if len({raw}) != n: return None")
            names.append(raw)
        e.line(f"{out} = []")
        items = [f"f{i}" for i in range(len(names))]
        loop = f"for {', '.join(items)}, in zip({', '.join(names)}):"
        with e.block(loop):
            e.line("rec = {}")
            for item, (key, _, target) in zip(items, self.fragments, strict=True):
                with e.block(f"if {item} is not None:"):
                    _converted(e, target, item)
                    e.line(f"if {item}: rec[{key!r}] = {item}")
            e.line(f"{out}.append(rec)")
        return out

    def _scales(self) -> str:
        if self.scale_paths is None:
            return "None"
        e = self.e
        out = e.tmp("scales")
        columns: list[str | None] = []
        for path in self.scale_paths:
            if path is None:
                columns.append(None)
                continue
            raw = self.results[path]
            e.line(f"if len({raw}) > n: return None")
            with e.block(f"for x in {raw}:"):
                e.line(
                    f"if x is not None and (x.__class__ is not int or not {INT32_MIN} <= x <= {INT32_MAX}): "
                    "return None"
                )
            columns.append(raw)
        present = [c for c in columns if c is not None]
        e.line(f"if max({', '.join(f'len({c})' for c in present)}, 0) != n: return None")
        padded: list[str | None] = []
        for column in columns:
            if column is None:
                padded.append(None)
                continue
            name = e.tmp("col")
            e.line(f"{name} = {column} if len({column}) == n else {column} + [None] * (n - len({column}))")
            padded.append(name)
        names = [f"s{i}" for i, c in enumerate(padded) if c is not None]
        values = []
        index = 0
        for column in padded:
            if column is None:
                values.append("None")
            else:
                values.append(names[index])
                index += 1
        key = f"({', '.join(values)})"
        source = f"zip({', '.join(c for c in padded if c is not None)})"
        e.line(f"{out} = [_S.get({key}) or _scale{key} for {', '.join(names)}, in {source}]")
        return out


def _parts(names: list[str]) -> str:
    """A dict display of the parts held by variables ``names`` (in PART_KEYS order; "None" for
    a part without a definition, left out)."""
    items = [f"{key!r}: {name}" for key, name in zip(PART_KEYS, names, strict=True) if name != "None"]
    return "{" + ", ".join(items) + "}"


def _appender(e: Emitter, target: str) -> Callable[[str], None]:
    def append(x: str) -> None:
        e.line(f"{target}.append({x})")

    return append


_TO_ENTRIES_ITER = A.Iterate(A.Call("to_entries"))
_DOT_KEY = A.Index(A.Identity(), A.Literal("key"))


def _entry_keys_of(node: A.Node) -> A.Node | None:
    """``P`` of ``P | to_entries[] | .key`` (either grouping), else None."""
    if not isinstance(node, A.Pipe):
        return None
    if (
        isinstance(node.right, A.Pipe)
        and node.right.left == _TO_ENTRIES_ITER
        and node.right.right == _DOT_KEY
    ):
        return node.left
    if isinstance(node.left, A.Pipe) and node.left.right == _TO_ENTRIES_ITER and node.right == _DOT_KEY:
        return node.left.left
    return None


_EXACT = {STRING: "str", OBJECT: "dict", ARRAY: "list"}


def _empty(e: Emitter, target: TargetType) -> str:
    """The name of ``target``'s empty-value constructor in the generated function."""
    return e.const(target.empty, ("target", target.name, "empty"))


def _converted(e: Emitter, target: TargetType, var: str) -> None:
    """Lines that ``return None`` unless ``var`` (not None) plainly converts to ``target``, and
    leave it trimmed to the target's Kubernetes struct in ``var`` (:mod:`karta.extract.trim`)."""
    result = _shape_test(e, target.shape, var, trimming.descriptor_of(target.name))
    if result != var:
        e.line(f"{var} = {result}")


def _trim_call(e: Emitter, desc: str, var: str) -> str:
    """``var`` trimmed to ``desc`` by the closures of :mod:`karta.extract.trim` (a mismatch:
    ``return None``, the general code reports it); the variable holding the result."""
    t = e.tmp("t")
    e.line(f"{t} = {e.const(trimming.quiet(desc), ('trim', desc))}({var})")
    e.line(f"if {t} is None: return None")
    return t


def _shape_test(e: Emitter, shape: Shape, var: str, desc: str | None = None) -> str:
    """Lines that ``return None`` unless ``var`` (not None) plainly has ``shape``; with ``desc``
    (a descriptor of the Kubernetes field tree: ``PodSpec``, ``[]Container``), the same pass
    trims it to that struct: the variable returned holds ``var`` itself when nothing is dropped,
    else a copy of the objects and arrays on the way to what is (the input is never modified).

    Exact classes only: whatever the checker of :mod:`karta.extract.convert` would reject is
    rejected here too, and anything unusual besides (a subclass of dict or str), which the general
    code then converts with its own checker and messages. Inlined, so no call per value. Where the
    shape stops (a container is only checked to be an object), the struct's trimming closure
    walks the rest."""
    if desc is not None and isinstance(shape, dict):
        return _struct_test(e, shape, var, desc)
    expanded = desc is not None and desc[:2] == "[]" and desc[2:] in _EXPAND
    if desc is not None and isinstance(shape, tuple) and (isinstance(shape[0], dict) or expanded):
        e.line(f"if {var}.__class__ is not list: return None")
        x, i, a, t = e.tmp("x"), e.tmp("i"), e.tmp("a"), e.tmp("r")
        e.line(f"{a} = None")
        with e.block(f"for {i}, {x} in enumerate({var}):"), e.block(f"if {x} is not None:"):
            item = _shape_test(e, shape[0] if isinstance(shape[0], dict) else {}, x, desc[2:])
            with e.block(f"if {item} is not {x}:"):
                e.line(f"if {a} is None: {a} = {var}.copy()")
                e.line(f"{a}[{i}] = {item}")
        e.line(f"{t} = {var} if {a} is None else {a}")
        return t
    if isinstance(shape, str) and shape in _EXACT:
        e.line(f"if {var}.__class__ is not {_EXACT[shape]}: return None")
    elif shape in (STRING_MAP, QUANTITY_MAP):
        e.line(f"if {var}.__class__ is not dict: return None")
        x = e.tmp("x")
        with e.block(f"for {x} in {var}.values():"):
            if shape == STRING_MAP:
                e.line(f"if {x}.__class__ is not str and {x} is not None: return None")
            else:  # str, int or float: never bool (its class is not int)
                c = e.tmp("c")
                e.line(f"{c} = {x}.__class__")
                test = f"{c} is not str and {c} is not int and {c} is not float and {x} is not None"
                e.line(f"if {test}: return None")
    elif isinstance(shape, tuple):
        e.line(f"if {var}.__class__ is not list: return None")
        item = shape[0]
        if desc is None or not (isinstance(item, str) and item in _EXACT):
            x = e.tmp("x")
            with e.block(f"for {x} in {var}:"):
                if isinstance(item, str) and item in _EXACT:
                    e.line(f"if {x}.__class__ is not {_EXACT[item]} and {x} is not None: return None")
                else:
                    with e.block(f"if {x} is not None:"):
                        _shape_test(e, item, x)
        # else: the items of an array of structs are checked by its trimming closure below
    elif isinstance(shape, dict) and len(shape) <= 2:
        # A field or two (a pod template: metadata and spec): read them rather than loop.
        e.line(f"if {var}.__class__ is not dict: return None")
        for key, sub in shape.items():
            x = e.tmp("x")
            e.line(f"{x} = {var}.get({key!r})")
            with e.block(f"if {x} is not None:"):
                _shape_test(e, sub, x)
    elif isinstance(shape, dict):
        # The table maps a field to its exact class (a leaf, checked by one test) or to the
        # number of the branch that checks its nested shape; unknown fields pass.
        # ``names``: the table's recipe (karta.extract.cached), classes by name.
        names: dict[str, str | int] = {}
        branches: list[Shape] = []
        for key, sub in shape.items():
            if isinstance(sub, str) and sub in _EXACT:
                names[key] = _EXACT[sub]
            else:
                if sub not in branches:
                    branches.append(sub)
                names[key] = branches.index(sub)
        table = {key: CLASSES[n] if n.__class__ is str else n for key, n in names.items()}
        e.line(f"if {var}.__class__ is not dict: return None")
        k, x, c = e.tmp("k"), e.tmp("x"), e.tmp("c")
        with e.block(f"for {k}, {x} in {var}.items():"):
            e.line(f"{c} = {e.const(table, ('classes', names))}.get({k})")
            e.line(f"if {c} is None or {x}.__class__ is {c} or {x} is None: continue")
            for number, sub in enumerate(branches):
                with e.block(f"{'if' if number == 0 else 'elif'} {c} == {number}:"):
                    _shape_test(e, sub, x)
            e.line("else: return None")  # a leaf of the wrong class
    else:  # pragma: no cover
        raise AssertionError(f"unknown shape {shape!r}")
    return var if desc is None else _trim_call(e, desc, var)


# Structs walked field by field in the generated code (beyond the shapes, which stop at "an
# object"): only the container, which every template has and whose fields mostly hold structs
# (expanding probes, volumes or affinities too made a pod template's code 20 times longer for
# little gain); every other struct is tested in one expression (its fields known, none holding
# structs), and only when that fails is it trimmed by its closure. Fields most objects have come
# first in the branches.
_EXPAND = frozenset({"Container"})
_COMMON = frozenset(
    {"resources", "ports", "env", "volumeMounts", "volumes", "tolerations", "affinity", "readinessProbe"}
)


def _held_test(e: Emitter, desc: str, x: str) -> str:
    """Lines that trim ``x`` (not None), a field holding ``desc``, checking its JSON types
    (``return None`` on a mismatch, which the general code reports); the variable holding the
    result. A plainly clean value costs no call."""
    if desc[:2] == "{}" or (desc[:2] == "[]" and desc[2:4] in ("[]", "{}")):
        return _trim_call(e, desc, x)
    if desc[:2] == "[]" and desc[2:] in _EXPAND:
        return _shape_test(e, (OBJECT,), x, desc)
    struct = desc.removeprefix("[]")
    if struct in _EXPAND:
        return _struct_test(e, {}, x, struct)
    # The struct's fields that hold no structs: keys all among them, the value is kept as it is.
    if desc[:2] == "[]" and len(trimming.flat_of(struct)) * 4 < len(trimming.fields_of(struct)[0]):
        # Items that nearly always hold a struct (a volume: its name, then its source): the
        # closure, which passes plain ones in its loop, without a test that would fail first.
        e.line(f"if {x}.__class__ is not list: return None")
        return _trim_call(e, desc, x)
    flat = e.const(trimming.flat_of(struct), ("flat", struct))
    t = e.tmp("t")
    if desc[:2] == "[]":
        # Every item a dict (a None item takes the closure) and the keys of all items at once
        # among the flat fields: each test one call that loops in C.
        e.line(f"if {x}.__class__ is not list: return None")
        with e.block(f"if _DICTS.issuperset(map(type, {x})) and {flat}.issuperset(_chain({x})):"):
            e.line(f"{t} = {x}")
        with e.block("else:"):
            e.line(f"{t} = {_trim_call(e, desc, x)}")
        return t
    with e.block(f"if {x}.__class__ is dict and {flat}.issuperset({x}):"):
        e.line(f"{t} = {x}")
    with e.block("else:"):
        e.line(f"{t} = {_trim_call(e, desc, x)}")
    return t


def _struct_test(e: Emitter, shape: dict[str, Shape], var: str, struct: str) -> str:
    """:func:`_shape_test` of an object shape that is the Kubernetes struct ``struct``: the
    fields it does not have are dropped, and each field that holds structs is checked against its
    shape (if any) and trimmed to what it holds, in the one walk over the object's fields."""
    known, held = trimming.fields_of(struct)
    # field -> (its shape or None, its descriptor or None): the shape's fields, then the
    # struct-holding fields it does not check
    fields: dict[str, tuple[Shape, str | None]] = {key: (sub, held.get(key)) for key, sub in shape.items()}
    extra = sorted((key for key in held if key not in fields), key=lambda key: (key not in _COMMON, key))
    fields.update((key, (None, held[key])) for key in extra)
    clean, d, out = e.tmp("u"), e.tmp("d"), e.tmp("r")
    e.line(f"if {var}.__class__ is not dict: return None")
    e.line(f"{clean} = {e.const(known, ('known', struct))}.issuperset({var})")
    e.line(f"{d} = None")

    def field(key: str, sub: Shape, desc: str | None, x: str) -> None:
        """Lines for the field ``key`` (its value ``x``, not None)."""
        if desc is None:
            _shape_test(e, sub, x)
            return
        plain = sub is None or sub == OBJECT or sub == (OBJECT,)
        t = _held_test(e, desc, x) if plain else _shape_test(e, sub, x, desc)
        with e.block(f"if {t} is not {x}:"):
            e.line(f"if {d} is None: {d} = {{}}")
            e.line(f"{d}[{key}] = {t}")

    if len(fields) <= 2:
        # A field or two (a pod template: metadata and spec): read them rather than loop.
        for key, (sub, desc) in fields.items():
            x = e.tmp("x")
            e.line(f"{x} = {var}.get({key!r})")
            with e.block(f"if {x} is not None:"):
                field(repr(key), sub, desc, x)
    else:
        # The table maps a field to its exact class (a leaf, checked by one test) or to the
        # number of the branch that checks its nested shape or trims what it holds; other
        # fields pass (dropped below when the struct does not have them).
        names: dict[str, str | int] = {}
        branches: list[tuple[Shape, str | None]] = []
        for key, (sub, desc) in fields.items():
            if desc is None and isinstance(sub, str) and sub in _EXACT:
                names[key] = _EXACT[sub]
            else:
                if (sub, desc) not in branches:
                    branches.append((sub, desc))
                names[key] = branches.index((sub, desc))
        table = {key: CLASSES[n] if n.__class__ is str else n for key, n in names.items()}
        k, x, c = e.tmp("k"), e.tmp("x"), e.tmp("c")
        with e.block(f"for {k}, {x} in {var}.items():"):
            e.line(f"{c} = {e.const(table, ('classes', names))}.get({k})")
            e.line(f"if {c} is None or {x}.__class__ is {c} or {x} is None: continue")
            for number, (sub, desc) in enumerate(branches):
                with e.block(f"{'if' if number == 0 else 'elif'} {c} == {number}:"):
                    field(k, sub, desc, x)
            e.line("else: return None")  # a leaf of the wrong class
    with e.block(f"if {clean} and {d} is None:"):
        e.line(f"{out} = {var}")
    with e.block("else:"):
        known_name = e.const(known, ("known", struct))
        e.line(f"{out} = {{k: x for k, x in {var}.items() if k in {known_name}}}")
        e.line(f"if {d} is not None: {out}.update({d})")
    return out
