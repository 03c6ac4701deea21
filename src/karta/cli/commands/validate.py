"""``kli validate FILE|DIR|-...``: load Karta definitions strictly and run the validator
(docs/spec/format.md#kli-validate), on several files, directories and standard input at once.

Each input is read as ``-f`` reads (:func:`karta.cli.inputs.input_files`: a directory's ``.yaml``,
``.yml`` and ``.json`` files, ``-R`` recursively) and every YAML document of it is one
definition, checked by :func:`check_document`. The outcome is a list of :class:`Checked` (one per
definition, or per input that could not be read), printed as the 17.8 lines or, with ``-o json``,
as one list of findings ``{file, severity, path, message}`` for CI. Exit 2 when an input could not
be read or parsed, else 1 when any definition has an error finding, else 0.

A further check of a definition adds its findings to :attr:`Checked.findings` between
:func:`check_path` and :func:`report`: ``--crd FILE`` (or ``--crd-from-cluster``, the CRD the
cluster serves, read with kubectl's connection flags) checks every definition against the CRD of
its root group and kind (:func:`karta.schema.check_definition`); its errors fail the check, its
notes (what could not be checked) go to stderr, and ``-o json`` rows of it also carry the
``schemaPath``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

import click

from karta import kube, model, scaffold, schema
from karta._records import record
from karta.cli import exitcodes
from karta.cli.cluster import cluster_failure, connect, identity
from karta.cli.commands import short_help
from karta.cli.errors import CliError, UsageError, format_error
from karta.cli.inputs import input_files, parse_documents, read_documents, read_text
from karta.cli.options import connection_options, format_option
from karta.cli.output import emit, note, warn
from karta.cli.text import printable
from karta.errors import ApiError, ClusterError, DefinitionError

if TYPE_CHECKING:
    from karta.model import Karta

__all__ = ["Checked", "check_document", "check_path", "report", "validate"]


@click.command("validate", short_help=short_help("validate"))
@click.argument("files", nargs=-1, required=True, metavar="FILE|DIR|-...")
@click.option("-R", "--recursive", is_flag=True, help="Also read the subdirectories of a DIR.")
@click.option(
    "--crd",
    "crd_files",
    multiple=True,
    metavar="CRD",
    help="Also check each definition against the CRD of its root kind in this file (repeatable).",
)
@click.option(
    "--crd-from-cluster",
    is_flag=True,
    help="Also check each definition against the CRD the cluster serves for its root kind.",
)
@format_option(
    "text",
    "json",
    help="text: OK/INVALID lines; json: a list of findings {file, severity, path, message[, schemaPath]}.",
)
@connection_options
def validate(
    files: tuple[str, ...],
    recursive: bool,
    crd_files: tuple[str, ...],
    crd_from_cluster: bool,
    output: str,
    overrides: kube.ConfigOverrides,
) -> None:
    """Check the Karta definitions in FILEs (directories of .yaml, .yml and .json files, or - for
    standard input) offline (--crd-from-cluster reads CRDs); every YAML document is one definition.

    Prints `OK: <name> is a valid Karta definition (GVK: ...)` per definition, or `INVALID:
    <name>` followed by every finding. Warnings go to stderr and do not fail the check. Unknown
    or misspelt fields are findings. -o json prints every finding as {file, severity, path,
    message} (an empty list when all is valid). Exit 0 when valid, 1 when any definition has an
    error, 2 when an input cannot be read or parsed.

    With --crd CRD.yaml (or --crd-from-cluster), every path the definition reads from the
    workload object is also looked up in the CRD's OpenAPI schema for the definition's version: a
    field the schema lacks, a pod template or pod spec path that is not PodTemplateSpec- or
    PodSpec-shaped, a scale path that is not an integer or a string, an iteration over something
    that is not a list or a map are errors naming the definition's field and the schema path.
    Where the schema stops saying what is there (x-kubernetes-preserve-unknown-fields) or an
    expression cannot be followed, a note says so: it is not checked, not passed. A definition
    whose root kind has no CRD there is not checked either: `not checked against a CRD: ...`
    under its OK line, which does not fail the run.
    """
    if crd_files and crd_from_cluster:
        raise UsageError("--crd and --crd-from-cluster exclude each other: give one")
    checked = [one for path in files for one in check_path(path, recursive=recursive)]
    if crd_files:
        check_schemas(checked, _crds_of(crd_files))
    elif crd_from_cluster:
        _check_live(checked, overrides)
    report(checked, output=output)


@record(frozen=False)
class Checked:
    """One definition checked, or one input that could not be read (``unreadable``)."""

    file: str  # as reported: the path, or stdin
    name: str  # the definition's name, else the file's
    karta: Karta | None = None
    findings: list[model.Finding] = field(default_factory=list)
    unreadable: UsageError | None = None
    schema: schema.SchemaCheck | None = None  # the check against a CRD, when asked
    unchecked: str = ""  # asked, but no CRD of its root kind: why it was not checked

    @property
    def errors(self) -> list[model.Finding]:
        return [f for f in self.findings if f.severity is model.Severity.ERROR]

    @property
    def valid(self) -> bool:
        return self.unreadable is None and self.karta is not None and not self.errors


def check_path(path: str, *, recursive: bool = False) -> list[Checked]:
    """Every definition of the files ``path`` names (a usage error of reading one is kept as an
    unreadable :class:`Checked`, so that the other inputs are still checked)."""
    try:
        files = input_files(path, recursive=recursive)
    except UsageError as exc:
        return [Checked(file=path, name=path, unreadable=exc)]
    out: list[Checked] = []
    for file in files:
        try:
            text, name = read_text(file)
            docs = read_documents(text, name, duplicates=True)
            if not docs:
                raise UsageError(f"{name} holds no Karta definition: the file is empty")
            labels = [f"{name} (document {i})" for i in range(1, len(docs) + 1)] if len(docs) > 1 else [name]
            out.extend(
                check_document(doc, file=name, label=label) for doc, label in zip(docs, labels, strict=True)
            )
        except UsageError as exc:
            out.append(Checked(file="stdin" if file == "-" else file, name=file, unreadable=exc))
    return out


def check_document(doc: model.Document, *, file: str, label: str | None = None) -> Checked:
    """One YAML document of ``file`` (named ``label`` in messages: ``FILE (document N)`` in a
    file of several) loaded strictly as a Karta and validated."""
    label = label or file
    try:
        result = model.load_karta(doc.value, strict=True, source_name=label, duplicates=doc.duplicates)
    except DefinitionError as exc:
        return Checked(file=file, name=label, unreadable=UsageError(str(exc)))
    findings = list(result.findings)
    karta = result.karta
    if karta is not None:
        findings.extend(model.validate_karta(karta))
    name = (karta.metadata.name if karta is not None else "") or _raw_name(doc.value) or label
    return Checked(file=file, name=name, karta=karta, findings=findings)


def _crds_of(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition of the files (a file without one is a usage error)."""
    crds: list[dict[str, Any]] = []
    for path in paths:
        text, name = read_text(path)
        found = [d for d in parse_documents(text, name) if scaffold.is_crd(d)]
        if not found:
            raise UsageError(
                f"--crd {name}: no CustomResourceDefinition in the file",
                hint="give a file of apiextensions.k8s.io/v1 CustomResourceDefinition objects",
            )
        crds.extend(found)
    return crds


