"""Reading files and standard input: YAML or JSON documents, with usage errors that name the source.

Every file ``kli`` reads comes through here (workloads, pods, definitions, predictions, CRDs; the
configuration file through :mod:`karta.cli.config`), so every one has the limits of
:mod:`karta.model.documents` (size, nesting, entries, values, numbers JSON can hold) and, for a
file of objects, :data:`MAX_OBJECTS`; each is a usage error (exit 2) naming the file.

A ``-f`` of objects (:func:`read_labelled_objects`) is what kubectl's ``-f`` is: a file of one or
several YAML documents (a ``kind: List`` expanded), ``-`` for standard input, or a directory, whose
``.yaml``, ``.yml`` and ``.json`` files are read in name order (with ``-R``, its subdirectories'
too); :func:`input_files` lists them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from karta import model
from karta.cli.errors import RunFailures, UsageError
from karta.jq._values import as_input, long_digits
from karta.model.documents import MAX_BYTES


def read_text(path: str) -> tuple[str, str]:
    """Return ``(text, display name)`` for a path or ``-`` (standard input, shown as ``stdin``).

    At most :data:`karta.model.documents.MAX_BYTES` are read (a larger source is a usage error,
    and so are ``/dev/zero`` and endless pipes)."""
    if path == "-":
        return _read_stdin(), "stdin"
    try:
        data = model.read_bytes(path, source=path)
    except model.DocumentError as exc:
        raise UsageError(str(exc), hint=exc.hint) from None
    except FileNotFoundError:
        raise UsageError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"cannot read {path}: it is a directory, expected a YAML or JSON file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8"), path
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {path}: not UTF-8 text, expected a YAML or JSON file") from None


def _read_stdin() -> str:
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream put in place of stdin (tests, embedding)
        text = sys.stdin.read(MAX_BYTES + 1)
        if len(text) > MAX_BYTES:
            raise UsageError(f"cannot read stdin: it is larger than {MAX_BYTES // (1024 * 1024)} MiB")
        return text
    try:
        data = model.read_bytes("-", source="stdin", stream=buffer)
    except model.DocumentError as exc:
        raise UsageError(str(exc), hint=exc.hint) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("cannot read stdin: not UTF-8 text, expected a YAML or JSON file") from None


def parse_documents(text: str, name: str) -> list[Any]:
    """All non-empty YAML (or JSON) documents of ``text``; a syntax error, a number JSON cannot hold
    or a limit reached (:mod:`karta.model.documents`) is a usage error naming ``name``, the line and
    the column."""
    return [doc.value for doc in read_documents(text, name)]


def read_documents(text: str, name: str, *, duplicates: bool = False) -> list[model.Document]:
    """The non-empty documents of ``text`` with their positions (and, with ``duplicates``, their
    duplicate keys); errors as :func:`parse_documents`. YAML timestamps are datetimes, as PyYAML's
    safe loader makes them. Numbers beyond 2**53 are the original's doubles from here on (kli's
    evaluators are ``decoded``: :func:`karta.jq._values.decoded_input`, one scan of the text)."""
    try:
        docs = model.read_documents(text, source=name, timestamps=True, duplicates=duplicates)
    except model.DocumentError as exc:
        raise UsageError(str(exc), hint=exc.hint) from None
    if not long_digits(text):
        return docs
    return [model.Document(d.number, as_input(d.value), d.duplicates) for d in docs]


MAX_OBJECTS = 10_000
"""Objects one file of objects may hold (``--pods``: pods, after ``kind: List`` is expanded)."""


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
    return [obj for obj, _ in _file_objects(path, what=what)]


INPUT_SUFFIXES = (".yaml", ".yml", ".json")
"""The files of a directory ``-f`` reads (kubectl's)."""


MAX_DIRECTORY_ENTRIES = 20_000
"""How many directory entries one ``-f DIR`` may look at (``-R`` included) before it is refused."""


def input_files(path: str, *, recursive: bool = False) -> list[str]:
    """The files a ``-f`` argument names: ``-`` or a file as it is; a directory's
    :data:`INPUT_SUFFIXES` files in name order (and, with ``recursive``, those of its
    subdirectories; symbolic links to directories are not followed). Entries that vanish or
    cannot be read while the directory is walked are passed over. A directory without any
    such file, or with more than :data:`MAX_DIRECTORY_ENTRIES` entries, is a usage error."""
    if path == "-" or not Path(path).is_dir():
        return [path]
    found: list[str] = []
    looked = 0
    pending = [path]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue  # gone, or not readable: nothing of it can be read
        for entry in entries:
            looked += 1
            if looked > MAX_DIRECTORY_ENTRIES:
                raise UsageError(
                    f"{path} holds more than {MAX_DIRECTORY_ENTRIES} entries"
                    + (" below it" if recursive else ""),
                    hint="name a smaller directory, or the files themselves",
                )
            try:
                if recursive and entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif Path(entry.name).suffix.lower() in INPUT_SUFFIXES and entry.is_file():
                    found.append(entry.path)
            except OSError:
                continue
    if not found:
        where = " or below it" if recursive else " (-R reads its subdirectories too)"
        raise UsageError(f"{path} holds no {', '.join(INPUT_SUFFIXES)} file{where}")
    return sorted(found)


def read_labelled_objects(
    path: str, *, what: str, recursive: bool = False, failures: RunFailures | None = None
) -> list[tuple[dict[str, Any], str]]:
    """Every object a ``-f`` names (see the module docstring), each with the name it is reported
    by: the file for a file of one object, else ``FILE (document N)`` (``items[i]`` of a List);
    an empty file of a directory is skipped, nothing at all is a usage error. With ``failures``
    (a directory run), a file that cannot be read or parsed, or a document that is not a
    Kubernetes object (a status fragment), is one failure reported there, and the rest is read."""
    files = input_files(path, recursive=recursive)
    collect = failures if failures is not None and Path(path).is_dir() else None
    out: list[tuple[dict[str, Any], str]] = []
    for file in files:
        try:
            found = _file_objects(file, what=what, failures=collect)
        except UsageError as exc:
            if collect is None:
                raise
            collect.add(exc)
            continue
        if len(found) == 1 and "items[" not in found[0][1]:
            found = [(found[0][0], found[0][1].rpartition(" (document")[0])]
        out.extend(found)
        if len(out) > MAX_OBJECTS:
            raise UsageError(
                f"{path} holds more than {MAX_OBJECTS:,} {what}s; kli reads at most {MAX_OBJECTS:,}"
            )
    if not out and collect is not None and collect.errors:
        collect.finish(path)
    if not out:
        empty = "the file is empty" if files == [path] else "its files are empty"
        raise UsageError(f"{'stdin' if path == '-' else path} holds no {what}: {empty}")
    return out


def _file_objects(
    path: str, *, what: str, failures: RunFailures | None = None
) -> list[tuple[dict[str, Any], str]]:
    """The objects of one file; with ``failures``, a document that is not one is reported there
    and passed over, else it is a usage error."""
    text, name = read_text(path)
    out: list[tuple[dict[str, Any], str]] = []

    def take(obj: Any, label: str) -> None:
        try:
            check_object(obj, label, what=what)
        except UsageError as exc:
            if failures is None:
                raise
            failures.add(exc)
            return
        out.append((obj, label))

    for index, doc in enumerate(parse_documents(text, name)):
        label = f"{name} (document {index + 1})"
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            for item_index, item in enumerate(doc["items"]):
                take(item, f"{label} items[{item_index}]")
        else:
            take(doc, label)
        if len(out) > MAX_OBJECTS:
            raise UsageError(
                f"{name} holds more than {MAX_OBJECTS:,} {what}s; kli reads at most {MAX_OBJECTS:,} "
                "from one file",
                hint="pass only the workload's own objects (kubectl get -l SELECTOR -o yaml)",
            )
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
