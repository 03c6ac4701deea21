"""``kli definitions [NAME]``: the merged definitions and one definition by name (section 17.7)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from karta import definitions, model
from karta.cli import exitcodes, printing
from karta.cli.commands import short_help
from karta.cli.config import load_config, resolve_output
from karta.cli.errors import CliError, UsageError
from karta.cli.lookup import SEE_ALL, no_such_definition, open_store
from karta.cli.options import connection_options, limit_option, list_options, output_options
from karta.cli.output import emit, warn
from karta.cli.views.definitions import table
from karta.cli.views.table import fit_width

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore, Listing, StoredDefinition
    from karta.kube import ConfigOverrides

__all__ = ["definitions_command"]


@click.command("definitions", short_help=short_help("definitions"))
@click.argument("name", required=False)
@click.option("--group", metavar="GROUP", help="Only definitions for this API group (exact; '' is core).")
@click.option(
    "--kind",
    metavar="KIND",
    help="Only this root kind (case-insensitive; --group when several groups have it).",
)
@click.option("--version", "version", metavar="VERSION", help="Only this version (needs --kind).")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also list the definitions a higher origin overrides (hidden by default).",
)
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
    show_all: bool,
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
    STATUS says what each one is to its kind: ok (used), invalid (never used; a warning names
    its first problem), ignored (duplicate of X) for a cluster Karta another one of the same
    kind wins over (Ready, then the oldest, then by name), overridden (by X) (shown with NAME or
    --all), ambiguous (user definitions of one kind that collide). Cluster Kartas without correct
    run.ai/karta-* labels are not visible to KAI Scheduler: a warning says so. The table shows
    NAME, KIND (Kind.version.group), ORIGIN, STATUS and COMPONENTS; -o json|yaml prints
    {"items": [...], "count": N}, each item with a "resolution" field (origin, source, status,
    valid, problems, usedInstead), or with NAME the definition alone (so
    `kli definitions NAME -o yaml | kli validate -` round-trips); -o name, -o jsonpath=TEMPLATE,
    -o custom-columns=SPEC and --sort-by work on those objects.
    """
    if name is not None and group is not None:
        raise UsageError("NAME and --group cannot be combined")
    if version is not None and kind is None:
        raise UsageError("--version needs --kind")
    sort_path = printing.parse_sort_by(sort_by)
    config = load_config(config_file)
    fmt = resolve_output(output, config=config, allowed=("table", "json", "yaml"))
    store = open_store(overrides)
    if kind is not None and group is None:
        group = _group_of(store, kind)

    if name is not None:
        _show_named(store, name, fmt=fmt, component_limit=component_limit, headers=not no_headers)
        return

    entries = [
        e
        for e in store.listing()
        if (show_all or e.status != definitions.OVERRIDDEN)
        and _selected(e.definition, group=group, kind=kind, version=version)
    ]
    warnings = _warnings(store, entries)
    if not entries and group is not None:
        _flush(warnings)
        raise CliError(
            f"no Karta definition matches {_filters(group, kind, version)}. {SEE_ALL}",
            code=exitcodes.NO_DEFINITION,
        )
    entries.sort(
        key=lambda e: (e.definition.gvk is None, e.definition.name, _ORIGIN_ORDER[e.definition.origin])
    )
    if sort_path is not None:
        pairs = [(model.karta_to_dict(e.definition.karta), e) for e in entries]
        entries = [e for _, e in printing.sort_items(pairs, sort_path, value=lambda pair: pair[0])]
    if not entries and not fmt.startswith(("json", "yaml")):  # table, name, custom-columns
        click.echo("No Karta definitions found.", err=True)
    else:
        _print(entries, fmt, component_limit=component_limit, headers=not no_headers, single=False)
    _flush(warnings)


_ORIGIN_ORDER = {"cluster": 0, "user": 1, "catalog": 2}  # karta.definitions.ORIGINS, reversed


