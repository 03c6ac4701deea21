"""Loading Karta definitions from YAML/JSON text, files or mappings, without tracebacks.

Owns: reading and decoding (one document or several), the ``apiVersion``/``kind`` check and the
legacy ``ResourceInterface`` conversion, unknown/missing-field findings (R17, via
:mod:`karta.model.unknown`), turning the model's type errors into findings with JSON paths, and the
R1 condition field-name defaults (applied by the model itself, whatever the source).

Policy: a source that is not a Karta at all (unreadable, not YAML, not a mapping, another kind)
raises :class:`~karta.errors.DefinitionError`. A Karta with defects gives findings: unknown and
missing fields are errors when ``strict`` and warnings otherwise; values of the wrong type are
always errors (the API server would reject them) and leave ``LoadResult.karta`` as ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from karta._records import record
from karta.errors import DefinitionError, ValidationError
from karta.model.base import ModelValidationError
from karta.model.documents import Document, DocumentError, DuplicateKey, read_bytes, read_documents
from karta.model.findings import Finding, Severity
from karta.model.schema import join_path
from karta.model.types import API_VERSION, KIND, LEGACY_API_VERSION, LEGACY_KIND, Karta
from karta.model.unknown import check_fields

__all__ = ["LoadResult", "duplicate_findings", "karta_from_dict", "load_karta", "load_kartas"]

Source = str | bytes | Path | Mapping[Any, Any]

_LIST_KINDS = frozenset({"List", "KartaList"})


@record(slots=True)
class LoadResult:
    """A loaded definition and what the loader found. ``karta`` is ``None`` when types were wrong."""

    karta: Karta | None
    findings: list[Finding] = field(default_factory=list)
    source: str = ""

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]

    @property
    def ok(self) -> bool:
        return self.karta is not None and not self.errors


# --- reading and decoding ---------------------------------------------------------------------


def _read(source: str | bytes | Path, source_name: str | None) -> tuple[str, str]:
    if isinstance(source, Path):
        name = source_name or str(source)
        try:
            raw = read_bytes(source, source=name)
        except DocumentError as exc:
            raise DefinitionError(f"cannot read {name}: {exc.problem}") from exc
        except OSError as exc:
            raise DefinitionError(f"cannot read {name}: {exc.strerror or exc}") from exc
    else:
        name = source_name or "<input>"
        raw = source if isinstance(source, bytes) else source.encode("utf-8", "surrogatepass")
    try:
        # as raw.decode("utf-8-sig") (a leading byte order mark dropped, the error's positions
        # counted after it), without importing that codec at every start-up
        text = (raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DefinitionError(
            f"cannot read {name}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from exc
    return text, name


def _documents(text: str, name: str) -> list[Document]:
    """The non-empty documents of a YAML (or JSON) text, with their positions and duplicate keys
    (:mod:`karta.model.documents`: the limits, JSON numbers, timestamps kept as strings)."""
    try:
        return read_documents(text, source=name, duplicates=True)
    except DocumentError as exc:
        where = f" (line {exc.line}, column {exc.column})" if exc.line else ""
        raise DefinitionError(f"cannot parse {name}: {exc.problem}{where}") from exc


def duplicate_findings(duplicates: Sequence[DuplicateKey]) -> list[Finding]:
    """One error finding per duplicate mapping key of a definition's text (its JSON path)."""
    return [
        Finding(
            Severity.ERROR,
            f'duplicate key "{d.path}"{f" (line {d.line}, column {d.column})" if d.line else ""}: '
            "a key may appear only once in a mapping",
            d.path,
        )
        for d in duplicates
    ]


# --- from a mapping to a Karta ------------------------------------------------------------------


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _describe(value: object) -> str:
    import json  # error messages only: kli start-up is budgeted

    kind = _json_type(value)
    if kind in ("array", "object") or value is None:
        return kind
    text = json.dumps(value) if isinstance(value, bool | int | float) else repr(value)
    return f"{kind} {text}"


_EXPECTED = {
    "string_type": "a string",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dict_type": "an object",
    "tuple_type": "an array",
    "list_type": "an array",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
}


def _error_finding(error: Any) -> Finding:
    import json  # error messages only: kli start-up is budgeted

    path = ""
    loc = list(error.get("loc", ()))
    is_key = bool(loc) and loc[-1] == "[key]"
    if is_key:
        loc = loc[:-2]  # report the mapping whose key is wrong
    for part in loc:
        path = join_path(path, part if isinstance(part, int) else str(part))
    value = error.get("input")
    expected = _EXPECTED.get(error.get("type", ""))
    if expected is None:
        message = f"{path}: {error.get('msg', 'invalid value')}"
    elif is_key:
        message = f"{path}: keys must be strings, got {_describe(value)}"
    else:
        message = f"{path}: expected {expected}, got {_describe(value)}"
        if expected == "a string" and isinstance(value, bool | int | float):
            # The CRD wants a string and the API server would reject the scalar: say how to fix it.
            message += f"; quote it: {json.dumps(json.dumps(value))}"
    return Finding(Severity.ERROR, message, path)


