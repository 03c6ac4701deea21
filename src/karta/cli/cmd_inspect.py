"""``kli inspect -f OBJECT [--definition KARTA] [--pods PODS]``: everything the engine derives.

For definition authors. The JSON shape is a stable contract (README, "kli inspect output"):
``definition``, ``workload``, ``status``, ``components``, ``gang``, ``pods``, ``diagnostics``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from karta.cli import exitcodes
from karta.cli.errors import CliError
from karta.cli.live import connection_options

if TYPE_CHECKING:
    from karta.kube import ConfigOverrides


@click.command("inspect")
@click.option("-f", "--file", "file", required=True, metavar="OBJECT", help="Workload manifest (path or -).")
@click.option(
    "--definition",
    "definition",
    metavar="KARTA",
    help="Karta definition file (default: resolve by the object's GVK from the built-in "
    "catalog, $KARTA_DEFINITIONS and the cluster's Kartas, as every command does).",
)
@click.option(
    "--pods", "pods_file", metavar="PODS", help="The workload's pods (multi-document YAML or a List)."
)
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Choice(["table", "json", "yaml"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@connection_options
def inspect(
    file: str, definition: str | None, pods_file: str | None, output: str, overrides: ConfigOverrides
) -> None:
    """Show what a Karta definition extracts from one workload object (and optionally its pods).

    Prints the status (phase, conditions, matched statuses, primary), every component with its
    instances (pod template or pod spec, scale), the gang plan, where each pod belongs, and
    diagnostics. An extraction error exits 1 with `error: <message>`; no definition for the
    object's type exits 4.
    """
    from karta.cli.inputs import read_object, read_objects
    from karta.cli.inspect_view import build_view, render_table
    from karta.cli.output import emit

    obj, obj_name = read_object(file, what="workload object")
    pods = read_objects(pods_file, what="pod") if pods_file else []
    stored_name, karta, trusted, diagnostics = _definition(definition, obj, overrides)
    view, failed = build_view(karta, obj, pods, trusted=trusted, diagnostics=diagnostics)
    view["definition"] = stored_name
    if output == "table":
        click.echo(render_table(view), nl=False)
    else:
        emit(view, output)
    if failed:
        raise CliError(
            f'{failed} error diagnostic(s) for {obj_name}; see "diagnostics"', code=exitcodes.FAILURE
        )


def _definition(
    path: str | None, obj: dict[str, Any], overrides: ConfigOverrides | None = None
) -> tuple[str, Any, bool, list[dict[str, str]]]:
    """Load ``--definition`` or resolve one by GVK from the definitions every command sees
    (catalog < ``$KARTA_DEFINITIONS`` < the cluster's, read with ``overrides``); returns (name,
    karta, trusted, diagnostics)."""
    from karta.cli.errors import UsageError
    from karta.cli.inputs import load_definition, parse_documents, read_text

    diagnostics: list[dict[str, str]] = []
    if path is not None:
        text, name = read_text(path)
        docs = parse_documents(text, name)
        if len(docs) != 1:
            raise UsageError(
                f"{name} holds {len(docs)} YAML documents; expected exactly one Karta definition"
            )
        karta, findings = load_definition(docs[0], name=name, path=path)
        diagnostics.extend(f.to_dict() for f in findings)
        _check_kind(karta, obj, diagnostics)
        return karta.metadata.name, karta, False, diagnostics

    from karta.cli.cmd_definitions import definition_for_object, open_store

    store = open_store(overrides)
    for warning in store.warnings:
        diagnostics.append({"severity": "warning", "message": warning, "location": ""})
    chosen = definition_for_object(store, obj, hint=INSPECT_NO_DEFINITION_HINT)
    _check_kind(chosen.karta, obj, diagnostics)
    return chosen.karta.metadata.name, chosen.karta, chosen.trusted, diagnostics


INSPECT_NO_DEFINITION_HINT = (
    "pass one with --definition FILE, or put it in $KARTA_DEFINITIONS "
    '(default ~/.karta/definitions); "kli definitions" lists the types Karta covers, '
    '"kli scaffold --crd CRD.yaml" drafts a definition'
)


def _check_kind(karta: Any, obj: dict[str, Any], diagnostics: list[dict[str, str]]) -> None:
    gvk = karta.root.kind
    if gvk is None:
        return
    if (gvk.api_version, gvk.kind) != (obj.get("apiVersion"), obj.get("kind")):
        diagnostics.append(
            {
                "severity": "warning",
                "message": f"definition {karta.metadata.name} is for {gvk.kind} ({gvk.api_version}) "
                f"but the object is {obj.get('kind')} ({obj.get('apiVersion')})",
                "location": "spec.structureDefinition.rootComponent.kind",
            }
        )
