"""Reading files and standard input: YAML or JSON documents, with usage errors that name the source."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from karta.cli.errors import UsageError


def read_text(path: str) -> tuple[str, str]:
    """Return ``(text, display name)`` for a path or ``-`` (standard input, shown as ``stdin``)."""
    if path == "-":
        return sys.stdin.read(), "stdin"
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8"), path
    except FileNotFoundError:
        raise UsageError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"cannot read {path}: it is a directory, expected a YAML or JSON file") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {path}: not UTF-8 text, expected a YAML or JSON file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def parse_documents(text: str, name: str) -> list[Any]:
    """All non-empty YAML (or JSON) documents of ``text``; a syntax error is a usage error."""
    import yaml  # ~30 ms: loaded when a file is read, not for every --help and completion

    try:
        docs = [
            d
            for d in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            if d is not None
        ]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UsageError(f"cannot parse {name}{where}: {problem}") from None
    except RecursionError:
        raise UsageError(f"cannot parse {name}: the document is nested too deeply") from None
    if "*" in text and _expanded_size(docs) > MAX_EXPANDED_VALUES:
        raise UsageError(
            f"cannot parse {name}: its YAML aliases (*name) expand to more than {MAX_EXPANDED_VALUES:,} "
            "values; write the repeated parts out, or use fewer aliases"
        )
    return docs


MAX_EXPANDED_VALUES = 1_000_000  # values a document may hold once aliases are expanded (alias bombs)


def _expanded_size(docs: list[Any]) -> int:
    """The number of values the documents hold with every alias expanded, counted up to just over
    :data:`MAX_EXPANDED_VALUES` (an alias bomb is never expanded, only counted)."""
    count = 0
    stack: list[Any] = list(docs)
    while stack and count <= MAX_EXPANDED_VALUES:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
            count += len(node)  # the keys
        elif isinstance(node, list):
            stack.extend(node)
    return count


def read_object(path: str, *, what: str) -> tuple[dict[str, Any], str]:
    """Exactly one Kubernetes object (a mapping with apiVersion and kind) from a file or stdin."""
    text, name = read_text(path)
    docs = parse_documents(text, name)
    if not docs:
        raise UsageError(f"{name} holds no {what}: the file is empty")
    if len(docs) > 1:
        raise UsageError(f"{name} holds {len(docs)} YAML documents; expected exactly one {what}")
    obj = docs[0]
    check_object(obj, name, what=what)
    return obj, name


def check_object(obj: Any, name: str, *, what: str) -> None:
    if not isinstance(obj, dict):
        raise UsageError(f"{name}: expected a {what} (a YAML mapping), got {_kind_of(obj)}")
    for key in ("apiVersion", "kind"):
        value = obj.get(key)
        if not isinstance(value, str) or not value:
            raise UsageError(f"{name}: the {what} has no {key}; expected a Kubernetes object")


def read_objects(path: str, *, what: str) -> list[dict[str, Any]]:
    """Every document of a (multi-document) file; each must be a Kubernetes object.

    A ``kind: List`` (as ``kubectl get -o yaml`` prints) is expanded into its items.
    """
    text, name = read_text(path)
    out: list[dict[str, Any]] = []
    for index, doc in enumerate(parse_documents(text, name)):
        label = f"{name} (document {index + 1})"
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            for item_index, item in enumerate(doc["items"]):
                check_object(item, f"{label} items[{item_index}]", what=what)
                out.append(item)
            continue
        check_object(doc, label, what=what)
        out.append(doc)
    return out


def _kind_of(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__
