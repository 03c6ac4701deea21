"""kubectl's output conventions for the commands that print lists of objects (``get``,
``definitions``; docs/reference/kubectl-conventions.md): the ``-o`` values beyond table and JSON
(``name``, ``jsonpath=TEMPLATE``, ``custom-columns=SPEC``), ``--sort-by`` and the cells of custom
columns.

A template or a column path sees exactly what ``-o json`` prints: the list envelope
``{"items": [...], "count": N}`` (the bare object when one was named), each item one object.
The JSONPath dialect is the library's (:mod:`karta.jsonpath`); a template it cannot parse is a
usage error naming the template. Custom-column cells are escaped like every table cell
(:func:`karta.cli.text.printable`); jsonpath output is data, printed as it is (as kubectl does),
with no newline added.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from karta._records import record
from karta.cli.errors import UsageError
from karta.cli.views.table import join, widths

if TYPE_CHECKING:
    from karta.jsonpath import Path, Template

T = TypeVar("T")

__all__ = [
    "CUSTOM_COLUMNS",
    "JSONPATH",
    "OBJECT_FORMATS",
    "Columns",
    "OutputChoice",
    "is_object_format",
    "object_name",
    "parse_columns",
    "parse_sort_by",
    "render_objects",
    "sort_items",
]

JSONPATH = "jsonpath="
CUSTOM_COLUMNS = "custom-columns="
OBJECT_FORMATS = ("name", JSONPATH, CUSTOM_COLUMNS)
"""The ``-o`` values of the object-list commands besides their own formats (a ``=`` value takes
its template or column spec after it)."""

JSONPATH_HINT = (
    "kli supports kubectl's JSONPath: {.a.b}, ['a'], [n], [a:b], [*], .., [?(@.x==\"y\")], "
    '{range .items[*]}...{end} and {"literal"}'
)


class OutputChoice(click.Choice):  # type: ignore[type-arg]
    """``-o``: one of the choices, or ``jsonpath=TEMPLATE`` / ``custom-columns=SPEC`` when those
    are among them (the template or spec is checked here, so that a mistake is a usage error)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        for prefix in (JSONPATH, CUSTOM_COLUMNS):
            if prefix in self.choices and text.startswith(prefix):
                try:
                    if prefix == JSONPATH:
                        parse_template(text)
                    else:
                        parse_columns(text)
                except UsageError as exc:
                    self.fail(f"{exc} ({exc.hint})" if exc.hint else str(exc), param, ctx)
                return text
        return super().convert(value, param, ctx)


def is_object_format(fmt: str) -> bool:
    """True for ``name``, ``jsonpath=...`` and ``custom-columns=...``."""
    return fmt == "name" or fmt.startswith((JSONPATH, CUSTOM_COLUMNS))


def object_name(kind: str, api_version: str, name: str) -> str:
    """kubectl's ``-o name``: ``kind.group/name`` with the kind lower-cased (``pod/x`` for the
    core group)."""
    group = api_version.rpartition("/")[0]
    return f"{kind.lower()}{'.' + group if group else ''}/{name}"


def parse_template(fmt: str) -> Template:
    from karta import jsonpath
    from karta.errors import JsonPathError

    template = fmt[len(JSONPATH) :]
    if not template.strip():
        raise UsageError("-o jsonpath= needs a template, as in -o jsonpath='{.items[*].name}'")
    try:
        return jsonpath.parse_template(template)
    except JsonPathError as exc:
        raise UsageError(f"-o jsonpath: {exc}", hint=JSONPATH_HINT) from None


@record
class Columns:
    """``custom-columns=NAME:PATH,...``: the headers and their paths."""

    headers: tuple[str, ...]
    paths: tuple[Path, ...]

    def cells(self, item: Any) -> list[str]:
        """One row: each path's values joined by ``,`` (kubectl's rule), ``<none>`` for none."""
        from karta.jsonpath import render_value

        out: list[str] = []
        for path in self.paths:
            values = path.find(item)
            out.append(",".join(render_value(v) for v in values) if values else "<none>")
        return out


