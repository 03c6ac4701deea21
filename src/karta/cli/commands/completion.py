"""``kli completion bash|zsh|fish|powershell``: shell completion scripts (sections 17.1, 17.9).

bash, zsh and fish use click's own completion protocol (``_KLI_COMPLETE=<shell>_complete``).
PowerShell, which click does not support, gets a script that speaks click's bash protocol
(``COMP_WORDS``/``COMP_CWORD`` in, ``type,value`` lines out), so no extra machinery is needed at
completion time. What the scripts complete comes from the callbacks of :mod:`karta.cli.completion`.
"""

from __future__ import annotations

from typing import Any

import click
from click.shell_completion import CompletionItem, get_completion_class

from karta.cli.commands import short_help

__all__ = ["SHELLS", "completion", "completion_script"]

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


def completion_script(shell: str, root: click.Command) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`) of the command tree ``root``."""
    if shell == "powershell":
        return _POWERSHELL
    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships bash, zsh and fish
        raise click.UsageError(f"unsupported shell {shell!r}")
    comp = cls(root, {}, "kli", _VAR)
    # source() without _check_version: printing a script must not run bash
    script: str = comp.source_template % comp.source_vars()
    return script if script.endswith("\n") else script + "\n"


def _complete_shell(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    return [CompletionItem(s) for s in SHELLS if s.startswith(incomplete)]


@click.command("completion", short_help=short_help("completion"))
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
    root = click.get_current_context().find_root().command
    click.echo(completion_script(shell, root), nl=False)
