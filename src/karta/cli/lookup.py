"""Finding what a command works on: the definitions, a definition for a workload, a TYPE token, a
live workload. One place, so that every command resolves alike (issue 8: the rule itself is the
library's, :meth:`karta.definitions.DefinitionStore.definition_for`); this module maps the
library's errors to kli's exit codes and hints.

- :func:`open_store`: catalog < ``$KARTA_DEFINITIONS`` < the cluster's Kartas (17.3), read with
  the command's connection flags; without any kubeconfig catalog and user only, silently.
- :func:`definition_for_object`: the definition for a workload manifest; :func:`chosen_definition`
  the same, unless ``--definition NAME|FILE`` names one; :func:`definitions_named` every
  definition of a file, or the one of a name (:func:`is_definition_file` tells which).
- :func:`resolve_type`: a TYPE token (17.4), :func:`parse_target` ``TYPE/NAME`` or ``TYPE NAME``,
  :func:`fetch_workload` the object (not installed or not found: exit 3), :func:`read_live` all of
  it and the workload's pods, as ``describe`` and ``gang`` read a live workload.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karta import definitions, jq, kube, model, report
from karta._records import record
from karta.cli import exitcodes
from karta.cli.cluster import cluster_failure, connect
from karta.cli.errors import CliError, UsageError
from karta.cli.inputs import read_documents, read_objects, read_text
from karta.cli.output import note, warn
from karta.errors import (
    AmbiguousDefinitionError,
    ApiError,
    ClusterError,
    DefinitionError,
    InvalidDefinitionError,
    JqBudgetError,
    NoDefinitionError,
    ReferenceLimitError,
)

if TYPE_CHECKING:
    from karta.model.findings import FindingDict

__all__ = [
    "DEFINITION_OPTION_HELP",
    "FILE",
    "FORBIDDEN_HINT",
    "INVALID_HINT",
    "NO_DEFINITION_HINT",
    "PASS_DEFINITION_HINT",
    "SEE_ALL",
    "LiveRead",
    "LiveWorkload",
    "chosen_definition",
    "definition_for_object",
    "definitions_named",
    "fetch_workload",
    "is_definition_file",
    "live_evaluator",
    "load_definition",
    "named_definition",
    "no_definition_hint",
    "no_such_definition",
    "not_found",
    "not_installed",
    "open_store",
    "parse_target",
    "parse_targets",
    "read_live",
    "reference_evaluator",
    "resolution_notes",
    "resolve_type",
    "unsaid",
]

FILE = "file"  # the origin of a definition given as a file (--definition FILE)
SEE_ALL = 'Run "kli definitions" to see what is available'
PASS_DEFINITION_HINT = (
    "pass one with --definition NAME|FILE, or put it in $KARTA_DEFINITIONS "
    '(default ~/.karta/definitions); "kli definitions" lists the types Karta covers, '
    '"kli scaffold --crd CRD.yaml" drafts a definition'
)
NO_DEFINITION_HINT = (
    '"kli definitions" lists the types Karta covers; "kli scaffold --crd CRD.yaml" drafts a '
    "definition for a custom resource (apply it to the cluster or put it in $KARTA_DEFINITIONS)"
)
FORBIDDEN_HINT = (
    "ask a cluster administrator to let you list kartas.run.ai cluster-wide (a ClusterRole with "
    'verb list on resource kartas of group run.ai); meanwhile "kubectl get karta NAME -o yaml" '
    "from someone who may, saved in $KARTA_DEFINITIONS (default ~/.karta/definitions), is read "
    "instead"
)


def no_definition_hint(store: definitions.DefinitionStore, hint: str) -> str:
    """``hint`` for a type nothing covers, unless the cluster's Kartas could not be listed: then
    how to be allowed to (the error already names that as the likely cause)."""
    return FORBIDDEN_HINT if store.cluster_forbidden else hint


def unsaid(store: definitions.DefinitionStore | None, warnings: Sequence[str]) -> list[str]:
    """``warnings`` (copied from ``store.warnings`` earlier) less the one a no-definition error has
    since said (:meth:`~karta.definitions.DefinitionStore.no_definition`): one message per cause."""
    if store is None or not store.forbidden_said:
        return list(warnings)
    return [w for w in warnings if store.cluster_forbidden not in w]


INVALID_HINT = (
    '"kli definitions" marks the invalid definitions; fix or delete them ("kli validate FILE" '
    "shows every finding), or pass a valid one with --definition NAME|FILE"
)
DEFINITION_OPTION_HELP = (
    "Karta definition: a name (kli definitions) or a file (path, or - for stdin); default: resolve "
    "by the object's kind from the built-in catalog, $KARTA_DEFINITIONS and the cluster's Kartas, "
    "as every command does."
)


# --------------------------------------------------------------------------- the definitions


def open_store(
    overrides: kube.ConfigOverrides | None = None, *, client: kube.KubeClient | None = None
) -> definitions.DefinitionStore:
    """The definitions ``kli`` resolves against: catalog < ``$KARTA_DEFINITIONS`` < cluster (17.3).

    The cluster's Kartas are read through ``client``, else through a client made from
    ``overrides`` (kubectl's flags; None: the default kubeconfig). Without any kubeconfig the
    store is catalog-only, silently; every other cluster problem (CRD missing, forbidden,
    unreachable, an undecodable Karta) is one of the store's ``warnings``, which commands print
    after their main output.
    """
    warnings: list[str] = []
    own = client is None
    if client is None:
        client, warnings = kube.connect_for_definitions(overrides)
    if client is None:
        return definitions.DefinitionStore.load(cluster_warnings=warnings)
    try:
        read = kube.read_cluster_kartas(client)
    finally:
        if own:
            client.close()
    return definitions.DefinitionStore.load(
        cluster=read.kartas if read.available else None,
        cluster_warnings=[*warnings, *read.warnings],
        cluster_forbidden=read.forbidden,
    )


def definition_for_object(
    store: definitions.DefinitionStore, obj: dict[str, Any], *, hint: str
) -> definitions.StoredDefinition:
    """The definition for a workload manifest by the one rule of
    :meth:`~karta.definitions.DefinitionStore.definition_for` (exact GVK, else the most stable
    other version of its group and kind): no definition exits 4 with ``hint``, only invalid ones
    exit 1 (as an invalid ``--definition FILE`` does), several claiming it is a usage error."""
    try:
        return store.definition_for(model.GVK.of(str(obj["apiVersion"]), str(obj["kind"])))
    except InvalidDefinitionError as exc:
        raise CliError(str(exc), hint=INVALID_HINT) from None
    except NoDefinitionError as exc:
        raise CliError(str(exc), code=exitcodes.NO_DEFINITION, hint=no_definition_hint(store, hint)) from None
    except AmbiguousDefinitionError as exc:
        raise UsageError(str(exc)) from None


def load_definition(doc: model.Document, *, name: str, path: str) -> tuple[model.Karta, list[model.Finding]]:
    """One Karta document of a ``--definition`` file, loaded leniently and validated.

    Returns the definition and every finding (warnings included, but not the write-back ones:
    no command that takes --definition writes through a path); any error finding (a duplicate
    key included) refuses the file with a pointer to ``kli validate``. ``name`` is the file as
    shown, ``path`` as given.
    """
    try:
        result = model.load_karta(doc.value, strict=False, source_name=name, duplicates=doc.duplicates)
    except DefinitionError as exc:
        raise UsageError(str(exc)) from None
    findings = list(result.findings)
    if result.karta is not None:  # the commands that read definitions never write through them
        findings.extend(model.validate_karta(result.karta, write_back=False))
    errors = [f for f in findings if f.severity is model.Severity.ERROR]
    if result.karta is None or errors:
        detail = "; ".join(f.message for f in errors[:5])
        raise CliError(
            f"{name} is not a valid Karta definition: {detail}",
            hint=f"run 'kli validate {path}' to see every finding",
        )
    return result.karta, findings


def is_definition_file(ref: str) -> bool:
    """How ``--definition REF`` is read: a file when ``ref`` is ``-`` (stdin), an existing path,
    or ends in ``.yaml``/``.yml``/``.json`` or holds a ``/``; otherwise a definition name."""
    return ref == "-" or "/" in ref or ref.endswith((".yaml", ".yml", ".json")) or Path(ref).exists()


def named_definition(
    store: definitions.DefinitionStore,
    name: str,
    *,
    notes: list[str] | None = None,
    invalid_ok: bool = False,
) -> definitions.StoredDefinition:
    """The definition called ``name`` in ``store`` (overridden ones too: a name asks for that
    definition). Unknown: exit 4 with the closest names; invalid (unless ``invalid_ok``): exit 1
    with its first problem. When it is not the one its kind resolves to, ``notes`` gets a line
    saying so."""
    found = store.by_name(name)
    if found is None:
        raise no_such_definition(store, name, also=", and no such file")
    if not found.valid and not invalid_ok:
        check = (
            f"kubectl get karta {found.name} -o yaml | kli validate -"
            if found.origin == definitions.CLUSTER
            else f"kli validate {found.source}"
        )
        raise CliError(
            f"{definitions.describe_definition(found)} is not a valid Karta definition: {found.problems[0]}",
            hint=f"'{check}' shows every finding",
        )
    listing = store.listing_of(found)
    if notes is not None and listing.status != definitions.OK and listing.used is not None:
        notes.append(
            f"using {definitions.describe_definition(found)} as asked; its kind resolves to "
            f"{definitions.describe_definition(listing.used)} ({listing.text})"
        )
    return found


def no_such_definition(store: definitions.DefinitionStore, name: str, *, also: str = "") -> CliError:
    """Exit 4 for an unknown definition name, with the closest names as the hint."""
    import difflib  # only for a name that is not found

    close = difflib.get_close_matches(name, store.names(), n=3, cutoff=0.6)
    return CliError(
        f"no Karta definition named {name!r}{also}",
        code=exitcodes.NO_DEFINITION,
        hint=(f"did you mean {' or '.join(close)}? " if close else "") + SEE_ALL,
    )


def _definition_files(path: str) -> list[definitions.StoredDefinition]:
    text, name = read_text(path)
    docs = read_documents(text, name, duplicates=True)
    if not docs:
        raise UsageError(f"{name} holds no Karta definition: the file is empty")
    return [
        definitions.StoredDefinition(
            karta=load_definition(doc, name=name, path=path)[0], origin=FILE, source=name, trusted=False
        )
        for doc in docs
    ]


def definitions_named(
    ref: str, overrides: kube.ConfigOverrides | None = None, *, invalid_ok: bool = False
) -> list[definitions.StoredDefinition]:
    """Every definition in the file ``ref`` (see :func:`is_definition_file`), else the one
    named ``ref`` among the definitions :func:`open_store` sees (:func:`named_definition`)."""
    if is_definition_file(ref):
        return _definition_files(ref)
    return [named_definition(open_store(overrides), ref, invalid_ok=invalid_ok)]


def _definition_file(path: str) -> tuple[definitions.StoredDefinition, list[FindingDict]]:
    """The one definition of the file ``path``, and its findings."""
    text, name = read_text(path)
    docs = read_documents(text, name, duplicates=True)
    if len(docs) != 1:
        raise UsageError(f"{name} holds {len(docs)} YAML documents; expected exactly one Karta definition")
    karta, findings = load_definition(docs[0], name=name, path=path)
    chosen = definitions.StoredDefinition(karta=karta, origin=FILE, source=name, trusted=False)
    return chosen, [f.to_dict() for f in findings]


def chosen_definition(
    ref: str | None,
    obj: dict[str, Any],
    overrides: kube.ConfigOverrides | None,
    *,
    hint: str,
    store: definitions.DefinitionStore | None = None,
) -> tuple[definitions.StoredDefinition, list[FindingDict]]:
    """The definition a command applies to the workload ``obj``: the one ``--definition REF``
    names (a file of exactly one document, or a definition name: :func:`is_definition_file`),
    else the one the definitions every command sees resolve it to (:func:`open_store` with
    ``overrides``, :func:`definition_for_object`). Also the diagnostics to report with it: the
    file's findings, or the store's warnings and what resolving had to decide, and a warning
    when the definition is for another kind or version than the object. ``store`` (the one
    :func:`open_store` gave, for several objects) saves reading the definitions again."""
    diagnostics: list[FindingDict] = []
    if ref is not None and is_definition_file(ref):
        chosen, diagnostics = _definition_file(ref)
    else:
        store = store if store is not None else open_store(overrides)
        notes: list[str] = []
        if ref is not None:
            chosen = named_definition(store, ref, notes=notes)
        else:
            chosen = definition_for_object(store, obj, hint=hint)
            notes = resolution_notes(store, obj, chosen)
        diagnostics.extend(_warning(w) for w in [*store.warnings, *notes])
    gvk = chosen.karta.root.kind
    if gvk is not None and (gvk.api_version, gvk.kind) != (obj.get("apiVersion"), obj.get("kind")):
        diagnostics.append(
            {
                "severity": "warning",
                "message": f"definition {chosen.name} is for {gvk.kind} ({gvk.api_version}) "
                f"but the object is {obj.get('kind')} ({obj.get('apiVersion')})",
                "location": "spec.structureDefinition.rootComponent.kind",
            }
        )
    return chosen, diagnostics


def resolution_notes(
    store: definitions.DefinitionStore, obj: dict[str, Any], chosen: definitions.StoredDefinition
) -> list[str]:
    """What resolving ``obj``'s type to ``chosen`` had to decide (ignored duplicates, invalid
    definitions passed over), to print with the command's output."""
    return store.notes_for(model.GVK.of(str(obj.get("apiVersion")), str(obj.get("kind"))), chosen.gvk)


