"""Writing a draft as YAML with comments above the keys they concern.

PyYAML cannot emit comments, so this is a small block-style writer: mappings and lists in block
style (lists at their key's indentation, as in the catalog), small comment-free leaves in flow
style when they fit, scalars quoted by PyYAML itself so that the text loads back unchanged.
"""

from __future__ import annotations

import textwrap
from typing import Any

import yaml

__all__ = ["Comments", "to_commented_yaml"]

Path = tuple[str | int, ...]
Comments = dict[Path, list[str]]

_WIDTH = 100


def _scalar(value: Any) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(
        value, Dumper=dumper, default_flow_style=True, width=10**6, allow_unicode=True, sort_keys=False
    )
    text = text.rstrip("\n")
    if text.endswith("\n..."):
        text = text[: -len("\n...")]
    return text.rstrip("\n")


def _is_leafy(value: Any, depth: int = 0) -> bool:
    """Small enough for flow style: scalars, or dicts/lists of them nested at most twice."""
    if isinstance(value, dict):
        return depth < 2 and all(_is_leafy(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return depth < 2 and all(_is_leafy(v, depth + 1) for v in value)
    return True


def _has_comments(path: Path, comments: Comments) -> bool:
    n = len(path)
    return any(len(p) > n and p[:n] == path for p in comments)


def _comment_lines(path: Path, comments: Comments, indent: int) -> list[str]:
    pad = " " * indent
    width = max(_WIDTH - indent - 2, 40)
    out: list[str] = []
    for line in comments.get(path, []):
        wrapped = textwrap.wrap(line, width=width, break_long_words=False, break_on_hyphens=False)
        out.extend(f"{pad}# {part}" for part in wrapped or [""])
    return [text.rstrip() for text in out]


def _flow(value: Any, prefix_len: int, path: Path, comments: Comments) -> str | None:
    if not isinstance(value, dict | list) or not value or not _is_leafy(value):
        return None
    if _has_comments(path, comments):
        return None
    text = _scalar(value)
    if "\n" in text or prefix_len + len(text) > _WIDTH:
        return None
    return text


def _mapping(data: dict[str, Any], indent: int, path: Path, comments: Comments, first: str = "") -> list[str]:
    """Lines of a mapping; ``first`` replaces the indentation of the first line (``"- "``)."""
    lines: list[str] = []
    for index, (key, value) in enumerate(data.items()):
        here = (*path, key)
        pad = " " * indent
        lead = first if index == 0 and first else pad
        if index == 0 and first:
            # a comment on the first key of a list item goes above the "- " line
            lines.extend(_comment_lines(here, comments, indent - 2))
        else:
            lines.extend(_comment_lines(here, comments, indent))
        head = f"{lead}{_scalar(key)}:"
        lines.extend(_value(value, head, indent, here, comments))
    return lines


def _value(value: Any, head: str, indent: int, path: Path, comments: Comments) -> list[str]:
    if isinstance(value, dict | list):
        if not value:
            return [f"{head} {'{}' if isinstance(value, dict) else '[]'}"]
        flow = _flow(value, len(head) + 1, path, comments)
        if flow is not None:
            return [f"{head} {flow}"]
        if isinstance(value, dict):
            return [head, *_mapping(value, indent + 2, path, comments)]
        return [head, *_sequence(value, indent, path, comments)]
    return [f"{head} {_scalar(value)}"]


def _sequence(items: list[Any], indent: int, path: Path, comments: Comments) -> list[str]:
    lines: list[str] = []
    pad = " " * indent
    for index, item in enumerate(items):
        here = (*path, index)
        lines.extend(_comment_lines(here, comments, indent))
        if isinstance(item, dict) and item:
            flow = _flow(item, indent + 2, here, comments)
            if flow is not None:
                lines.append(f"{pad}- {flow}")
            else:
                lines.extend(_mapping(item, indent + 2, here, comments, first=f"{pad}- "))
        elif isinstance(item, list) and item:
            lines.extend(_value(item, f"{pad}-", indent + 2, here, comments))
        else:
            lines.extend(_value(item, f"{pad}-", indent + 2, here, comments))
    return lines


def to_commented_yaml(data: dict[str, Any], *, comments: Comments, header: list[str]) -> str:
    """YAML text of ``data`` with ``comments[path]`` above each key (or list item) at ``path``."""
    lines: list[str] = []
    for line in header:
        lead = " " * (len(line) - len(line.lstrip(" ")))
        wrapped = textwrap.wrap(
            line,
            width=_WIDTH - 2,
            subsequent_indent=lead + "  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines.extend(f"# {part}".rstrip() for part in wrapped or [""])
    lines.extend(_mapping(data, 0, (), comments))
    return "\n".join(lines) + "\n"
