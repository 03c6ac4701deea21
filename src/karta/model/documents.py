"""Reading untrusted YAML and JSON text as JSON data, within documented limits (issue 9).

Owns the one reader of every document karta and ``kli`` read from text: definitions (files, the
definitions directory, ``--definition``), workloads, pods, predictions, the configuration file and
CRDs. Everything it returns is JSON data (dicts, lists, strings, ints, finite floats, booleans,
None; and, where the caller asks for them, YAML timestamps as :mod:`datetime` values), or it raises
:class:`DocumentError` naming the source, the line and column where the parser gives them, and
the limit that was reached.

How it reads:

- JSON text (starting with ``{`` or ``[``) goes through orjson when a cheap count of its
  separators shows it is within the value limit; its nesting and sizes are then checked, and its
  duplicate keys, when the caller wants them, found by the standard library's parser. In a
  ``.json`` source, ``NaN``, ``Infinity`` and numbers beyond a double are errors; elsewhere such
  text may be YAML flow style, which the YAML loop reads (``NaN`` is a string there).
- Everything else (and JSON orjson refuses) is built from the C YAML parser's event stream
  (``yaml.CBaseLoader``) by a loop of our own, not by a composer: no node graph is held, every
  limit is checked as the events come (so a million-item list stops at the item limit, at the
  memory of that many items), there is no recursion, and every duplicate mapping key is recorded
  with its JSON path and position. It is about three times as fast as ``yaml.CSafeLoader``.

Values follow PyYAML's safe loader (YAML 1.1 implicit types, merge keys ``<<``, anchors and
aliases), with these differences, so that a YAML file reads as its JSON form would (and as the API
server would store it): an integer outside the 64-bit range (``-2**63`` to ``2**64 - 1``) becomes a
double, as orjson and Kubernetes read JSON; one beyond a double, or of more than
:data:`MAX_INT_DIGITS` digits (Python's int-string conversion limit), is an error, and so are
``.inf``, ``.nan`` and floats that overflow (JSON has neither); a plain ``=`` is the string
``"="``; an alias inside its own anchor (a recursive structure), ``!!binary``, ``!!set``,
``!!omap`` and ``!!pairs`` are errors (none is JSON data).

The limits (docs/reference/limits.md lists them with ``kli``'s exit codes): a source of at
most :data:`MAX_BYTES` bytes, at most :data:`MAX_DEPTH` nested collections, at most
:data:`MAX_ITEMS` entries in one sequence or mapping (and documents in one stream) and at most
:data:`MAX_VALUES` values in all, aliases counted expanded (an alias bomb is never expanded).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import IO, Any

from karta._records import record
from karta.errors import DefinitionError

__all__ = [
    "LIMITS_HINT",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_ITEMS",
    "MAX_VALUES",
    "Document",
    "DocumentError",
    "DuplicateKey",
    "check_json_value",
    "read_bytes",
    "read_documents",
]

MAX_BYTES = 64 * 1024 * 1024
"""The largest source read (a file, standard input): 64 MiB."""
MAX_DEPTH = 128
"""Nested collections (mappings and sequences) in one document; real CRDs nest below 50."""
MAX_ITEMS = 10_000
"""Entries of one sequence or mapping, and documents of one stream (real objects and CRDs have
fewer than 100; a List of 10,000 pods fits)."""
MAX_VALUES = 2_000_000
"""Values of one source (every scalar, key and collection), aliases counted expanded."""
MAX_INT_DIGITS = 4300
"""Decimal digits of an integer: Python's default int-string conversion limit."""
_MAX_INT_BITS = int(MAX_INT_DIGITS * math.log2(10))
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # the integers JSON readers keep (orjson); others are doubles

LIMITS_HINT = (
    f"kli reads sources of at most {MAX_BYTES // (1024 * 1024)} MiB, nested at most {MAX_DEPTH} deep, "
    f"with at most {MAX_ITEMS:,} entries in one list or mapping and {MAX_VALUES:,} values in all "
    "(docs/reference/limits.md)"
)


