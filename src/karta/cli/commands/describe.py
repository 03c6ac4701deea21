"""``kli describe (TYPE [NAME...] | TYPE/NAME...)`` (live) and ``kli describe -f FILE`` (offline),
section 17.6, with kubectl's ways of naming what to describe.

Live: each TYPE resolves as for ``kli get``; the named objects are read (a missing one is an error
after the others are described, exit 3), or, for a TYPE without NAME, every object of it in the
namespace (``-l`` narrows, ``-A`` widens); each object's pods are found through their
controller-owner chains and placed on the workload tree (17.5). The output is, per workload, the
header with the age, the component tree with ``ready/desired``, GPUs, nodes and one line per pod
(with the reason a pod is not ready), the Phase line, why pods are pending (their PodScheduled
messages), the Resources table, the workload's conditions and the recent Events of the workload
and its unhealthy pods (:mod:`karta.report.live`) and, when the definition has gang instructions,
the gang state after the Phase line (:mod:`karta.report.gang_state`) and whether karta-controller
manages the workload's gangs (the Gang scope line, from its namespace's labels read live:
:func:`karta.report.gang_scope_report`); the report is
:func:`karta.report.describe_live`, the web view's workload page's too. Workloads are separated
by two blank lines, as kubectl separates them. Live, the workloads it creates through other kinds
(:func:`karta.kube.owned_workloads`, one LIST per kind) make its Owner tree
(:mod:`karta.report.owner_tree`), and a workload a top-level one owns says so, and whose gang its
pods are in: the topmost owner's with gang instructions (:meth:`karta.kube.TopLevel.top_owner`).
What could not be read (the pod list, owners, Events) is a warning, and counts made from an
incomplete pod set show as unknown.

File mode reads every object of ``-f`` (several documents, a directory, ``-`` for standard
input; :func:`karta.cli.inputs.read_labelled_objects`), resolves each object's type by the one rule
every command uses (exact GVK, then the most stable other version of its group and kind), builds
the tree without pods and prints desired replicas instead (the gang state is unknown there: no
pods). Among several objects, those no
definition covers are skipped with a warning (none covered: exit 4).

With ``-o json|yaml`` one workload prints :class:`karta.report.DescribeReport`; several print
``{"items": [...], "count": N}``; ``-o jsonpath=TEMPLATE`` renders a template over that.
"""

from __future__ import annotations

import sys
from dataclasses import field
from typing import TYPE_CHECKING, Any

import click

from karta import kube, model, report
from karta._records import record
from karta.cli import exitcodes, printing
from karta.cli.cluster import cluster_failure, connect
from karta.cli.commands import short_help
from karta.cli.completion import complete_types
from karta.cli.config import load_config, resolve_output
from karta.cli.errors import CliError, RunFailures, UsageError, format_error
from karta.cli.inputs import read_labelled_objects, read_objects
from karta.cli.lookup import (
    DEFINITION_OPTION_HELP,
    chosen_definition,
    definition_for_object,
    live_evaluator,
    no_definition_hint,
    not_found,
    not_installed,
    open_store,
    parse_targets,
    reference_evaluator,
    resolution_notes,
    resolve_type,
    unsaid,
)
from karta.cli.options import connection_options, limit_option, manifest_options, output_options, ref_option
from karta.cli.output import emit, warn
from karta.cli.views.describe import render_table
from karta.errors import ApiError, ClusterError, KartaError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from karta.definitions import DefinitionStore, StoredDefinition
    from karta.jq import Evaluator
    from karta.kube import ConfigOverrides
    from karta.report import WorkloadRows

__all__ = ["describe"]

NO_DEFINITION_MESSAGE = "no Karta definition covers this workload type"
NO_DEFINITION_HINT = (
    '"kli definitions" lists the types Karta covers; '
    "apply a Karta definition to the cluster to cover this one"
)


