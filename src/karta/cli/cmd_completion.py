"""``kli completion bash|zsh|fish|powershell``: shell completion scripts (sections 17.1, 17.9).

bash, zsh and fish use click's own completion protocol (``_KLI_COMPLETE=<shell>_complete``).
PowerShell, which click does not support, gets a script that speaks click's bash protocol
(``COMP_WORDS``/``COMP_CWORD`` in, ``type,value`` lines out), so no extra machinery is needed at
completion time. Also owns the completion callbacks commands attach to their parameters:

- :func:`complete_types` for ``TYPE[/NAME] [NAME]``: TYPE completes to the lower-cased root kinds
  of all definitions (``kind.version.group`` when a kind is covered at several GVKs); NAME (after
  ``TYPE/`` or as the second word) to the live objects of that type;
- :func:`complete_namespaces` for ``-n/--namespace``: the cluster's namespaces;
- :func:`complete_definition_names`.

Live completions use the connection flags already typed on the line, give up after
:data:`COMPLETION_TIMEOUT` seconds and are silent on any failure (no kubeconfig included): a
completion never prints an error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from karta.definitions import DefinitionStore
    from karta.kube import ConfigOverrides, KubeClient, ResourceType

COMPLETION_TIMEOUT = 2.0  # seconds for a live completion (17.9), connection and requests included

SHELLS = ("bash", "zsh", "fish", "powershell")
_VAR = "_KLI_COMPLETE"

_POWERSHELL = r"""# kli completion for PowerShell; load it with:
#   kli completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName 'kli', 'kli.exe', 'kubectl-kli' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $line = $commandAst.ToString()
    if ($cursorPosition -lt $line.Length) { $line = $line.Substring(0, $cursorPosition) }
    $words = @($commandAst.CommandElements | ForEach-Object { $_.ToString() })
    $words = @($words | Where-Object { $line.Contains($_) })
    $cword = $words.Count
    if ($wordToComplete -ne '') { $cword = $cword - 1 } else { $words += '' }
    $env:COMP_WORDS = ($words -join ' ')
    $env:COMP_CWORD = "$cword"
    $env:_KLI_COMPLETE = 'bash_complete'
    try {
        $out = & $words[0] 2>$null
    } finally {
        Remove-Item Env:\COMP_WORDS, Env:\COMP_CWORD, Env:\_KLI_COMPLETE -ErrorAction SilentlyContinue
    }
    foreach ($item in $out) {
        $type, $value = $item -split ',', 2
        if ($type -eq 'plain' -and $value -like "$wordToComplete*") {
            [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $value)
        }
    }
}
"""


def completion_script(shell: str) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`)."""
    if shell == "powershell":
        return _POWERSHELL
    from click.shell_completion import get_completion_class

    from karta.cli.main import cli

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships bash, zsh and fish
        raise click.UsageError(f"unsupported shell {shell!r}")
    comp = cls(cli, {}, "kli", _VAR)
    # source() without _check_version: printing a script must not run bash
    script: str = comp.source_template % comp.source_vars()
    return script if script.endswith("\n") else script + "\n"


def type_tokens(store: DefinitionStore) -> list[str]:
    """Completion tokens for TYPE: ``kind`` lower-cased, or ``kind.version.group`` when ambiguous."""
    from karta.model.gvk import GVK

    by_kind: dict[str, set[GVK]] = {}
    for d in store.visible():
        if d.gvk is not None:
            by_kind.setdefault(d.gvk.kind.lower(), set()).add(d.gvk)
    tokens: set[str] = set()
    for kind, gvks in by_kind.items():
        if len(gvks) == 1:
            tokens.add(kind)
        else:
            tokens.update(GVK(g.group, g.version, kind).token for g in gvks)
    return sorted(tokens)


def _store() -> DefinitionStore | None:
    try:
        from karta.cli.cmd_definitions import open_store

        return open_store()
    except Exception:  # completion must never fail loudly
        return None


