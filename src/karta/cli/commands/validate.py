"""``kli validate FILE|-``: load a Karta strictly and run the validator (karta-format.md 17.8)."""

from __future__ import annotations

import sys

import click

from karta import model
from karta.cli import exitcodes
from karta.cli.commands import short_help
from karta.cli.errors import CliError, UsageError
from karta.cli.inputs import read_documents, read_text
from karta.cli.output import warn
from karta.cli.text import printable
from karta.errors import DefinitionError


@click.command("validate", short_help=short_help("validate"))
@click.argument("file", metavar="FILE|-")
def validate(file: str) -> None:
    """Check the Karta definition in FILE (or standard input with -) offline.

    Prints `OK: <name> is a valid Karta definition (GVK: ...)` and exits 0, or `INVALID: <name>`
    followed by every finding and exits 1. Warnings go to stderr and do not fail the check.
    Unknown or misspelt fields are findings. Unreadable or unparseable input exits 2.
    """
    text, name = read_text(file)
    docs = read_documents(text, name, duplicates=True)
    if not docs:
        raise UsageError(f"{name} holds no Karta definition: the file is empty")
    if len(docs) > 1:
        raise UsageError(f"{name} holds {len(docs)} YAML documents; expected exactly one Karta definition")
    try:
        result = model.load_karta(docs[0].value, strict=True, source_name=name, duplicates=docs[0].duplicates)
    except DefinitionError as exc:
        raise UsageError(str(exc)) from None
    findings = list(result.findings)
    karta = result.karta
    if karta is not None:
        findings.extend(model.validate_karta(karta))
    display = (karta.metadata.name if karta is not None else "") or _raw_name(docs[0].value) or name
    errors = [f for f in findings if f.severity is model.Severity.ERROR]
    warnings = [f for f in findings if f.severity is not model.Severity.ERROR]
    if errors or karta is None:
        lines = [f"INVALID: {display}"] + [f"  {_line(f)}" for f in errors]
        sys.stdout.write("\n".join(printable(line) for line in lines) + "\n")
        for w in warnings:
            warn(_line(w))
        count = len(errors)
        raise CliError(f"{count} finding{'s' if count != 1 else ''} in {display}", code=exitcodes.FAILURE)
    gvk = karta.root.kind
    gvk_text = str(gvk) if gvk is not None else "<none>"
    sys.stdout.write(printable(f"OK: {display} is a valid Karta definition (GVK: {gvk_text})") + "\n")
    for w in warnings:
        warn(_line(w))


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
