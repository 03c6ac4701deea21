"""``kli gang (TYPE/NAME | -f FILE [--pods PODS]) [--definition NAME|FILE] --backend B``: the scheduler
objects of docs/spec/gang-backends.md for one workload, as YAML (or a JSON ``List``) ready for ``kubectl
apply``.

From a file, the definition is resolved by the object's GVK as every command resolves it. Live
(``TYPE/NAME`` or ``TYPE NAME``), the TYPE resolves as for ``kli get`` (cluster definitions
included), the object is read (missing: exit 3) and its pods are those whose controller-owner chain
reaches it, exactly as ``kli describe`` finds them. The backends and their options come from the
registry (:mod:`karta.render.backends`). Warnings (what a backend cannot express, per-pod problems)
go to stderr after the output. ``--name`` names the group object (checked before rendering).
``--pod-patches`` prints, instead of the objects, what existing pods accept of their binding: one
``kubectl patch pod`` command per pod (``-o json|yaml``: a List of partial Pods for
``kubectl apply --server-side``); the spec fields only a pod's creation can set are warnings.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from karta import definitions, extract, model, render
from karta.cli import exitcodes
from karta.cli.cluster import connect
from karta.cli.commands import short_help
from karta.cli.completion import complete_types
from karta.cli.errors import CliError, RunFailures, UsageError
from karta.cli.inputs import read_labelled_objects, read_objects
from karta.cli.lookup import (
    DEFINITION_OPTION_HELP,
    PASS_DEFINITION_HINT,
    chosen_definition,
    live_evaluator,
    open_store,
    read_live,
    reference_evaluator,
)
from karta.cli.options import connection_options, format_option, manifest_options, ref_option
from karta.cli.output import dump_json, dump_yaml, warn
from karta.errors import KartaError
from karta.gang import gang_format
from karta.render.backends import BACKENDS, WORKLOAD_API_VERSIONS

if TYPE_CHECKING:
    from karta.definitions import StoredDefinition
    from karta.jq import Evaluator
    from karta.kube import ConfigOverrides
    from karta.render import Rendering

__all__ = ["gang"]


@click.command("gang", short_help=short_help("gang"))
@click.argument("target", nargs=-1, metavar="[TYPE/NAME | TYPE NAME]", shell_complete=complete_types)
@manifest_options()
@click.option(
    "--pods", "pods_file", metavar="PODS", help="The workload's pods (multi-document YAML or a List)."
)
@click.option("--definition", "definition", metavar="NAME|FILE", help=DEFINITION_OPTION_HELP)
@click.option("--backend", required=True, type=click.Choice(BACKENDS), help="Gang scheduler to render for.")
@click.option(
    "--k8s-version",
    "k8s_version",
    type=click.Choice(list(WORKLOAD_API_VERSIONS)),
    default="1.37",
    show_default=True,
    help="Kubernetes version of the Workload API (1.35 v1alpha1, 1.36 v1alpha2, 1.37 v1beta1).",
)
@click.option(
    "--composite",
    is_flag=True,
    help="workload-api, 1.37: keep sub-groups as a CompositePodGroup tree (alpha) instead of flattening.",
)
@click.option(
    "--queue",
    metavar="QUEUE",
    help="Default queue (Volcano; KAI instead of default-queue; Kueue when the workload has no "
    "kueue.x-k8s.io/queue-name label, which wins).",
)
@click.option("--scheduler-name", "scheduler_name", metavar="NAME", help="Scheduler name written on pods.")
@click.option(
    "--schedule-timeout",
    "schedule_timeout",
    type=click.IntRange(min=1),
    metavar="SECONDS",
    help="coscheduling scheduleTimeoutSeconds.",
)
@click.option("--min-resources", is_flag=True, help="Volcano, coscheduling: also compute minResources.")
@click.option(
    "--kai-managed",
    is_flag=True,
    help="KAI mode B: we create the PodGroup (our labels; the workload needs "
    'kai.scheduler/skip-podgrouper: "true"). Default: exactly what KAI itself creates.',
)
@click.option(
    "--name",
    "group_name",
    metavar="NAME",
    help="Name of the group object pods point at, instead of the derived one (a DNS-1123 subdomain; "
    "at most 63 characters for coscheduling; kai: with --kai-managed).",
)
@click.option(
    "--pod-patches",
    is_flag=True,
    help="Print the existing pods' binding patches (kubectl patch commands; -o json|yaml: a List "
    "of partial Pods) instead of the objects.",
)
@ref_option
@format_option("yaml", "json", help="Output format: multi-document YAML, or a JSON List.")
@connection_options
def gang(
    target: tuple[str, ...],
    file: str | None,
    recursive: bool,
    pods_file: str | None,
    definition: str | None,
    backend: str,
    k8s_version: str,
    composite: bool,
    queue: str | None,
    scheduler_name: str | None,
    schedule_timeout: int | None,
    min_resources: bool,
    kai_managed: bool,
    group_name: str | None,
    pod_patches: bool,
    refs: tuple[str, ...],
    output: str,
    overrides: ConfigOverrides,
) -> None:
    """Render the gang-scheduler objects for one workload (docs/spec/gang-backends.md).

    TYPE/NAME reads the workload and its pods from the cluster (kubectl's connection flags
    apply); -f FILE renders a manifest, with its pods from --pods. KAI output is exactly the
    PodGroup KAI's Karta fallback creates; the other backends follow their documented rendering.
    -f takes several documents, a directory (-R recursively) or -: each workload's objects are
    rendered in turn, those no definition or gang instructions cover skipped with a warning.
    Pipe the YAML to `kubectl apply -f -`. Exit codes: 1 when the workload cannot be rendered for
    that backend; 2 usage; 3 workload not found; 4 no definition covers the type.
    """
    if target and file is not None:
        raise UsageError("TYPE/NAME cannot be combined with -f/--file")
    if target and pods_file is not None:
        raise UsageError("--pods goes with -f FILE; live, the workload's pods are read from the cluster")
    if recursive and file is None:
        raise UsageError("-R/--recursive goes with -f DIR")
    if refs and file is None:
        raise UsageError("--ref goes with -f FILE (offline, the referenced objects come from the files)")
    warnings: list[str] = []
    workloads: list[tuple[dict[str, Any], str, list[dict[str, Any]], StoredDefinition]] = []
    live_eval: Evaluator | None = None  # live: the references read through the API
    failures = RunFailures()  # a directory run goes on past a bad file or workload
    if target:
        live = read_live(target, command="gang", overrides=overrides)
        obj, obj_name, pods, chosen = live.workload.obj, live.label, live.pods, live.workload.definition
        warnings.extend(live.warnings)
        if definition is not None:
            chosen, diagnostics = chosen_definition(definition, obj, overrides, hint=PASS_DEFINITION_HINT)
            warnings.extend(d["message"] for d in diagnostics if d["severity"] in ("warning", "error"))
        if chosen.karta.spec.structure_definition.references:  # extension E3: read them live
            with connect(overrides) as client:
                live_eval, unread = live_evaluator(client, chosen, obj, obj_name=obj_name)
            warnings.extend(unread)
        workloads.append((obj, obj_name, pods, chosen))
    elif file is None:
        raise UsageError(
            "kli gang needs TYPE/NAME (a workload in the cluster) or -f FILE (a manifest, or - for stdin)"
        )
    else:
        objects = read_labelled_objects(file, what="workload object", recursive=recursive, failures=failures)
        if len(objects) > 1 and pods_file:
            raise UsageError(f"--pods goes with one workload; {file} holds {len(objects)} objects")
        pods = read_objects(pods_file, what="pod") if pods_file else []
        store = open_store(overrides) if definition is None and len(objects) > 1 else None
        seen: list[Any] = []  # the store's warnings, said once for all the objects
        for obj, obj_name in objects:
            try:
                chosen, diagnostics = chosen_definition(
                    definition, obj, overrides, hint=PASS_DEFINITION_HINT, store=store
                )
            except CliError as exc:
                if len(objects) == 1 and not failures.errors:
                    raise
                if exc.code == exitcodes.NO_DEFINITION:
                    warnings.append(f"skipping {obj_name}: {exc}")
                else:
                    failures.add(exc)
                continue
            warnings.extend(
                d["message"] for d in diagnostics if d["severity"] in ("warning", "error") and d not in seen
            )
            seen.extend(diagnostics)
            if len(objects) > 1 and gang_format(chosen.karta) is None:
                warnings.append(
                    f"skipping {obj_name}: definition {chosen.name} has no gang-scheduling instructions"
                )
                continue
            workloads.append((obj, obj_name, _own_pods(chosen, obj, pods), chosen))
        if not workloads:
            failures.finish(file)
            raise CliError(f"nothing in {file} has a definition with gang-scheduling instructions")
    options = render.options_for(  # each backend takes the flags it reads
        backend,
        {
            "k8s_version": k8s_version,
            "composite": composite,
            "scheduler_name": scheduler_name,
            "queue": queue,
            "schedule_timeout_seconds": schedule_timeout,
            "min_resources": min_resources,
            "kai_managed": kai_managed,
            "group_name": group_name,
        },
    )
    try:
        render.check_group_name(backend, options)
    except KartaError as exc:
        hint = "add --kai-managed, or leave --name out" if backend == "kai" else None
        raise UsageError(f"--name: {exc}", hint=hint) from None
    if group_name is not None and len(workloads) > 1:
        raise UsageError(f"--name names one workload's group; {file} holds {len(workloads)} workloads")
    results = []
    for obj, obj_name, pods, chosen in workloads:
        try:
            results.append(
                _render(
                    backend,
                    obj,
                    obj_name,
                    pods,
                    chosen,
                    options=options,
                    refs=refs if file is not None else None,
                    evaluator=live_eval,
                )
            )
        except CliError as exc:
            if len(workloads) == 1 and not failures.errors:
                raise
            failures.add(exc)
    objects_out = [o for result in results for o in result.objects]
    patches = [p for result in results for p in result.pod_patches]
    for result in results:
        warnings.extend(result.warnings)
    if backend == "kueue":
        warnings.extend(_kueue_ineligible([chosen for _, _, _, chosen in workloads]))
    owner_patch = any(result.owner_patch is not None for result in results)

    if pod_patches:
        metadata = workloads[0][0].get("metadata")  # with --pods, one workload (checked above)
        namespace = str(metadata.get("namespace") or "") if isinstance(metadata, Mapping) else ""
        as_list = click.get_current_context().get_parameter_source("output") != ParameterSource.DEFAULT
        all_pods = [pod for _, _, pods, _ in workloads for pod in pods]
        warnings.extend(_print_pod_patches(patches, all_pods, namespace, output if as_list else None))
    elif output == "json":
        click.echo(dump_json({"apiVersion": "v1", "kind": "List", "items": objects_out}), nl=False)
    else:
        click.echo("---\n".join(dump_yaml(o) for o in objects_out), nl=False)
    if owner_patch:
        warnings.append(
            "KAI mode B: also set the annotation kai.scheduler/skip-podgrouper=true on the workload, "
            "so that KAI's pod-grouper leaves its pods to these PodGroups"
        )
    if pod_patches and not patches and not any(pods for _, _, pods, _ in workloads):
        warnings.append(
            "no pod patches: the workload has no pods" + ("" if target else "; pass them with --pods")
        )
    if not objects_out and not pod_patches:
        warnings.append(
            f"nothing to render for {backend}"
            + (": alpha-format gangs are found from pods; pass --pods" if not pods and not target else "")
        )
    for message in warnings:
        warn(message)
    failures.finish(file or "")


def _kueue_ineligible(chosen: Sequence[StoredDefinition]) -> list[str]:
    """One warning per definition karta-controller's Kueue part would not manage
    (:func:`karta.kueue.eligibility.eligibility`): the Workload printed is what Kueue would be asked
    to admit, but nothing would hold such a workload until admission or start it after."""
    from karta.kueue.eligibility import eligibility

    out: list[str] = []
    for definition in {id(d): d for d in chosen}.values():
        reason = eligibility(definition.karta).reason
        if reason is not None:
            out.append(
                f"karta-controller --kueue does not queue workloads of definition {definition.name}: {reason}"
            )
    return out


def _own_pods(
    chosen: definitions.StoredDefinition, obj: dict[str, Any], pods: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The given pods less those of the workload's external components (format extension E2: the
    pods of its operator's Helm releases are never gang members)."""
    from karta import report
    from karta.extract.external import split_external

    if not pods:
        return pods
    try:
        selectors = report.external_selectors_of(chosen, obj)
    except KartaError as exc:
        raise CliError(f"cannot select the external pods of the workload: {exc}") from None
    own, _ = split_external(selectors, pods)
    return [dict(p) for p in own]


