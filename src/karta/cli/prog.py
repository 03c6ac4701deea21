"""The program's name as the user typed it: ``kli``, or ``kubectl kli`` when kubectl runs the
``kubectl-kli`` plugin (kubectl's convention: a plugin's help speaks of ``kubectl <plugin>``).

:func:`set_name` is called once by :mod:`karta.cli.main`; :func:`spelled` rewrites the command
references of a help text, an error or a hint (``kli get``, ``'kli definitions'``,
``kli --help``) to that name, so that every line tells the user what to type.
"""

from __future__ import annotations

import re

__all__ = ["KUBECTL_PLUGIN", "name", "set_name", "spelled"]

KUBECTL_PLUGIN = "kubectl kli"
_name = "kli"

# "kli" as a word followed by a subcommand or a flag, and not already "kubectl kli"
_REFERENCE = re.compile(r"(?<![\w./-])(?<!kubectl )kli(?= (?:[a-z]|--?[a-z]))")


def name() -> str:
    return _name


def set_name(value: str) -> None:
    global _name
    _name = value


def spelled(text: str) -> str:
    """``text`` with its ``kli <command>`` references spelled with the program's name."""
    if _name == "kli" or "kli" not in text:
        return text
    return _REFERENCE.sub(_name, text)
