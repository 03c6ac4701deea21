"""``kli describe TYPE/NAME`` (live) and ``kli describe -f FILE`` (offline), section 17.6.

Live: the TYPE resolves as for ``kli get``, the object is read (not found: exit 3), its pods are
found through their controller-owner chains and placed on the workload tree (17.5); the output is
the header with the age, the component tree with ``ready/desired``, GPUs, nodes and one line per
pod (with the reason a pod is not ready), the Phase line and the Resources table.

File mode resolves the object's type by the one rule every command uses (exact GVK, then the most
stable other version of its group and kind), builds the tree without pods and prints desired
replicas instead. With ``-o json|yaml`` both print :class:`karta.report.DescribeReport`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from karta import jq, kube, model, report
from karta.cli import exitcodes
from karta.cli.commands import short_help
from karta.cli.completion import complete_types
from karta.cli.config import load_config, resolve_output
from karta.cli.errors import CliError, UsageError
from karta.cli.inputs import read_object
from karta.cli.lookup import (
    DEFINITION_OPTION_HELP,
    chosen_definition,
    definition_for_object,
    open_store,
    read_live,
    resolution_notes,
)
from karta.cli.options import connection_options, limit_option, output_options
from karta.cli.output import emit, warn
from karta.cli.views.describe import render_table
from karta.errors import ClusterError, KartaError

if TYPE_CHECKING:
    from karta.definitions import StoredDefinition
    from karta.kube import ConfigOverrides
    from karta.report import WorkloadRows

__all__ = ["describe"]

NO_DEFINITION_MESSAGE = "no Karta definition covers this workload type"
NO_DEFINITION_HINT = (
    '"kli definitions" lists the types Karta covers; '
    "apply a Karta definition to the cluster to cover this one"
)


@click.command("describe", short_help=short_help("describe"))
@click.argument("args", nargs=-1, metavar="[TYPE[/NAME] [NAME]]", shell_complete=complete_types)
@click.option("-f", "--file", "file", metavar="FILE", help="Describe this manifest offline (path or -).")
@click.option("--definition", "definition", metavar="NAME|FILE", help=DEFINITION_OPTION_HELP)
@limit_option(
    "--pod-limit", default=0, help="Pods shown per component, unhealthy first (0 = all; table output)."
)
@limit_option(
    "--component-limit",
    default=0,
    help="Components shown per level, those with unhealthy or missing pods first (0 = all; table output).",
)
@output_options("table", "json", "yaml")
@connection_options
def describe(
    args: tuple[str, ...],
    file: str | None,
    definition: str | None,
    pod_limit: int,
    component_limit: int,
    output: str | None,
    config_file: str | None,
    overrides: ConfigOverrides,
) -> None:
    """Show a workload's components, pods, readiness and resource requests.

    TYPE/NAME (or TYPE NAME) reads the workload from the cluster: TYPE is resolved as by
    `kli get`; the pods whose controller-owner chain reaches the workload are placed on its
    components, with the reason a pod is not ready. Not found exits 3.

    With -f FILE (or - for standard input) the manifest is described offline: exactly one YAML
    document with apiVersion and kind, resolved against the built-in catalog, the user's
    definitions ($KARTA_DEFINITIONS) and the cluster's when one is configured. The output says
    "file mode": there is no live status. No definition for the type exits 4.

    --definition NAME|FILE describes the workload with that definition instead of the one its
    type resolves to (a name from `kli definitions`, or a file).
    """

    if file is not None and args:
        raise UsageError("TYPE and NAME cannot be combined with -f/--file")
    if file is None and not args:
        raise UsageError("describe needs TYPE[/NAME] [NAME] or -f FILE", hint="run 'kli describe --help'")
    config = load_config(config_file)
    fmt = resolve_output(output, config=config, allowed=("table", "json", "yaml"))
    if file is None:
        _describe_live(
            args,
            definition=definition,
            overrides=overrides,
            fmt=fmt,
            limits=(pod_limit, component_limit),
            gpu_resources=config.gpu_resources,
        )
        return
    _describe_file(
        file,
        definition=definition,
        fmt=fmt,
        component_limit=component_limit,
        gpu_resources=config.gpu_resources,
        overrides=overrides,
    )


def _describe_live(
    args: tuple[str, ...],
    *,
    definition: str | None,
    overrides: ConfigOverrides,
    fmt: str,
    limits: tuple[int, int],
    gpu_resources: tuple[str, ...],
) -> None:
    def envelope(client: kube.KubeClient, token: str) -> None:
        if fmt in ("json", "yaml"):
            emit(_no_definition_envelope(client, token), fmt)

    live = read_live(args, command="describe", overrides=overrides, on_no_definition=envelope)
    chosen, warnings = live.workload.definition, list(live.warnings)
    if definition is not None:
        chosen, diagnostics = chosen_definition(definition, live.workload.obj, overrides, hint="")
        warnings.extend(d["message"] for d in diagnostics if d["severity"] in ("warning", "error"))
    built = _rows(chosen, live.workload.obj, live.label, gpu_resources=gpu_resources, pods=live.pods)
    pod_limit, component_limit = limits
    _print(
        chosen,
        live.workload.obj,
        built,
        fmt=fmt,
        file_mode=False,
        component_limit=component_limit,
        pod_limit=pod_limit,
        warnings=warnings,
    )


def _no_definition_envelope(client: kube.KubeClient, token: str) -> dict[str, str]:
    out = {"error": "no_definition_for_type"}
    try:
        rtype = client.discovery.resolve(token)
    except ClusterError:
        out["type"] = token
    else:
        out["gvk"] = str(rtype.gvk)
    out["message"] = NO_DEFINITION_MESSAGE
    out["hint"] = NO_DEFINITION_HINT
    return out


def _describe_file(
    path: str,
    *,
    definition: str | None,
    fmt: str,
    component_limit: int,
    gpu_resources: tuple[str, ...],
    overrides: ConfigOverrides | None = None,
) -> None:
    obj, name = read_object(path, what="workload object")
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    if definition is not None:
        chosen, diagnostics = chosen_definition(definition, obj, overrides, hint=FILE_NO_DEFINITION_HINT)
        warnings = [d["message"] for d in diagnostics if d["severity"] in ("warning", "error")]
    else:
        chosen, warnings = _resolved_for_file(obj, fmt=fmt, overrides=overrides)
    gvk = chosen.gvk
    if definition is None and gvk is not None and gvk.version != api_version.rpartition("/")[2]:
        warnings.append(
            f"{kind} {api_version} is described with {chosen.name}, a definition for version {gvk.version}"
        )
    built = _rows(chosen, obj, name, gpu_resources=gpu_resources)
    _print(
        chosen,
        obj,
        built,
        fmt=fmt,
        file_mode=True,
        component_limit=component_limit,
        warnings=warnings,
    )


def _resolved_for_file(
    obj: dict[str, Any], *, fmt: str, overrides: ConfigOverrides | None
) -> tuple[StoredDefinition, list[str]]:
    """The definition a manifest's type resolves to, and the warnings to print with it; no
    definition: the store's warnings at once, the JSON envelope for -o json|yaml, exit 4."""
    store = open_store(overrides)
    try:
        chosen = definition_for_object(store, obj, hint=FILE_NO_DEFINITION_HINT)
    except CliError as exc:
        if exc.code == exitcodes.NO_DEFINITION:
            for warning in store.warnings:
                warn(warning)
            if fmt in ("json", "yaml"):
                emit(_envelope(str(model.GVK.of(str(obj["apiVersion"]), str(obj["kind"])))), fmt)
        raise
    return chosen, [*store.warnings, *resolution_notes(store, obj, chosen)]