def complete_types(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``shell_complete`` callback for a ``TYPE[/NAME] [NAME]`` argument (``nargs=-1``).

    First word: TYPE tokens offline, or ``TYPE/NAME`` once a ``/`` is typed; second word (after a
    TYPE without ``/``): NAMEs. Nothing with ``--all-types`` or ``-f``, nor after a NAME."""
    from click.shell_completion import CompletionItem

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


def complete_namespaces(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``shell_complete`` callback for ``-n/--namespace``: the cluster's namespaces (live)."""
    from click.shell_completion import CompletionItem

    try:
        return [CompletionItem(n) for n in live_namespaces(ctx) if n.startswith(incomplete)]
    except Exception:  # completion must never fail loudly
        return []


# --------------------------------------------------------------------------- live completion


def live_names(ctx: click.Context, token: str) -> list[str]:
    """Sorted names of the live objects of TYPE ``token`` in the namespace of the flags typed so
    far (else the context's); ``[]`` on any failure or after :data:`COMPLETION_TIMEOUT`."""

    def names(client: KubeClient) -> list[str]:
        rtype = _resource(client, token)
        if rtype is None or not rtype.supports("list"):
            return []
        return _names(client, rtype, namespace=client.namespace if rtype.namespaced else None)

    return _live(ctx, names)


def live_namespaces(ctx: click.Context) -> list[str]:
    """Sorted names of the cluster's namespaces; ``[]`` on any failure or after the timeout."""

    def names(client: KubeClient) -> list[str]:
        return _names(client, client.discovery.for_gvk("", "v1", "Namespace"), namespace=None)

    return _live(ctx, names)


def _names(client: KubeClient, rtype: ResourceType, *, namespace: str | None) -> list[str]:
    found = client.list(rtype, namespace=namespace, metadata_only=True)
    return sorted({str((item.get("metadata") or {}).get("name") or "") for item in found.items} - {""})


def _resource(client: KubeClient, token: str) -> ResourceType | None:
    """The served resource of a TYPE token: API discovery, else the definitions (as 17.4)."""
    from karta.errors import UnknownResourceTypeError

    try:
        return client.discovery.resolve(token)
    except UnknownResourceTypeError:
        pass
    from karta.cli.live import resolve_type

    store = _store()
    return resolve_type(token, client=client, store=store).resource if store is not None else None


def _overrides(ctx: click.Context) -> ConfigOverrides:
    """The connection flags typed so far, with a request timeout of at most the completion's."""
    import dataclasses

    from karta.cli.live import overrides_from
    from karta.kube.config import parse_timeout

    overrides = overrides_from(dict(ctx.params))  # it reads the connection flags' names only
    given = parse_timeout(overrides.request_timeout) if overrides.request_timeout else None
    if given is None or given > COMPLETION_TIMEOUT:
        overrides = dataclasses.replace(overrides, request_timeout=f"{COMPLETION_TIMEOUT:g}s")
    return overrides


def _live(ctx: click.Context, work: Callable[[KubeClient], list[str]]) -> list[str]:
    """``work`` on a client for the typed flags, in a daemon thread abandoned after the timeout."""
    result: list[list[str]] = []

    def run() -> None:
        from karta.kube.client import KubeClient
        from karta.kube.config import load_config

        try:
            with KubeClient(load_config(_overrides(ctx))) as client:
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
    from click.shell_completion import CompletionItem

    store = _store()
    names = sorted({d.name for d in store.visible()}) if store is not None else []
    items = [CompletionItem(n) for n in names if n.startswith(incomplete)]
    return items or [CompletionItem(incomplete, type="file")]


def _complete_shell(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    from click.shell_completion import CompletionItem

    return [CompletionItem(s) for s in SHELLS if s.startswith(incomplete)]


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS), shell_complete=_complete_shell)
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL (bash, zsh, fish or powershell).

    \b
      bash:       source <(kli completion bash)          (or add it to ~/.bashrc)
      zsh:        source <(kli completion zsh)           (after compinit)
      fish:       kli completion fish > ~/.config/fish/completions/kli.fish
      powershell: kli completion powershell | Out-String | Invoke-Expression

    Completes commands, flags, choices, definition names and workload TYPEs (lower-cased root
    kinds of all definitions; kind.version.group where a kind has several versions); with a
    cluster configured, also workload NAMEs and namespaces (-n), within 2 seconds.
    """
    click.echo(completion_script(shell), nl=False)