def _warning(message: str) -> FindingDict:
    return {"severity": "warning", "message": message, "location": ""}


# --------------------------------------------------------------------------- live workloads


def resolve_type(
    token: str, *, client: kube.KubeClient, store: definitions.DefinitionStore
) -> kube.ResolvedType:
    """17.4 "Type resolution" (:func:`karta.kube.resolve_type`) with kli's errors: several
    matches are a usage error (exit 2), none exits 4 (a token neither discovery nor the
    definitions know gets kubectl-like "did you mean" suggestions), only invalid ones and
    discovery trouble exit 1."""
    try:
        return kube.resolve_type(token, client=client, store=store)
    except ClusterError as exc:
        raise cluster_failure(exc, client=client, doing="API discovery") from None
    except InvalidDefinitionError as exc:
        raise CliError(str(exc), hint=INVALID_HINT) from None
    except NoDefinitionError as exc:
        message = str(exc)
        close = _close_types(token, client=client, store=store)
        if close:
            message += f"; did you mean {' or '.join(close)}?"
        hint = no_definition_hint(store, NO_DEFINITION_HINT)
        raise CliError(message, code=exitcodes.NO_DEFINITION, hint=hint) from None
    except AmbiguousDefinitionError as exc:
        raise UsageError(str(exc)) from None


