"""``kli rbac DEFINITION... [--crd CRD.yaml] [--backend B] [--service-account NS/NAME]``.

Prints the ClusterRole a consumer of those definitions needs (docs/spec/gang-backends.md#object-rules):
get/list/watch on the workload kinds, the kinds they are made of (components, ``additionalChildKinds``, and
what the definitions of those kinds name in turn), the common pod owners (ReplicaSets, StatefulSets,
Jobs), pods and Events (``kli get``/``describe`` read all of them), read access to
``kartas.run.ai``, and create/update on the group objects of the chosen gang backends; plus a
ClusterRoleBinding for a service account.
Resource names are the CRDs' plurals when ``--crd`` gives them, else a lower-cased plural guess
(said so in a comment).
"""

from __future__ import annotations

import click

from karta import rbac as roles
from karta.cli.commands import short_help
from karta.cli.completion import complete_definition_names
from karta.cli.errors import UsageError
from karta.cli.inputs import parse_documents, read_text
from karta.cli.lookup import definitions_named, open_store
from karta.cli.options import format_option
from karta.cli.output import dump_json, dump_yaml
from karta.cli.text import printable
from karta.render.backends import BACKENDS

__all__ = ["rbac"]


def _crd_plurals(paths: tuple[str, ...]) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for path in paths:
        text, name = read_text(path)
        found = roles.crd_plurals(parse_documents(text, name))
        if not found:
            raise UsageError(f"{name} holds no CustomResourceDefinition with spec.names.plural")
        out.update(found)
    return out


def _service_account(value: str | None) -> tuple[str, str] | None:
    if value is None:
        return None
    namespace, sep, account = value.partition("/")
    if not sep or not namespace or not account or "/" in account:
        raise UsageError(f"--service-account {value!r}: expected NAMESPACE/NAME")
    return namespace, account


@click.command("rbac", short_help=short_help("rbac"))
@click.argument(
    "definitions", nargs=-1, required=True, metavar="DEFINITION...", shell_complete=complete_definition_names
)
@click.option("--name", "name", default="karta-workload-reader", show_default=True, help="ClusterRole name.")
@click.option(
    "--service-account", "service_account", metavar="NS/NAME", help="Also bind the role to this account."
)
@click.option(
    "--backend",
    "backends",
    multiple=True,
    type=click.Choice(sorted(BACKENDS)),
    help="Allow creating and updating this gang backend's group objects (repeatable).",
)
@click.option(
    "--crd", "crds", multiple=True, metavar="CRD", help="CRD file giving the plural resource names."
)
@format_option("yaml", "json", help="yaml (multi-document, for kubectl apply -f -) or json (a List).")
def rbac(
    definitions: tuple[str, ...],
    name: str,
    service_account: str | None,
    backends: tuple[str, ...],
    crds: tuple[str, ...],
    output: str,
) -> None:
    """Print the ClusterRole (and binding) a consumer of these definitions needs.

    DEFINITION is a Karta file or the name of a built-in or user definition. The role reads what
    `kli get` and `kli describe` read: the workload kinds, the kinds their pods are owned through
    (the definitions' components and additionalChildKinds, ReplicaSets, StatefulSets, Jobs), pods,
    Events and the Kartas (kartas.run.ai); --backend adds create/update on that gang scheduler's
    group objects. Plural resource names come from --crd files, else are guessed from the kind (a
    comment says so).
    """
    account = _service_account(service_account)
    kartas = [d.karta for ref in definitions for d in definitions_named(ref)]
    related = [d.karta for d in open_store().visible()]
    objects, notes = roles.build_rbac(
        kartas,
        name=name,
        backends=backends,
        plurals=_crd_plurals(crds),
        service_account=account,
        related=related,
    )
    if output == "json":
        click.echo(dump_json({"apiVersion": "v1", "kind": "List", "items": objects}), nl=False)
        return
    roots = ", ".join(sorted({k.metadata.name for k in kartas}))
    header = [f"# For the workloads of: {roots}"]
    if backends:
        header.append(f"# Gang backends: {', '.join(backends)}")
    header.extend(f"# {note}" for note in notes)
    click.echo("\n".join(printable(line) for line in header))
    click.echo("---\n".join(dump_yaml(obj) for obj in objects), nl=False)