@click.command("describe", short_help=short_help("describe"))
@click.argument("args", nargs=-1, metavar="[TYPE [NAME...] | TYPE/NAME...]", shell_complete=complete_types)
@manifest_options(what="manifests to describe offline")
@click.option(
    "-l", "--selector", metavar="SELECTOR", help="With TYPE alone: only workloads with these labels."
)
@click.option(
    "-A", "--all-namespaces", is_flag=True, help="With TYPE alone: describe them in every namespace."
)
@click.option(
    "--pods",
    "pods_file",
    metavar="PODS",
    help="With -f and one workload: its pods and its external components' (multi-document YAML or a List).",
)
@click.option("--definition", "definition", metavar="NAME|FILE", help=DEFINITION_OPTION_HELP)
@limit_option(
    "--pod-limit", default=0, help="Pods shown per component, unhealthy first (0 = all; table output)."
)
@limit_option(
    "--component-limit",
    default=0,
    help="Components shown per level, those with unhealthy or missing pods first (0 = all; table output).",
)
@ref_option
@output_options("table", "json", "yaml", printing.JSONPATH)
@connection_options
def describe(
    args: tuple[str, ...],
    file: str | None,
    recursive: bool,
    selector: str | None,
    all_namespaces: bool,
    pods_file: str | None,
    definition: str | None,
    pod_limit: int,
    component_limit: int,
    refs: tuple[str, ...],
    output: str | None,
    config_file: str | None,
    overrides: ConfigOverrides,
) -> None:
    """Show workloads' components, pods, readiness and resource requests.

    TYPE NAME... (or TYPE/NAME...) reads those workloads from the cluster; TYPE alone describes
    every workload of that type in the namespace (-l narrows, -A: every namespace). TYPE is
    resolved as by `kli get`; the pods whose controller-owner chain reaches a workload are placed
    on its components, with the reason a pod is not ready; then, as kubectl describe shows them,
    the scheduler's messages for pending pods, the workload's conditions and the recent Events of
    the workload and its unhealthy pods. What cannot be read (pods, owners, Events) is a warning,
    and ready counts it would change show as unknown (?). A missing workload exits 3.

    With -f FILE the manifests are described offline: every document of the file (a directory's
    .yaml, .yml and .json files; -R recursively; - for standard input), each with apiVersion and
    kind, resolved against the built-in catalog, the user's definitions ($KARTA_DEFINITIONS) and
    the cluster's when one is configured. The output says "file mode": there is no live status.
    No definition for the type exits 4. -o jsonpath=TEMPLATE works on what -o json prints.
    --pods PODS (one workload) places the given pods on its components as live pods are, the
    pods of components that select theirs by label outside the owner chain (format extension E2,
    such as a Milvus's etcd and MinIO) included, and computes the gang state from them.

    --definition NAME|FILE describes the workloads with that definition instead of the one their
    type resolves to (a name from `kli definitions`, or a file).

    A workload whose definition has gang instructions gets a Gang line after the Phase line (a
    "gang" field in -o json|yaml): the pods bound to a node
    against the minimum of its gangs, a gang with sub-groups counting every sub-group's minimum,
    e.g. "0/12 bound, min 12 not met (master 0/1, worker 0/11)"; "unknown" when some pods could
    not be read, and with -f (no pods). Live, a Gang scope line ("gangScope") says whether
    karta-controller manages its gangs, from the label karta.run.ai/gang-scheduling on the
    workload and its namespace: in, outside, or what each --gang-scope mode decides.

    Live, a workload that creates workloads of other kinds (its definition's
    additionalChildKinds: a Katib Trial's PyTorchJob, a PipelineRun's TaskRuns, a
    VirtualMachine's instance) gets an Owner tree section ("ownerTree"): one line per workload,
    indented under its owner, with its status, pods and GPUs, and the ones that own a gang (the
    topmost workload of each chain whose definition has gang instructions: a Katib Experiment's
    Trials, a CronJob's Jobs). Describing a workload another one owns says so ("Owned by",
    "ownedBy"), and whose gang its pods are in when an owner above it has gang instructions.
    """

    if file is not None and args:
        raise UsageError("TYPE and NAME cannot be combined with -f/--file")
    if file is None and not args:
        raise UsageError(
            "describe needs TYPE [NAME...], TYPE/NAME... or -f FILE", hint="run 'kli describe --help'"
        )
    if recursive and file is None:
        raise UsageError("-R/--recursive goes with -f DIR")
    if pods_file is not None and file is None:
        raise UsageError("--pods goes with -f FILE; live, the workload's pods are read from the cluster")
    if refs and file is None:
        raise UsageError("--ref goes with -f FILE (offline, the referenced objects come from the files)")
    targets = parse_targets(args, command="describe") if args else ()
    named = any(names for _, names in targets)
    if (selector or all_namespaces) and (file is not None or named):
        raise UsageError("-l and -A go with TYPE alone (every workload of that type), not with NAME or -f")
    config = load_config(config_file)
    out = Out(
        fmt=resolve_output(output, config=config, allowed=("table", "json", "yaml")),  # or jsonpath=
        limits=(pod_limit, component_limit),
        gpu_resources=config.gpu_resources,
        refs=refs,
    )
    if file is None:
        _describe_live(
            targets,
            out,
            definition=definition,
            overrides=overrides,
            selector=selector,
            all_namespaces=all_namespaces,
        )
    else:
        _describe_files(
            file, out, recursive=recursive, definition=definition, overrides=overrides, pods_file=pods_file
        )


