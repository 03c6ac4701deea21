"""``kli get (TYPE [NAME...] | TYPE/NAME... | --all-types)``: live workloads as rows
(docs/spec/format.md#kli-get, with kubectl's conventions: docs/reference/kubectl-conventions.md).

Lists one type (resolved as 17.4 says, see :func:`karta.cli.lookup.resolve_type`), reads the
named workloads (of one TYPE, or ``TYPE/NAME`` of several; a missing one is an error after the
rest are printed, exit 3) or, with
``--all-types``, every GroupKind a definition covers at its most stable served version
(:func:`karta.kube.covered_types`), keeping only top-level objects (none of their controllers is
of a covered kind). Each object becomes a row (:class:`karta.report.WorkloadSummary`, the table in
:mod:`karta.cli.views.get`); ``--phase`` keeps rows with any listed phase; rows are sorted newest
first, then by Kind and name. Pages are fetched in background threads (:func:`karta.kube.list_many`)
while the objects already received are resolved, so extraction overlaps the API server's work.
Where the output shows the gang state (``-o wide``'s GANG column, the ``gang`` field of every other
format but ``-o name``) and some row's definition has gang instructions, the pods of those rows
are read once per namespace (:func:`karta.kube.find_pods_many`) and each gets its gang state
(:func:`karta.report.gang_report`). When some row carries Kueue's queue label
(``kueue.x-k8s.io/queue-name``), the Kueue Workloads are listed once per namespace listed
(:func:`karta.kube.kueue_workloads_in`), matched by job uid, and those rows get a QUEUE column and a
``queue`` field (:func:`karta.report.queue_detail`; ``?``/``Unknown`` with a warning when the list
fails); not under ``-w``, whose rows follow workload events only. Where the gang state is shown
(``-o wide``, json, yaml), a pending Workload's position comes too (``team:Pending#3``, the
``queue.position`` field): each LocalQueue's pending list read once from Kueue's visibility API
(:func:`karta.kube.kueue_pending`, at most :data:`MAX_POSITION_QUEUES` LocalQueues; not served
or refused: a warning, and no position). ``-w`` then prints a row per
change until Ctrl-C or ``--watch-timeout``
(:class:`karta.kube.MergedWatch`). ``--sort-by`` reorders the rows by a field of the objects
``-o json`` prints; ``-o name|jsonpath=|custom-columns=`` and ``--no-headers`` print them as
kubectl would (:mod:`karta.cli.printing`). With ``--all-types``, a type the cluster refuses to list
is skipped with a warning (and not watched); when every one is refused the command fails (exit 1),
as kubectl does, instead of reporting that no workloads were found.

Several contexts (``--context A --context B``, ``--all-contexts``; :func:`_get_several`): one
:class:`Run` per cluster collects its rows in a thread of :func:`karta.kube.per_cluster`, with its
own client, definitions and warnings (prefixed with the context); the rows are printed together
with a CLUSTER column (a ``cluster`` field in -o json|yaml). A cluster that fails is a warning;
none listed is an error.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from karta import kube, report
from karta.cli import exitcodes, printing
from karta.cli.cluster import NO_CLUSTER_HINT, cluster_failure, connect
from karta.cli.commands import short_help
from karta.cli.completion import complete_types
from karta.cli.config import load_config, resolve_output
from karta.cli.errors import CliError, UsageError, format_error
from karta.cli.lookup import (
    live_evaluator,
    not_found,
    not_installed,
    open_store,
    parse_targets,
    resolve_type,
    unsaid,
)
from karta.cli.options import list_options, multi_cluster_options, output_options
from karta.cli.output import dump_json, dump_yaml, emit, warn
from karta.cli.progress import Progress
from karta.cli.views.get import Table
from karta.cli.views.table import fit_width
from karta.errors import ApiError, ClusterError, KartaError, KubeConfigError, NoKubeconfigError
from karta.gang import gang_format

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore, StoredDefinition
    from karta.jq import Evaluator
    from karta.jsonpath import Path
    from karta.kube import ConfigOverrides, KubeClient, ResourceType, TopLevel
    from karta.report import Summarizer, WorkloadSummary

FORMATS = ("table", "wide", "json", "yaml")
# LocalQueues whose pending lists one 'kli get' reads for positions, at most (one read each).
MAX_POSITION_QUEUES = 20


@click.command("get", short_help=short_help("get"))
@click.argument(
    "args", nargs=-1, metavar="(TYPE [NAME...] | TYPE/NAME... | --all-types)", shell_complete=complete_types
)
@click.option("--all-types", is_flag=True, help="List every workload type a definition covers.")
@click.option(
    "--phase",
    "phases",
    multiple=True,
    metavar="PHASE[,PHASE]",
    help="Only rows with one of these phases (repeatable, comma-separated).",
)
@click.option("-l", "--selector", metavar="SELECTOR", help="Label selector on the workloads (not with NAME).")
@click.option(
    "--chunk-size",
    type=int,
    default=500,
    show_default=True,
    help="Objects per list request (0 = no paging).",
)
@click.option("-A", "--all-namespaces", is_flag=True, help="List workloads in every namespace.")
@click.option("-w", "--watch", is_flag=True, help="After listing, print a row whenever a workload changes.")
@click.option(
    "--watch-timeout",
    metavar="DURATION",
    help="Stop watching after this long (seconds or e.g. 5m; default: until Ctrl-C).",
)
@output_options(*FORMATS, objects=True)
@list_options
@multi_cluster_options
def get(
    args: tuple[str, ...],
    all_types: bool,
    phases: tuple[str, ...],
    selector: str | None,
    chunk_size: int,
    all_namespaces: bool,
    watch: bool,
    watch_timeout: str | None,
    output: str | None,
    config_file: str | None,
    no_headers: bool,
    sort_by: str | None,
    overrides: ConfigOverrides,
    contexts: tuple[str, ...],
    all_contexts: bool,
) -> None:
    """List workloads of TYPE (or of every covered type) with their phase, GPUs and components.

    TYPE is what kubectl takes (plural, singular, short name, resource.group) or a definition's
    Kind; several NAMEs (or TYPE/NAME pairs) read those workloads. Columns: [NAMESPACE] NAME
    [TYPE] PHASE GPU COMPONENTS [QUEUE] AGE [GANG ORIGIN]; NAMESPACE appears with -A, TYPE with
    --all-types, GANG and ORIGIN with -o wide. Nothing is cut unless stdout is a terminal (and
    -o wide never cuts).
    -o json|yaml prints {"items": [...], "count": N}, or the row alone for one named workload;
    -o name, -o jsonpath=TEMPLATE and -o custom-columns=NAME:.path,... work on those objects, as
    does --sort-by=.path. With --all-types a type you may not list is skipped with a warning; if
    every one is refused, nothing could be listed and kli exits 1. Exit codes: 1 a list refused
    (every list, with --all-types), 3 workload (or its type) not found, 4 no Karta definition
    covers TYPE.

    GANG (a "gang" field in -o json|yaml) is the gang state of a workload whose definition has
    gang instructions (<none> and no field without): the pods bound to a node against the minimum
    of its gangs, a gang with sub-groups counting every sub-group's minimum, e.g. "0/12 bound, min
    12 not met (master 0/1, worker 0/11)"; "unknown" when some of its pods could not be read. The
    pods are read (once per namespace) only then, and not for -o table or -o name.

    QUEUE (a "queue" field in -o json|yaml, as kli describe's) appears when some listed
    workload carries Kueue's kueue.x-k8s.io/queue-name label: <queue>:<state>, e.g.
    team:Admitted or team:Pending (Kueue's own state of its Workload, found by the
    kueue.x-k8s.io/job-uid label: one list per namespace). "?" when the Workloads could not be
    read (a warning says why). Not with -w: the rows follow workload changes, not Workload
    ones, so the state is left out (a warning says so); kli describe shows it.

    Several clusters: --context A --context B (or --all-contexts, every context of the
    kubeconfig) lists each in parallel, with a CLUSTER column first (the context) and a
    "cluster" field in every -o json|yaml item (plus "clusters": each context's count or
    error). A cluster that cannot be listed is a warning naming its context; kli exits 0 when
    at least one cluster was listed, else 1 (or the code every cluster failed with, e.g. 4).
    Without --request-timeout each request is limited to 30 s, so a dead cluster cannot hang.
    """

    request = _parse_args(args, all_types=all_types)
    several = all_contexts or len(contexts) > 1
    _check_several(contexts, all_contexts=all_contexts, overrides=overrides, watch=watch)
    if selector and request.named:
        raise UsageError("a label selector (-l) cannot be combined with NAME")
    if chunk_size < 0:
        raise UsageError("--chunk-size must be 0 (no paging) or a positive number")
    if all_namespaces and request.named:
        raise UsageError("a workload cannot be fetched by NAME across all namespaces (-A)")
    deadline = _watch_deadline(watch_timeout, watch=watch)
    wanted = parse_phases(phases)
    sort_path = printing.parse_sort_by(sort_by)
    config = load_config(config_file)
    fmt = resolve_output(output, config=config, allowed=FORMATS)

    def new_run(**extra: Any) -> Run:
        return Run(
            request=request,
            phases=wanted,
            selector=selector or None,
            chunk_size=chunk_size,
            all_namespaces=all_namespaces,
            fmt=fmt,
            gpu_resources=config.gpu_resources,
            overrides=overrides,
            headers=not no_headers,
            sort_by=sort_path,
            watching=watch,
            **extra,
        )

    if several:
        _get_several(new_run, contexts=contexts, all_contexts=all_contexts)
        return
    run = new_run()
    try:
        run.execute(watch=watch, deadline=deadline)
    except CliError:
        run.flush_warnings()  # what went wrong with the definitions may explain the error
        raise
    finally:
        run.close()


SINGLE_CLUSTER_FLAGS = (
    ("server", "--server"),
    ("cluster", "--cluster"),
    ("user", "--user"),
    ("token", "--token"),
    ("certificate_authority", "--certificate-authority"),
    ("client_certificate", "--client-certificate"),
    ("client_key", "--client-key"),
    ("tls_server_name", "--tls-server-name"),
)


def _check_several(
    contexts: Sequence[str], *, all_contexts: bool, overrides: ConfigOverrides, watch: bool
) -> None:
    """The usage rules of several clusters (before any connection)."""
    if all_contexts and contexts:
        raise UsageError(
            "--all-contexts lists every context: it takes no --context", hint="pass one or the other"
        )
    if not (all_contexts or len(contexts) > 1):
        return
    if watch:
        raise UsageError(
            "-w/--watch follows one cluster: not with several contexts",
            hint="list several clusters without -w, or watch each with --context NAME -w",
        )
    given = [flag for name, flag in SINGLE_CLUSTER_FLAGS if getattr(overrides, name)]
    if overrides.insecure_skip_tls_verify:
        given.append("--insecure-skip-tls-verify")
    if given:
        raise UsageError(
            f"{', '.join(given)} choose{'s' if len(given) == 1 else ''} one cluster's server or "
            "credentials: not with several contexts",
            hint="each context brings its own cluster and user from the kubeconfig",
        )


def parse_phases(values: Iterable[str]) -> frozenset[str]:
    """``--phase`` values (repeatable, comma-separated, any case) as canonical phase names."""
    canonical = {p.lower(): p for p in report.PHASES}
    out: set[str] = set()
    for value in values:
        for part in value.split(","):
            word = part.strip()
            if not word:
                continue
            if word.lower() not in canonical:
                raise UsageError(
                    f"--phase: unknown phase {word!r} (expected one of {', '.join(report.PHASES)})"
                )
            out.add(canonical[word.lower()])
    return frozenset(out)


@dataclass(frozen=True)
class Request:
    """What to get: ``types`` in the order given, each a TYPE token and the NAMEs asked for
    (none: list the type); or every covered type."""

    types: tuple[tuple[str, tuple[str, ...]], ...]
    all_types: bool = False

    @property
    def named(self) -> bool:
        return any(names for _, names in self.types)

    @property
    def single(self) -> bool:
        """Exactly one workload was named: JSON and YAML print it bare (17.4)."""
        return sum(len(names) for _, names in self.types) == 1


def _parse_args(args: Sequence[str], *, all_types: bool) -> Request:
    """``TYPE [NAME...]``, ``TYPE/NAME...`` (types may differ, as in kubectl) or ``--all-types``."""
    if all_types:
        if args:
            raise UsageError("--all-types lists every covered type: it takes no TYPE or NAME")
        return Request((), True)
    if not args:
        raise UsageError("get needs TYPE [NAME...], TYPE/NAME... or --all-types", hint="run 'kli get --help'")
    return Request(parse_targets(args, command="get"))


def _watch_deadline(text: str | None, *, watch: bool) -> float | None:
    if text is None:
        return None
    if not watch:
        raise UsageError("--watch-timeout needs -w/--watch")

    try:
        seconds = kube.parse_timeout(text)
    except KubeConfigError as exc:
        raise UsageError(f"--watch-timeout: {exc}") from None
    return None if seconds is None else time.monotonic() + seconds


# ----------------------------------------------------------------------------- several clusters


class ClusterFailed(Exception):
    """One cluster's failure (``error``), with the warnings its run had collected by then."""

    def __init__(self, error: CliError, warnings: Sequence[str]) -> None:
        super().__init__(str(error))
        self.error = error
        self.warnings = list(warnings)


def _get_several(new_run: Callable[..., Run], *, contexts: Sequence[str], all_contexts: bool) -> None:
    """``kli get`` on several contexts: each cluster listed by a :class:`Run` of its own, in
    parallel (:func:`karta.kube.per_cluster`: its own client, definitions and warnings); the rows
    merged in the order of the contexts, each with its ``cluster``. A failed cluster is a warning;
    none listed is an error (the code they all failed with, else 1); a NAME found in no cluster
    exits 3."""
    display = new_run(clusters=[])
    try:
        targets = kube.select_contexts(display.overrides, contexts=contexts, all_contexts=all_contexts)
    except NoKubeconfigError as exc:
        raise CliError(f"no cluster configured: {exc}", hint=NO_CLUSTER_HINT) from None
    except KubeConfigError as exc:
        raise CliError(
            f"cannot use the cluster configuration: {exc}",
            hint="'kubectl config get-contexts' lists the contexts; --kubeconfig chooses the file",
        ) from None

    def work(client: KubeClient) -> tuple[Run, Collected]:
        run = new_run(progress=False)
        run.client = client
        try:
            try:
                client.discovery.resources()  # an unreachable server fails here, once
            except ClusterError as exc:
                raise cluster_failure(exc, client=client) from None
            return run, run.collect()
        except CliError as exc:
            raise ClusterFailed(exc, run.warnings) from None

    rows: list[Any] = []
    failures: list[CliError] = []
    missing: dict[tuple[str, str], CliError] | None = None  # NAMEs not found in any cluster so far
    clusters = display.clusters
    assert clusters is not None
    for result in kube.per_cluster(targets, work):
        prefix = f'context "{result.context}": '
        entry: dict[str, Any] = {"name": result.context, "server": result.server}
        if result.error is not None:
            error, said = _cluster_failure(result.error)
            failures.append(error)
            display.warnings.extend(prefix + w for w in said)
            display.warnings.append(prefix + str(error))
            clusters.append({**entry, "error": str(error)})
            continue
        assert result.value is not None
        run, got = result.value
        display.warnings.extend(prefix + w for w in run.warnings)
        display.shared_kinds |= run.shared_kinds
        here = {(token, name): error for token, name, error in got.missing}
        missing = here if missing is None else {k: v for k, v in missing.items() if k in here}
        rows.extend({"cluster": result.context, **view} for view in got.views)
        clusters.append({**entry, "count": len(got.views)})
    if len(failures) == len(clusters):
        display.flush_warnings()
        codes = {error.code for error in failures}
        raise CliError(
            f"no cluster could be listed ({len(failures)} context{'s' if len(failures) != 1 else ''} "
            "failed: see the warnings)",
            code=codes.pop() if len(codes) == 1 else exitcodes.FAILURE,
            hint="check that the clusters are running and reachable, and the kubeconfig's contexts",
        )
    listed = ", ".join(c["name"] for c in clusters if "error" not in c)
    errors = [
        CliError(f"{error} (in none of the clusters listed: {listed})", code=error.code, hint=error.hint)
        for error in (missing or {}).values()
    ]
    display._finish(rows, watch=False, deadline=None, empty_note=not errors)
    if errors:
        for error in errors[:-1]:
            sys.stderr.write(format_error(error, hint=False))
        raise errors[-1]


def _cluster_failure(exc: Exception) -> tuple[CliError, list[str]]:
    """The error of one cluster (and the warnings it had by then) as :class:`CliError`; anything
    that is not a cluster or definition problem is a bug and raised again."""
    if isinstance(exc, ClusterFailed):
        return exc.error, exc.warnings
    if isinstance(exc, CliError):
        return exc, []
    if isinstance(exc, ClusterError):
        return cluster_failure(exc), []
    if isinstance(exc, KartaError):
        return CliError(str(exc)), []
    raise exc


# ------------------------------------------------------------------------------------- the run


@dataclass
class Target:
    """One type to list (or to read ``names`` of): the served resource and the definition its
    objects resolve through; ``token`` as given."""

    resource: ResourceType
    definition: StoredDefinition
    token: str = ""
    names: tuple[str, ...] = ()


@dataclass
class Collected:
    """What one cluster gave: the rows in printed order, the list resourceVersions (per target,
    for ``-w``) and the NAMEs not found there (TYPE token, NAME, the error); ``watchable`` is off
    when the one TYPE listed is not installed."""

    views: list[WorkloadSummary]
    versions: list[str] = field(default_factory=list)
    missing: list[tuple[str, str, CliError]] = field(default_factory=list)
    watchable: bool = True


@dataclass
class Run:
    request: Request
    phases: frozenset[str]
    selector: str | None
    chunk_size: int
    all_namespaces: bool
    fmt: str
    gpu_resources: tuple[str, ...]
    overrides: ConfigOverrides
    headers: bool = True
    sort_by: Path | None = None
    warnings: list[str] = field(default_factory=list)
    client: KubeClient | None = None
    store: DefinitionStore | None = None
    targets: list[Target] = field(default_factory=list)
    shared_kinds: set[str] = field(default_factory=set)
    top_level: TopLevel | None = None
    builder: Summarizer | None = None
    resource_versions: dict[int, str] = field(default_factory=dict)
    chains: kube.OwnerChains | None = None  # owner reads shared by every read of pods
    # rows whose gang state is still to be read (with their object and definition)
    references_read: dict[Any, Any] = field(default_factory=dict)  # E3: each referenced object read once
    gang_pending: list[tuple[WorkloadSummary, Mapping[str, Any], StoredDefinition, Evaluator | None]] = field(
        default_factory=list
    )
    progress: bool = True  # a progress line on a terminal (off when several clusters list at once)
    clusters: list[dict[str, Any]] | None = None  # several clusters: the CLUSTER column, -o json's
    watching: bool = False  # -w: no queue state (Workload changes are not watched)
    # rows carrying Kueue's queue label, whose queue state is still to be read (with their object)
    queue_pending: list[tuple[WorkloadSummary, Mapping[str, Any]]] = field(default_factory=list)
    queue_skipped: int = 0  # -w: rows with a queue label whose state is not shown

    def flush_warnings(self) -> None:
        for warning in unsaid(self.store, self.warnings):
            warn(warning)
        self.warnings.clear()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    @property
    def namespace(self) -> str | None:
        if self.all_namespaces:
            return None
        assert self.client is not None
        return self.client.namespace

    # -- main --------------------------------------------------------------------------------
    def execute(self, *, watch: bool, deadline: float | None) -> None:
        """One cluster: connect, collect, print (then watch); the missing NAMEs exit 3 after."""
        self.client = connect(self.overrides)
        got = self.collect()
        self._finish(
            got.views,
            watch=watch and got.watchable and not got.missing,
            deadline=deadline,
            versions=got.versions,
            empty_note=not got.missing,
        )
        if got.missing:
            for _, _, error in got.missing[:-1]:
                sys.stderr.write(format_error(error, hint=False))
            raise got.missing[-1][2]

    def collect(self) -> Collected:
        """The rows of the request on :attr:`client` (in their printed order), and the warnings
        in :attr:`warnings`; the cluster's failures raise :class:`CliError`."""
        assert self.client is not None
        self.store = open_store(client=self.client)
        self.warnings.extend(self.store.warnings)
        self.builder = report.Summarizer(gpu_resources=self.gpu_resources)
        self._covered_kinds()
        if self.request.all_types:
            self._plan_all_types()
        elif not self._plan_types():
            return Collected([], watchable=False)
        if self.request.named:
            got = self._get_named()
            self._read_gangs()
            self._read_queues()
            return got
        views, versions = self._list_all()
        self._read_gangs()
        self._read_queues()
        return Collected(report.sort_summaries(views), versions)

    def _covered_kinds(self) -> None:
        assert self.store is not None
        groups: dict[str, set[str]] = {}
        for gvk in self.store.gvks():
            groups.setdefault(gvk.kind, set()).add(gvk.group)
        self.shared_kinds = {kind for kind, gs in groups.items() if len(gs) > 1}

    def _plan_types(self) -> bool:
        """The targets of the TYPEs given; False when the one TYPE listed is not installed (a
        warning). A type of named workloads that is not installed exits 3."""
        assert self.client is not None and self.store is not None
        for token, names in self.request.types:
            resolved = resolve_type(token, client=self.client, store=self.store)
            self.warnings.extend(resolved.notes)  # duplicates ignored, invalid definitions passed over
            if resolved.resource is None:
                error = not_installed(resolved, client=self.client, token=token)
                if names:
                    raise error
                self.warnings.append(str(error))
                return False
            self.targets.append(Target(resolved.resource, resolved.definition, token, names))
        return True

    def _plan_all_types(self) -> None:
        """Every covered GroupKind once, at its most stable served version (17.4)."""
        assert self.client is not None and self.store is not None
        try:
            covered, skipped = kube.covered_types(self.client, self.store)
        except ClusterError as exc:
            raise cluster_failure(exc, client=self.client, doing="API discovery") from None
        self.warnings.extend(skipped)
        self.warnings.extend(note for c in covered for note in c.notes)
        self.targets.extend(Target(c.resource, c.definition) for c in covered)

    # -- named workloads -----------------------------------------------------------------------
    def _get_named(self) -> Collected:
        """Every NAME asked for, in order; the missing ones are errors after the rest is printed
        (kubectl's way; exit 3)."""
        assert self.client is not None and self.builder is not None
        views: list[WorkloadSummary] = []
        versions: list[str] = []
        missing: list[tuple[str, str, CliError]] = []
        for target in self.targets:
            rv = ""
            for name in target.names:
                obj = self._read(target, name)
                if obj is None:
                    namespace = self.namespace or self.client.namespace
                    error = not_found(target.resource, name, namespace=namespace)
                    missing.append((target.token, name, error))
                    continue
                try:
                    view = self._summary(obj, target)
                except KartaError as exc:
                    raise CliError(f"could not resolve {target.resource.kind}/{name}: {exc}") from None
                if report.has_phase(view, self.phases):
                    views.append(view)
                rv = max(rv, str((obj.get("metadata") or {}).get("resourceVersion") or ""), key=_rv_key)
            versions.append(rv)
        return Collected(views, versions, missing)

    def _read(self, target: Target, name: str) -> dict[str, Any] | None:
        """The object, or None when it does not exist (404)."""
        assert self.client is not None
        try:
            return self.client.get(target.resource, name, namespace=self.namespace)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise cluster_failure(
                exc, client=self.client, doing=f"reading {target.resource.kind}/{name}"
            ) from None
        except ClusterError as exc:
            raise cluster_failure(
                exc, client=self.client, doing=f"reading {target.resource.kind}/{name}"
            ) from None

    # -- listing ------------------------------------------------------------------------------
    def _list_all(self) -> tuple[list[WorkloadSummary], list[str]]:
        """Every target listed (in background threads) and resolved; the list resourceVersions."""
        assert self.client is not None
        # per target (the lists run concurrently; reported in target order): views, objects that
        # need an owner walk (all types), warnings
        views: list[list[WorkloadSummary]] = [[] for _ in self.targets]
        pending: list[list[dict[str, Any]]] = [[] for _ in self.targets]
        said: list[list[str]] = [[] for _ in self.targets]
        versions = [""] * len(self.targets)
        forbidden: set[int] = set()  # targets the cluster refused to list (--all-types)
        listed: set[int] = set()  # targets with a page received
        label = "listing " + (
            "every covered type" if self.request.all_types else self.targets[0].resource.group_resource
        )
        pages = kube.list_many(
            self.client,
            [t.resource for t in self.targets],
            namespace=self.namespace,
            label_selector=self.selector,
            chunk_size=self.chunk_size,
        )
        with Progress(label, enabled=None if self.progress else False) as progress:
            for page in pages:
                index = page.index
                target = self.targets[index]
                if isinstance(page, kube.ListFailed):
                    error = page.error
                    if not isinstance(error, ClusterError):
                        raise error
                    if not self.request.all_types:
                        doing = f"listing {target.resource.group_resource}"
                        raise cluster_failure(error, client=self.client, doing=doing) from None
                    if isinstance(error, ApiError) and error.status == 404:
                        continue  # removed since discovery: absent kinds are skipped silently
                    if isinstance(error, ApiError) and error.status in (401, 403):
                        said[index].append(
                            f"skipping {target.resource.group_resource}: not allowed to list them ({error})"
                        )
                        forbidden.add(index)
                        continue
                    raise cluster_failure(
                        error, client=self.client, doing=f"listing {target.resource.group_resource}"
                    ) from None
                listed.add(index)
                if page.restarted:  # the complete list again, after a 410: it replaces the pages before
                    views[index], pending[index], said[index] = [], [], []
                    versions[index] = page.resource_version
                versions[index] = versions[index] or page.resource_version
                for item in page.items:
                    progress.add(1)
                    if self.request.all_types:
                        decided = self._top_level().by_reference(item)
                        if decided is None:
                            pending[index].append(item)
                            continue
                        if not decided:
                            continue
                    view = self._view(item, target, said[index])
                    if view is not None and report.has_phase(view, self.phases):
                        views[index].append(view)
        walk = [(index, obj) for index, objs in enumerate(pending) for obj in objs]
        top = self._top_level_views(walk, said) if walk else []
        for messages in said:
            self.warnings.extend(messages)
        if forbidden and not listed:
            raise self._nothing_listed(len(forbidden))
        if forbidden:  # not watched either: the watch would be refused as the list was
            kept = [i for i in range(len(self.targets)) if i not in forbidden]
            self.targets = [self.targets[i] for i in kept]
            versions = [versions[i] for i in kept]
        return [v for per_target in views for v in per_target] + top, versions

    def _nothing_listed(self, refused: int) -> CliError:
        """Every list of ``--all-types`` was refused: an error (as kubectl's), not "No workloads"."""
        where = "in any namespace" if self.namespace is None else f"in namespace {self.namespace}"
        hint = (
            'ask a cluster administrator for a role that can list them ("kli rbac DEFINITION..." prints one)'
        )
        if self.namespace is None:
            hint += "; a namespace's Role may allow them there: -n NAMESPACE instead of -A"
        return CliError(
            f"not allowed to list any workload type {where} "
            f"({refused} type{'s' if refused != 1 else ''} forbidden)",
            code=exitcodes.FAILURE,
            hint=hint,
        )

    def _top_level_views(
        self, pending: list[tuple[int, dict[str, Any]]], said: list[list[str]]
    ) -> list[WorkloadSummary]:
        """Views of the objects whose owner chains must be walked: those no covered kind owns."""
        checked = self._top_level().walk([obj for _, obj in pending])
        out: list[WorkloadSummary] = []
        for (index, obj), (top, error) in zip(pending, checked, strict=True):
            target = self.targets[index]
            if not top:
                continue
            if error:
                said[index].append(
                    f"could not read the owners of {target.resource.kind}/{_name(obj)} ({error}); "
                    "listing it as a top-level workload"
                )
            view = self._view(obj, target, said[index])
            if view is not None and report.has_phase(view, self.phases):
                out.append(view)
        return out

    def _top_level(self) -> TopLevel:
        assert self.client is not None and self.store is not None
        if self.top_level is None:
            self.top_level = kube.TopLevel.of(self.client, self.store)
        return self.top_level

    def _view(
        self, obj: Mapping[str, Any], target: Target, said: list[str] | None = None
    ) -> WorkloadSummary | None:
        try:
            return self._summary(obj, target)
        except KartaError as exc:
            sink = self.warnings if said is None else said
            sink.append(f"could not resolve {target.resource.kind}/{_name(obj)}: {exc}")
            return None

    @property
    def shows_gang(self) -> bool:
        """The output shows the gang state: ``-o wide`` and every format that prints the rows'
        fields (json, yaml, jsonpath, custom-columns), not ``-o table`` or ``-o name``."""
        return self.fmt not in ("table", "name")

    @property
    def shows_position(self) -> bool:
        """The output shows the position of a pending Kueue Workload (Kueue's visibility API, one
        read per LocalQueue): where it shows the gang state, not in the narrow default table."""
        return self.shows_gang

    def _summary(self, obj: Mapping[str, Any], target: Target) -> WorkloadSummary:
        """The row of ``obj``; when the output shows the gang state and the definition has gang
        instructions, the row is kept for :meth:`_read_gangs`, which adds ``gang`` (it needs the
        pods)."""
        assert self.builder is not None
        evaluator = None
        if target.definition.karta.spec.structure_definition.references:
            assert self.client is not None
            evaluator, unread = live_evaluator(
                self.client,
                target.definition,
                dict(obj),
                obj_name=f"{target.resource.kind}/{_name(obj)}",
                memo=None if self.watching else self.references_read,  # -w: read them fresh
            )
            self.warnings.extend(w for w in unread if w not in self.warnings)
        view = self.builder.summary(obj, target.definition, evaluator=evaluator)
        if self.shows_gang and gang_format(target.definition.karta) is not None:
            self.gang_pending.append((view, obj, target.definition, evaluator))
        if report.queue_name(obj) is not None:
            if self.watching:
                self.queue_skipped += 1
            else:
                self.queue_pending.append((view, obj))
        return view

    def _read_queues(self) -> None:
        """The Kueue queue state of the rows :meth:`_summary` kept: the Workloads listed once per
        namespace listed (every namespace at once with -A), matched by job uid; a failed list
        makes the state of that namespace's rows unknown, with a warning saying why."""
        if self.queue_skipped and self.watching:
            self.warnings.append(
                f"{self.queue_skipped} workload{'s carry' if self.queue_skipped != 1 else ' carries'} "
                "a Kueue queue label: no QUEUE column with -w (Workload changes are not watched); "
                "'kli get' without -w or 'kli describe' shows the queue state"
            )
            self.queue_skipped = 0
        if not self.queue_pending:
            return
        assert self.client is not None
        pending, self.queue_pending = self.queue_pending, []
        by_namespace: dict[str | None, list[tuple[WorkloadSummary, Mapping[str, Any]]]] = {}
        for view, obj in pending:
            where = None if self.all_namespaces else str(view.get("namespace") or "") or None
            by_namespace.setdefault(where, []).append((view, obj))
        # rows whose Workload is pending, by LocalQueue (their positions: -o wide, json, yaml)
        waiting: dict[tuple[str, str], list[tuple[WorkloadSummary, Mapping[str, Any], list[Any]]]] = {}
        for namespace, rows in by_namespace.items():
            read = kube.kueue_workloads_in(self.client, namespace)
            self.warnings.extend(w for w in read.warnings if w not in self.warnings)
            by_uid = read.by_job_uid()
            for view, obj in rows:
                detail: report.QueueDetail | None
                if read.failure is not None:
                    detail = report.unknown_queue(obj, f"cannot {read.failure.what} ({read.failure.reason})")
                else:
                    uid = str((obj.get("metadata") or {}).get("uid") or "")
                    workloads = by_uid.get(uid, [])
                    detail = report.queue_detail(obj, workloads)
                    query = report.pending_query(obj, detail) if self.shows_position else None
                    if query is not None:
                        key = (query.namespace, query.local_queue)
                        waiting.setdefault(key, []).append((view, obj, workloads))
                if detail is not None:
                    view["queue"] = detail.to_dict()
        for index, ((namespace, local_queue), rows_of) in enumerate(sorted(waiting.items())):
            if index >= MAX_POSITION_QUEUES:
                self.warnings.append(
                    f"positions not shown for {len(waiting) - index} LocalQueue(s): pending workloads of "
                    f"more than {MAX_POSITION_QUEUES} LocalQueues are listed ('kli describe' shows one)"
                )
                break
            listed = kube.kueue_pending(self.client, namespace, local_queue)
            if listed.unread and listed.unread not in self.warnings:
                self.warnings.append(listed.unread)
            for view, obj, workloads in rows_of:
                detail = report.queue_detail(obj, workloads, listed)
                if detail is not None:
                    view["queue"] = detail.to_dict()

    def _read_gangs(self) -> None:
        """The gang state of the rows :meth:`_summary` kept: their pods read once per namespace,
        a state that some unread pods would change shown as unknown (a warning says which)."""
        if not self.gang_pending:
            return
        assert self.client is not None
        pending, self.gang_pending = self.gang_pending, []
        if self.chains is None:
            self.chains = kube.OwnerChains(self.client)
        found = kube.find_pods_many(self.client, [obj for _, obj, _, _ in pending], chains=self.chains)
        for (view, obj, definition, evaluator), pods in zip(pending, found, strict=True):
            self.warnings.extend(w for w in pods.warnings if w not in self.warnings)
            gang = report.gang_report(
                definition, obj, pods.pods, pods_complete=pods.complete, evaluator=evaluator
            )
            if gang is not None:
                view["gang"] = gang

    # -- output -------------------------------------------------------------------------------
    def _table(self, views: Sequence[WorkloadSummary] = ()) -> Table:
        colour = self.fmt in ("table", "wide") and _colour_allowed()
        return Table(
            show_cluster=self.clusters is not None,
            show_queue=any("queue" in v for v in views),
            show_type=self.request.all_types,
            show_namespace=self.all_namespaces,
            headers=self.headers,
            wide=self.fmt == "wide",
            type_label=self._type_label,
            colour=colour,
            width=fit_width() if self.fmt == "table" else None,
        )

    def _type_label(self, view: Mapping[str, Any]) -> str:
        kind = str(view.get("kind") or "")
        group = str(view.get("apiVersion") or "").rpartition("/")[0]
        return f"{kind}.{group}" if kind in self.shared_kinds and group else kind

    def _finish(
        self,
        views: list[WorkloadSummary],
        *,
        watch: bool,
        deadline: float | None,
        versions: Sequence[str] = (),
        empty_note: bool = True,
    ) -> None:
        """Print ``views`` in the format asked for (an empty table: a note on stderr, unless
        ``empty_note`` is off because errors follow), then watch, then the warnings."""
        if self.sort_by is not None:
            views = printing.sort_items(views, self.sort_by)
        single = self.request.single and self.clusters is None
        table = self._table(views) if self.fmt in ("table", "wide") else None
        data: Any = views[0] if single and views else {"items": views, "count": len(views)}
        if self.clusters is not None and not single:
            data["clusters"] = self.clusters
        if table is not None:
            if views:
                _write(table.render(views))
            elif empty_note:
                _err(self._nothing_found())
        elif self.fmt.startswith(printing.JSONPATH):
            if views or not single:
                _write(printing.render_objects(self.fmt, views, data=data, name_of=_object_name))
        elif printing.is_object_format(self.fmt):
            if views:
                _write(self._objects(views, headers=self.headers))
            elif empty_note:
                _err(self._nothing_found())
        elif single and views:
            emit(views[0], self.fmt)
        elif not (single and watch):
            emit(data, self.fmt)
        if watch and self.targets:
            self._watch(table, versions=versions, deadline=deadline, header=bool(views))
        self.flush_warnings()

    def _objects(self, views: Sequence[WorkloadSummary], *, headers: bool) -> str:
        """``-o name`` or ``custom-columns=`` lines for ``views`` (the header when ``headers``)."""
        return printing.render_objects(self.fmt, views, data=None, name_of=_object_name, headers=headers)

    def _nothing_found(self) -> str:
        if self.clusters is not None:
            listed = sum(1 for c in self.clusters if "error" not in c)
            clusters = f"{listed} cluster{'s' if listed != 1 else ''}"
            if self.all_namespaces:
                return f"No workloads found in any namespace of {clusters}.\n"
            if self.overrides.namespace:
                return f"No workloads found in namespace {self.overrides.namespace} of {clusters}.\n"
            return f"No workloads found in {clusters} (each context's namespace).\n"
        if self.namespace is None:
            return "No workloads found in any namespace.\n"
        return f"No workloads found in namespace {self.namespace}.\n"

    # -- watch --------------------------------------------------------------------------------
    def _watch(
        self, table: Table | None, *, versions: Sequence[str], deadline: float | None, header: bool
    ) -> None:
        assert self.client is not None
        merged = kube.MergedWatch(
            self.client,
            [t.resource for t in self.targets],
            namespace=self.namespace,
            label_selector=self.selector,
            chunk_size=self.chunk_size,
            resource_versions=versions,
        )
        printed_header = header
        first_doc = True
        try:
            with merged:
                while True:
                    wait = 0.5 if deadline is None else deadline - time.monotonic()
                    if wait <= 0:
                        return
                    entry = merged.next(min(wait, 0.5))
                    if entry is None:
                        continue
                    if isinstance(entry, kube.WatchFailed):
                        if isinstance(entry.error, ClusterError):
                            raise cluster_failure(entry.error, client=self.client, doing="watching") from None
                        raise entry.error
                    index, event = entry
                    target = self.targets[index]
                    if event.type == "BOOKMARK":
                        continue
                    items = event.items if isinstance(event, kube.SyncEvent) else [event.object]
                    for obj in items:
                        view = self._watched_view(obj, target, resync=isinstance(event, kube.SyncEvent))
                        if view is None or not report.has_phase(view, self.phases):
                            continue
                        if table is not None:
                            if not printed_header:
                                _write(table.render([view]))
                                printed_header = True
                            else:
                                _write(table.line(view))
                        elif self.fmt.startswith(printing.JSONPATH):
                            _write(printing.render_objects(self.fmt, [view], data=view, name_of=_object_name))
                        elif printing.is_object_format(self.fmt):
                            _write(self._objects([view], headers=self.headers and not printed_header))
                            printed_header = True
                        elif self.fmt == "json":
                            _write(dump_json(view))
                        else:
                            _write(("" if first_doc else "---\n") + dump_yaml(view))
                        first_doc = False
        except KeyboardInterrupt:
            return

    def _watched_view(
        self, obj: Mapping[str, Any], target: Target, *, resync: bool
    ) -> WorkloadSummary | None:
        meta = obj.get("metadata") or {}
        if target.names and meta.get("name") not in target.names:
            return None
        key = hash((meta.get("namespace"), meta.get("name"), target.resource.kind, target.resource.group))
        rv = str(meta.get("resourceVersion") or "")
        if resync and self.resource_versions.get(key) == rv:
            return None
        self.resource_versions[key] = rv
        if self.request.all_types and not self._top_level().is_top_level(obj):
            return None
        view = self._view(obj, target)
        self._read_gangs()  # its pods as they are now: pods changing print no row
        return view


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "<unnamed>")


def _object_name(view: Mapping[str, Any]) -> str:
    return printing.object_name(
        str(view.get("kind") or ""), str(view.get("apiVersion") or ""), str(view["name"])
    )


def _rv_key(rv: str) -> tuple[int, str]:
    """resourceVersions compare as numbers when they are (the API server's are), else as text."""
    return (int(rv), "") if rv.isdigit() else (-1, rv)


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _err(text: str) -> None:
    sys.stderr.write(text)


def _colour_allowed() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())