class DocumentError(DefinitionError):
    """A source is not readable JSON data: a syntax error, a value JSON cannot hold, or a limit.

    ``source`` is the name shown; ``line`` and ``column`` are 1-based (0: unknown); ``problem``
    is the message without the place; ``hint`` says what the limits are when one was reached.
    ``str()`` is ``cannot parse <source> (line L, column C): <problem>``.
    """

    def __init__(
        self,
        problem: str,
        *,
        source: str,
        line: int = 0,
        column: int = 0,
        hint: str | None = None,
        verb: str = "parse",
    ) -> None:
        where = f" (line {line}, column {column})" if line else ""
        super().__init__(f"cannot {verb} {source}{where}: {problem}")
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        self.hint = hint


@record(slots=True)
class DuplicateKey:
    """A mapping key given twice in one mapping: the JSON path of the key, where it is repeated
    (1-based line and column), and what happened (the later value wins, as in PyYAML)."""

    path: str
    line: int
    column: int


@record(slots=True)
class Document:
    """One non-empty document of a stream: its 1-based position, its value and its duplicate keys."""

    number: int
    value: Any
    duplicates: tuple[DuplicateKey, ...] = field(default=())


# --------------------------------------------------------------------------------- sources


def read_bytes(path: Path | str, *, source: str | None = None, stream: IO[bytes] | None = None) -> bytes:
    """At most :data:`MAX_BYTES` bytes of ``path`` (or of ``stream``, named ``source``); more is a
    :class:`DocumentError` (``cannot read``). OS errors propagate (callers word them)."""
    name = source or str(path)
    if stream is not None:
        data = stream.read(MAX_BYTES + 1)
    else:
        with open(path, "rb") as handle:  # also bounded for /dev/zero, FIFOs and growing files
            data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise DocumentError(
            f"it is larger than {MAX_BYTES // (1024 * 1024)} MiB, the largest source kli reads",
            source=name,
            verb="read",
            hint=LIMITS_HINT,
        )
    return data


def read_documents(
    text: str,
    *,
    source: str,
    timestamps: bool = False,
    duplicates: bool = False,
) -> list[Document]:
    """The non-empty documents of a YAML (or JSON) ``text``, checked against the limits.

    ``timestamps``: YAML timestamps become :class:`datetime.datetime` (or ``date``) values, as
    PyYAML's safe loader makes them; otherwise they stay strings. ``duplicates``: record every
    duplicate key (in JSON text without a line and column); without it, duplicates are not
    recorded. Either way the later value wins, as in PyYAML.
    """
    if len(text) > MAX_BYTES:  # text handed in directly (not through read_bytes)
        raise DocumentError(
            f"it is larger than {MAX_BYTES // (1024 * 1024)} MiB, the largest source kli reads",
            source=source,
            verb="read",
            hint=LIMITS_HINT,
        )
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        found = _json(stripped, source, duplicates=duplicates)
        if found is not None:
            return found
    return _Builder(text, source, timestamps=timestamps).documents()


# ------------------------------------------------------------------------------------ JSON


def _json(text: str, source: str, *, duplicates: bool) -> list[Document] | None:
    """The one document of a JSON text through orjson, or None to let the YAML loop read it
    (not JSON, possibly over the value limit, or refused for a reason the YAML loop words)."""
    import orjson

    # Every value but the first of a container follows a comma or a colon (keys count as values):
    # an upper bound, high when strings hold separators (the YAML loop then counts exactly).
    estimate = text.count(",") + text.count(":") + text.count("[") + text.count("{") + 1
    if estimate > MAX_VALUES:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        number = "infinity" in str(exc) or text[exc.pos : exc.pos + 3] in ("NaN", "Inf")
        # A .json file is JSON: a number JSON cannot hold is an error. Elsewhere the text may be
        # YAML flow style, where NaN and 1e400 are plain strings (and .inf or a 5,000-digit
        # integer an error of the YAML loop).
        if number and source.lower().endswith(".json"):
            raise DocumentError(
                "a number JSON data cannot hold (larger than a double, or NaN/Infinity)",
                source=source,
                line=exc.lineno,
                column=exc.colno,
            ) from None
        return None  # YAML flow style, or JSON too deep for orjson: the YAML loop reports it
    check_json_value(value, source=source)
    if value is None:
        return []
    return [Document(1, value, _json_duplicates(text) if duplicates else ())]


