"""``kli``'s commands, one module each (``commands/<name>.py`` holds the click declaration and a
thin callback over the library and the shared helpers of :mod:`karta.cli`).

:data:`COMMANDS` is the registry :mod:`karta.cli.main` reads: command name → (the module's click
command attribute, the one-line help ``kli --help`` shows without importing the module). A test
checks that it lists every module of this package and that each module's command has that name
and takes its short help from here (:func:`short_help`). No command module imports another (an
import-linter contract).
"""

from __future__ import annotations

__all__ = ["COMMANDS", "short_help"]

COMMANDS: dict[str, tuple[str, str]] = {
    "catalog": ("catalog", "Export the built-in definitions as Karta objects to apply."),
    "completion": ("completion", "Print a shell completion script."),
    "crd": ("crd", "Print the Karta CustomResourceDefinition (kartas.run.ai)."),
    "definitions": ("definitions_command", "List the Karta definitions kli knows."),
    "describe": ("describe", "Show a workload's components, replicas, requests."),
    "gang": ("gang", "Render the gang-scheduler objects of a workload."),
    "get": ("get", "List live workloads with their phase, GPUs and components."),
    "inspect": ("inspect", "Show everything a definition derives from one object."),
    "rbac": ("rbac", "Print the ClusterRole a consumer of some definitions needs."),
    "scaffold": ("scaffold", "Propose a draft Karta from a CRD's OpenAPI schema."),
    "top": ("top", "Show GPUs allocatable and requested, per node or type."),
    "ui": ("ui_command", "Serve a read-only web view of every workload."),
    "validate": ("validate", "Check a Karta definition file offline."),
    "verify": ("verify", "Check a definition against a manifest and predictions."),
    "version": ("version", "Print the client version and the cluster's."),
}


def short_help(name: str) -> str:
    """The one-line help of command ``name`` (each command declares it from here)."""
    return COMMANDS[name][1]