def _show_named(store: DefinitionStore, name: str, *, fmt: str, component_limit: int, headers: bool) -> None:
    """Every definition called ``name`` (the one in use first; overridden ones too): the table
    rows, or with -o json|yaml the first one's Karta alone. Unknown: exit 4 with the closest names."""
    found = store.named(name)
    if not found:
        _flush(_warnings(store, []))
        raise no_such_definition(store, name)
    entries = [store.listing_of(d) for d in found]
    shown = entries if fmt == "table" else entries[:1]
    _print(shown, fmt, component_limit=component_limit, headers=headers, single=True)
    warnings = _warnings(store, entries)
    for entry in entries:
        if entry.status == definitions.OVERRIDDEN and entry.used is not None:
            warnings.append(
                f"{definitions.describe_definition(entry.definition)} is overridden by "
                f"{definitions.describe_definition(entry.used)}: workloads of its kind use that one"
            )
    _flush(warnings)


def _warnings(store: DefinitionStore, entries: list[Listing]) -> list[str]:
    """The store's warnings, what resolving the listed kinds decided (duplicates ignored, invalid
    definitions passed over), every other listed invalid definition with its first problem, and
    the cluster definitions KAI Scheduler cannot see."""
    notes = store.notes_for(*dict.fromkeys(e.definition.gvk for e in entries if e.definition.gvk))
    invalid = []
    for e in entries:
        described = definitions.describe_definition(e.definition)
        if e.status == definitions.INVALID and not any(
            n.startswith(f"{described} is invalid") for n in notes
        ):
            invalid.append(f"{described} is invalid: {e.definition.problems[0]}")
    shown = [e.definition for e in entries if e.status != definitions.INVALID]
    return [*store.warnings, *notes, *invalid, *definitions.kai_visibility_warnings(shown)]


def _print(entries: list[Listing], fmt: str, *, component_limit: int, headers: bool, single: bool) -> None:
    """The definitions as a table, JSON or YAML (one bare Karta when ``single``, so that it
    round-trips through ``kli validate``; in a list each with its ``resolution``), or in one of
    kubectl's object formats (over the same objects)."""
    if fmt == "table":
        text = table(entries, component_limit, fit=_default_limit(), width=fit_width(), headers=headers)
        click.echo(text, nl=False)
        return
    objects: list[dict[str, Any]] = [
        model.karta_to_dict(e.definition.karta)
        if single
        else {**model.karta_to_dict(e.definition.karta), "resolution": e.to_dict()}
        for e in entries
    ]
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


def _group_of(store: DefinitionStore, kind: str) -> str:
    """The one group whose definitions have the root kind ``kind`` (any case); several: exit 2
    listing them; none: exit 4."""
    groups = sorted({gvk.group for gvk in store.gvks() if gvk.kind.lower() == kind.lower()})
    if len(groups) > 1:
        shown = ", ".join(g or "'' (core)" for g in groups)
        raise UsageError(
            f"--kind {kind!r} is a kind of several API groups: {shown}", hint="choose one with --group GROUP"
        )
    if not groups:
        raise CliError(
            f"no Karta definition matches --kind {kind!r}. {SEE_ALL}", code=exitcodes.NO_DEFINITION
        )
    return groups[0]


def _filters(group: str | None, kind: str | None, version: str | None) -> str:
    parts = [f"--group {group!r}"]
    if kind is not None:
        parts.append(f"--kind {kind!r}")
    if version is not None:
        parts.append(f"--version {version!r}")
    return " ".join(parts)


def _selected(d: StoredDefinition, *, group: str | None, kind: str | None, version: str | None) -> bool:
    gvk = d.gvk
    if group is not None and (gvk is None or gvk.group != group):
        return False
    if kind is not None and (gvk is None or gvk.kind.lower() != kind.lower()):
        return False
    return version is None or (gvk is not None and gvk.version == version)


def _default_limit() -> bool:
    """True unless ``--component-limit`` was given (then every component asked for is shown)."""
    source = click.get_current_context().get_parameter_source("component_limit")
    return source is not ParameterSource.COMMANDLINE