def parse_columns(fmt: str) -> Columns:
    from karta import jsonpath
    from karta.errors import JsonPathError

    spec = fmt[len(CUSTOM_COLUMNS) :] if fmt.startswith(CUSTOM_COLUMNS) else fmt
    headers: list[str] = []
    paths: list[Path] = []
    for part in _split_columns(spec):
        header, colon, path = part.partition(":")
        if not colon or not header.strip() or not path.strip():
            raise UsageError(
                f"-o custom-columns: {part!r} is not HEADER:PATH",
                hint="for example -o custom-columns=NAME:.name,PHASES:.phases",
            )
        try:
            paths.append(jsonpath.parse_path(path))
        except JsonPathError as exc:
            raise UsageError(
                f"-o custom-columns: column {header.strip()}: {exc}", hint=JSONPATH_HINT
            ) from None
        headers.append(header.strip())
    if not headers:
        raise UsageError(
            "-o custom-columns= needs at least one HEADER:PATH",
            hint="for example -o custom-columns=NAME:.name,PHASES:.phases",
        )
    return Columns(tuple(headers), tuple(paths))


def _split_columns(spec: str) -> list[str]:
    """``A:.x,B:.y[?(@.a=="1,2")]`` split at the commas outside brackets and quotes."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for i, ch in enumerate(spec):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(spec[start:i])
            start = i + 1
    parts.append(spec[start:])
    return [p for p in (part.strip() for part in parts) if p]


def render_objects(
    fmt: str,
    items: Sequence[Any],
    *,
    data: Any,
    name_of: Callable[[Any], str],
    headers: bool = True,
) -> str:
    """``items`` in an object format: ``name`` a line per item; ``jsonpath=`` the template over
    ``data`` (what ``-o json`` would print); ``custom-columns=`` a table, never cut."""
    if fmt == "name":
        return "".join(name_of(item) + "\n" for item in items)
    if fmt.startswith(JSONPATH):
        return parse_template(fmt).render(data)
    columns = parse_columns(fmt)
    rows = [columns.cells(item) for item in items]
    table = [list(columns.headers), *rows] if headers else rows
    if not table:
        return ""
    column_widths = widths(table)
    return "".join(join(row, column_widths) + "\n" for row in table)


def parse_sort_by(text: str | None) -> Path | None:
    """``--sort-by=PATH`` (kubectl's relaxed form: ``.name``, ``{.name}``); None when not given."""
    if text is None:
        return None
    from karta import jsonpath
    from karta.errors import JsonPathError

    try:
        return jsonpath.parse_path(text)
    except JsonPathError as exc:
        raise UsageError(f"--sort-by: {exc}", hint=JSONPATH_HINT) from None


def sort_items(items: Sequence[T], path: Path, *, value: Callable[[T], Any] | None = None) -> list[T]:
    """``items`` sorted (stably, ascending) by the first value ``path`` finds in each (in
    ``value(item)`` when given): numbers by value, strings (RFC 3339 times among them) in
    character order, items without the field first. No item having the field at all is a usage
    error naming the fields they have."""
    objects = [value(item) for item in items] if value is not None else list(items)
    found = [path.find(obj) for obj in objects]
    if items and not any(found):
        first = objects[0]
        fields = ", ".join(f".{k}" for k in first) if isinstance(first, Mapping) else ""
        raise UsageError(
            f"--sort-by {path.source}: no object has this field",
            hint=f"the objects are what -o json prints; their fields: {fields}",
        )
    order = sorted(range(len(items)), key=lambda i: _order(found[i][0] if found[i] else None))
    return [items[i] for i in order]


def _order(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, int | float):
        return (2, value)
    if isinstance(value, str):
        return (3, value)
    from karta.jsonpath import render_value

    return (4, render_value(value))