def _close_types(token: str, *, client: kube.KubeClient, store: definitions.DefinitionStore) -> list[str]:
    """Type tokens close to a mistyped ``token`` (none when discovery knows it), one per type:
    among the covered types first (their served plural, singular and short names; the
    definitions' kinds and plurals), else among every served type; qualified by the group when
    ``token`` is."""
    from difflib import SequenceMatcher

    from karta.model.names import plural_guess

    try:
        if client.discovery.candidates(token):
            return []
        served = client.discovery.resources()
    except ClusterError:
        served = []
    word = token.strip().lower()
    qualified = "." in word

    def spell(names: set[str], group: str) -> set[str]:
        return {f"{n}.{group}" if qualified and group else n for n in names if n}

    covered_kinds = {d.gvk.group_kind for d in store.visible() if d.gvk is not None}
    covered: dict[model.GroupKind, set[str]] = {
        gk: spell({gk.kind.lower(), plural_guess(gk.kind)}, gk.group) for gk in covered_kinds
    }
    others: dict[model.GroupKind, set[str]] = {}
    for r in served:
        gk = model.GroupKind(r.group, r.kind)
        pool = covered if gk in covered_kinds else others
        pool.setdefault(gk, set()).update(spell({r.plural, r.singular, *r.short_names}, r.group))
    for pool in (covered, others):
        scored = []
        for spellings in pool.values():
            score, best = max((SequenceMatcher(None, word, s).ratio(), s) for s in sorted(spellings))
            if score >= 0.75:
                scored.append((-score, best))
        if scored:
            scored.sort()
            top = -scored[0][0]  # the closest, and those about as close
            close = [best for score, best in scored if -score >= top - 0.05]
            return list(dict.fromkeys(close))[:3]
    return []


