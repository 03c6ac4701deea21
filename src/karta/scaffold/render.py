"""Writing a draft as YAML with comments above the keys they concern.

PyYAML cannot emit comments, so this is a small block-style writer: mappings and lists in block
style (lists at their key's indentation, as in the catalog), small comment-free leaves in flow
style when they fit, scalars quoted by PyYAML itself so that the text loads back unchanged.

Text from a CRD reaches comments (TODO notes, the header) and scalars (enum values), so nothing
it holds may end a comment or a line: in comments every character that is not printable (controls,
line and paragraph separators, format characters, unassigned code points, whitespace other than
the space) is written ``\\uXXXX`` (``\\UXXXXXXXX`` beyond the BMP), and a scalar that holds such a
character (or that PyYAML would write on several lines) is written double-quoted, escaped the same
way, on one line. The writer is linear in the size of the data and of the comments.
"""

from __future__ import annotations

import textwrap
from typing import Any

import yaml

from karta.scaffold.escape import escaped, yaml_code

__all__ = ["Comments", "to_commented_yaml", "visible"]

Path = tuple[str | int, ...]
Comments = dict[Path, list[str]]

_WIDTH = 100
_QUOTED = '"\\'  # what a backslash precedes in a double-quoted scalar


def visible(text: str) -> str:
    """``text`` with every non-printable character escaped: safe on one comment line."""
    return escaped(text, code=yaml_code)


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar of ``text`` on one line."""
    return f'"{escaped(text, code=yaml_code, backslashed=_QUOTED)}"'


def _dump(value: Any) -> str:
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


class _Writer:
    """The lines of one document; ``commented`` holds every proper prefix of a commented path."""

    def __init__(self, comments: Comments) -> None:
        self.comments = comments
        self.commented = {path[:n] for path in comments for n in range(len(path))}
        self.scalars: dict[tuple[type, Any], str] = {}

    def scalar(self, value: Any) -> str:
        """One line of YAML for a scalar (memoised: keys and small values repeat a lot)."""
        key = (type(value), value)
        text = self.scalars.get(key)
        if text is None:
            if isinstance(value, str) and not value.isprintable():
                text = _double_quoted(value)
            else:
                text = _dump(value)
                if isinstance(value, str) and not text.isprintable():  # several lines
                    text = _double_quoted(value)
            self.scalars[key] = text
        return text

    def comment_lines(self, path: Path, indent: int) -> list[str]:
        pad = " " * indent
        width = max(_WIDTH - indent - 2, 40)
        out: list[str] = []
        for line in self.comments.get(path, []):
            text = visible(line)
            wrapped = textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False)
            out.extend(f"{pad}# {part}" for part in wrapped or [""])
        return [text.rstrip() for text in out]

    def flow(self, value: Any, prefix_len: int, path: Path) -> str | None:
        if not isinstance(value, dict | list) or not value or not _is_leafy(value):
            return None
        if path in self.commented:
            return None
        text = _dump(value)
        if not text.isprintable() or prefix_len + len(text) > _WIDTH:  # several lines, or too wide
            return None
        return text

    def mapping(self, data: dict[str, Any], indent: int, path: Path, first: str = "") -> list[str]:
        """Lines of a mapping; ``first`` replaces the indentation of the first line (``"- "``)."""
        lines: list[str] = []
        for index, (key, value) in enumerate(data.items()):
            here = (*path, key)
            pad = " " * indent
            lead = first if index == 0 and first else pad
            if index == 0 and first:
                # a comment on the first key of a list item goes above the "- " line
                lines.extend(self.comment_lines(here, indent - 2))
            else:
                lines.extend(self.comment_lines(here, indent))
            head = f"{lead}{self.scalar(key)}:"
            lines.extend(self.value(value, head, indent, here))
        return lines

    def value(self, value: Any, head: str, indent: int, path: Path) -> list[str]:
        if isinstance(value, dict | list):
            if not value:
                return [f"{head} {'{}' if isinstance(value, dict) else '[]'}"]
            flow = self.flow(value, len(head) + 1, path)
            if flow is not None:
                return [f"{head} {flow}"]
            if isinstance(value, dict):
                return [head, *self.mapping(value, indent + 2, path)]
            return [head, *self.sequence(value, indent, path)]
        return [f"{head} {self.scalar(value)}"]

    def sequence(self, items: list[Any], indent: int, path: Path) -> list[str]:
        lines: list[str] = []
        pad = " " * indent
        for index, item in enumerate(items):
            here = (*path, index)
            lines.extend(self.comment_lines(here, indent))
            if isinstance(item, dict) and item:
                flow = self.flow(item, indent + 2, here)
                if flow is not None:
                    lines.append(f"{pad}- {flow}")
                else:
                    lines.extend(self.mapping(item, indent + 2, here, first=f"{pad}- "))
            else:
                lines.extend(self.value(item, f"{pad}-", indent + 2, here))
        return lines


def to_commented_yaml(data: dict[str, Any], *, comments: Comments, header: list[str]) -> str:
    """YAML text of ``data`` with ``comments[path]`` above each key (or list item) at ``path``."""
    lines: list[str] = []
    for line in header:
        line = visible(line)
        lead = " " * (len(line) - len(line.lstrip(" ")))
        wrapped = textwrap.wrap(
            line,
            width=_WIDTH - 2,
            subsequent_indent=lead + "  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines.extend(f"# {part}".rstrip() for part in wrapped or [""])
    lines.extend(_Writer(comments).mapping(data, 0, ()))
    return "\n".join(lines) + "\n"