def _json_duplicates(text: str) -> tuple[DuplicateKey, ...]:
    """The duplicate keys of a JSON text orjson read (and the limits passed), with their JSON
    paths, found by the standard library's parser (which hands each object's pairs over before
    they become a dict; it gives no line or column: those are 0)."""
    import json

    from karta.model.schema import join_path

    repeated: dict[int, list[str]] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            again: list[str] = []
            for key, _ in pairs:
                if key in seen:
                    again.append(key)
                seen.add(key)
            repeated[id(obj)] = again
        return obj

    doc = json.loads(text, object_pairs_hook=pairs_hook)
    if not repeated:
        return ()
    out: list[DuplicateKey] = []
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            out.extend(DuplicateKey(join_path(path, key), 0, 0) for key in repeated.get(id(node), ()))
            stack.extend((v, join_path(path, k)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, join_path(path, i)) for i, v in reversed(list(enumerate(node))))
    return tuple(out)


def check_json_value(value: Any, *, source: str) -> None:
    """Check decoded JSON data against :data:`MAX_DEPTH`, :data:`MAX_ITEMS` and
    :data:`MAX_VALUES` (iteratively); :class:`DocumentError` names the first limit reached."""
    count = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if isinstance(node, dict):
            items: Any = node.values()
            count += len(node)
        elif isinstance(node, list):
            items = node
        else:
            continue
        if depth >= MAX_DEPTH:
            raise DocumentError(_too_deep(), source=source, hint=LIMITS_HINT)
        if len(node) > MAX_ITEMS:
            raise DocumentError(_too_many_items(node), source=source, hint=LIMITS_HINT)
        if count + len(node) > MAX_VALUES:
            raise DocumentError(_too_many_values(), source=source, hint=LIMITS_HINT)
        stack.extend((item, depth + 1) for item in items)


def _too_deep() -> str:
    return f"it is nested too deeply (more than {MAX_DEPTH} levels)"


def _too_many_items(node: object) -> str:
    what = "mapping" if isinstance(node, dict) else "list"
    return f"a {what} has more than {MAX_ITEMS:,} entries"


def _too_many_values() -> str:
    return f"it holds more than {MAX_VALUES:,} values (YAML aliases counted expanded)"


# ------------------------------------------------------------------------------------ YAML

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


class _Merge:
    """The key ``<<``: its values are merged into the mapping (PyYAML's merge semantics)."""


_MERGE_KEY = _Merge()
_NO_KEY: Any = object()


def _implicit_resolvers() -> dict[str | None, list[tuple[str, Any]]]:
    from karta._pyyaml import yaml

    table: dict[str | None, list[tuple[str, Any]]] = yaml.resolver.Resolver.yaml_implicit_resolvers
    return table


# The plain scalars most files consist of (keys and words starting with n, t, o, f, y; whole numbers;
# quantities such as 500m or 16Gi) resolved without the implicit resolvers' patterns, exactly as
# they resolve them, so that a one-object command never compiles those patterns (karta._pyyaml
# hands them out uncompiled): only while the resolvers of these first characters are PyYAML's own
# (same tags, same pattern sources, in the same order: checked against _DEFAULT_RESOLVERS, the
# SHA-256 of PyYAML 6.0's table as _default_resolvers spells it); otherwise, and for every other
# scalar, the patterns decide.
_FAST_FIRST = ("", "~", *"0123456789nNyYtTfFoO")
_DEFAULT_RESOLVERS = "3bd2dc8fb1fec14ab2abd40393358745db2d29b2b041bbd6895e522cf089ec11"
_BOOL_WORDS = frozenset(
    {"yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE"}
    | {"on", "On", "ON", "off", "Off", "OFF"}
)
_NULL_WORDS = frozenset({"", "~", "null", "Null", "NULL"})
_OCTAL = frozenset("01234567")
# every character the float, int and timestamp patterns can match in a scalar that starts with a
# digit, other than 0x or 0b (one that holds any other, such as a UID's hex letters, is a string):
# the letters of inf and nan only follow a sign or a dot, hex digits only 0x, binary ones only 0b
_NUMBER_CHARS = frozenset("0123456789_.:+-eETtZ \t")
_checked: list[Any] = [None, False]  # the last table signature checked, and whether it is PyYAML's


def _default_resolvers(resolvers: dict[str | None, list[tuple[str, Any]]]) -> bool:
    """Whether the resolvers of :data:`_FAST_FIRST` are PyYAML's own (see above)."""
    signature = tuple(tuple(resolvers.get(first, ())) for first in _FAST_FIRST)
    if signature != _checked[0]:
        try:  # the interpreter's own SHA-256: hashlib would load OpenSSL (~3 ms of a kli start)
            from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
        except ImportError:  # another interpreter, or Python >= 3.12 (_sha2)
            from hashlib import sha256

        text = "\n".join(
            f"{first!r} {tag} {getattr(regexp, 'pattern', None)!r}"
            for first, entries in zip(_FAST_FIRST, signature, strict=True)
            for tag, regexp in entries
        )
        _checked[:] = [signature, sha256(text.encode()).hexdigest() == _DEFAULT_RESOLVERS]
    return bool(_checked[1])


