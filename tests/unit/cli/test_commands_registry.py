"""The command registry (karta.cli.commands.COMMANDS) is the one list of kli's commands: every
module of the package is registered, each under its click command's name, with its short help."""

from __future__ import annotations

import importlib
import pkgutil

import click

import karta.cli.commands as commands
from karta.cli.main import cli


def test_every_command_module_is_registered_under_its_commands_name() -> None:
    modules = {m.name for m in pkgutil.iter_modules(commands.__path__)}
    assert modules == set(commands.COMMANDS)
    for name, (attribute, short_help) in commands.COMMANDS.items():
        command = getattr(importlib.import_module(f"karta.cli.commands.{name}"), attribute)
        assert isinstance(command, click.Command)
        assert command.name == name
        assert command.short_help == short_help, name


def test_kli_lists_the_registry() -> None:
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(commands.COMMANDS)
    for name in commands.COMMANDS:
        assert cli.get_command(ctx, name) is not None
