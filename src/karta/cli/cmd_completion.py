"""``kli completion bash|zsh|fish|powershell``: shell completion scripts (sections 17.1, 17.9).

bash, zsh and fish use click's own completion protocol (``_KLI_COMPLETE=<shell>_complete``).
PowerShell, which click does not support, gets a script that speaks click's bash protocol
(``COMP_WORDS``/``COMP_CWORD`` in, ``type,value`` lines out), so no extra machinery is needed at
completion time. Also owns the completion callbacks commands attach to their arguments:
:func:`complete_types` (TYPE: lower-cased root kinds of all definitions, ``kind.version.group``
when a kind is covered at several GVKs) and :func:`complete_definition_names`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from karta.definitions import DefinitionStore

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
    by_kind: dict[str, list[tuple[str, str, str]]] = {}
    for d in store.visible():
        if d.gvk is not None:
            by_kind.setdefault(d.gvk[2].lower(), []).append(d.gvk)
    tokens: set[str] = set()
    for kind, gvks in by_kind.items():
        if len(set(gvks)) == 1:
            tokens.add(kind)
            continue
        for group, version, _ in gvks:
            tokens.add(f"{kind}.{version}.{group}" if group else f"{kind}.{version}")
    return sorted(tokens)


def _store() -> DefinitionStore | None:
    try:
        from karta.cli.cmd_definitions import open_store

        return open_store()
    except Exception:  # completion must never fail loudly
        return None


def complete_types(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``shell_complete`` callback for a TYPE (or ``TYPE/NAME``) argument."""
    from click.shell_completion import CompletionItem

    if "/" in incomplete:
        return []  # NAME needs a cluster
    store = _store()
    tokens = type_tokens(store) if store is not None else []
    return [CompletionItem(t) for t in tokens if t.startswith(incomplete.lower())]


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
    kinds of all definitions; kind.version.group where a kind has several versions).
    """
    click.echo(completion_script(shell), nl=False)