def _print(
    chosen: StoredDefinition,
    obj: dict[str, Any],
    built: WorkloadRows,
    *,
    fmt: str,
    file_mode: bool,
    component_limit: int,
    pod_limit: int = 0,
    warnings: list[str],
) -> None:
    """The report (table or ``fmt``), then the warnings and the tree's diagnostics on stderr."""
    view = report.describe_report(
        obj=obj,
        definition=chosen.name,
        origin=chosen.origin,
        tree=built.tree,
        rows=built.rows,
        file_mode=file_mode,
    )
    if fmt == "table":
        from karta.status.result import staleness  # the numbers of the stale note

        text = render_table(
            view,
            built.rows,
            component_limit=component_limit,
            pod_limit=pod_limit,
            staleness=staleness(obj) if view.get("stale") else None,
        )
        click.echo(text, nl=False)
    else:
        emit(view, fmt)
    for warning in warnings:
        warn(warning)
    for diagnostic in built.tree.diagnostics:
        warn(diagnostic.message)


def _rows(
    chosen: StoredDefinition,
    obj: dict[str, Any],
    name: str,
    *,
    gpu_resources: tuple[str, ...],
    pods: list[dict[str, Any]] | None = None,
) -> WorkloadRows:
    try:
        return report.workload_rows(
            chosen.karta,
            obj,
            evaluator=jq.Evaluator(trusted=chosen.trusted),
            gpu_resources=gpu_resources,
            pods=pods,
        )
    except KartaError as exc:
        raise CliError(f"cannot describe {name} with definition {chosen.name}: {exc}") from None


FILE_NO_DEFINITION_HINT = (
    '"kli definitions" lists the types Karta covers; "kli scaffold --crd CRD.yaml" drafts a '
    "definition, then put it in $KARTA_DEFINITIONS (default ~/.karta/definitions) or apply it "
    "to the cluster"
)


def _envelope(gvk: str) -> dict[str, str]:
    return {
        "error": "no_definition_for_type",
        "gvk": gvk,
        "message": NO_DEFINITION_MESSAGE,
        "hint": NO_DEFINITION_HINT,
    }
