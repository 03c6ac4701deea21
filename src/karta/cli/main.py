"""The ``kli`` entry point: a click group whose commands are imported only when used.

Start-up matters (``kli --help`` is budgeted at 150 ms), so this module imports click and the
command registry (:mod:`karta.cli.commands`) alone; a command's module is imported when it runs,
and reaches the library through its lazy packages, so a command's ``--help`` stays cheap too.
Every error a user can cause ends as one ``error: <message>`` line on stderr and a documented exit
code (see :mod:`karta.cli.exitcodes`); ``KARTA_DEBUG=1`` adds the traceback of unexpected errors.

A bare ``kli`` prints the help and exits 0. Run as ``kubectl-kli`` (the kubectl plugin,
:func:`kubectl_main`), the program is ``kubectl kli`` in every usage line, help text, error and
hint (:mod:`karta.cli.prog`).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any

import click

try:
    from click.parser import _OptionParser
except ImportError:  # click < 8.2
    from click.parser import OptionParser as _OptionParser  # type: ignore[no-redef]

if TYPE_CHECKING:
    from click.parser import _ParsingState

from karta.cli import exitcodes, prog
from karta.cli.commands import COMMANDS as _COMMANDS
from karta.cli.errors import CliError, format_error, one_line


class _Formatter(click.HelpFormatter):
    """Help text with its ``kli <command>`` references spelled with the program's name."""

    def write(self, string: str) -> None:
        super().write(prog.spelled(string))


class _Context(click.Context):
    formatter_class = _Formatter


class _Parser(_OptionParser):
    """click's parser, without suggestions for an unknown long option that is not one.

    click first matches every option as a long one, and ``-f`` fails that match before it is
    matched as a short one; the failure computes suggestions for a long option (``difflib``, some
    1.5 ms of every command given a short option) that are then thrown away. A name that does not
    start with ``--`` (or another two-character prefix) goes on to the short options, so it fails
    here without suggestions; an unknown long option still gets click's own error and suggestions."""

    def _match_long_opt(self, opt: str, explicit_value: str | None, state: _ParsingState) -> None:
        if opt not in self._long_opt and opt[:2] not in self._opt_prefixes:
            raise click.NoSuchOption(opt, ctx=self.ctx)  # click's caller retries it as short options
        super()._match_long_opt(opt, explicit_value, state)


def _make_parser(command: click.Command, ctx: click.Context) -> _OptionParser:
    """:meth:`click.Command.make_parser`, with :class:`_Parser`."""
    parser = _Parser(ctx)
    for param in command.get_params(ctx):
        param.add_to_parser(parser, ctx)
    return parser


class _Command(click.Command):
    """What every plain command is made in :meth:`_LazyGroup.get_command`: its parser is a
    :class:`_Parser`."""

    make_parser = _make_parser


class _LazyGroup(click.Group):
    context_class = _Context
    make_parser = _make_parser

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = _COMMANDS.get(cmd_name)
        if spec is None:
            return None
        module = importlib.import_module(f"karta.cli.commands.{cmd_name}")
        command = getattr(module, spec[0])
        assert isinstance(command, click.Command)
        command.context_class = _Context
        if type(command) is click.Command:
            command.__class__ = _Command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in _COMMANDS and not ctx.resilient_parsing:
            import difflib

            close = difflib.get_close_matches(name, list(_COMMANDS), n=3)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise click.UsageError(
                f"unknown command {name!r}.{hint} Run '{prog.name()} --help' for the commands.", ctx
            )
        return super().resolve_command(ctx, args)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=None, package_name="karta", prog_name="kli", message="%(prog)s %(version)s")
def cli() -> None:
    """kli: understand Kubernetes AI workloads through Karta definitions.

    Offline commands work on files: `kli validate` checks a definition, `kli inspect` shows what a
    definition extracts from a workload manifest (components, instances, pod templates, scale,
    status, gang plan, pod placement).

    Exit codes: 0 success; 1 failure or validation problems; 2 usage error (bad flag, unreadable or
    unparseable input); 3 workload not found; 4 no Karta definition covers the type.
    """


def main(argv: list[str] | None = None, *, prog_name: str | None = None) -> int:
    """Run ``kli``; returns (and, as a console script, exits with) the exit code. The program is
    ``prog_name``, else ``kubectl kli`` when run as ``kubectl-kli``, else ``kli``."""
    args = sys.argv[1:] if argv is None else argv
    if prog_name is None:
        invoked = os.path.basename(sys.argv[0]) if argv is None and sys.argv else ""
        prog_name = prog.KUBECTL_PLUGIN if invoked == "kubectl-kli" else "kli"
    prog.set_name(prog_name)
    if not args:  # a bare kli: the help, and success (kubectl does the same)
        args = ["--help"]
    try:
        cli.main(args=args, prog_name=prog_name, standalone_mode=False)
    except CliError as exc:
        sys.stderr.write(format_error(exc))
        return _exit(exc.code, argv)
    except click.exceptions.Exit as exc:
        return _exit(int(exc.exit_code), argv)
    except click.exceptions.Abort:
        sys.stderr.write("error: aborted\n")
        return _exit(exitcodes.FAILURE, argv)
    except click.ClickException as exc:
        sys.stderr.write(f"error: {one_line(prog.spelled(exc.format_message()))}\n")
        if isinstance(exc, click.UsageError) and "--help" not in exc.format_message():
            sys.stderr.write(f"hint: run '{_command_path(exc, args)} --help' for the usage\n")
        return _exit(exitcodes.USAGE, argv)
    except BrokenPipeError:
        return _exit(exitcodes.OK, argv)
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return _exit(130, argv)
    except Exception as exc:  # a bug, not a user mistake: say so in one line
        if _unwritable_output(
            exc, process=argv is None
        ):  # a full disk under a large output: not a bug, and not success
            return _exit(exitcodes.FAILURE, argv)
        if os.environ.get("KARTA_DEBUG"):
            raise
        sys.stderr.write(
            f"error: internal error ({type(exc).__name__}: {one_line(str(exc))}); "
            "this is a bug in kli, please report it (KARTA_DEBUG=1 shows the traceback)\n"
        )
        return _exit(exitcodes.FAILURE, argv)
    return _exit(exitcodes.OK, argv)


def _unwritable_output(exc: Exception, *, process: bool) -> bool:
    """Report a failed write of the output (see :mod:`karta.cli.streams`). Run as the process
    (``process``), also silence standard output, so that the rest of its buffer is not reported
    again at exit; called in-process, leave the caller's streams alone."""
    from karta.cli import streams

    if not streams.unwritable_output(exc):
        return False
    if process:
        streams.quiet(sys.stdout)
    streams.say(streams.output_error(exc))
    return True


def _command_path(exc: click.UsageError, args: list[str]) -> str:
    """``kli <command>`` for a usage error (click's parser errors carry no context)."""
    if exc.ctx is not None:
        return exc.ctx.command_path
    command = next((a for a in args if not a.startswith("-")), "")
    return f"{prog.name()} {command}" if command in _COMMANDS else prog.name()


def kubectl_main() -> int:
    """The ``kubectl-kli`` console script: ``kli`` as the kubectl plugin ``kubectl kli``."""
    return main(prog_name=prog.KUBECTL_PLUGIN)


def _exit(code: int, argv: Any) -> int:
    if argv is None:
        sys.stdout.flush()
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
