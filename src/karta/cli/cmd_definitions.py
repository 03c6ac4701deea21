"""``kli definitions [NAME]``: the merged definitions and one definition by name (section 17.7).

Also owns :func:`open_store`, the one place the CLI builds its definition store (built-in catalog,
user directory, cluster), and :func:`definition_for_object`, how every command resolves a manifest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from karta.cli import exitcodes
from karta.cli.config import load_config, output_options, resolve_output
from karta.cli.errors import CliError, UsageError
from karta.cli.live import connection_options

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore, StoredDefinition
    from karta.kube import ConfigOverrides, KubeClient

SEE_ALL = 'Run "kli definitions" to see what is available'


def open_store(
    overrides: ConfigOverrides | None = None, *, client: KubeClient | None = None
) -> DefinitionStore:
    """The definitions ``kli`` resolves against: catalog < ``$KARTA_DEFINITIONS`` < cluster (17.3).

    The cluster's Kartas are read through ``client``, else through a client made from
    ``overrides`` (kubectl's flags; None: the default kubeconfig). Without any kubeconfig the
    store is catalog-only, silently; every other cluster problem (CRD missing, forbidden,
    unreachable, an undecodable Karta) is one of the store's ``warnings``, which commands print
    after their main output.
    """
    from karta.definitions import DefinitionStore
    from karta.kube import connect_for_definitions, read_cluster_kartas

    warnings: list[str] = []
    own = client is None
    if client is None:
        client, warnings = connect_for_definitions(overrides)
    if client is None:
        return DefinitionStore.load(cluster_warnings=warnings)
    try:
        read = read_cluster_kartas(client)
    finally:
        if own:
            client.close()
    return DefinitionStore.load(
        cluster=read.kartas if read.available else None, cluster_warnings=[*warnings, *read.warnings]
    )


def definition_for_object(store: DefinitionStore, obj: dict[str, Any], *, hint: str) -> StoredDefinition:
    """The definition for a workload manifest by the one rule of
    :meth:`~karta.definitions.DefinitionStore.definition_for` (exact GVK, else the most stable
    other version of its group and kind): no definition exits 4 with ``hint``, several claiming
    it is a usage error."""
    from karta.errors import AmbiguousDefinitionError, NoDefinitionError
    from karta.model.gvk import GVK

    try:
        return store.definition_for(GVK.of(str(obj["apiVersion"]), str(obj["kind"])))
    except NoDefinitionError as exc:
        raise CliError(str(exc), code=exitcodes.NO_DEFINITION, hint=hint) from None
    except AmbiguousDefinitionError as exc:
        raise UsageError(str(exc)) from None


@click.command("definitions")
@click.argument("name", required=False)
@click.option("--group", metavar="GROUP", help="Only definitions for this API group (exact; '' is core).")
@click.option("--kind", metavar="KIND", help="Only this root kind (case-insensitive; needs --group).")
@click.option("--version", "version", metavar="VERSION", help="Only this version (needs --kind).")
@click.option(
    "--component-limit",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Child components listed per definition (0 = all); by default also cut to fit 100 columns.",
)
@output_options("table", "json", "yaml")
@connection_options
def definitions(
    name: str | None,
    group: str | None,
    kind: str | None,
    version: str | None,
    component_limit: int,
    output: str | None,
    config_file: str | None,
    overrides: ConfigOverrides,
) -> None:
    """List the Karta definitions kli knows, or print one by NAME.

    Built-in definitions, then those in $KARTA_DEFINITIONS (default ~/.karta/definitions), then
    the cluster's Karta objects (kubectl's connection flags choose the cluster; without any
    kubeconfig the list is offline); each replaces the ones before it for the same root kind.
    Cluster Kartas without correct run.ai/karta-* labels are not visible to KAI Scheduler: a
    warning says so. The table shows NAME, KIND (Kind.version.group),
    ORIGIN and COMPONENTS; -o json|yaml prints {"items": [...], "count": N}, or with NAME the
    definition alone (so `kli definitions NAME -o yaml | kli validate -` round-trips).
    """
    from karta.cli.output import emit, warn
    from karta.definitions import kai_visibility_warnings
    from karta.model import karta_to_dict

    if name is not None and group is not None:
        raise UsageError("NAME and --group cannot be combined")
    if kind is not None and group is None:
        raise UsageError("--kind needs --group")
    if version is not None and kind is None:
        raise UsageError("--version needs --kind")
    config = load_config(config_file)
    fmt = resolve_output(output, config=config, allowed=("table", "json", "yaml"))
    store = open_store(overrides)
    visible = store.visible()
    warnings = [*store.warnings, *kai_visibility_warnings(visible)]

    if name is not None:
        found = store.by_name(name)
        if found is None:
            _flush(warnings)
            raise CliError(f"no Karta definition named {name!r}. {SEE_ALL}", code=exitcodes.NO_DEFINITION)
        if fmt == "table":
            click.echo(_table([found], component_limit, fit=_default_limit()), nl=False)
        else:
            emit(karta_to_dict(found.karta), fmt)
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
    if fmt == "table":
        if selected:
            click.echo(_table(selected, component_limit, fit=_default_limit()), nl=False)
        else:
            click.echo("No Karta definitions found.", err=True)
    else:
        emit({"items": [karta_to_dict(d.karta) for d in selected], "count": len(selected)}, fmt)
    for warning in warnings:
        warn(warning)


def _flush(warnings: list[str]) -> None:
    from karta.cli.output import warn

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
    out = []
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


def _kind_cell(d: StoredDefinition) -> str:
    root = d.karta.root.kind
    if root is None or not root.kind:
        return "<none>"
    return root.gvk.token


def _components_cell(karta: Any, limit: int) -> str:
    children = [c.name for c in karta.children]
    shown = children if limit == 0 else children[:limit]
    cell = ", ".join([karta.root.name, *shown])
    if len(children) > len(shown):
        cell += f", +{len(children) - len(shown)} more"
    return cell


TABLE_WIDTH = 100
_SEP = "   "


def _default_limit() -> bool:
    """True unless ``--component-limit`` was given (then every component asked for is shown)."""
    from click.core import ParameterSource

    source = click.get_current_context().get_parameter_source("component_limit")
    return source is not ParameterSource.COMMANDLINE


def _table(items: list[StoredDefinition], component_limit: int, *, fit: bool = True) -> str:
    """``NAME KIND ORIGIN COMPONENTS``, fitted to :data:`TABLE_WIDTH` columns when it is wider:
    when COMPONENTS would have less than :data:`_MIN_COMPONENTS` columns, KIND shows the Kind
    alone (the catalog's NAMEs spell group and version; ``kli definitions NAME`` shows it all);
    then, with ``fit`` (the default ``--component-limit``), COMPONENTS keeps whole names and ends
    in ``+N more`` or ``+N``."""
    header = ["NAME", "KIND", "ORIGIN", "COMPONENTS"]
    rows = [[d.name, _kind_cell(d), d.origin, _components_cell(d.karta, component_limit)] for d in items]
    if _width([header, *rows]) > TABLE_WIDTH:
        if _room(header, rows) < _MIN_COMPONENTS:
            for row, d in zip(rows, items, strict=True):
                if d.gvk is not None:
                    row[1] = d.gvk.kind
        room = max(_room(header, rows), len("COMPONENTS"))
        for row in rows:
            row[3] = _fit_components(row[3], room) if fit else row[3]
    table = [header, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    lines = [_SEP.join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in table]
    return "\n".join(lines) + "\n"


_MIN_COMPONENTS = 24


def _room(header: list[str], rows: list[list[str]]) -> int:
    """The columns left for COMPONENTS (the last column) within :data:`TABLE_WIDTH`."""
    return TABLE_WIDTH - _width([header[:-1], *(r[:-1] for r in rows)]) - len(_SEP)


def _width(rows: list[list[str]]) -> int:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return sum(widths) + len(_SEP) * (len(widths) - 1)


def _fit_components(cell: str, width: int) -> str:
    """``a, b, c, +N more`` cut to ``width``: whole names, then ``+N more`` (or ``+N`` when that
    keeps one more name) for the rest."""
    if len(cell) <= width:
        return cell
    names = cell.split(", ")
    hidden = 0
    if names[-1].startswith("+") and names[-1].endswith(" more"):
        hidden = int(names.pop()[1:-5])
    for keep in range(len(names) - 1, -1, -1):
        rest = len(names) - keep + hidden
        for text in (", ".join([*names[:keep], f"+{rest} more"]), ", ".join([*names[:keep], f"+{rest}"])):
            if len(text) <= width:
                return text
    return f"+{len(names) + hidden}"