@record(frozen=False)
class Out:
    """The reports of one run, printed together (:meth:`flush`), and what to say on stderr."""

    fmt: str
    limits: tuple[int, int]  # --pod-limit, --component-limit
    gpu_resources: tuple[str, ...]
    refs: tuple[str, ...] = ()  # --ref FILE: what references read in file mode (extension E3)
    texts: list[str] = field(default_factory=list)
    reports: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add(
        self,
        chosen: StoredDefinition,
        obj: dict[str, Any],
        name: str,
        *,
        file_mode: bool,
        pods: list[dict[str, Any]] | None = None,
        pods_complete: bool = True,
        events: Sequence[dict[str, Any]] = (),
        events_read: bool = True,
        said: Sequence[str] = (),
        scope: report.ScopeInput | None = None,
        external_pods: Sequence[dict[str, Any]] = (),
        kueue_workloads: Sequence[dict[str, Any]] | None = None,
        kueue_pending: kube.KueuePending | None = None,
        evaluator: Evaluator | None = None,
        owned: Sequence[dict[str, Any]] = (),
        resolve: report.Resolve | None = None,
        lineage: dict[str, list[str]] | None = None,
        owned_by: str | None = None,
        gang_owner: str | None = None,
    ) -> None:
        """One workload: from a file (``file_mode``), else live with its ``pods`` and ``events``
        (``events_read`` False: they could not be read; ``said``: what could not be read) and its
        namespace's labels (``scope``); live, ``evaluator`` has the references read through the
        API bound (:func:`karta.cli.lookup.live_evaluator`)."""
        try:
            if file_mode:
                evaluator = reference_evaluator(chosen, obj, self.refs, obj_name=name)
                described = report.describe_file(
                    chosen, obj, gpu_resources=self.gpu_resources, pods=pods, evaluator=evaluator
                )
            else:
                described = report.describe_live(
                    chosen,
                    obj,
                    pods or [],
                    events,
                    events_read=events_read,
                    warnings=said,
                    gpu_resources=self.gpu_resources,
                    pods_complete=pods_complete,
                    scope=scope,
                    external_pods=external_pods,
                    kueue_workloads=kueue_workloads,
                    kueue_pending=kueue_pending,
                    evaluator=evaluator,
                    owned=owned,
                    resolve=resolve,
                    lineage=lineage,
                    owned_by=owned_by,
                    gang_owner=gang_owner,
                )
        except KartaError as exc:
            raise CliError(f"cannot describe {name} with definition {chosen.name}: {exc}") from None
        view, built = described.report, described.built
        self.reports.append(view)
        if self.fmt == "table":
            self.texts.append(_text(view, obj, built, limits=self.limits))
        self.warnings.extend(d.message for d in built.tree.diagnostics)

    def say(self, warnings: Iterable[str]) -> None:
        """Add ``warnings`` not said yet (each workload of a run may repeat its definition's)."""
        self.warnings.extend(w for w in warnings if w not in self.warnings)

    def flush(self, *, single: bool) -> None:
        """The reports (one bare report when ``single``), then the warnings."""
        data = self.reports[0] if single and len(self.reports) == 1 else None
        if data is None:
            data = {"items": self.reports, "count": len(self.reports)}
        if self.fmt == "table":
            click.echo("\n\n".join(self.texts), nl=False)
        elif self.fmt.startswith(printing.JSONPATH):
            text = printing.render_objects(self.fmt, self.reports, data=data, name_of=str)
            click.echo(text, nl=False)
        else:
            emit(data, self.fmt)
        for warning in self.warnings:
            warn(warning)