def not_installed(resolved: kube.ResolvedType, *, client: kube.KubeClient, token: str) -> CliError:
    """The type of ``token`` is not served: exit 3, saying which versions of its kind the cluster
    does serve when there are any (``mpijobs.v1.kubeflow.org`` on a cluster serving v2beta1)."""
    gvk = resolved.definition.gvk
    try:
        served = [
            r for r in client.discovery.resources() if (r.group, r.kind) == (resolved.group, resolved.kind)
        ]
    except ClusterError:
        served = []
    if not served:
        return CliError(
            f"{resolved.kind} is not installed in this cluster",
            code=exitcodes.NOT_FOUND,
            hint="install its CRD first, or check --context",
        )
    asked = _asked_version(token) or (gvk.version if gvk is not None else "")
    versions = ", ".join(f"{r.api_version} ({_qualified(r)})" for r in served)
    return CliError(
        f"{resolved.kind} {model.GVK(resolved.group, asked, resolved.kind).api_version} is not served by "
        f"this cluster; it serves {versions}",
        code=exitcodes.NOT_FOUND,
        hint=f"name a served version, or just {served[0].plural} for the preferred one",
    )


def _qualified(r: kube.ResourceType) -> str:
    return f"{r.plural}.{r.version}.{r.group}" if r.group else r.plural