def _print_pod_patches(
    patches: Sequence[render.PodPatch], pods: Sequence[Mapping[str, Any]], namespace: str, output: str | None
) -> list[str]:
    """What existing pods accept of their binding (labels and annotations): one ``kubectl patch``
    command per pod, or with ``output`` a List of partial Pods; returns the warnings for what only a
    pod's creation can set (spec fields the pods lack)."""
    by_name = {}
    for pod in pods:
        meta = pod.get("metadata")
        if isinstance(meta, Mapping) and meta.get("name"):
            by_name[str(meta["name"])] = pod
    items: list[dict[str, Any]] = []
    lines: list[str] = []
    left_out: dict[str, list[str]] = {}
    for patch in patches:
        for key, value in patch.creation_only(by_name.get(patch.pod)).items():
            left_out.setdefault(f"spec.{key}: {json.dumps(value, sort_keys=True)}", []).append(patch.pod)
        body = patch.existing_pod_patch()
        if not body:
            continue
        ns = patch.namespace or namespace
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": patch.pod, **({"namespace": ns} if ns else {}), **body["metadata"]},
            }
        )
        words = ["kubectl", "patch", "pod", patch.pod, *(["-n", ns] if ns else []), "--type=merge", "-p"]
        lines.append(
            " ".join(shlex.quote(w) for w in words)
            + " "
            + shlex.quote(json.dumps(body, separators=(",", ":")))
        )
    if output is None:
        click.echo("".join(f"{line}\n" for line in lines), nl=False)
    else:
        data = {"apiVersion": "v1", "kind": "List", "items": items}
        click.echo(dump_json(data) if output == "json" else dump_yaml(data), nl=False)
    return [
        f"{field} is left out of the patches: it is immutable once a pod exists, and "
        f"{', '.join(names)} {'does' if len(names) == 1 else 'do'} not have it (it is set at a pod's "
        "creation: karta-controller's pod webhook, or the workload's pod templates)"
        for field, names in left_out.items()
    ]


def _render(
    backend: str,
    obj: dict[str, Any],
    obj_name: str,
    pods: list[dict[str, Any]],
    chosen: StoredDefinition,
    *,
    options: Any,
    refs: Sequence[str] | None = None,
    evaluator: Evaluator | None = None,
) -> Rendering:
    """One workload's objects for ``backend``; a definition without gang instructions, or one
    the backend cannot render, is an error naming the workload."""
    if gang_format(chosen.karta) is None:
        raise CliError(
            f"definition {chosen.name} has no gang-scheduling instructions "
            "(spec.optimizationInstructions.gangScheduling)",
            hint="add a podGroup (docs/spec/format.md#gangs), or pass another one with --definition",
        )
    if evaluator is None:
        evaluator = (
            definitions.evaluator_for(chosen)
            if refs is None
            else reference_evaluator(chosen, obj, refs, obj_name=obj_name)
        )
    factory = extract.ComponentFactory(chosen.karta, obj, evaluator=evaluator)
    try:
        model.validate_or_raise(chosen.karta)  # a definition from the store is evaluated only once valid
        return render.render(backend, factory, pods=pods, options=options)
    except KartaError as exc:
        raise CliError(f"cannot render {backend} objects for {obj_name}: {exc}") from None
