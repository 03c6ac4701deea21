"""``kli scaffold --crd CRD.yaml [--kind K] [--version V] [-o yaml|json]``: a draft Karta from a CRD.

The analysis and the draft live in :mod:`karta.scaffold`; this module reads the file, reports
problems as usage errors and prints the draft (YAML with ``TODO:`` comments, or JSON without them).
"""

from __future__ import annotations

import click

from karta import scaffold as drafts
from karta.cli.commands import short_help
from karta.cli.errors import UsageError
from karta.cli.inputs import parse_documents, read_text
from karta.cli.options import format_option
from karta.cli.output import emit, warn
from karta.errors import ScaffoldError


@click.command("scaffold", short_help=short_help("scaffold"))
@click.option(
    "--crd", "crd_file", required=True, metavar="CRD", help="CustomResourceDefinition file (path or -)."
)
@click.option("--kind", metavar="KIND", help="The CRD's kind, when the file holds several CRDs.")
@click.option(
    "--version", "version", metavar="VERSION", help="API version to describe (default: the storage version)."
)
@format_option("yaml", "json", help="yaml keeps the TODO comments; json prints the bare definition.")
def scaffold(crd_file: str, kind: str | None, version: str | None, output: str) -> None:
    """Propose a draft Karta definition from a CRD's OpenAPI schema.

    Finds PodTemplateSpec- and PodSpec-shaped fields (alone, in maps, in lists), replica-like
    integers next to them, suspend booleans, status conditions and phase-like enums. The draft
    passes `kli validate`; `# TODO:` comments mark what a human must decide (pod labels, which
    replica count counts pods, unmapped phase values). The CRD's subresources.scale names the
    replica count (specReplicasPath) and, when the schema has no status phase or conditions, the
    status (statusReplicasPath); a status path the schema does not declare is a guess, said so on
    stderr. Save it, edit it, then check it against a real object with `kli verify --pods`.
    """
    text, name = read_text(crd_file)
    docs = parse_documents(text, name)
    try:
        draft = drafts.scaffold_crd(docs, kind=kind, version=version)
    except ScaffoldError as exc:
        raise UsageError(f"{name}: {exc}") from None
    if output == "yaml":
        click.echo(draft.to_yaml(), nl=False)
    else:
        emit(draft.karta, "json")
    for note in draft.notes:  # what the draft guessed beyond the schema
        warn(note)
    if output == "json" and draft.todos:
        count = len(draft.todos)
        warn(f"the draft has {count} TODO{'s' if count != 1 else ''}; -o yaml shows them as comments")
