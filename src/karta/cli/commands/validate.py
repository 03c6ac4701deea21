"""``kli validate FILE|DIR|-...``: load Karta definitions strictly and run the validator
(karta-format.md 17.8), on several files, directories and standard input at once.

Each input is read as ``-f`` reads (:func:`karta.cli.inputs.input_files`: a directory's ``.yaml``,
``.yml`` and ``.json`` files, ``-R`` recursively) and every YAML document of it is one
definition, checked by :func:`check_document`. The outcome is a list of :class:`Checked` (one per
definition, or per input that could not be read), printed as the 17.8 lines or, with ``-o json``,
as one list of findings ``{file, severity, path, message}`` for CI. Exit 2 when an input could not
be read or parsed, else 1 when any definition has an error finding, else 0.

A further check of a definition (against a CRD, say) adds its findings to :attr:`Checked.findings`
between :func:`check_path` and :func:`report`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from karta import model
from karta.cli import exitcodes
from karta.cli.commands import short_help
from karta.cli.errors import CliError, UsageError, format_error
from karta.cli.inputs import input_files, read_documents, read_text
from karta.cli.options import format_option
from karta.cli.output import emit, warn
from karta.cli.text import printable
from karta.errors import DefinitionError

if TYPE_CHECKING:
    from karta.model import Karta

__all__ = ["Checked", "check_document", "check_path", "report", "validate"]


@click.command("validate", short_help=short_help("validate"))
@click.argument("files", nargs=-1, required=True, metavar="FILE|DIR|-...")
@click.option("-R", "--recursive", is_flag=True, help="Also read the subdirectories of a DIR.")
@format_option(
    "text", "json", help="text: OK/INVALID lines; json: a list of findings {file, severity, path, message}."
)
def validate(files: tuple[str, ...], recursive: bool, output: str) -> None:
    """Check the Karta definitions in FILEs (directories of .yaml, .yml and .json files, or - for
    standard input) offline; every YAML document is one definition.

    Prints `OK: <name> is a valid Karta definition (GVK: ...)` per definition, or `INVALID:
    <name>` followed by every finding. Warnings go to stderr and do not fail the check. Unknown
    or misspelt fields are findings. -o json prints every finding as {file, severity, path,
    message} (an empty list when all is valid). Exit 0 when valid, 1 when any definition has an
    error, 2 when an input cannot be read or parsed.
    """
    checked = [one for path in files for one in check_path(path, recursive=recursive)]
    report(checked, output=output)


@dataclass
class Checked:
    """One definition checked, or one input that could not be read (``unreadable``)."""

    file: str  # as reported: the path, or stdin
    name: str  # the definition's name, else the file's
    karta: Karta | None = None
    findings: list[model.Finding] = field(default_factory=list)
    unreadable: UsageError | None = None

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
        else:
            lines = [f"INVALID: {c.name}{where}"] + [f"  {_line(f)}" for f in c.errors]
        sys.stdout.write("\n".join(printable(line) for line in lines) + "\n")
        for w in c.findings:
            if w.severity is not model.Severity.ERROR:
                warn(_line(w))


def _rows(c: Checked) -> list[dict[str, Any]]:
    if c.unreadable is not None:
        return [{"file": c.file, "severity": "error", "path": "", "message": str(c.unreadable)}]
    return [
        {"file": c.file, "severity": f.severity.value, "path": f.location or "", "message": f.message}
        for f in c.findings
    ]


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
