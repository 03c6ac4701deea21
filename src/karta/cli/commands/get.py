"""``kli get (TYPE [NAME...] | TYPE/NAME... | --all-types)``: live workloads as rows (karta-format.md
17.4, with kubectl's conventions: README "kubectl conventions").

Lists one type (resolved as 17.4 says, see :func:`karta.cli.lookup.resolve_type`), reads the
named workloads (of one TYPE, or ``TYPE/NAME`` of several; a missing one is an error after the
rest are printed, exit 3) or, with
``--all-types``, every GroupKind a definition covers at its most stable served version
(:func:`karta.kube.covered_types`), keeping only top-level objects (none of their controllers is
of a covered kind). Each object becomes a row (:class:`karta.report.WorkloadSummary`, the table in
:mod:`karta.cli.views.get`); ``--phase`` keeps rows with any listed phase; rows are sorted newest
first, then by Kind and name. Pages are fetched in background threads (:func:`karta.kube.list_many`)
while the objects already received are resolved, so extraction overlaps the API server's work.
``-w`` then prints a row per change until Ctrl-C or ``--watch-timeout``
(:class:`karta.kube.MergedWatch`). ``--sort-by`` reorders the rows by a field of the objects
``-o json`` prints; ``-o name|jsonpath=|custom-columns=`` and ``--no-headers`` print them as
kubectl would (:mod:`karta.cli.printing`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from karta import kube, report
from karta.cli import printing
from karta.cli.cluster import cluster_failure, connect
from karta.cli.commands import short_help
from karta.cli.completion import complete_types
from karta.cli.config import load_config, resolve_output
from karta.cli.errors import CliError, UsageError, format_error
from karta.cli.lookup import not_found, not_installed, open_store, parse_targets, resolve_type
from karta.cli.options import connection_options, list_options, output_options
from karta.cli.output import dump_json, dump_yaml, emit, warn
from karta.cli.progress import Progress
from karta.cli.views.get import Table
from karta.cli.views.table import fit_width
from karta.errors import ApiError, ClusterError, KartaError, KubeConfigError

if TYPE_CHECKING:
    from karta.definitions import DefinitionStore, StoredDefinition
    from karta.jsonpath import Path
    from karta.kube import ConfigOverrides, KubeClient, ResourceType, TopLevel
    from karta.report import Summarizer, WorkloadSummary

FORMATS = ("table", "wide", "json", "yaml")


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
@connection_options
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
) -> None:
    """List workloads of TYPE (or of every covered type) with their phase, GPUs and components.

    TYPE is what kubectl takes (plural, singular, short name, resource.group) or a definition's
    Kind; several NAMEs (or TYPE/NAME pairs) read those workloads. Columns: [NAMESPACE] NAME
    [TYPE] PHASE GPU COMPONENTS AGE [ORIGIN]; NAMESPACE appears with -A, TYPE with --all-types,
    ORIGIN with -o wide. Nothing is cut unless stdout is a terminal (and -o wide never cuts).
    -o json|yaml prints {"items": [...], "count": N}, or the row alone for one named workload;
    -o name, -o jsonpath=TEMPLATE and -o custom-columns=NAME:.path,... work on those objects, as
    does --sort-by=.path. Exit codes: 3 workload (or its type) not found, 4 no Karta definition
    covers TYPE.
    """

    request = _parse_args(args, all_types=all_types)
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
    run = Run(
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
    )
    try:
        run.execute(watch=watch, deadline=deadline)
    except CliError:
        run.flush_warnings()  # what went wrong with the definitions may explain the error
        raise
    finally:
        run.close()


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

    def flush_warnings(self) -> None:
        for warning in self.warnings:
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
        self.client = connect(self.overrides)
        self.store = open_store(client=self.client)
        self.warnings.extend(self.store.warnings)
        self.builder = report.Summarizer(gpu_resources=self.gpu_resources)
        self._covered_kinds()
        if self.request.all_types:
            self._plan_all_types()
        elif not self._plan_types():
            self._finish([], watch=False, deadline=None)
            return
        if self.request.named:
            self._get_named(watch=watch, deadline=deadline)
            return
        views, versions = self._list_all()
        self._finish(report.sort_summaries(views), watch=watch, deadline=deadline, versions=versions)

    def _covered_kinds(self) -> None:
        assert self.store is not None
        groups: dict[str, set[str]] = {}
        for d in self.store.visible():
            if d.gvk is not None:
                groups.setdefault(d.gvk.kind, set()).add(d.gvk.group)
        self.shared_kinds = {kind for kind, gs in groups.items() if len(gs) > 1}

    def _plan_types(self) -> bool:
        """The targets of the TYPEs given; False when the one TYPE listed is not installed (a
        warning). A type of named workloads that is not installed exits 3."""
        assert self.client is not None and self.store is not None
        for token, names in self.request.types:
            resolved = resolve_type(token, client=self.client, store=self.store)
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
        self.targets.extend(Target(c.resource, c.definition) for c in covered)

    # -- named workloads -----------------------------------------------------------------------
    def _get_named(self, *, watch: bool, deadline: float | None) -> None:
        """Every NAME asked for, in order; the missing ones are errors after the rest is printed
        (kubectl's way; exit 3)."""
        assert self.client is not None and self.builder is not None
        views: list[WorkloadSummary] = []
        versions: list[str] = []
        missing: list[CliError] = []
        for target in self.targets:
            rv = ""
            for name in target.names:
                obj = self._read(target, name, missing)
                if obj is None:
                    continue
                try:
                    view = self.builder.summary(obj, target.definition)
                except KartaError as exc:
                    raise CliError(f"could not resolve {target.resource.kind}/{name}: {exc}") from None
                if report.has_phase(view, self.phases):
                    views.append(view)
                rv = max(rv, str((obj.get("metadata") or {}).get("resourceVersion") or ""), key=_rv_key)
            versions.append(rv)
        self._finish(
            views, watch=watch and not missing, deadline=deadline, versions=versions, empty_note=not missing
        )
        if missing:
            for error in missing[:-1]:
                sys.stderr.write(format_error(error, hint=False))
            raise missing[-1]

    def _read(self, target: Target, name: str, missing: list[CliError]) -> dict[str, Any] | None:
        assert self.client is not None
        try:
            return self.client.get(target.resource, name, namespace=self.namespace)
        except ApiError as exc:
            if exc.status == 404:
                namespace = self.namespace or self.client.namespace
                missing.append(not_found(target.resource, name, namespace=namespace))
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
        with Progress(label) as progress:
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
                        continue
                    raise cluster_failure(
                        error, client=self.client, doing=f"listing {target.resource.group_resource}"
                    ) from None
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
        return [v for per_target in views for v in per_target] + top, versions

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
        assert self.builder is not None
        try:
            return self.builder.summary(obj, target.definition)
        except KartaError as exc:
            sink = self.warnings if said is None else said
            sink.append(f"could not resolve {target.resource.kind}/{_name(obj)}: {exc}")
            return None

    # -- output -------------------------------------------------------------------------------
    def _table(self) -> Table:
        colour = self.fmt in ("table", "wide") and _colour_allowed()
        return Table(
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
        single = self.request.single
        table = self._table() if self.fmt in ("table", "wide") else None
        data: Any = views[0] if single and views else {"items": views, "count": len(views)}
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
        return self._view(obj, target)


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
