"""``kli top nodes`` and ``kli top gpus``: allocatable against requested GPUs (issue 14), from the
Nodes and Pods (:mod:`karta.kube.capacity`) with the sums and groups of
:mod:`karta.report.capacity` and the tables of :mod:`karta.cli.views.top`.

``kubectl top`` shows usage from metrics-server; these show *requests* (what the scheduler
reserves), which needs no metrics-server. A list the cluster refuses is a warning naming it and
its columns are ``<unknown>``; when neither Nodes nor Pods can be listed the command fails (exit
1), as ``kli get --all-types`` does when every list is refused.

``top gpus`` groups the pods by the top of their controller-owner chain
(:class:`karta.kube.OwnerChains`, each owner's metadata read once and cached), so a Deployment's
pods count as one Deployment, not as its ReplicaSets. It lists every namespace unless ``-n``
names one (``-A`` is accepted and is the default): a capacity view is about the cluster.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from karta import kube, report
from karta.cli import exitcodes
from karta.cli.cluster import cluster_failure, connect
from karta.cli.commands import short_help
from karta.cli.config import load_config, resolve_output
from karta.cli.errors import CliError, UsageError
from karta.cli.options import connection_options, output_options
from karta.cli.output import emit, warn
from karta.cli.views import top as view
from karta.errors import ClusterError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from karta.kube import ConfigOverrides, KubeClient, Listed

FORMATS = ("table", "json", "yaml")
_ALIASES = {"node": "nodes", "no": "nodes", "gpu": "gpus"}
_RBAC_HINT = "ask a cluster administrator for a role that can list nodes and pods"


class _Top(click.Group):
    """kubectl's spellings of the resource: ``node``, ``no``; ``gpu``."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, _ALIASES.get(cmd_name, cmd_name))


@click.group("top", cls=_Top, short_help=short_help("top"), invoke_without_command=True)
@click.pass_context
def top(ctx: click.Context) -> None:
    """Show allocatable against requested GPUs, CPU and memory, per node or per workload type.

    Unlike kubectl top, which shows usage from metrics-server, kli top sums the requests of the
    pods that are neither Succeeded nor Failed (the rule of kli get and kli describe: a request
    falls back to its limit; the GPUs are the config file's gpuResources, default
    nvidia.com/gpu): what the scheduler has reserved, not what is busy.
    """
    if ctx.invoked_subcommand is None:  # as kubectl's command groups: the help, and success
        click.echo(ctx.get_help())


def _list(what: str, call: Any, client: KubeClient) -> Listed:
    try:
        listed: Listed = call()
    except ClusterError as exc:
        raise cluster_failure(exc, client=client, doing=f"listing {what}") from None
    if listed.failure is not None:
        warn(f"cannot {listed.failure.what} ({listed.failure.reason}): {_unknown[what]}")
    return listed


_unknown = {
    "nodes": "the allocatable columns are <unknown>",
    "pods": "the requested columns are <unknown>",
}


def _nothing_read(nodes: Listed, pods: Listed) -> CliError:
    refused = [listed.failure.what for listed in (nodes, pods) if listed.failure is not None]
    return CliError(
        f"not allowed to {' or '.join(refused)}: nothing to show", code=exitcodes.FAILURE, hint=_RBAC_HINT
    )


@top.command("nodes", short_help="Per Node: allocatable, requested and free GPUs.")
@click.option("-l", "--selector", metavar="SELECTOR", help="Label selector on the Nodes.")
@click.option("--no-headers", is_flag=True, help="Print the table without the header line.")
@output_options(*FORMATS)
@connection_options
def nodes(
    selector: str | None,
    no_headers: bool,
    output: str | None,
    config_file: str | None,
    overrides: ConfigOverrides,
) -> None:
    """One row per Node: allocatable GPUs, what its pods request, what is free.

    Columns: NAME GPU (allocatable) GPU REQUESTED (with its share of GPU) GPU FREE PODS
    (pods/allocatable) CPU REQUESTED and MEMORY REQUESTED (requested/allocatable). The pods
    counted are those bound to the Node (spec.nodeName) that are neither Succeeded nor Failed, in
    every namespace. -o json|yaml prints {"items": [...], "count": N}. A list you may not read is
    a warning and its columns are <unknown>; exit 1 when neither Nodes nor Pods can be listed.
    """
    config = load_config(config_file)
    fmt = resolve_output(output, config=config, allowed=FORMATS)
    with connect(overrides) as client:
        listed_nodes = _list("nodes", lambda: kube.list_nodes(client, label_selector=selector), client)
        listed_pods = _list("pods", lambda: kube.list_pods(client), client)
    if listed_nodes.items is None and listed_pods.items is None:
        raise _nothing_read(listed_nodes, listed_pods)
    rows = report.node_capacity(listed_nodes.items, listed_pods.items, gpu_resources=config.gpu_resources)
    if fmt != "table":
        emit({"items": [r.to_dict() for r in rows], "count": len(rows)}, fmt)
        return
    if not rows:
        sys.stderr.write("No nodes found.\n" if not selector else f"No nodes found matching {selector}.\n")
        return
    for line in view.node_lines(rows, headers=not no_headers):
        sys.stdout.write(line + "\n")


