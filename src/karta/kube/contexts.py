"""Several clusters at once: the contexts of the kubeconfig, one client each, a function run on
every cluster in parallel, and what each gave or why it failed.

Owns :func:`context_names` (the kubeconfig's contexts), :func:`select_contexts` (``--context a
--context b`` or ``--all-contexts``: the merged kubeconfig's contexts as :class:`ClusterTarget`
records), :func:`per_cluster` (``work(client)`` on each cluster in a bounded number of threads,
each with a client of its own, closed afterwards) and :class:`ClusterResult`. ``kli get`` and the
web view both list several clusters through them.

Rules:

- contexts are read from the kubeconfig files kubectl would read (:mod:`karta.kube.config`);
  ``--all-contexts`` takes every context of the merged files, sorted by name (as
  ``kubectl config get-contexts``); named contexts keep the order given, once each;
- a context name that is not in the kubeconfig is an error for the whole request (a typo, as
  kubectl's ``--context``), while a context that exists but cannot be used (its cluster or user
  entry missing, unreadable certificate files...) is that cluster's failure only;
- the other overrides (``-n``, ``--as...``, ``--request-timeout``) apply to every context;
- one cluster never waits for another, and never hangs the rest: without ``--request-timeout``
  each request of each cluster is bounded by :data:`DEFAULT_CLUSTER_TIMEOUT` (30 s, the TCP
  connect limit kubectl's dialer has), so a dead or black-holed server fails in bounded time;
- a failure of one cluster (unreachable, 401/403, a broken context, anything ``work`` raises) is
  delivered as that cluster's :attr:`ClusterResult.error` and never stops the others.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, TypeVar

from karta.errors import KubeConfigError, NoKubeconfigError
from karta.kube.client import KubeClient
from karta.kube.config import ClusterConfig, config_from_kubeconfig, merge_kubeconfigs
from karta.kube.sources import ConfigOverrides, existing_kubeconfigs

__all__ = [
    "DEFAULT_CLUSTER_TIMEOUT",
    "MAX_PARALLEL_CLUSTERS",
    "ClusterResult",
    "ClusterTarget",
    "context_names",
    "per_cluster",
    "select_contexts",
]

DEFAULT_CLUSTER_TIMEOUT = 30.0  # seconds per request, when --request-timeout is not given
MAX_PARALLEL_CLUSTERS = 4  # clusters worked on at once (each also runs its own parallel lists)

T = TypeVar("T")


@dataclass(frozen=True)
class ClusterTarget:
    """One context to work on: its resolved ``config``, or the ``error`` that makes it unusable."""

    context: str
    config: ClusterConfig | None = None
    error: KubeConfigError | None = None

    @property
    def server(self) -> str:
        return self.config.server if self.config is not None else ""


@dataclass(frozen=True)
class ClusterResult(Generic[T]):
    """What ``work`` gave for one context (``value``), or the exception that stopped it (``error``)."""

    context: str
    server: str = ""
    value: T | None = None
    error: Exception | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def context_names(
    overrides: ConfigOverrides | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[str]:
    """Every context of the merged kubeconfig, sorted (none without a kubeconfig file); for
    ``--context`` completion and the web view's choice of clusters."""
    ov = overrides or ConfigOverrides()
    env = os.environ if environ is None else environ
    _, existing = existing_kubeconfigs(ov, environ=env, home=home)
    return sorted(merge_kubeconfigs(existing).contexts) if existing else []


def select_contexts(
    overrides: ConfigOverrides | None = None,
    *,
    contexts: Sequence[str] = (),
    all_contexts: bool = False,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[ClusterTarget]:
    """The clusters of ``contexts`` (or, with ``all_contexts``, of every context), each with
    ``overrides`` applied. Raises :class:`NoKubeconfigError` when there is no kubeconfig file,
    :class:`KubeConfigError` when a file is unreadable, a named context does not exist or
    ``all_contexts`` finds none."""
    ov = overrides or ConfigOverrides()
    env = os.environ if environ is None else environ
    paths, existing = existing_kubeconfigs(ov, environ=env, home=home)
    if not existing:
        looked = ", ".join(map(str, paths)) or "nothing"
        raise NoKubeconfigError(f"several contexts need a kubeconfig file (looked at {looked})")
    merged = merge_kubeconfigs(existing)
    source = "kubeconfig " + os.pathsep.join(map(str, existing))
    if all_contexts:
        names = sorted(merged.contexts)
        if not names:
            raise KubeConfigError(f"the kubeconfig ({', '.join(map(str, existing))}) has no contexts")
    else:
        names = list(dict.fromkeys(contexts))
        unknown = [n for n in names if n not in merged.contexts]
        if unknown:
            known = ", ".join(sorted(merged.contexts)) or "none"
            listed = ", ".join(f'"{n}"' for n in unknown)
            raise KubeConfigError(
                f"context{'s' if len(unknown) > 1 else ''} {listed} "
                f"do{'' if len(unknown) > 1 else 'es'} not exist in the kubeconfig (its contexts: {known})"
            )
    out: list[ClusterTarget] = []
    for name in names:
        try:
            config = config_from_kubeconfig(merged, replace(ov, context=name), source=source)
        except KubeConfigError as exc:
            out.append(ClusterTarget(name, error=exc))
            continue
        if ov.request_timeout is None:
            config = replace(config, timeout=DEFAULT_CLUSTER_TIMEOUT)
        out.append(ClusterTarget(name, config=config))
    return out


def per_cluster(
    targets: Sequence[ClusterTarget],
    work: Callable[[KubeClient], T],
    *,
    max_parallel: int = MAX_PARALLEL_CLUSTERS,
    client_factory: Callable[[ClusterConfig], KubeClient] = KubeClient,
) -> list[ClusterResult[T]]:
    """``work(client)`` for every usable target, at most ``max_parallel`` at once, each with a
    client of its own (closed when ``work`` returns); the results in the order of ``targets``.

    An unusable target, and any :class:`Exception` ``work`` raises, is that cluster's ``error``.
    The threads are daemons: an interrupted caller (Ctrl-C) never waits for a slow cluster."""
    results: list[ClusterResult[T] | None] = [None] * len(targets)
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    done: queue.SimpleQueue[int] = queue.SimpleQueue()
    running = 0
    for index, target in enumerate(targets):
        if target.config is None:
            results[index] = ClusterResult(target.context, error=target.error or KubeConfigError("unusable"))
        else:
            todo.put(index)
            running += 1

    def one(index: int) -> ClusterResult[T]:
        target = targets[index]
        assert target.config is not None
        try:
            client = client_factory(target.config)
        except Exception as exc:  # e.g. an unusable server URL
            return ClusterResult(target.context, target.server, error=exc)
        try:
            return ClusterResult(target.context, target.server, value=work(client))
        except Exception as exc:  # delivered for this cluster only
            return ClusterResult(target.context, target.server, error=exc)
        finally:
            client.close()

    def worker() -> None:
        while True:
            try:
                index = todo.get_nowait()
            except queue.Empty:
                return
            try:
                results[index] = one(index)
            except BaseException as exc:  # never leave the caller waiting for this cluster
                stopped = RuntimeError(f"stopped: {exc!r}")
                results[index] = ClusterResult(targets[index].context, error=stopped)
            finally:
                done.put(index)

    for _ in range(max(1, min(max_parallel, running))):
        threading.Thread(target=worker, daemon=True, name="karta-cluster").start()
    for _ in range(running):
        done.get()
    return [r for r in results if r is not None]
