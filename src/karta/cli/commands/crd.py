"""``kli crd [-o yaml|json]``: print the Karta CustomResourceDefinition (``kartas.run.ai``).

The manifest is the one shipped in the package (``karta/crd/kartas.run.ai.yaml``, generated from
the model by ``python -m karta.crd``), ready for ``kli crd | kubectl apply -f -``.
"""

from __future__ import annotations

import click

from karta import crd as karta_crd
from karta.cli.commands import short_help
from karta.cli.options import format_option
from karta.cli.output import dump_json

__all__ = ["crd"]


@click.command("crd", short_help=short_help("crd"))
@format_option("yaml", "json", help="yaml (the shipped manifest, for kubectl apply -f -) or json.")
def crd(output: str) -> None:
    """Print the Karta CustomResourceDefinition (kartas.run.ai, run.ai/v1alpha1).

    \b
      kli crd | kubectl apply --server-side -f -

    The CRD must exist before Karta objects can be created (kli catalog export) and before
    karta-controller starts.
    """
    if output == "json":
        click.echo(dump_json(karta_crd.load_crd()), nl=False)
        return
    click.echo(karta_crd.CRD_FILE.read_text(encoding="utf-8"), nl=False)