@top.command("gpus", short_help="Per namespace and workload type: GPUs requested and pending.")
@click.option("-A", "--all-namespaces", is_flag=True, help="Every namespace (the default unless -n).")
@click.option("--no-headers", is_flag=True, help="Print the table without the header line nor the total.")
@output_options(*FORMATS)
@connection_options
def gpus(
    all_namespaces: bool,
    no_headers: bool,
    output: str | None,
    config_file: str | None,
    overrides: ConfigOverrides,
) -> None:
    """GPUs requested per namespace and workload type, and the cluster's total.

    The pods requesting GPUs that are neither Succeeded nor Failed, grouped by namespace and by
    the type (Kind.group) of the top of their controller-owner chain, or Pod for a pod no
    controller owns. Columns: NAMESPACE TYPE WORKLOADS (top owners) PODS GPU REQUESTED (of the
    pods bound to a node) GPU PENDING (of the pods not yet bound). The last line adds the GPUs
    allocatable on every Node. Every namespace unless -n NAMESPACE (then the total line gives
    that namespace's requests). -o json|yaml prints {"items": [...], "count": N, "total": {...}}.
    A list you may not read is a warning; exit 1 when neither Nodes nor Pods can be listed.
    """
    if all_namespaces and overrides.namespace:
        raise UsageError("-A lists every namespace: it cannot be combined with -n")
    namespace = overrides.namespace or None
    config = load_config(config_file)
    fmt = resolve_output(output, config=config, allowed=FORMATS)
    gpu_resources = config.gpu_resources
    with connect(overrides) as client:
        listed_nodes = _list("nodes", lambda: kube.list_nodes(client), client)
        listed_pods = _list("pods", lambda: kube.list_pods(client, namespace=namespace), client)
        if listed_nodes.items is None and listed_pods.items is None:
            raise _nothing_read(listed_nodes, listed_pods)
        owners = _top_owners(client, report.gpu_pods(listed_pods.items or (), gpu_resources=gpu_resources))
    usage = None
    if listed_pods.items is not None:
        usage = report.gpu_usage(
            listed_pods.items, lambda pod: owners.get(_uid(pod)), gpu_resources=gpu_resources
        )
    totals = report.gpu_totals(listed_nodes.items, usage, gpu_resources=gpu_resources)
    if fmt != "table":
        items = None if usage is None else [u.to_dict() for u in usage]
        emit({"items": items, "count": len(items or ()), "total": totals.to_dict()}, fmt)
        return
    if usage is not None and not usage:
        where = "in any namespace" if namespace is None else f"in namespace {namespace}"
        sys.stderr.write(f"No pods requesting GPUs found {where}.\n")
    elif usage:
        for line in view.gpu_lines(usage, headers=not no_headers):
            sys.stdout.write(line + "\n")
    if not no_headers:
        sys.stdout.write(view.gpu_total_line(totals, namespace=namespace) + "\n")


def _uid(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def _top_owners(client: KubeClient, pods: list[Mapping[str, Any]]) -> dict[str, report.TopOwner]:
    """Pod uid → the top of its controller-owner chain (pods no controller owns are absent). A
    chain that stops at an owner that cannot be read ends at that owner's reference: a warning."""
    chains = kube.OwnerChains(client).walk_many(pods)
    out: dict[str, report.TopOwner] = {}
    unread: dict[str, int] = {}
    for pod, chain in zip(pods, chains, strict=True):
        link = chain.top
        if link is not None:
            out[_uid(pod)] = report.TopOwner(link.kind, link.group, link.name)
        if chain.failure is not None and not chain.failure.missing:
            what = f"{chain.failure.what} ({chain.failure.reason})"
            unread[what] = unread.get(what, 0) + 1
        elif chain.failure is None and chain.error:
            what = f"follow the owners ({chain.error})"
            unread[what] = unread.get(what, 0) + 1
    for what, count in unread.items():
        plural = "s" if count != 1 else ""
        warn(f"cannot {what}: {count} pod{plural} grouped under the nearest owner reference, not the top one")
    return out