def _asked_version(token: str) -> str:
    """The version of a ``plural.version.group`` token (``v1`` of ``mpijobs.v1.kubeflow.org``)."""
    from karta.model.gvk import version_key

    parts = token.strip().lower().split(".")
    if len(parts) >= 3 and version_key(parts[1])[0] >= 0:
        return parts[1]
    return ""


def not_found(rtype: kube.ResourceType, name: str, *, namespace: str | None) -> CliError:
    """``<Kind> "<name>" not found in namespace "<ns>"`` (exit 3), alike for every command."""
    where = f' in namespace "{namespace}"' if rtype.namespaced and namespace else ""
    listing = f"kli get {rtype.group_resource}" + (f" -n {namespace}" if where else "")
    return CliError(
        f'{rtype.kind} "{name}" not found{where}',
        code=exitcodes.NOT_FOUND,
        hint=f"'{listing}' lists them" + ("; -n chooses another namespace" if where else ""),
    )


Targets = tuple[tuple[str, tuple[str, ...]], ...]
"""TYPE tokens in the order given, each with the NAMEs asked for (none: every object of it)."""


def parse_targets(args: Sequence[str], *, command: str) -> Targets:
    """kubectl's ``TYPE [NAME...]`` or ``TYPE/NAME...`` (the types may differ; a NAME given twice
    counts once); anything else is a usage error."""
    hint = f"run 'kli {command} --help'"
    if any("/" in arg for arg in args):
        if not all("/" in arg for arg in args):
            raise UsageError(
                f"mixed TYPE/NAME and bare words in {' '.join(args)!r}: give TYPE NAME... or TYPE/NAME...",
                hint="there is no need for a separate TYPE when the names are given as TYPE/NAME",
            )
        grouped: dict[str, list[str]] = {}
        for arg in args:
            token, _, name = arg.partition("/")
            _check_word(token, "TYPE", arg, hint)
            _check_word(name, "NAME", arg, hint)
            grouped.setdefault(token, []).append(name)
        return tuple((t, tuple(dict.fromkeys(n))) for t, n in grouped.items())
    token, *names = args
    _check_word(token, "TYPE", token, hint)
    for name in names:
        _check_word(name, "NAME", name, hint)
    return ((token, tuple(dict.fromkeys(names))),)