def _text(view: Any, obj: dict[str, Any], built: WorkloadRows, *, limits: tuple[int, int]) -> str:
    from karta.status.result import staleness  # the numbers of the stale note

    pod_limit, component_limit = limits
    return render_table(
        view,
        built.rows,
        component_limit=component_limit,
        pod_limit=pod_limit,
        staleness=staleness(obj) if view.get("stale") else None,
    )


# ------------------------------------------------------------------------------------- live


def _describe_live(
    targets: tuple[tuple[str, tuple[str, ...]], ...],
    out: Out,
    *,
    definition: str | None,
    overrides: ConfigOverrides,
    selector: str | None,
    all_namespaces: bool,
) -> None:
    client = connect(overrides)
    with client:
        store = open_store(client=client)
        out.warnings.extend(store.warnings)
        try:
            found, missing = _read_targets(
                client,
                store,
                targets,
                out,
                overrides=overrides,
                selector=selector,
                all_namespaces=all_namespaces,
            )
        except CliError:
            for warning in unsaid(store, out.warnings):  # they may explain it
                warn(warning)
            raise
        # every workload's pods, each namespace's listed once, owner reads shared
        chains = kube.OwnerChains(client)  # shared with the owner trees' pod placement: no second read
        found_pods = kube.find_pods_many(client, [obj for _, obj in found], chains=chains)
        top_level = kube.TopLevel.of(client, store, chains=chains)  # the top-level workload that owns one
        in_gang = kube.TopLevel.of(client, store, chains=chains, gangs=True)  # whose gang its pods are in
        scopes: dict[str, report.ScopeInput] = {}  # each namespace's labels read once
        referenced: dict[Any, Any] = {}  # extension E3: each referenced object read once
        resolve = report.owner_resolver(store, served=lambda gvk: client.discovery.find(*gvk) is not None)
        for (resolved, obj), pods in zip(found, found_pods, strict=True):
            namespace = str((obj.get("metadata") or {}).get("namespace") or "") or None
            if namespace is not None and namespace not in scopes:
                labels = kube.namespace_labels(client, namespace)
                scopes[namespace] = report.ScopeInput(labels.labels, unread=labels.unread)
            events = kube.object_events(client, namespace, report.event_subjects(obj, pods.pods))
            queued = _kueue_workloads(client, obj, namespace)
            said = [*pods.warnings, *events.warnings, *(queued.warnings if queued is not None else ())]
            out.warnings.extend(said)
            label = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
            chosen = resolved.definition
            if definition is not None:  # --definition NAME|FILE instead of the type's own
                chosen, diagnostics = chosen_definition(definition, obj, overrides, hint="", store=store)
                notes = [d["message"] for d in diagnostics if d["severity"] in ("warning", "error")]
                out.say(notes)
            evaluator, unread = live_evaluator(client, chosen, obj, obj_name=label, memo=referenced)
            said.extend(unread)
            out.warnings.extend(unread)
            external, unlisted = _external_pods(client, chosen, obj, label, evaluator=evaluator)
            said.extend(unlisted)
            out.warnings.extend(unlisted)
            # the workloads it owns through other kinds (additionalChildKinds): its owner tree
            owned, unowned = kube.owned_workloads(client, obj, kinds_of=report.child_kinds_of(store, resolve))
            said.extend(unowned)
            out.warnings.extend(unowned)
            lineage = kube.pod_lineage(chains, pods.pods) if owned else None
            top, gang_top = top_level.top_owner(obj), in_gang.top_owner(obj)
            out.add(
                chosen,
                obj,
                label,
                file_mode=False,
                external_pods=external,
                pods=pods.pods,
                pods_complete=pods.complete,
                events=events.events,
                events_read=events.failure is None,
                said=said,
                scope=scopes.get(namespace or ""),
                kueue_workloads=None if queued is None or queued.failure is not None else queued.workloads,
                kueue_pending=_kueue_pending(client, obj, queued),
                evaluator=evaluator,
                owned=owned,
                resolve=resolve,
                lineage=lineage,
                owned_by=f"{top.kind}/{top.name}" if top is not None else None,
                gang_owner=f"{gang_top.kind}/{gang_top.name}" if gang_top is not None else None,
            )
    single = sum(len(names) for _, names in targets) == 1
    if found or not missing:
        if not found and not single and out.fmt == "table":
            namespace = (
                "any namespace" if all_namespaces else f"namespace {overrides.namespace or client.namespace}"
            )
            sys.stderr.write(f"No workloads found in {namespace}.\n")
        out.flush(single=single)
    else:
        for warning in out.warnings:
            warn(warning)
    for error in missing[:-1]:
        sys.stderr.write(format_error(error, hint=False))
    if missing:
        raise missing[-1]