def _plain_tag(value: str) -> str | None:
    """The tag PyYAML's implicit resolvers give the plain scalar ``value`` (no line break in it),
    when it is one of the common shapes; None: the patterns decide."""
    first = value[:1]
    if "0" <= first <= "9":  # float, int, timestamp
        if value.isdigit() and value.isascii():  # a float or a timestamp has a "." "-" or ":"
            return _INT if first != "0" or len(value) == 1 or _OCTAL.issuperset(value) else _STR
        return None if value[:2] in ("0x", "0b") or _NUMBER_CHARS.issuperset(value) else _STR
    if first in "nN":  # bool, null
        return _BOOL if value in _BOOL_WORDS else _NULL if value in _NULL_WORDS else _STR
    if first in "yYtTfFoO":  # bool
        return _BOOL if value in _BOOL_WORDS else _STR
    if first == "~" or not value:  # null
        return _NULL if value in _NULL_WORDS else _STR
    return None


class _Frame:
    """An open collection: the object being filled, its anchor and, for a mapping, the pending
    key (``_NO_KEY`` when the next scalar is a key), merge sources and own keys."""

    __slots__ = ("anchor", "key", "key_mark", "mapping", "merges", "obj", "values_at_start")

    def __init__(self, obj: Any, anchor: str | None, values_at_start: int) -> None:
        self.obj = obj
        self.mapping = isinstance(obj, dict)
        self.anchor = anchor
        self.key: Any = _NO_KEY
        self.key_mark: Any = None
        self.merges: list[Any] | None = None
        self.values_at_start = values_at_start