def _check_word(word: str, what: str, arg: str, hint: str) -> None:
    if not word:
        raise UsageError(f"missing {what} in {arg!r}", hint=hint)
    if "/" in word:
        raise UsageError(f"{what} may not contain '/': {arg!r}", hint=hint)


def parse_target(args: Sequence[str], *, command: str) -> tuple[str, str]:
    """``(TYPE, NAME)`` from ``TYPE/NAME`` or ``TYPE NAME``; anything else is a usage error."""
    hint = f"run 'kli {command} --help'"
    if len(args) == 1 and "/" in args[0]:
        token, _, name = args[0].partition("/")
    elif len(args) == 2 and "/" not in args[0]:
        token, name = args
    elif len(args) == 1:
        raise UsageError(f"kli {command} needs a NAME: {args[0]}/NAME or {args[0]} NAME", hint=hint)
    else:
        raise UsageError(f"kli {command} takes TYPE/NAME or TYPE NAME, got {' '.join(args)!r}", hint=hint)
    if not token or not name or "/" in name:
        raise UsageError(
            f"invalid TYPE/NAME {'/'.join(args) if len(args) == 1 else ' '.join(args)!r}", hint=hint
        )
    return token, name


@record
class LiveWorkload:
    """A workload read from the cluster: how its TYPE resolved, the object and its namespace."""

    resolved: kube.ResolvedType
    obj: dict[str, Any]
    namespace: str | None  # None for a cluster-scoped root

    @property
    def definition(self) -> definitions.StoredDefinition:
        return self.resolved.definition


def fetch_workload(
    *,
    client: kube.KubeClient,
    store: definitions.DefinitionStore,
    token: str,
    name: str,
    namespace: str | None,
) -> LiveWorkload:
    """Resolve ``token`` and read the object ``name`` (``namespace`` None: the client's default).

    Exit 3 when the type is not installed or the object does not exist; exit 4 when no definition
    covers the type; other cluster trouble exits 1 (see :func:`karta.cli.cluster.cluster_failure`).
    """
    resolved = resolve_type(token, client=client, store=store)
    rtype = resolved.resource
    if rtype is None:
        raise not_installed(resolved, client=client, token=token)
    ns = (namespace or client.namespace) if rtype.namespaced else None
    try:
        obj = client.get(rtype, name, namespace=ns)
    except ApiError as exc:
        if exc.status == 404:
            raise not_found(rtype, name, namespace=ns) from None
        raise cluster_failure(exc, client=client, doing=f"reading {rtype.kind}/{name}") from None
    except ClusterError as exc:
        raise cluster_failure(exc, client=client, doing=f"reading {rtype.kind}/{name}") from None
    return LiveWorkload(resolved=resolved, obj=obj, namespace=ns)


@record
class LiveRead:
    """A live workload, its pods and what to warn about (store warnings, pods, owners or Events
    not readable). ``pods_complete`` False: ``pods`` are only some of the workload's (the pod
    list or some owners could not be read). ``events``: read only when asked for."""

    workload: LiveWorkload
    name: str  # as given on the command line
    pods: list[dict[str, Any]]
    warnings: list[str]
    pods_complete: bool = True
    events: list[dict[str, Any]] = field(default_factory=list)
    events_read: bool = True  # False: the Events read failed (those in ``events`` are some)

    @property
    def label(self) -> str:
        """``Kind/name``, for messages."""
        return f"{self.workload.obj.get('kind')}/{self.name}"