def _external_pods(
    client: kube.KubeClient,
    chosen: StoredDefinition,
    obj: dict[str, Any],
    label: str,
    *,
    evaluator: Evaluator | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Extension E2: the pods the workload's external components select by labels (one LIST
    each), and what could not be listed or computed (warnings)."""
    try:
        selectors = report.external_selectors_of(chosen, obj, evaluator=evaluator)
    except KartaError as exc:
        return [], [f"cannot select the external pods of {label}: {exc}"]
    return kube.external_pods(client, obj, selectors)


def _kueue_workloads(
    client: kube.KubeClient, obj: dict[str, Any], namespace: str | None
) -> kube.KueueRead | None:
    """The Kueue Workloads of a workload that names a queue (the ``kueue.x-k8s.io/queue-name``
    label), or None without one: no request for a workload Kueue does not manage."""
    if report.queue_name(obj) is None:
        return None
    uid = str((obj.get("metadata") or {}).get("uid") or "")
    return kube.kueue_workloads(client, namespace, uid)


def _kueue_pending(
    client: kube.KubeClient, obj: dict[str, Any], queued: kube.KueueRead | None
) -> kube.KueuePending | None:
    """The pending list of the LocalQueue of a workload whose Kueue Workload is pending (Kueue's
    visibility API, for its position), or None: nothing pending, no request."""
    if queued is None or queued.failure is not None:
        return None
    query = report.pending_query(obj, report.queue_detail(obj, queued.workloads))
    if query is None:
        return None
    return kube.kueue_pending(client, query.namespace, query.local_queue, query.workload)


def _read_targets(
    client: kube.KubeClient,
    store: DefinitionStore,
    targets: tuple[tuple[str, tuple[str, ...]], ...],
    out: Out,
    *,
    overrides: ConfigOverrides,
    selector: str | None,
    all_namespaces: bool,
) -> tuple[list[tuple[kube.ResolvedType, dict[str, Any]]], list[CliError]]:
    """The objects to describe, in the order asked for, and the NAMEs not found."""
    found: list[tuple[kube.ResolvedType, dict[str, Any]]] = []
    missing: list[CliError] = []
    for token, names in targets:
        try:
            resolved = resolve_type(token, client=client, store=store)
        except CliError as exc:
            if exc.code == exitcodes.NO_DEFINITION and out.fmt in ("json", "yaml"):
                emit(_no_definition_envelope(client, token, store), out.fmt)
            raise
        out.say(resolved.notes)  # duplicates ignored, invalid ones passed over
        rtype = resolved.resource
        if rtype is None:
            raise not_installed(resolved, client=client, token=token)
        namespace = (overrides.namespace or client.namespace) if rtype.namespaced else None
        if not names:
            where = None if all_namespaces else namespace
            try:
                listed = client.list(rtype, namespace=where, label_selector=selector)
            except ClusterError as exc:
                raise cluster_failure(exc, client=client, doing=f"listing {rtype.group_resource}") from None
            found.extend((resolved, obj) for obj in listed.items)
            continue
        for name in names:
            try:
                found.append((resolved, client.get(rtype, name, namespace=namespace)))
            except ApiError as exc:
                if exc.status != 404:
                    raise cluster_failure(exc, client=client, doing=f"reading {rtype.kind}/{name}") from None
                missing.append(not_found(rtype, name, namespace=namespace))
            except ClusterError as exc:
                raise cluster_failure(exc, client=client, doing=f"reading {rtype.kind}/{name}") from None
    return found, missing


def _no_definition_envelope(client: kube.KubeClient, token: str, store: DefinitionStore) -> dict[str, str]:
    out = {"error": "no_definition_for_type"}
    try:
        rtype = client.discovery.resolve(token)
    except ClusterError:
        out["type"] = token
    else:
        out["gvk"] = str(rtype.gvk)
    out["message"] = NO_DEFINITION_MESSAGE
    if store.cluster_forbidden:  # the likely cause, as the error line says
        out["cause"] = f"the cluster's Karta definitions could not be listed: {store.cluster_forbidden}"
    out["hint"] = no_definition_hint(store, NO_DEFINITION_HINT)
    return out


# ------------------------------------------------------------------------------------- files


def _describe_files(
    path: str,
    out: Out,
    *,
    recursive: bool,
    definition: str | None,
    overrides: ConfigOverrides | None,
    pods_file: str | None = None,
) -> None:
    failures = RunFailures()  # a directory run goes on past a bad file or workload
    objects = read_labelled_objects(path, what="workload object", recursive=recursive, failures=failures)
    if pods_file is not None and len(objects) > 1:
        raise UsageError(f"--pods goes with one workload; {path} holds {len(objects)} objects")
    pods = read_objects(pods_file, what="pod") if pods_file is not None else None
    store = open_store(overrides)
    out.warnings.extend(store.warnings)
    several = len(objects) > 1 or bool(failures.errors)
    skipped: list[CliError] = []
    for obj, name in objects:
        try:
            _describe_file_object(out, obj, name, store, definition, overrides, pods)
        except CliError as exc:
            if not several:
                if exc.code == exitcodes.NO_DEFINITION:
                    for warning in out.warnings:
                        warn(warning)
                    if out.fmt in ("json", "yaml"):
                        emit(_envelope(str(model.GVK.of(str(obj["apiVersion"]), str(obj["kind"])))), out.fmt)
                raise
            if exc.code == exitcodes.NO_DEFINITION and definition is None:
                skipped.append(exc)
                out.warnings.append(f"skipping {name}: {exc}")
            else:
                failures.add(exc)
    if not out.reports and skipped and not failures.errors:
        for warning in out.warnings:
            warn(warning)
        raise CliError(
            f"no Karta definition covers any of the {len(objects)} objects of {path}",
            code=exitcodes.NO_DEFINITION,
            hint=FILE_NO_DEFINITION_HINT,
        )
    out.flush(single=len(objects) == 1)
    failures.finish(path)


def _describe_file_object(
    out: Out,
    obj: dict[str, Any],
    name: str,
    store: Any,
    definition: str | None,
    overrides: ConfigOverrides | None,
    pods: list[dict[str, Any]] | None,
) -> None:
    """One object of ``kli describe -f``: with ``definition`` (a name or file) that one, whatever
    the type, else the one the store resolves for its type."""
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    if definition is not None:
        chosen, diagnostics = chosen_definition(
            definition, obj, overrides, hint=FILE_NO_DEFINITION_HINT, store=store
        )
        said = [d["message"] for d in diagnostics if d["severity"] in ("warning", "error")]
        out.say(said)
        out.add(chosen, obj, name, file_mode=True, pods=pods)
        return
    chosen = definition_for_object(store, obj, hint=FILE_NO_DEFINITION_HINT)
    out.say(resolution_notes(store, obj, chosen))
    gvk = chosen.gvk
    if gvk is not None and gvk.version != api_version.rpartition("/")[2]:
        other = f"a definition for version {gvk.version}"
        out.warnings.append(f"{kind} {api_version} is described with {chosen.name}, {other}")
    out.add(chosen, obj, name, file_mode=True, pods=pods)


FILE_NO_DEFINITION_HINT = (
    '"kli definitions" lists the types Karta covers; "kli scaffold --crd CRD.yaml" drafts a '
    "definition, then put it in $KARTA_DEFINITIONS (default ~/.karta/definitions) or apply it "
    "to the cluster"
)


def _envelope(gvk: str) -> dict[str, str]:
    return {
        "error": "no_definition_for_type",
        "gvk": gvk,
        "message": NO_DEFINITION_MESSAGE,
        "hint": NO_DEFINITION_HINT,
    }
