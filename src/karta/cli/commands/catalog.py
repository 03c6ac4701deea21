"""``kli catalog export [--dir D] [-o yaml|json]``: the built-in catalog as Karta objects.

The objects are those the controller's ``--install-catalog`` applies
(:func:`karta.definitions.catalog_objects`: named by slug, labelled
``app.kubernetes.io/managed-by: karta`` and with the index labels ``run.ai/karta-*``), ready for
``kubectl apply``: on stdout as one multi-document YAML (or a JSON ``List``), or with ``--dir``
one file per definition, ``D/<name>.yaml`` (``.json``), each path written said on stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from karta import definitions
from karta.cli.commands import short_help
from karta.cli.errors import CliError
from karta.cli.options import format_option
from karta.cli.output import dump_json, dump_yaml

__all__ = ["catalog"]


@click.group("catalog", short_help=short_help("catalog"), invoke_without_command=True)
@click.pass_context
def catalog(ctx: click.Context) -> None:
    """The built-in catalog of Karta definitions, for installing on a cluster.

    \b
      kli crd | kubectl apply --server-side -f -
      kli catalog export | kubectl apply --server-side -f -
    """
    if ctx.invoked_subcommand is None:  # as kubectl's command groups: the help, and success
        click.echo(ctx.get_help())


def _header(count: int) -> str:
    from importlib.metadata import version

    return (
        f"# The {count} built-in Karta definitions of karta {version('karta')}, as karta-controller"
        " --install-catalog applies them.\n# Needs the kartas.run.ai CRD (kli crd).\n"
    )


def _write(directory: str, objects: list[dict[str, Any]], output: str) -> None:
    target = Path(directory)
    written = []
    try:
        target.mkdir(parents=True, exist_ok=True)
        for obj in objects:
            path = target / f"{obj['metadata']['name']}.{output}"
            path.write_text(dump_json(obj) if output == "json" else dump_yaml(obj), encoding="utf-8")
            written.append(str(path))
    except OSError as exc:
        raise CliError(
            f"--dir {directory}: cannot write: {exc.strerror or exc}",
            hint="choose a directory you can write to",
        ) from None
    click.echo("\n".join(written))


@catalog.command("export", short_help="Print the built-in definitions as Karta objects to apply.")
@click.option(
    "--dir",
    "directory",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Write one file per definition into DIR (created if missing; files of the same name are replaced).",
)
@format_option("yaml", "json", help="yaml (multi-document, for kubectl apply -f -) or json (a List).")
def export(directory: str | None, output: str) -> None:
    """Print the built-in definitions as Karta objects for kubectl apply.

    The objects are exactly those karta-controller --install-catalog applies: named by slug
    (e.g. batch-job-v1), labelled app.kubernetes.io/managed-by=karta and with the index labels
    run.ai/karta-group, run.ai/karta-version and run.ai/karta-kind that KAI Scheduler looks
    them up by. With --dir, one file per definition (DIR/<name>.yaml) and each path on stdout.

    \b
      kli catalog export | kubectl apply --server-side -f -
      kli catalog export --dir catalog/ && kubectl apply -f catalog/
    """
    objects = definitions.catalog_objects()
    if directory is not None:
        _write(directory, objects, output)
    elif output == "json":
        click.echo(dump_json({"apiVersion": "v1", "kind": "List", "items": objects}), nl=False)
    else:
        click.echo(_header(len(objects)) + "---\n".join(dump_yaml(obj) for obj in objects), nl=False)
