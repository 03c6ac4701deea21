"""Kubernetes label selectors matched in the process (the API server's syntax, parsed strictly).

Owns :func:`label_matcher`: what a label selector string selects, as a function of an object's
labels, so that the shared cache (:mod:`karta.kube.cache`) can serve a label-selected watch from
an informer of the whole type without a second watch. The grammar is the API server's
(``k8s.io/apimachinery/pkg/labels``): requirements separated by commas, each ``key``, ``!key``,
``key=value``, ``key==value``, ``key!=value``, ``key in (v1,v2)`` or ``key notin (v1,v2)``.
Anything else raises :class:`ValueError` (the caller then leaves the selection to the server).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["label_matcher", "object_labels"]

Labels = Mapping[str, Any]
_KEY: Final = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE: Final = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_EXISTS = re.compile(rf"(?P<neg>!?)\s*(?P<key>{_KEY})")
_EQUALS = re.compile(rf"(?P<key>{_KEY})\s*(?P<op>==|=|!=)\s*(?P<value>{_VALUE})")
_SET = re.compile(rf"(?P<key>{_KEY})\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)")
_VALUE_RE = re.compile(_VALUE)


def object_labels(obj: Mapping[str, Any]) -> Labels:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _split(selector: str) -> list[str]:
    """The requirements: commas outside parentheses separate them."""
    parts, depth, current = [], 0, ""
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced parentheses in label selector {selector!r}")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if depth:
        raise ValueError(f"unbalanced parentheses in label selector {selector!r}")
    return [*parts, current]


def _requirement(text: str) -> Callable[[Labels], bool]:
    text = text.strip()
    if m := _SET.fullmatch(text):
        key = m["key"]
        values = frozenset(v.strip() for v in m["values"].split(","))
        if not all(_VALUE_RE.fullmatch(v) for v in values):
            raise ValueError(f"invalid value in label selector requirement {text!r}")
        if m["op"] == "in":
            return lambda labels: key in labels and labels[key] in values
        return lambda labels: key not in labels or labels[key] not in values
    if m := _EQUALS.fullmatch(text):
        key, value = m["key"], m["value"]
        if m["op"] == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: key in labels and labels[key] == value
    if m := _EXISTS.fullmatch(text):
        key = m["key"]
        if m["neg"]:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise ValueError(f"unsupported label selector requirement {text!r}")


def label_matcher(selector: str) -> Callable[[Mapping[str, Any]], bool]:
    """Whether an object (its ``metadata.labels``) is selected by ``selector`` (all requirements
    hold; an empty selector selects everything). :class:`ValueError` for any other syntax."""
    if not selector.strip():
        return lambda _obj: True
    requirements = [_requirement(part) for part in _split(selector)]
    return lambda obj: all(req(object_labels(obj)) for req in requirements)
