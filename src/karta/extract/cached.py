"""A component's generated extraction function read from the definition cache of
:mod:`karta._codegen`, without the generator (:mod:`karta.extract.compiled`, which writes the
entries): a command that finds a component's function there neither parses its paths nor
generates code, from the first object on.

The key is what the function depends on (:func:`content`: the id path, the whole-value, fragment
and scale paths, each conversion target by name and shape, canonical JSON) with the generator's
fingerprint; the entry holds the compiled code, its source (tracebacks) and a recipe for every
constant of its namespace (:mod:`karta.jq.generated_runtime`), the extraction's own among them:
``("target", name, "check" | "empty")`` (a conversion target's checker or empty value, resolved
among the targets of the component asking, never by a global name), ``("classes", table)`` (a
shape test's table of exact classes: ``"str"``, ``"dict"``, ``"list"`` or a branch number),
``("known", struct)`` and ``("flat", struct)`` (the field names of a Kubernetes struct, those
that hold no structs), ``("trim", descriptor)`` (the
trimming closure of :mod:`karta.extract.trim` for a descriptor of its field tree) and
``("implicit",)`` (the one instance of a component without an id path). The other names the
function reads are :func:`fixed_namespace`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from karta.extract import trim as trimming
from karta.extract.convert import TargetType
from karta.extract.scale import _scales, scale_of
from karta.extract.types import ExtractedInstance, _InstanceBuilder, new_extracted_instance

if TYPE_CHECKING:
    from karta.extract.compiled import ExtractionFn, WholePath

__all__ = ["CLASSES", "content", "fixed_namespace", "implicit_instance", "load", "targets_of"]

CLASSES: dict[str, type] = {"str": str, "dict": dict, "list": list}

_IMPLICIT: list[ExtractedInstance] = []


def implicit_instance() -> ExtractedInstance:
    """The one record every object of a component without paths shares (immutable)."""
    if not _IMPLICIT:
        _IMPLICIT.append(new_extracted_instance("", None, None, None, None, None))
    return _IMPLICIT[0]


def fixed_namespace() -> dict[str, Any]:
    """The names every generated extraction function reads besides its constants."""
    return {
        "_scale": scale_of,
        "_S": _scales,
        "_B": _InstanceBuilder,
        "_EI": ExtractedInstance,
        "_new": object.__new__,
        "_chain": chain.from_iterable,
        "_DICTS": _DICTS,
    }


_DICTS = frozenset({dict})  # the one class every item of an array of structs must have


def targets_of(
    whole: Sequence[WholePath], fragments: Sequence[tuple[str, str, TargetType]] | None
) -> dict[str, TargetType] | None:
    """The conversion targets of one component by name, or None when two differ under one name
    (then a recipe could not say which: nothing is cached)."""
    targets: dict[str, TargetType] = {}
    for target in [w[1] for w in whole if w is not None] + [f[2] for f in fragments or ()]:
        if targets.setdefault(target.name, target) != target:
            return None
    return targets


def content(
    id_path: str | None,
    whole: Sequence[WholePath],
    fragments: Sequence[tuple[str, str, TargetType]] | None,
    scale_paths: tuple[str | None, str | None, str | None] | None,
    names: tuple[str, ...] = (),
) -> Any:
    """Everything of a component its generated extraction function depends on, as JSON data
    (``names``: the references it takes as parameters, extension E3; absent without)."""
    out: dict[str, Any] = {
        "id": id_path,
        "whole": [None if w is None else [w[0], w[1].name, w[1].shape] for w in whole],
        "fragments": None if fragments is None else [[k, p, t.name, t.shape] for k, p, t in fragments],
        "scale": None if scale_paths is None else list(scale_paths),
    }
    if names:
        out["references"] = list(names)
    return out


def _resolver(targets: dict[str, TargetType]) -> Any:
    def resolve(recipe: tuple[Any, ...]) -> Any:
        tag, args = recipe[0], recipe[1:]
        if tag == "target" and len(args) == 2 and args[0] in targets and args[1] in ("check", "empty"):
            target = targets[args[0]]
            return target._check if args[1] == "check" else target.empty
        if tag == "classes" and len(args) == 1 and args[0].__class__ is dict:
            table: dict[str, Any] = {}
            for key, value in args[0].items():
                if key.__class__ is not str:
                    raise ValueError(f"not a class table: {recipe!r}")
                if value.__class__ is str and value in CLASSES:
                    table[key] = CLASSES[value]
                elif value.__class__ is int:
                    table[key] = value
                else:
                    raise ValueError(f"not a class table: {recipe!r}")
            return table
        if tag == "known" and len(args) == 1 and trimming.is_struct(args[0]):
            return trimming.fields_of(args[0])[0]
        if tag == "flat" and len(args) == 1 and trimming.is_struct(args[0]):
            return trimming.flat_of(args[0])
        if tag == "trim" and len(args) == 1 and trimming.is_descriptor(args[0]):
            return trimming.quiet(args[0])
        if tag == "implicit" and not args:
            return implicit_instance()
        raise ValueError(f"not a recipe: {recipe!r}")

    return resolve


def load(key: str, targets: dict[str, TargetType], what: str) -> ExtractionFn | None:
    """The function of the cache entry ``key``, or None (a miss, or an entry whose constants do
    not resolve: then the caller generates it and the entry is written again)."""
    from karta.jq.generated_runtime import load_function

    fn: ExtractionFn | None = load_function(key, fixed_namespace(), "extract", what, _resolver(targets))
    return fn
