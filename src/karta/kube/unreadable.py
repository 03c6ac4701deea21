"""Lists with an object the client cannot read: the others are kept, the bad one is named.

The API server stores what a CRD with ``x-kubernetes-preserve-unknown-fields`` lets a user write,
including an object nested thousands of levels deep or holding a number no double can carry.
orjson refuses such an answer whole (it stops at 1,024 levels), and a list holding one such object
would then be unreadable whole: an informer of that kind never syncs, and every part of the
controller, ``kli get`` and the web view are blind to every object of the kind because of one.

:func:`split_list` cuts a list answer into its items without decoding them (one pass over the
bytes with a depth counter, never recursive), so that each item is decoded on its own: the readable
ones are kept, each unreadable one is described by what its first bytes say (``Kind
namespace/name``) and the reason. It runs only after orjson refused the whole answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

__all__ = ["decode_items", "label_of", "split_list"]

# A string token (escapes included) or one of the brackets: everything else is skipped.
_TOKEN: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_LABEL_WINDOW: Final = 4096  # bytes of an item read for its kind, namespace and name
_FIELD: Final = {
    key: re.compile(rb'"' + key.encode() + rb'"\s*:\s*"((?:[^"\\]|\\.){0,253})"')
    for key in ("kind", "namespace", "name")
}


def split_list(body: bytes) -> tuple[bytes, list[bytes]] | None:
    """The list answer ``body`` as (the answer with ``"items":[]``, the raw bytes of each item),
    or None when it is not an object with a top-level ``items`` array."""
    depth = 0
    items_key_at = -1  # the end of a top-level "items" key, while its value is awaited
    array_start = -1
    item_start = -1
    items: list[bytes] = []
    for match in _TOKEN.finditer(body):
        token = match.group()
        if token[0] == 0x22:  # a string
            if depth == 1 and token == b'"items"' and array_start < 0:
                items_key_at = match.end()
            continue
        if token in (b"[", b"{"):
            depth += 1
            if depth == 2 and items_key_at >= 0 and token == b"[":
                if body[items_key_at : match.start()].strip() == b":":
                    array_start = match.start()
                items_key_at = -1
            elif depth == 3 and array_start >= 0 and item_start < 0:
                item_start = match.start()
            continue
        depth -= 1
        if depth == 2 and item_start >= 0:
            items.append(body[item_start : match.end()])
            item_start = -1
        elif depth == 1 and array_start >= 0:
            return body[:array_start] + b"[]" + body[match.end() :], items
        elif depth < 1:
            return None
    return None


def label_of(item: bytes) -> str:
    """``Kind namespace/name`` as far as the first bytes of an item say (``an object`` else)."""
    head = item[:_LABEL_WINDOW]
    found = {key: pattern.search(head) for key, pattern in _FIELD.items()}
    text = {key: m.group(1).decode("utf-8", "replace") if m else "" for key, m in found.items()}
    kind = text["kind"] or "an object"
    name = "/".join(p for p in (text["namespace"], text["name"]) if p)
    shown = f"{kind} {name}".strip() if name else kind
    return "".join(c if c.isprintable() else "?" for c in shown)


def decode_items(
    items: list[bytes], decode: Callable[[bytes], Any], why: Callable[[bytes], str]
) -> tuple[list[Any], list[str]]:
    """Each item decoded with ``decode``; those it refuses as ``<label>: <why(item)>``."""
    good: list[Any] = []
    bad: list[str] = []
    for item in items:
        try:
            good.append(decode(item))
        except Exception:  # any refusal: the item is named, the others kept
            bad.append(f"{label_of(item)}: {why(item)}")
    return good, bad
