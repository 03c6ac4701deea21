"""``kli definitions [NAME]``: the merged definitions and one definition by name (section 17.7)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from karta import definitions, model
from karta.cli import exitcodes, printing
from karta.cli.commands import short_help
from karta.cli.config import load_config, resolve_output
from karta.cli.errors import CliError, UsageError
from karta.cli.lookup import SEE_ALL, open_store
from karta.cli.options import connection_options, limit_option, list_options, output_options
from karta.cli.output import emit, warn
from karta.cli.views.definitions import table
from karta.cli.views.table import fit_width

if TYPE_CHECKING:
    from karta.definitions import StoredDefinition
    from karta.kube import ConfigOverrides

__all__ = ["definitions_command"]


@click.command("definitions", short_help=short_help("definitions"))
@click.argument("name", required=False)
@click.option("--group", metavar="GROUP", help="Only definitions for this API group (exact; '' is core).")
@click.option("--kind", metavar="KIND", help="Only this root kind (case-insensitive; needs --group).")
@click.option("--version", "version", metavar="VERSION", help="Only this version (needs --kind).")
@limit_option(
    "--component-limit",
    default=3,
    help="Child components listed per definition (0 = all); by default also cut to fit 100 columns.",
)
@output_options("table", "json", "yaml", objects=True)
@list_options
@connection_options
def definitions_command(
    name: str | None,
    group: str | None,
    kind: str | None,
    version: str | None,
    component_limit: int,
    output: str | None,
    config_file: str | None,
    no_headers: bool,
    sort_by: str | None,
    overrides: ConfigOverrides,
) -> None:
    """List the Karta definitions kli knows, or print one by NAME.

    Built-in definitions, then those in $KARTA_DEFINITIONS (default ~/.karta/definitions), then
    the cluster's Karta objects (kubectl's connection flags choose the cluster; without any
    kubeconfig the list is offline); each replaces the ones before it for the same root kind.
    Cluster Kartas without correct run.ai/karta-* labels are not visible to KAI Scheduler: a
    warning says so. The table shows NAME, KIND (Kind.version.group),
    ORIGIN and COMPONENTS; -o json|yaml prints {"items": [...], "count": N}, or with NAME the
    definition alone (so `kli definitions NAME -o yaml | kli validate -` round-trips); -o name,
    -o jsonpath=TEMPLATE, -o custom-columns=SPEC and --sort-by work on those objects.
    """
    if name is not None and group is not None:
        raise UsageError("NAME and --group cannot be combined")
    if kind is not None and group is None:
        raise UsageError("--kind needs --group")
    if version is not None and kind is None:
        raise UsageError("--version needs --kind")
    sort_path = printing.parse_sort_by(sort_by)
    config = load_config(config_file)
    fmt = resolve_output(output, config=config, allowed=("table", "json", "yaml"))
    store = open_store(overrides)
    visible = store.visible()
    warnings = [*store.warnings, *definitions.kai_visibility_warnings(visible)]

    if name is not None:
        found = store.by_name(name)
        if found is None:
            _flush(warnings)
            raise CliError(f"no Karta definition named {name!r}. {SEE_ALL}", code=exitcodes.NO_DEFINITION)
        _print([found], fmt, component_limit=component_limit, headers=not no_headers, single=True)
        _flush(warnings)
        return

    selected = _filter(visible, group=group, kind=kind, version=version)
    if not selected and group is not None:
        _flush(warnings)
        raise CliError(
            f"no Karta definition matches {_filters(group, kind, version)}. {SEE_ALL}",
            code=exitcodes.NO_DEFINITION,
        )
    selected.sort(key=lambda d: (d.gvk is None, d.name, d.origin))  # unmapped last (17.3)
    if sort_path is not None:
        pairs = [(model.karta_to_dict(d.karta), d) for d in selected]
        selected = [d for _, d in printing.sort_items(pairs, sort_path, value=lambda pair: pair[0])]
    if not selected and not fmt.startswith(("json", "yaml")):  # table, name, custom-columns
        click.echo("No Karta definitions found.", err=True)
    else:
        _print(selected, fmt, component_limit=component_limit, headers=not no_headers, single=False)
    for warning in warnings:
        warn(warning)


def _print(
    items: list[StoredDefinition], fmt: str, *, component_limit: int, headers: bool, single: bool
) -> None:
    """The definitions as a table, JSON or YAML (one bare object when ``single``), or in one of
    kubectl's object formats (over the same objects)."""
    if fmt == "table":
        text = table(items, component_limit, fit=_default_limit(), width=fit_width(), headers=headers)
        click.echo(text, nl=False)
        return
    objects = [model.karta_to_dict(d.karta) for d in items]
    data = objects[0] if single else {"items": objects, "count": len(objects)}
    if printing.is_object_format(fmt):
        text = printing.render_objects(fmt, objects, data=data, name_of=_object_name, headers=headers)
        click.echo(text, nl=False)
    else:
        emit(data, fmt)


def _object_name(obj: dict[str, object]) -> str:
    meta = obj.get("metadata")
    name = str(meta.get("name") if isinstance(meta, dict) else "")
    return printing.object_name(str(obj.get("kind") or ""), str(obj.get("apiVersion") or ""), name)


def _flush(warnings: list[str]) -> None:
    for warning in warnings:
        warn(warning)


def _filters(group: str | None, kind: str | None, version: str | None) -> str:
    parts = [f"--group {group!r}"]
    if kind is not None:
        parts.append(f"--kind {kind!r}")
    if version is not None:
        parts.append(f"--version {version!r}")
    return " ".join(parts)


def _filter(
    items: list[StoredDefinition], *, group: str | None, kind: str | None, version: str | None
) -> list[StoredDefinition]:
    out: list[StoredDefinition] = []
    for d in items:
        gvk = d.gvk
        if group is not None and (gvk is None or gvk.group != group):
            continue
        if kind is not None and (gvk is None or gvk.kind.lower() != kind.lower()):
            continue
        if version is not None and (gvk is None or gvk.version != version):
            continue
        out.append(d)
    return out


def _default_limit() -> bool:
    """True unless ``--component-limit`` was given (then every component asked for is shown)."""
    source = click.get_current_context().get_parameter_source("component_limit")
    return source is not ParameterSource.COMMANDLINE
