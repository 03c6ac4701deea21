"""One live workload and its pods, as ``kli describe TYPE/NAME`` and ``kli gang TYPE/NAME`` read
them (karta-format.md 17.5 rules 1-2, 17.6 "Live mode").

- :func:`parse_target`: ``TYPE/NAME``, ``TYPE NAME`` (NAME may not contain ``/``).
- :func:`fetch_workload`: the TYPE resolved as ``kli get`` does (:func:`karta.cli.live.resolve_type`),
  then the object read; a type the cluster does not serve, or a missing object, exits 3.
- :func:`workload_pods`: the pods whose controller-owner chain reaches the workload
  (:func:`karta.kube.workload_pods`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from karta.cli import exitcodes
from karta.cli.errors import CliError, UsageError

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore
    from karta.kube import KubeClient, OwnerChains, ResolvedType

__all__ = ["LiveWorkload", "fetch_workload", "parse_target", "workload_pods"]


def parse_target(args: Sequence[str], *, command: str) -> tuple[str, str]:
    """``(TYPE, NAME)`` from ``TYPE/NAME`` or ``TYPE NAME``; anything else is a usage error."""
    hint = f"run 'kli {command} --help'"
    if len(args) == 1 and "/" in args[0]:
        token, _, name = args[0].partition("/")
    elif len(args) == 2 and "/" not in args[0]:
        token, name = args
    elif len(args) == 1:
        raise UsageError(f"kli {command} needs a NAME: {args[0]}/NAME or {args[0]} NAME", hint=hint)
    else:
        raise UsageError(f"kli {command} takes TYPE/NAME or TYPE NAME, got {' '.join(args)!r}", hint=hint)
    if not token or not name or "/" in name:
        raise UsageError(
            f"invalid TYPE/NAME {'/'.join(args) if len(args) == 1 else ' '.join(args)!r}", hint=hint
        )
    return token, name


@dataclass(frozen=True)
class LiveWorkload:
    """A workload read from the cluster: how its TYPE resolved, the object and its namespace."""

    resolved: ResolvedType
    obj: dict[str, Any]
    namespace: str | None  # None for a cluster-scoped root

    @property
    def uid(self) -> str:
        return str((self.obj.get("metadata") or {}).get("uid") or "")


def fetch_workload(
    *, client: KubeClient, store: DefinitionStore, token: str, name: str, namespace: str | None
) -> LiveWorkload:
    """Resolve ``token`` and read the object ``name`` (``namespace`` None: the client's default).

    Exit 3 when the type is not installed or the object does not exist; exit 4 when no definition
    covers the type; other cluster trouble exits 1 (see :func:`karta.cli.live.cluster_failure`).
    """
    from karta.cli.live import cluster_failure, resolve_type
    from karta.errors import ApiError, ClusterError

    resolved = resolve_type(token, client=client, store=store)
    rtype = resolved.resource
    if rtype is None:
        raise CliError(
            f"{resolved.kind} is not installed in this cluster",
            code=exitcodes.NOT_FOUND,
            hint="install its CRD first, or check --context",
        )
    ns = (namespace or client.namespace) if rtype.namespaced else None
    try:
        obj = client.get(rtype, name, namespace=ns)
    except ApiError as exc:
        if exc.status == 404:
            where = f" in namespace {ns}" if ns else ""
            raise CliError(
                f'{rtype.kind} "{name}" not found{where}',
                code=exitcodes.NOT_FOUND,
                hint=f"'kli get {rtype.token}' lists them" + ("; -n chooses the namespace" if ns else ""),
            ) from None
        raise cluster_failure(exc, client=client, doing=f"reading {rtype.kind}/{name}") from None
    except ClusterError as exc:
        raise cluster_failure(exc, client=client, doing=f"reading {rtype.kind}/{name}") from None
    return LiveWorkload(resolved=resolved, obj=obj, namespace=ns)


def workload_pods(
    client: KubeClient, workload: LiveWorkload, *, chains: OwnerChains | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The workload's pods (17.5 rules 1-2, :func:`karta.kube.workload_pods`) and warnings."""
    from karta.kube.workloads import workload_pods as pods_of

    return pods_of(client, workload.obj, chains=chains)