def read_live(
    args: Sequence[str],
    *,
    command: str,
    overrides: kube.ConfigOverrides,
    on_no_definition: Callable[[kube.KubeClient, str], None] | None = None,
    events: bool = False,
) -> LiveRead:
    """``TYPE/NAME`` (or ``TYPE NAME``) read from the cluster of ``overrides`` with its pods (owner
    chains, 17.5) and, with ``events``, the Events of the workload and of its unhealthy pods
    (:func:`karta.report.event_subjects`). What could not be read (the pod list, owners, Events)
    is a warning. When resolution fails the store's warnings are printed at once (they may
    explain it) and, for a type no definition covers, ``on_no_definition(client, token)`` runs
    before the error is raised."""
    token, name = parse_target(args, command=command)
    client = connect(overrides)
    with client:
        store = open_store(client=client)
        try:
            workload = fetch_workload(
                client=client, store=store, token=token, name=name, namespace=overrides.namespace
            )
        except CliError as exc:
            for warning in store.warnings:
                warn(warning)
            if on_no_definition is not None and exc.code == exitcodes.NO_DEFINITION:
                on_no_definition(client, token)
            raise
        found = kube.find_pods(client, workload.obj)
        warnings = [*store.warnings, *workload.resolved.notes, *found.warnings]
        got = kube.EventsRead()
        if events:
            namespace = str((workload.obj.get("metadata") or {}).get("namespace") or "") or None
            got = kube.object_events(client, namespace, report.event_subjects(workload.obj, found.pods))
            warnings.extend(got.warnings)
    return LiveRead(
        workload,
        name,
        found.pods,
        warnings,
        pods_complete=found.complete,
        events=got.events,
        events_read=got.failure is None,
    )


def reference_evaluator(
    chosen: definitions.StoredDefinition, obj: dict[str, Any], ref_files: Sequence[str], *, obj_name: str = ""
) -> jq.Evaluator:
    """The evaluator of ``chosen`` for ``obj`` with its references (extension E3) bound to the
    objects of ``ref_files`` (``kli -f --ref``); the definition's own evaluator when it has none
    (``--ref`` is then useless: a warning). A reference nothing matched is null (``[]``) with a
    note; an error reading one (a failing name expression) is a warning; a limit is an error."""
    from karta import references

    base = definitions.evaluator_for(chosen)
    if not chosen.karta.spec.structure_definition.references:
        if ref_files:
            warn(f"--ref is not used: definition {chosen.name} has no references")
        return base
    objects = [o for path in ref_files for o in read_objects(path, what="referenced object")]
    where = f"{obj_name}: " if obj_name else ""
    try:
        resolution = references.resolve(chosen.karta, obj, base, objects)
    except (ReferenceLimitError, JqBudgetError) as exc:
        raise CliError(f"{where}{exc}") from None
    for problem in resolution.problems:
        (note if problem.kind == "note" else warn)(f"{where}{problem.message}")
    return resolution.evaluator(base)


def live_evaluator(
    client: kube.KubeClient,
    chosen: definitions.StoredDefinition,
    obj: dict[str, Any],
    *,
    obj_name: str = "",
    memo: dict[Any, Any] | None = None,
) -> tuple[jq.Evaluator, list[str]]:
    """The evaluator of ``chosen`` for the live ``obj`` with its references (extension E3) read
    through the API (:func:`karta.kube.resolve_live`) and what to warn about: a forbidden or
    failing read names the reference and its kind (the reference is bound null / [], never
    silently); a reference that found nothing is a note on stderr. A limit is an error. The
    definition's own evaluator, and no read, when it has no references. ``memo``: the answers
    this run already read (:func:`karta.kube.fetch_references`)."""
    base = definitions.evaluator_for(chosen)
    if not chosen.karta.spec.structure_definition.references:
        return base, []
    where = f"{obj_name}: " if obj_name else ""
    try:
        resolution = kube.resolve_live(client, chosen.karta, obj, base, memo=memo)
    except (ReferenceLimitError, JqBudgetError) as exc:
        raise CliError(f"{where}{exc}") from None
    warnings: list[str] = []
    for problem in resolution.problems:
        if problem.kind == "note":
            note(f"{where}{problem.message}")
        else:
            warnings.append(f"{where}{problem.message}")
    return resolution.evaluator(base), warnings
