"""``kli verify --definition NAME|FILE --workload W [--pods PODS] [--predict P]``: a definition
against a real manifest (and its real pods).

The checks and the predictions' shape are the library's (:mod:`karta.report.verify`); this command
reads the files and prints one line per check (``ok``, ``FAIL`` or ``warn``), or JSON / YAML. Exit
0 when nothing failed, 1 otherwise.
"""

from __future__ import annotations

from typing import Any

import click

from karta import report
from karta.cli import exitcodes
from karta.cli.commands import short_help
from karta.cli.errors import CliError, UsageError
from karta.cli.inputs import parse_documents, read_object, read_objects, read_text
from karta.cli.lookup import definitions_named, reference_evaluator
from karta.cli.options import format_option, ref_option
from karta.cli.output import emit
from karta.cli.text import plural, printable
from karta.errors import PredictionError

__all__ = ["verify"]


def _read_predictions(path: str) -> dict[str, Any]:
    text, name = read_text(path)
    docs = parse_documents(text, name)
    if len(docs) != 1:
        raise UsageError(f"{name}: expected one YAML mapping of predictions")
    try:
        return report.check_predictions(docs[0])
    except PredictionError as exc:
        raise UsageError(f"{name}: {exc}") from None


_MARK = {"ok": "ok  ", "fail": "FAIL", "warn": "warn"}


@click.command("verify", short_help=short_help("verify"))
@click.option(
    "--definition",
    "definition",
    required=True,
    metavar="D",
    help="Karta definition: a file (a path, or one ending in .yaml/.yml/.json), or a name "
    "(kli definitions: built-in, user or cluster).",
)
@click.option("--workload", "workload", required=True, metavar="W", help="Workload manifest (path or -).")
@click.option(
    "--pods",
    "pods_file",
    metavar="PODS",
    help="The workload's real pods (multi-document YAML or a List): checks the pod selectors and gangs.",
)
@click.option(
    "--predict", "predict", metavar="P", help="YAML file of predictions (status, components, gang, pods)."
)
@ref_option
@format_option("table", "json", "yaml")
def verify(
    definition: str,
    workload: str,
    pods_file: str | None,
    predict: str | None,
    refs: tuple[str, ...],
    output: str,
) -> None:
    """Check a definition against a real workload manifest and written-down predictions.

    Reports paths that extract nothing (warn), pod specs without containers, components without
    instances, a status that resolves to Undefined and a definition that shows no pod spec
    (FAIL); an optional part absent from the workload (replicas 0, or no instances while other
    components have some) is not a failure. Then compares status, instances,
    replicas and the gang with the predictions file, e.g. `component worker: expected replicas
    4, got 2`. With --pods, each pod is placed on its component, instance and gang by the pod
    selectors: a pod no component matches, a selector that does not match its pod, a pod outside
    every gang or sub-group, or a place other than predicted (pods: {NAME: {component, instance,
    replica, gang, subGroup}}) fails. Exit 0 when nothing failed, 1 otherwise.
    """
    defs = definitions_named(definition, invalid_ok=True)  # an invalid one is a failed check
    if len(defs) != 1:
        raise UsageError(f"{definition} holds {len(defs)} Karta definitions; expected exactly one")
    obj, obj_name = read_object(workload, what="workload object")
    pods = read_objects(pods_file, what="pod") if pods_file else []
    predictions = _read_predictions(predict) if predict else {}
    if predictions.get("pods") and not pods_file:
        raise UsageError("the predictions name pods (pods:); pass the pods with --pods PODS")
    chosen = defs[0]
    evaluator = reference_evaluator(chosen, obj, refs)
    checks = report.run_checks(
        chosen.karta, obj, predictions, trusted=chosen.trusted, pods=pods, evaluator=evaluator
    )
    name = chosen.karta.metadata.name
    failed = sum(1 for c in checks if c.result == "fail")
    warned = sum(1 for c in checks if c.result == "warn")
    raw_meta = obj.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    workload_name = f"{obj.get('kind')}/{meta.get('name') or '<unnamed>'}"
    if output in ("json", "yaml"):
        emit(
            {
                "definition": name,
                "workload": {
                    "apiVersion": obj.get("apiVersion"),
                    "kind": obj.get("kind"),
                    "name": meta.get("name"),
                    "namespace": meta.get("namespace"),
                },
                "ok": failed == 0,
                "summary": {"checks": len(checks), "failed": failed, "warnings": warned},
                "checks": [c.to_dict() for c in checks],
            },
            output,
        )
    else:
        lines = [f"verify {name} against {workload_name}"]
        lines.extend(f"  {_MARK[c.result]}  {c.subject}: {c.message}" for c in checks)
        lines.append(
            f"{plural(len(checks), 'check')}: {len(checks) - failed - warned} ok, {failed} failed, "
            f"{plural(warned, 'warning')}"
        )
        click.echo("\n".join(printable(line) for line in lines))
    if failed:
        raise CliError(
            f"{failed} of {plural(len(checks), 'check')} failed for {obj_name}", code=exitcodes.FAILURE
        )
