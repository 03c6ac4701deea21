"""Serialising a Karta to its wire form: a camelCase dict in the field order of section 2.1, or YAML.

Rules: ``None`` is omitted; a non-optional field holding its default is omitted unless the CRD
requires it or it is always written (``optimizationInstructions: {}``, the four condition field
names, ``apiVersion``/``kind``/``metadata``/``spec``); an optional field that is set (even to ``""``
or ``{}``) is kept, so that loading the output gives back an equal model. An empty ``status`` is
omitted.
"""

from __future__ import annotations

from typing import Any

import yaml

from karta.model.base import Model
from karta.model.schema import ALWAYS_WRITTEN, REQUIRED, wire_fields
from karta.model.types import Karta, KartaStatus, ObjectMeta

__all__ = ["karta_to_dict", "karta_to_yaml"]


def _plain(value: Any) -> Any:
    if isinstance(value, Model):
        return _model(value)
    if isinstance(value, tuple | list | dict):
        return _plain_data(value)
    return value


def _plain_data(value: Any) -> Any:
    """A copy of free-form data (metadata, status conditions: as deep as the API server allows)
    with tuples as lists, without recursion; models inside are dumped as models."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (value, container, key in it)
    while stack:
        item, container, key = stack.pop()
        if isinstance(item, Model):
            container[key] = _model(item)
        elif isinstance(item, dict):
            copied: dict[Any, Any] = dict.fromkeys(item)
            container[key] = copied
            stack.extend((v, copied, k) for k, v in item.items())
        elif isinstance(item, tuple | list):
            listed: list[Any] = [None] * len(item)
            container[key] = listed
            stack.extend((v, listed, i) for i, v in enumerate(item))
        else:
            container[key] = item
    return root[0]


def _model(model: Model) -> dict[str, Any]:
    cls = type(model)
    if cls is ObjectMeta:
        return _metadata(model)
    keep = set(REQUIRED.get(cls, ())) | set(ALWAYS_WRITTEN.get(cls, ()))
    out: dict[str, Any] = {}
    for alias, wf in wire_fields(cls).items():
        value = getattr(model, wf.name)
        if value is None:
            continue
        if (
            alias not in keep
            and not wf.optional
            and value == cls.model_fields[wf.name].get_default(call_default_factory=True)
        ):
            continue
        if cls is Karta and alias == "status" and isinstance(value, KartaStatus) and not value.conditions:
            continue
        out[alias] = _plain(value)
    return out


def _metadata(meta: Model) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for alias, wf in wire_fields(ObjectMeta).items():
        value = getattr(meta, wf.name)
        if value is None or (value in ("", {}) and alias != "name"):
            continue
        out[alias] = _plain(value)
    for key, value in (meta.model_extra or {}).items():
        out[key] = _plain(value)
    return out


def karta_to_dict(karta: Karta) -> dict[str, Any]:
    """The wire form of ``karta``: camelCase keys, section 2.1 order, unset fields omitted."""
    return _model(karta)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe dumper that writes multi-line strings (long jq programs) as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def karta_to_yaml(karta: Karta) -> str:
    """``karta`` as a YAML document (block style, keys in wire order)."""
    text: str = yaml.dump(
        karta_to_dict(karta), Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    return text