def check_schemas(
    checked: list[Checked],
    crds: list[dict[str, Any]],
    *,
    missing: Mapping[tuple[str, str], str] | None = None,
) -> None:
    """Add the schema check of every loaded definition against its CRD among ``crds``; a
    definition whose root kind no CRD defines is not checked, which is neither a pass nor a
    failure: a note finding saying why (``missing``: the reason by group and kind, else: the
    --crd files define none), printed in place of the schema summary."""
    for c in checked:
        karta = c.karta
        if karta is None or c.unreadable is not None:
            continue
        crd = schema.crd_for(karta, crds)
        if crd is None:
            gvk = karta.root.kind
            kind = f"{gvk.group or 'core'}/{gvk.kind}" if gvk is not None else "(no root kind)"
            known = (missing or {}).get((gvk.group, gvk.kind)) if gvk is not None else None
            c.unchecked = f"not checked against a CRD: {known or f'the --crd files define no CRD for {kind}'}"
            c.findings.append(
                model.Finding(model.Severity.NOTE, c.unchecked, "spec.structureDefinition.rootComponent.kind")
            )
            continue
        result = schema.check_definition(karta, crd)
        c.schema = result
        c.findings.extend(result.findings)


def _check_live(checked: list[Checked], overrides: kube.ConfigOverrides) -> None:
    """:func:`check_schemas` against the CRDs the cluster serves for the definitions' root kinds."""
    wanted = {
        (gvk.group, gvk.kind)
        for c in checked
        if c.karta is not None and (gvk := c.karta.root.kind) is not None
    }
    if not wanted:
        return
    client = connect(overrides)
    crds: list[dict[str, Any]] = []
    missing: dict[tuple[str, str], str] = {}
    try:
        for group, kind in sorted(wanted):
            try:
                crds.append(kube.served_crd(client, group=group, kind=kind))
            except kube.CrdNotFound as exc:
                missing[(group, kind)] = str(exc)
            except ApiError as exc:
                if exc.status == 403:
                    raise CliError(
                        f"{identity(client.config)} may not read the CRD of {group}/{kind} "
                        f"(403 Forbidden): {exc}",
                        hint=f"--crd-from-cluster needs get on {kube.CRD_TYPE}; "
                        "or check against a file with --crd CRD.yaml",
                    ) from None
                raise cluster_failure(
                    exc, client=client, doing=f"reading the CRD of {group}/{kind}"
                ) from None
            except ClusterError as exc:
                raise cluster_failure(
                    exc, client=client, doing=f"reading the CRD of {group}/{kind}"
                ) from None
    finally:
        client.close()
    check_schemas(checked, crds, missing=missing)


