"""Shell-completion callbacks the commands attach to their parameters (sections 17.1, 17.9); the
scripts themselves are printed by ``kli completion`` (:mod:`karta.cli.commands.completion`).

- :func:`complete_types` for ``TYPE[/NAME] [NAME]``: TYPE completes to the lower-cased root kinds
  of all definitions (``kind.version.group`` when a kind is covered at several GVKs); NAME (after
  ``TYPE/`` or as the second word) to the live objects of that type;
- :func:`complete_namespaces` for ``-n/--namespace``: the cluster's namespaces;
- :func:`complete_contexts` for ``--context``: the kubeconfig's contexts (no request is made);
- :func:`complete_definition_names`.

Live completions use the connection flags already typed on the line, give up after
:data:`COMPLETION_TIMEOUT` seconds and are silent on any failure (no kubeconfig included): a
completion never prints an error.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from karta import definitions, kube, model
from karta.cli.cluster import overrides_from
from karta.cli.lookup import open_store, resolve_type
from karta.errors import UnknownResourceTypeError

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

__all__ = [
    "COMPLETION_TIMEOUT",
    "complete_contexts",
    "complete_definition_names",
    "complete_namespaces",
    "complete_types",
    "live_names",
    "live_namespaces",
    "type_tokens",
]

COMPLETION_TIMEOUT = 2.0  # seconds for a live completion (17.9), connection and requests included


def type_tokens(store: definitions.DefinitionStore) -> list[str]:
    """Completion tokens for TYPE: ``kind`` lower-cased, or ``kind.version.group`` when ambiguous."""
    by_kind: dict[str, set[model.GVK]] = {}
    for gvk in store.gvks():
        by_kind.setdefault(gvk.kind.lower(), set()).add(gvk)
    tokens: set[str] = set()
    for kind, gvks in by_kind.items():
        if len(gvks) == 1:
            tokens.add(kind)
        else:
            tokens.update(model.GVK(g.group, g.version, kind).token for g in gvks)
    return sorted(tokens)


def _store() -> definitions.DefinitionStore | None:
    try:
        return open_store()
    except Exception:  # completion must never fail loudly
        return None


def complete_types(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``shell_complete`` callback for a ``TYPE[/NAME] [NAME]`` argument (``nargs=-1``).

    First word: TYPE tokens offline, or ``TYPE/NAME`` once a ``/`` is typed; second word (after a
    TYPE without ``/``): NAMEs. Nothing with ``--all-types`` or ``-f``, nor after a NAME."""
    from click.shell_completion import CompletionItem  # only when completing: not a start-up cost

    try:
        if ctx.params.get("all_types") or ctx.params.get("file"):
            return []
        before = tuple(ctx.params.get(param.name or "") or ())
        if not before:
            token, slash, prefix = incomplete.partition("/")
            if slash:
                if not token:
                    return []
                return [
                    CompletionItem(f"{token}/{n}") for n in live_names(ctx, token) if n.startswith(prefix)
                ]
            store = _store()
            tokens = type_tokens(store) if store is not None else []
            return [CompletionItem(t) for t in tokens if t.startswith(incomplete.lower())]
        if len(before) == 1 and "/" not in before[0] and "/" not in incomplete:
            return [CompletionItem(n) for n in live_names(ctx, before[0]) if n.startswith(incomplete)]
    except Exception:  # completion must never fail loudly
        pass
    return []


def complete_contexts(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``shell_complete`` callback for ``--context``: the contexts of the kubeconfig the flags
    typed so far name (``--kubeconfig``, else ``$KUBECONFIG``...), read from the files only."""
    from click.shell_completion import CompletionItem  # only when completing: not a start-up cost

    try:
        names = kube.context_names(overrides_from(dict(ctx.params)))
    except Exception:  # completion must never fail loudly
        return []
    return [CompletionItem(n) for n in names if n.startswith(incomplete)]


def complete_namespaces(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``shell_complete`` callback for ``-n/--namespace``: the cluster's namespaces (live)."""
    from click.shell_completion import CompletionItem  # only when completing: not a start-up cost

    try:
        return [CompletionItem(n) for n in live_namespaces(ctx) if n.startswith(incomplete)]
    except Exception:  # completion must never fail loudly
        return []


# --------------------------------------------------------------------------- live completion


def live_names(ctx: click.Context, token: str) -> list[str]:
    """Sorted names of the live objects of TYPE ``token`` in the namespace of the flags typed so
    far (else the context's); ``[]`` on any failure or after :data:`COMPLETION_TIMEOUT`."""

    def names(client: kube.KubeClient) -> list[str]:
        rtype = _resource(client, token)
        if rtype is None or not rtype.supports("list"):
            return []
        return _names(client, rtype, namespace=client.namespace if rtype.namespaced else None)

    return _live(ctx, names)


def live_namespaces(ctx: click.Context) -> list[str]:
    """Sorted names of the cluster's namespaces; ``[]`` on any failure or after the timeout."""

    def names(client: kube.KubeClient) -> list[str]:
        return _names(client, client.discovery.for_gvk("", "v1", "Namespace"), namespace=None)

    return _live(ctx, names)


def _names(client: kube.KubeClient, rtype: kube.ResourceType, *, namespace: str | None) -> list[str]:
    found = client.list(rtype, namespace=namespace, metadata_only=True)
    return sorted({str((item.get("metadata") or {}).get("name") or "") for item in found.items} - {""})


def _resource(client: kube.KubeClient, token: str) -> kube.ResourceType | None:
    """The served resource of a TYPE token: API discovery, else the definitions (as 17.4)."""
    try:
        return client.discovery.resolve(token)
    except UnknownResourceTypeError:
        pass
    store = _store()
    return resolve_type(token, client=client, store=store).resource if store is not None else None


def _overrides(ctx: click.Context) -> kube.ConfigOverrides:
    """The connection flags typed so far, with a request timeout of at most the completion's."""
    overrides = overrides_from(dict(ctx.params))  # it reads the connection flags' names only
    given = kube.parse_timeout(overrides.request_timeout) if overrides.request_timeout else None
    if given is None or given > COMPLETION_TIMEOUT:
        overrides = dataclasses.replace(overrides, request_timeout=f"{COMPLETION_TIMEOUT:g}s")
    return overrides


def _live(ctx: click.Context, work: Callable[[kube.KubeClient], list[str]]) -> list[str]:
    """``work`` on a client for the typed flags, in a daemon thread abandoned after the timeout."""
    result: list[list[str]] = []

    def run() -> None:
        try:
            with kube.KubeClient(kube.load_config(_overrides(ctx))) as client:
                result.append(work(client))
        except BaseException:  # silent: no kubeconfig, unreachable, forbidden, anything
            pass

    thread = threading.Thread(target=run, name="kli-complete", daemon=True)
    thread.start()
    thread.join(COMPLETION_TIMEOUT)
    return result[0] if result else []


def complete_definition_names(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """``shell_complete`` callback for a definition name (files complete through the shell)."""
    from click.shell_completion import CompletionItem  # only when completing: not a start-up cost

    store = _store()
    names = store.names() if store is not None else []
    items = [CompletionItem(n) for n in names if n.startswith(incomplete)]
    return items or [CompletionItem(incomplete, type="file")]