class _Builder:
    """JSON data from the C parser's events (see the module docstring)."""

    def __init__(self, text: str, source: str, *, timestamps: bool) -> None:
        self.text = text
        self.source = source
        self.timestamps = timestamps
        self.values = 0

    def _error(self, problem: str, mark: Any = None, *, limit: bool = False) -> DocumentError:
        line = mark.line + 1 if mark is not None else 0
        column = mark.column + 1 if mark is not None else 0
        return DocumentError(
            problem, source=self.source, line=line, column=column, hint=LIMITS_HINT if limit else None
        )

    def documents(self) -> list[Document]:
        from karta._pyyaml import yaml

        loader_class = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
        loader = loader_class(self.text)
        try:
            return self._stream(loader, yaml)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = str(exc.problem or exc.context or str(exc).splitlines()[0])
            if "nesting depth" in problem:  # libyaml's own limit, met while it scans ahead
                raise self._error(_too_deep(), mark, limit=True) from None
            raise self._error(problem, mark) from None
        except yaml.YAMLError as exc:  # a reader error (a character YAML does not allow)
            raise self._error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        finally:
            loader.dispose()

    def _stream(self, loader: Any, yaml: Any) -> list[Document]:
        get = loader.get_event
        end_types = (yaml.StreamEndEvent,)
        out: list[Document] = []
        number = 0
        get()  # StreamStartEvent
        while True:
            event = get()
            if isinstance(event, end_types):
                return out
            number += 1
            if number > MAX_ITEMS:
                raise self._error(f"the stream holds more than {MAX_ITEMS:,} documents", event.start_mark)
            value, duplicates = self._document(get, yaml)
            get()  # DocumentEndEvent
            if value is not None:
                out.append(Document(number, value, tuple(duplicates)))

    def _document(self, get: Callable[[], Any], yaml: Any) -> tuple[Any, list[DuplicateKey]]:
        # The hot loop of every YAML file read: locals, and the common cases inline.
        scalar_event = yaml.ScalarEvent
        alias_event = yaml.AliasEvent
        mapping_start = yaml.MappingStartEvent
        sequence_start = yaml.SequenceStartEvent
        resolvers = _implicit_resolvers()
        anchors: dict[str, tuple[Any, int]] = {}
        open_anchors: set[str] = set()
        stack: list[_Frame] = []
        top: _Frame | None = None
        duplicates: list[DuplicateKey] = []
        values = self.values
        while True:
            event = get()
            kind = type(event)
            value: Any
            if kind is scalar_event:
                values += 1
                text = event.value
                if event.tag is None and (not event.implicit[0] or text[:1] not in resolvers):
                    value = text  # quoted, or a plain scalar no implicit type can match
                else:
                    value = self._scalar(event, resolvers)
                if event.anchor is not None:
                    self._anchor(event, anchors, open_anchors)
                    anchors[event.anchor] = (value, 1)
            elif kind is mapping_start or kind is sequence_start:
                tag = event.tag
                if tag is not None and tag not in ("!", _MAP if kind is mapping_start else _SEQ):
                    raise self._error(self._bad_tag(tag), event.start_mark)
                if len(stack) >= MAX_DEPTH:
                    raise self._error(_too_deep(), event.start_mark, limit=True)
                values += 1
                if event.anchor is not None:
                    self._anchor(event, anchors, open_anchors)
                    open_anchors.add(event.anchor)
                top = _Frame({} if kind is mapping_start else [], event.anchor, values)
                stack.append(top)
                continue
            elif kind is alias_event:
                name = event.anchor
                if name in open_anchors:
                    raise self._error(
                        f"the alias *{name} is inside its own anchor &{name} (a recursive structure)",
                        event.start_mark,
                    )
                found = anchors.get(name)
                if found is None:
                    raise self._error(f"found undefined alias *{name}", event.start_mark)
                value = found[0]
                values += found[1]
            elif top is not None:  # MappingEndEvent or SequenceEndEvent
                frame = stack.pop()
                value = frame.obj if frame.merges is None else self._merged(frame)
                if frame.anchor is not None:
                    open_anchors.discard(frame.anchor)
                    anchors[frame.anchor] = (value, values - frame.values_at_start + 1)
                top = stack[-1] if stack else None
            else:  # pragma: no cover - the parser never ends a collection it did not open
                raise self._error(f"unexpected {kind.__name__}", event.start_mark)
            if values > MAX_VALUES:
                raise self._error(_too_many_values(), event.start_mark, limit=True)
            if top is None:
                self.values = values
                return ("<<" if value is _MERGE_KEY else value), duplicates
            if not top.mapping:
                obj = top.obj
                obj.append("<<" if value is _MERGE_KEY else value)
                if len(obj) > MAX_ITEMS:
                    raise self._error(_too_many_items(obj), event.start_mark, limit=True)
                continue
            key = top.key
            if key is _NO_KEY:  # this value is a key
                if value.__class__ is dict or value.__class__ is list:
                    raise self._error(
                        "found a mapping or a list as a mapping key (keys must be scalars)", event.start_mark
                    )
                top.key = value
                top.key_mark = event.start_mark
                continue
            top.key = _NO_KEY
            if key is _MERGE_KEY:
                self._merge(top, value)
                continue
            obj = top.obj
            if key in obj:
                mark = top.key_mark
                duplicates.append(DuplicateKey(_path(stack, key), mark.line + 1, mark.column + 1))
            obj[key] = "<<" if value is _MERGE_KEY else value
            if len(obj) > MAX_ITEMS:
                raise self._error(_too_many_items(obj), event.start_mark, limit=True)

    def _anchor(self, event: Any, anchors: dict[str, Any], open_anchors: set[str]) -> None:
        if event.anchor in anchors or event.anchor in open_anchors:
            raise self._error(f"found duplicate anchor &{event.anchor}", event.start_mark)

    def _merge(self, frame: _Frame, value: Any) -> None:
        """The value of a ``<<`` key: a mapping or a list of mappings merged into ``frame``."""
        sources = value if isinstance(value, list) else [value]
        if not all(isinstance(s, dict) for s in sources):
            raise self._error("expected a mapping or a list of mappings for merging (<<)", frame.key_mark)
        if frame.merges is None:
            frame.merges = []
        frame.merges.extend(sources)

    @staticmethod
    def _merged(frame: _Frame) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for source in frame.merges or ():  # as PyYAML: an earlier source wins, own keys win over all
            for key, value in source.items():
                out.setdefault(key, value)
        out.update(frame.obj)
        return out

    def _bad_tag(self, tag: str) -> str:
        short = tag.replace("tag:yaml.org,2002:", "!!")
        return f"the tag {short} is not supported (the data must be JSON: mappings, lists and scalars)"

    def _scalar(self, event: Any, resolvers: dict[str | None, list[tuple[str, Any]]]) -> Any:
        value: str = event.value
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:
                return value  # quoted: a string
            plain = _plain_tag(value) if "\n" not in value and _default_resolvers(resolvers) else None
            if plain is not None:
                tag = plain
            else:
                tag = _STR
                for candidate, regexp in resolvers.get(value[:1] if value else "", ()):
                    if regexp.match(value):
                        tag = candidate
                        break
        if tag in (_STR, _VALUE):
            return value
        if tag == _NULL:
            return None
        if tag == _BOOL:
            found = _BOOLS.get(value.lower())
            if found is None:
                raise self._error(f"{value!r} is not a boolean", event.start_mark)
            return found
        if tag == _INT:
            return self._int(value, event)
        if tag == _FLOAT:
            return self._float(value, event)
        if tag == _MERGE:
            return _MERGE_KEY
        if tag == _TIMESTAMP:
            return self._timestamp(value, event) if self.timestamps else value
        raise self._error(self._bad_tag(tag), event.start_mark)

    def _int(self, text: str, event: Any) -> int | float:
        value = text.replace("_", "")
        sign = 1
        if value[:1] == "-":
            sign = -1
        if value[:1] in ("-", "+"):
            value = value[1:]
        try:
            if value == "0":
                return 0
            if value.startswith("0b"):
                number = int(value[2:], 2)
            elif value.startswith("0x"):
                number = int(value[2:], 16)
            elif value.startswith("0") and ":" not in value:
                number = int(value, 8)
            elif ":" in value:
                number = 0
                for part in value.split(":"):
                    self._digits(part, event)
                    number = number * 60 + int(part)
            else:
                self._digits(value, event)
                number = int(value)
        except ValueError:
            raise self._error(f"{_abridged(text)!r} is not an integer", event.start_mark) from None
        if number.bit_length() > _MAX_INT_BITS:
            raise self._error(self._big(text), event.start_mark)
        number *= sign
        if _INT_MIN <= number <= _INT_MAX:
            return number
        # As JSON reads it (orjson, and the API server into a float64): beyond 64 bits, a double.
        try:
            return float(number)
        except OverflowError:
            raise self._error(
                f"the integer {_abridged(text)} is too large for a JSON number (a double)", event.start_mark
            ) from None

    def _digits(self, digits: str, event: Any) -> None:
        if len(digits) > MAX_INT_DIGITS:
            raise self._error(self._big(digits), event.start_mark)

    @staticmethod
    def _big(text: str) -> str:
        return (
            f"an integer of {len(text):,} digits is larger than kli reads (at most {MAX_INT_DIGITS:,} digits)"
        )

    def _float(self, text: str, event: Any) -> float:
        value = text.replace("_", "").lower()
        sign = 1.0
        if value[:1] == "-":
            sign = -1.0
        if value[:1] in ("-", "+"):
            value = value[1:]
        if value in (".inf", ".nan"):
            raise self._error(f"{text} is not a JSON number (JSON has no infinity or NaN)", event.start_mark)
        try:
            if ":" in value:
                number = 0.0
                for part in value.split(":"):
                    number = number * 60 + float(part)
            else:
                number = float(value)
        except ValueError:
            raise self._error(f"{_abridged(text)!r} is not a number", event.start_mark) from None
        if not math.isfinite(number):
            raise self._error(
                f"the number {_abridged(text)} is too large for a JSON number (a double)", event.start_mark
            )
        return sign * number

    def _timestamp(self, text: str, event: Any) -> Any:
        from karta._pyyaml import yaml

        node = yaml.ScalarNode(_TIMESTAMP, text, event.start_mark, event.end_mark)
        try:
            return yaml.constructor.SafeConstructor().construct_yaml_timestamp(node)
        except (ValueError, OverflowError) as exc:
            raise self._error(f"{text!r} is not a valid timestamp ({exc})", event.start_mark) from None


def _abridged(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...({len(text):,} characters)"


def _path(stack: list[_Frame], key: Any) -> str:
    """The JSON path of ``key`` in the innermost open mapping of ``stack``."""
    from karta.model.schema import join_path

    path = ""
    for frame in stack[:-1]:
        path = join_path(path, str(frame.key)) if frame.mapping else join_path(path, len(frame.obj))
    return join_path(path, str(key))
