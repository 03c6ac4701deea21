"""``kli inspect -f OBJECT [--definition NAME|FILE] [--pods PODS]``: everything the engine derives.

``-f`` is kubectl's: several documents, a directory or standard input, one report per object.

For definition authors. The JSON shape is a stable contract (docs/reference/commands/inspect.md;
:class:`karta.report.InspectReport`): ``definition``, ``workload``, ``status``, ``components``,
``gang``, ``pods``, ``diagnostics``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from karta import report
from karta.cli import exitcodes
from karta.cli.commands import short_help
from karta.cli.errors import CliError, RunFailures, UsageError
from karta.cli.inputs import read_labelled_objects, read_objects
from karta.cli.lookup import (
    DEFINITION_OPTION_HELP,
    PASS_DEFINITION_HINT,
    chosen_definition,
    open_store,
    reference_evaluator,
)
from karta.cli.options import connection_options, format_option, manifest_options, ref_option
from karta.cli.output import emit, warn
from karta.cli.views.inspect import render_table
from karta.cli.views.table import fit_width
from karta.errors import ExtractionError, JqError, StatusError, ValidationError

if TYPE_CHECKING:
    from karta.kube import ConfigOverrides
    from karta.report import InspectReport

__all__ = ["inspect"]


@click.command("inspect", short_help=short_help("inspect"))
@manifest_options(required=True, metavar="OBJECT")
@click.option("--definition", "definition", metavar="NAME|FILE", help=DEFINITION_OPTION_HELP)
@click.option(
    "--pods", "pods_file", metavar="PODS", help="The workload's pods (multi-document YAML or a List)."
)
@ref_option
@format_option("table", "json", "yaml")
@connection_options
def inspect(
    file: str,
    recursive: bool,
    definition: str | None,
    pods_file: str | None,
    refs: tuple[str, ...],
    output: str,
    overrides: ConfigOverrides,
) -> None:
    """Show what a Karta definition extracts from workload objects (and optionally their pods).

    Prints the status (phase, conditions, matched statuses, primary), the components the object
    has (-o json: every component) with their instances (pod template or pod spec, scale), the
    gang plan, where each pod belongs, and diagnostics. -f takes a file of one or more documents,
    a directory (.yaml, .yml, .json; -R recursively) or - for standard input; several objects
    print one report each (-o json:
    {"items": [...], "count": N}), those no definition covers skipped with a warning. An
    extraction error exits 1 with `error: <message>`; no definition for the type exits 4.
    """
    failures = RunFailures()  # a directory run goes on past a bad file or workload
    objects = read_labelled_objects(file, what="workload object", recursive=recursive, failures=failures)
    several = len(objects) > 1
    if several and pods_file:
        raise UsageError(
            f"--pods goes with one workload; {file} holds {len(objects)} objects",
            hint="inspect the workload alone: kli inspect -f ONE.yaml --pods PODS.yaml",
        )
    pods = read_objects(pods_file, what="pod") if pods_file else []
    store = open_store(overrides) if definition is None else None
    views: list[InspectReport] = []
    absent: list[frozenset[str]] = []  # per view: the components the text leaves out
    failed = 0
    for obj, obj_name in objects:
        try:
            chosen, diagnostics = chosen_definition(
                definition, obj, overrides, hint=PASS_DEFINITION_HINT, store=store
            )
        except CliError as exc:
            if not several and not failures.errors:
                raise
            if exc.code == exitcodes.NO_DEFINITION:
                warn(f"skipping {obj_name}: {exc}")
            else:
                failures.add(exc)
            continue
        try:
            evaluator = reference_evaluator(chosen, obj, refs, obj_name=obj_name if several else "")
            view = report.inspect_report(
                chosen.karta, obj, pods, evaluator=evaluator, diagnostics=diagnostics
            )
        except (ExtractionError, StatusError, JqError, ValidationError) as exc:
            error = CliError(f"{obj_name}: {exc}" if several else str(exc))
            if not several:
                raise error from None
            failures.add(error)
            continue
        except CliError as exc:
            if not several:
                raise
            failures.add(exc)
            continue
        failed += report.error_count(view)
        views.append(view)
        absent.append(report.absent_components(chosen.karta, view))
    if not views:
        failures.finish(file)
        raise CliError(
            f"no Karta definition covers any of the {len(objects)} objects of {file}",
            code=exitcodes.NO_DEFINITION,
            hint=PASS_DEFINITION_HINT,
        )
    if output == "table":
        width = fit_width()
        texts = (
            render_table(view, width=width, absent=gone) for view, gone in zip(views, absent, strict=True)
        )
        click.echo("\n\n".join(texts), nl=False)
    else:
        emit(views[0] if not several else {"items": views, "count": len(views)}, output)
    if failed:
        where = file if several else objects[0][1]
        error = CliError(
            f'{failed} error diagnostic(s) for {where}; see "diagnostics"', code=exitcodes.FAILURE
        )
        if not failures.errors:
            raise error
        failures.add(error)
    failures.finish(file)