def _check_identity(data: Mapping[Any, Any], name: str, strict: bool) -> tuple[dict[Any, Any], list[Finding]]:
    api_version, kind = data.get("apiVersion"), data.get("kind")
    expected = f'apiVersion "{API_VERSION}" and kind "{KIND}"'
    if (api_version, kind) == (API_VERSION, KIND):
        return dict(data), []
    if (api_version, kind) == (LEGACY_API_VERSION, LEGACY_KIND):
        converted = {**data, "apiVersion": API_VERSION, "kind": KIND}
        note = (
            f'legacy kind "{LEGACY_KIND}" ({LEGACY_API_VERSION}) was converted '
            f'to kind "{KIND}" ({API_VERSION})'
        )
        return converted, [Finding(Severity.WARNING, note, "kind")]
    if api_version is None and kind is None:
        severity = Severity.ERROR if strict else Severity.WARNING
        converted = {"apiVersion": API_VERSION, "kind": KIND, **data}
        return converted, [Finding(severity, f"missing apiVersion and kind: expected {expected}", "")]
    import json  # error messages only: kli start-up is budgeted

    raise DefinitionError(
        f"{name} is not a Karta: expected {expected} (or the legacy "
        f'apiVersion "{LEGACY_API_VERSION}" and kind "{LEGACY_KIND}"), '
        f"got apiVersion {json.dumps(api_version, default=str)} and kind {json.dumps(kind, default=str)}"
    )


def _from_mapping(
    data: object, *, strict: bool, name: str, duplicates: Sequence[DuplicateKey] = ()
) -> LoadResult:
    if not isinstance(data, Mapping):
        raise DefinitionError(f"{name} is not a Karta: expected an object (mapping), got {_json_type(data)}")
    identified, findings = _check_identity(data, name, strict)
    findings.extend(duplicate_findings(duplicates))
    try:
        cleaned, field_findings = check_fields(identified, strict=strict)
    except RecursionError as exc:
        raise DefinitionError(f"{name}: definition is nested too deeply") from exc
    findings.extend(field_findings)
    try:
        karta = Karta.model_validate(cleaned)
    except ModelValidationError as exc:
        findings.extend(_error_finding(err) for err in exc.errors())
        return LoadResult(None, findings, name)
    return LoadResult(karta, findings, name)


# --- public API -----------------------------------------------------------------------------------


def load_karta(
    source: Source,
    *,
    strict: bool = True,
    source_name: str | None = None,
    duplicates: Sequence[DuplicateKey] = (),
) -> LoadResult:
    """Load one Karta from YAML/JSON text, bytes, a file :class:`~pathlib.Path` or a mapping.

    Raises :class:`DefinitionError` when the source is not a single Karta definition; every defect
    of a definition is a finding instead (see the module docstring), duplicate keys of its text
    included. For a mapping read elsewhere (:func:`karta.model.documents.read_documents`),
    ``duplicates`` are that document's duplicate keys.
    """
    if not isinstance(source, str | bytes | Path):
        # A mapping; anything else (a list, None) is rejected there as "not a Karta".
        return _from_mapping(source, strict=strict, name=source_name or "<mapping>", duplicates=duplicates)
    text, name = _read(source, source_name)
    docs = _documents(text, name)
    if not docs:
        raise DefinitionError(f"{name} holds no Karta definition (it is empty)")
    if len(docs) > 1:
        raise DefinitionError(
            f"{name} holds {len(docs)} documents; expected exactly one Karta (load_kartas reads several)"
        )
    return _from_mapping(docs[0].value, strict=strict, name=name, duplicates=docs[0].duplicates)


def load_kartas(source: Source, *, strict: bool = True, source_name: str | None = None) -> list[LoadResult]:
    """Load every Karta of a multi-document source (``List``/``KartaList`` items are expanded).

    A document that is not a Karta gives a result without a definition and one error finding, so
    that one bad document does not hide the others; unreadable or unparseable input still raises.
    """
    if not isinstance(source, str | bytes | Path):
        name = source_name or "<mapping>"
        docs = [Document(1, source)]
    else:
        text, name = _read(source, source_name)
        docs = _documents(text, name)
    items: list[tuple[str, Any, Sequence[DuplicateKey]]] = []
    for doc in docs:
        doc_name = f"{name} (document {doc.number})" if len(docs) > 1 else name
        value = doc.value
        listed = isinstance(value, Mapping) and value.get("kind") in _LIST_KINDS
        if listed and isinstance(value.get("items"), list):
            prefix = "items"
            for j, item in enumerate(value["items"]):
                here = f"{prefix}[{j}]"
                # the item's duplicate keys, with paths relative to the item
                mine = [
                    DuplicateKey(d.path[len(here) + 1 :], d.line, d.column)
                    for d in doc.duplicates
                    if d.path.startswith(here + ".") or d.path.startswith(here + "[")
                ]
                items.append((f"{doc_name} items[{j}]", item, mine))
        else:
            items.append((doc_name, value, doc.duplicates))
    results: list[LoadResult] = []
    for item_name, item, duplicates in items:
        try:
            results.append(_from_mapping(item, strict=strict, name=item_name, duplicates=duplicates))
        except DefinitionError as exc:
            results.append(LoadResult(None, [Finding(Severity.ERROR, str(exc), "")], item_name))
    return results


def karta_from_dict(data: Mapping[Any, Any]) -> Karta:
    """Build a Karta from a wire-form mapping, leniently (unknown fields are dropped, not fatal).

    Raises :class:`DefinitionError` for something that is not a Karta and :class:`ValidationError`
    when the mapping has error findings (values of the wrong type).
    """
    result = _from_mapping(data, strict=False, name="<mapping>")
    errors = result.errors
    if result.karta is None or errors:
        raise ValidationError("invalid karta: " + "\n".join(f.message for f in errors), findings=list(errors))
    return result.karta
