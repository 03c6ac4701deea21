"""``kli describe TYPE/NAME`` (live) and ``kli describe -f FILE`` (offline), section 17.6.

Live: the TYPE resolves as for ``kli get``, the object is read (not found: exit 3), its pods are
found through their controller-owner chains and placed on the workload tree (17.5); the output is
the header with the age, the component tree with ``ready/desired``, GPUs, nodes and one line per
pod (with the reason a pod is not ready), the Phase line and the Resources table.

File mode resolves the object's type (exact GVK, then group and kind at any version), builds the
tree without pods and prints desired replicas instead. With ``-o json|yaml`` both print the View
fields plus ``fileMode``, ``resources`` and ``components``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from karta.cli import exitcodes
from karta.cli.cmd_completion import complete_types
from karta.cli.config import load_config, output_options, resolve_output
from karta.cli.errors import CliError, UsageError
from karta.cli.live import connection_options

if TYPE_CHECKING:
    from karta.kube import ConfigOverrides

NO_DEFINITION_MESSAGE = "no Karta definition covers this workload type"
NO_DEFINITION_HINT = (
    '"kli definitions" lists the types Karta covers; '
    "apply a Karta definition to the cluster to cover this one"
)


@click.command("describe")
@click.argument("args", nargs=-1, metavar="[TYPE[/NAME] [NAME]]", shell_complete=complete_types)
@click.option("-f", "--file", "file", metavar="FILE", help="Describe this manifest offline (path or -).")
@click.option(
    "--pod-limit",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Pods shown per component, unhealthy first (0 = all; table output).",
)
@click.option(
    "--component-limit",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Components shown per level, those with unhealthy or missing pods first (0 = all; table output).",
)
@output_options("table", "json", "yaml")
@connection_options
def describe(
    args: tuple[str, ...],
    file: str | None,
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
            overrides=overrides,
            fmt=fmt,
            limits=(pod_limit, component_limit),
            gpu_resources=config.gpu_resources,
        )
        return
    _describe_file(
        file,
        fmt=fmt,
        component_limit=component_limit,
        gpu_resources=config.gpu_resources,
        overrides=overrides,
    )


def _describe_live(
    args: tuple[str, ...],
    *,
    overrides: ConfigOverrides,
    fmt: str,
    limits: tuple[int, int],
    gpu_resources: tuple[str, ...],
) -> None:
    from karta.cli.cmd_definitions import open_store
    from karta.cli.describe_view import build_rows, build_view, render_table
    from karta.cli.live import connect
    from karta.cli.live_workload import fetch_workload, parse_target, workload_pods
    from karta.cli.output import emit, warn

    token, name = parse_target(args, command="describe")
    client = connect(overrides)
    with client:
        store = open_store(client=client)
        try:
            workload = fetch_workload(
                client=client, store=store, token=token, name=name, namespace=overrides.namespace
            )
        except CliError as exc:
            for warning in store.warnings:
                warn(warning)
            if exc.code == exitcodes.NO_DEFINITION and fmt in ("json", "yaml"):
                emit(_no_definition_envelope(client, token), fmt)
            raise
        pods, warnings = workload_pods(client, workload)
    chosen = workload.resolved.definition
    obj = workload.obj
    tree, root_multiplier = _tree(chosen, obj, f"{obj.get('kind')}/{name}", pods=pods)
    rows = build_rows(tree, gpu_resources=gpu_resources, root_multiplier=root_multiplier)
    view = build_view(obj=obj, definition=chosen, tree=tree, rows=rows, file_mode=False)
    if fmt == "table":
        pod_limit, component_limit = limits
        click.echo(render_table(view, rows, component_limit=component_limit, pod_limit=pod_limit), nl=False)
    else:
        emit(view, fmt)
    for warning in [*store.warnings, *warnings]:
        warn(warning)
    for diagnostic in tree.diagnostics:
        warn(diagnostic.message)


def _no_definition_envelope(client: Any, token: str) -> dict[str, str]:
    from karta.errors import ClusterError

    out = {"error": "no_definition_for_type"}
    try:
        rtype = client.discovery.resolve(token)
    except ClusterError:
        out["type"] = token
    else:
        out["gvk"] = f"{rtype.group}/{rtype.version}, Kind={rtype.kind}"
    out["message"] = NO_DEFINITION_MESSAGE
    out["hint"] = NO_DEFINITION_HINT
    return out


def _describe_file(
    path: str,
    *,
    fmt: str,
    component_limit: int,
    gpu_resources: tuple[str, ...],
    overrides: ConfigOverrides | None = None,
) -> None:
    from karta.cli.cmd_definitions import definition_for_object, open_store
    from karta.cli.describe_view import build_rows, build_view, render_table
    from karta.cli.inputs import read_object
    from karta.cli.output import emit, warn

    obj, name = read_object(path, what="workload object")
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    store = open_store(overrides)
    try:
        chosen = definition_for_object(store, obj, hint=FILE_NO_DEFINITION_HINT)
    except CliError as exc:
        if exc.code == exitcodes.NO_DEFINITION:
            for warning in store.warnings:
                warn(warning)
            _no_definition_envelope_for(api_version, kind, fmt)
        raise
    warnings = list(store.warnings)
    gvk = chosen.gvk
    if gvk is not None and gvk.version != api_version.rpartition("/")[2]:
        warnings.append(
            f"{kind} {api_version} is described with {chosen.name}, a definition for version {gvk.version}"
        )
    tree, root_multiplier = _tree(chosen, obj, name)
    rows = build_rows(tree, gpu_resources=gpu_resources, root_multiplier=root_multiplier)
    view = build_view(obj=obj, definition=chosen, tree=tree, rows=rows, file_mode=True)
    if fmt == "table":
        click.echo(render_table(view, rows, component_limit=component_limit), nl=False)
    else:
        emit(view, fmt)
    for warning in warnings:
        warn(warning)
    for diagnostic in tree.diagnostics:
        warn(diagnostic.message)


def _tree(
    chosen: Any, obj: dict[str, Any], name: str, *, pods: list[dict[str, Any]] | None = None
) -> tuple[Any, int]:
    from karta.cli.describe_view import desired_replicas
    from karta.errors import KartaError
    from karta.extract import ComponentFactory, build_tree
    from karta.jq import Evaluator

    try:
        factory = ComponentFactory(chosen.karta, obj, evaluator=Evaluator(trusted=chosen.trusted))
        tree = build_tree(factory, pods).pruned()
        multiplier = 1
        root = chosen.karta.root
        if not root.is_pod_bearing and root.scale_definition is not None:
            scales = factory.root().scales()
            if scales:
                multiplier = sum(desired_replicas(s) for s in scales.values())
    except KartaError as exc:
        raise CliError(f"cannot describe {name} with definition {chosen.name}: {exc}") from None
    return tree, multiplier


FILE_NO_DEFINITION_HINT = (
    '"kli definitions" lists the types Karta covers; "kli scaffold --crd CRD.yaml" drafts a '
    "definition, then put it in $KARTA_DEFINITIONS (default ~/.karta/definitions) or apply it "
    "to the cluster"
)


def _no_definition_envelope_for(api_version: str, kind: str, fmt: str) -> None:
    from karta.cli.output import emit

    group, _, version = api_version.rpartition("/")
    if fmt in ("json", "yaml"):
        emit(
            {
                "error": "no_definition_for_type",
                "gvk": f"{group}/{version}, Kind={kind}",
                "message": NO_DEFINITION_MESSAGE,
                "hint": NO_DEFINITION_HINT,
            },
            fmt,
        )
