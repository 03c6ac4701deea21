"""``kli inspect -f OBJECT [--definition NAME|FILE] [--pods PODS]``: everything the engine derives.

For definition authors. The JSON shape is a stable contract (README, "kli inspect output";
:class:`karta.report.InspectReport`): ``definition``, ``workload``, ``status``, ``components``,
``gang``, ``pods``, ``diagnostics``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from karta import jq, report
from karta.cli import exitcodes
from karta.cli.commands import short_help
from karta.cli.errors import CliError
from karta.cli.inputs import read_object, read_objects
from karta.cli.lookup import DEFINITION_OPTION_HELP, PASS_DEFINITION_HINT, chosen_definition
from karta.cli.options import connection_options, format_option
from karta.cli.output import emit
from karta.cli.views.inspect import render_table
from karta.errors import ExtractionError, JqError, StatusError, ValidationError

if TYPE_CHECKING:
    from karta.kube import ConfigOverrides

__all__ = ["inspect"]


@click.command("inspect", short_help=short_help("inspect"))
@click.option("-f", "--file", "file", required=True, metavar="OBJECT", help="Workload manifest (path or -).")
@click.option("--definition", "definition", metavar="NAME|FILE", help=DEFINITION_OPTION_HELP)
@click.option(
    "--pods", "pods_file", metavar="PODS", help="The workload's pods (multi-document YAML or a List)."
)
@format_option("table", "json", "yaml")
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
    obj, obj_name = read_object(file, what="workload object")
    pods = read_objects(pods_file, what="pod") if pods_file else []
    chosen, diagnostics = chosen_definition(definition, obj, overrides, hint=PASS_DEFINITION_HINT)
    evaluator = jq.Evaluator(trusted=chosen.trusted)
    try:
        view = report.inspect_report(chosen.karta, obj, pods, evaluator=evaluator, diagnostics=diagnostics)
    except (ExtractionError, StatusError, JqError, ValidationError) as exc:
        raise CliError(str(exc)) from None
    failed = report.error_count(view)
    if output == "table":
        click.echo(render_table(view), nl=False)
    else:
        emit(view, output)
    if failed:
        raise CliError(
            f'{failed} error diagnostic(s) for {obj_name}; see "diagnostics"', code=exitcodes.FAILURE
        )