def report(checked: list[Checked], *, output: str) -> None:
    """Print the outcome (see the module docstring) and end with the exit code it calls for."""
    unreadable = [c.unreadable for c in checked if c.unreadable is not None]
    if output == "json":
        emit([row for c in checked for row in _rows(c)], "json")
    else:
        _print_text(checked)
    if unreadable:
        for error in unreadable[:-1]:
            sys.stderr.write(format_error(error))
        raise unreadable[-1]
    invalid = [c for c in checked if not c.valid]
    if not invalid:
        return
    count = sum(max(1, len(c.errors)) for c in invalid)
    findings = f"{count} finding{'s' if count != 1 else ''}"
    if len(checked) == 1:
        raise CliError(f"{findings} in {checked[0].name}", code=exitcodes.FAILURE)
    raise CliError(f"{findings} in {len(invalid)} of {len(checked)} definitions", code=exitcodes.FAILURE)


def _print_text(checked: list[Checked]) -> None:
    several = len(checked) > 1
    for c in checked:
        if c.unreadable is not None:
            continue
        where = f" in {c.file}" if several else ""
        if c.valid:
            assert c.karta is not None
            gvk = c.karta.root.kind
            gvk_text = str(gvk) if gvk is not None else "<none>"
            lines = [f"OK: {c.name} is a valid Karta definition (GVK: {gvk_text}){where}"]
            if c.schema is not None:
                lines.append(f"  {_schema_summary(c.schema)}")
            elif c.unchecked:
                lines.append(f"  {c.unchecked}")
        else:
            lines = [f"INVALID: {c.name}{where}"] + [f"  {_line(f)}" for f in c.errors]
            lines += [f"  {c.unchecked}"] if c.unchecked else []
        sys.stdout.write("\n".join(printable(line) for line in lines) + "\n")
        for w in c.findings:
            if w.message == c.unchecked:
                continue  # said on stdout, in place of the schema summary
            if w.severity is model.Severity.NOTE:
                note(_line(w))
            elif w.severity is not model.Severity.ERROR:
                warn(_line(w))


def _schema_summary(result: schema.SchemaCheck) -> str:
    notes = len(result.notes)
    paths = f"{result.paths} object path{'s' if result.paths != 1 else ''}"
    exprs = f"{result.expressions} expression{'s' if result.expressions != 1 else ''}"
    head = f"fits CRD {result.crd} ({result.version}): {paths} of {exprs} found in its schema"
    return head + (f"; {notes} not checked (notes on stderr)" if notes else "")


def _rows(c: Checked) -> list[dict[str, Any]]:
    if c.unreadable is not None:
        return [{"file": c.file, "severity": "error", "path": "", "message": str(c.unreadable)}]
    rows: list[dict[str, Any]] = []
    for f in c.findings:
        row = {"file": c.file, "severity": f.severity.value, "path": f.location or "", "message": f.message}
        if isinstance(f, schema.SchemaFinding):
            row["schemaPath"] = f.schema_path
        rows.append(row)
    return rows


def _line(finding: object) -> str:
    message = str(getattr(finding, "message", finding))
    location = str(getattr(finding, "location", "") or "")
    if location and location not in message:
        return f"{message} (at {location})"
    return message


def _raw_name(doc: object) -> str:
    if isinstance(doc, dict):
        meta = doc.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            return str(meta["name"])
    return ""
