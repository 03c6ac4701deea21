"""The merged set of Karta definitions the tools resolve workloads against (R13, section 17.3).

Three origins, in increasing precedence per root GVK: ``catalog`` (built-in, trusted: expressions
run in-process), ``user`` (files in ``$KARTA_DEFINITIONS``, default ``~/.karta/definitions``) and
``cluster`` (``kartas.run.ai`` objects, handed in by the caller; this module never talks to a
cluster). Definitions without a usable root GVK (no version or kind) are kept as "unmapped" and
listed last.

Which definition a root GVK uses (:meth:`DefinitionStore.resolution`), as a controller would
choose it:

- an invalid definition (load or validator errors; built-ins are valid by their tests) is never
  used: the next valid one is, from the same origin or a lower one, and a note says so. Only
  when every definition of the GVK is invalid does resolving it fail
  (:class:`~karta.errors.InvalidDefinitionError`, naming the first problem);
- the highest origin with a valid definition wins; the definitions below it are *overridden*;
- several valid cluster Kartas for one GVK are not an error: the one with condition
  ``Ready=True`` (karta-controller's, for the current generation) is used, then the oldest
  (``creationTimestamp``), then the first by name; the others are *ignored* as duplicates, with a
  one-line note naming the one used and why;
- several valid user definitions (the user's own files) for one GVK stay a collision: a warning,
  and resolving that GVK is ambiguous.

Validation is lazy: a GVK's definitions are validated when it is first resolved (or listed), so a
command that touches one kind pays for one kind's definitions.

Resolution has one rule, used by every consumer (``kli`` offline and live, the controller):
:meth:`DefinitionStore.definition_for` takes the exact root GVK, else the definitions of the same
group and kind at other versions, narrowed to the versions the cluster serves when that is known,
and of those the most stable version. :meth:`DefinitionStore.definition_for_token` is 17.4's
fallback for a TYPE token that API discovery cannot map (a kind, or a guessed plural, optionally
qualified by group or version). :meth:`DefinitionStore.notes_for` says what the resolution of a
GVK had to decide (ignored duplicates, invalid definitions passed over).

Files that fail to load become warnings, never fatal: one broken file must not hide the others.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karta._records import record
from karta.errors import AmbiguousDefinitionError, InvalidDefinitionError, NoDefinitionError
from karta.model import Finding, Karta, Severity, load_kartas
from karta.model.gvk import GVK, most_stable
from karta.model.names import plural_guess

if TYPE_CHECKING:
    from karta.catalog import CatalogEntry

__all__ = [
    "AMBIGUOUS",
    "CATALOG",
    "CLUSTER",
    "IGNORED",
    "INVALID",
    "OK",
    "ORIGINS",
    "OVERRIDDEN",
    "USER",
    "CatalogDefinition",
    "DefinitionStore",
    "Listing",
    "Resolution",
    "StoredDefinition",
    "ambiguity",
    "default_user_directory",
    "describe_definition",
]

CATALOG = "catalog"
USER = "user"
CLUSTER = "cluster"
ORIGINS = (CATALOG, USER, CLUSTER)  # increasing precedence
_RANK = {origin: rank for rank, origin in enumerate(ORIGINS)}

# What a definition is to the resolution of its root GVK (the STATUS of ``kli definitions``).
OK = "ok"  # used for its GVK (or unmapped and valid)
INVALID = "invalid"  # never used
IGNORED = "ignored"  # a valid cluster duplicate of the one used
OVERRIDDEN = "overridden"  # a definition of a higher origin is used
AMBIGUOUS = "ambiguous"  # one of several valid user definitions of one GVK: none is used


def default_user_directory() -> Path:
    """``$KARTA_DEFINITIONS``, else ``~/.karta/definitions``."""
    env = os.environ.get("KARTA_DEFINITIONS")
    if env:
        return Path(env)
    return Path.home() / ".karta" / "definitions"


@record
class StoredDefinition:
    """One definition and where it came from; ``trusted`` is True for built-ins only.

    ``load_problems`` are the errors found when it was read (a duplicate key, say); with the
    validator's errors they make :attr:`problems`, computed once, on first use. Built-ins are
    valid by construction (``tests/catalog``) and are not validated again."""

    karta: Karta
    origin: str  # "catalog", "user" or "cluster"
    source: str  # file path, or "cluster"
    trusted: bool
    load_problems: tuple[str, ...] = field(default=(), compare=False)

    @property
    def name(self) -> str:
        return self.karta.metadata.name

    @property
    def gvk(self) -> GVK | None:
        """The root GVK, or None when it is not usable (no root kind, version or kind name)."""
        k = self.karta.root.kind
        if k is None or not k.version or not k.kind:
            return None
        return k.gvk

    @cached_property
    def problems(self) -> tuple[str, ...]:
        """Every error of the definition (load errors, then the validator's); empty: valid."""
        if self.trusted:
            return self.load_problems
        from karta.errors import KartaError, ValidationError
        from karta.model import validate_or_raise

        out = list(self.load_problems)
        try:
            validate_or_raise(self.karta)  # cached per definition object: later checks are free
        except ValidationError as exc:
            out.extend(str(getattr(f, "message", f)) for f in exc.findings or [exc])
        except KartaError as exc:
            out.append(str(exc))
        return tuple(out)

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def kind_token(self) -> str | None:
        """The root kind as ``Kind.version.group`` (None without a root kind name)."""
        root = self.karta.root.kind
        return root.gvk.token if root is not None and root.kind else None

    @property
    def component_names(self) -> tuple[str, ...]:
        """The component names: the root's, then the children's in definition order."""
        return tuple(c.name for c in self.karta.components)

    @property
    def ready(self) -> bool:
        """karta-controller's ``Ready=True`` for the current generation (cluster Kartas only)."""
        status = self.karta.status
        if status is None:
            return False
        generation = self.karta.metadata.generation
        for condition in status.conditions:
            if condition.get("type") != "Ready":
                continue
            observed = condition.get("observedGeneration")
            current = observed is None or generation is None or observed == generation
            return condition.get("status") == "True" and current
        return False


class CatalogDefinition(StoredDefinition):
    """A built-in definition known by its catalog index entry (name, root GVK, component names):
    its Karta is read from its YAML file on first use of :attr:`karta`, so that a store holding the
    whole catalog costs nothing until a command needs one of its definitions."""

    entry: CatalogEntry

    def __init__(self, entry: CatalogEntry) -> None:  # the fields without the Karta (frozen)
        fields = {"entry": entry, "origin": CATALOG, "source": str(entry.path), "trusted": True}
        for name, value in (*fields.items(), ("load_problems", ())):
            object.__setattr__(self, name, value)

    @cached_property
    def karta(self) -> Karta:
        from karta.catalog import catalog_definition

        karta = catalog_definition(self.entry.slug)
        assert karta is not None, self.entry  # the index names only shipped files
        return karta

    @property
    def name(self) -> str:
        return self.entry.slug

    @property
    def gvk(self) -> GVK:
        return self.entry.gvk

    @property
    def kind_token(self) -> str:
        return self.entry.gvk.token

    @property
    def component_names(self) -> tuple[str, ...]:
        return self.entry.components


@record
class Listing:
    """A definition with what it is to the resolution of its root GVK: ``status`` is one of
    :data:`OK`, :data:`INVALID`, :data:`IGNORED`, :data:`OVERRIDDEN`, :data:`AMBIGUOUS`;
    ``used`` is the definition used instead (ignored, overridden, invalid with a fallback)."""

    definition: StoredDefinition
    status: str
    used: StoredDefinition | None = None

    @property
    def text(self) -> str:
        """The STATUS cell: ``ok``, ``invalid``, ``ignored (duplicate of X)``,
        ``overridden (by X)``, ``ambiguous``."""
        if self.status == IGNORED and self.used is not None:
            return f"ignored (duplicate of {self.used.name})"
        if self.status == OVERRIDDEN and self.used is not None:
            return f"overridden (by {self.used.name})"
        return self.status

    def to_dict(self) -> dict[str, Any]:
        """``{origin, source, status, valid, problems, usedInstead?}`` (``kli definitions -o json``)."""
        d = self.definition
        out: dict[str, Any] = {
            "origin": d.origin,
            "source": d.source,
            "status": self.status,
            "valid": d.valid,
            "problems": list(d.problems),
        }
        if self.used is not None:
            out["usedInstead"] = self.used.name
        return out


@record
class Resolution:
    """What one root GVK resolves to: ``used`` (None when every definition is invalid, or when
    valid user definitions collide: ``colliding``), each claim's :class:`Listing`, and the
    ``notes`` to print when the GVK is resolved (duplicates ignored, invalid ones passed over)."""

    gvk: GVK
    used: StoredDefinition | None
    colliding: tuple[StoredDefinition, ...]
    listings: tuple[Listing, ...]
    notes: tuple[str, ...]

    @property
    def usable(self) -> bool:
        """Something claims the GVK that is not invalid (one used, or colliding ones)."""
        return self.used is not None or bool(self.colliding)


class DefinitionStore:
    """All loaded definitions and the merged view of them (precedence per root GVK).

    ``definitions`` holds everything that loaded (overridden and invalid ones too); :meth:`visible`
    is what resolution uses, :meth:`listing` every definition with its status. ``warnings`` are load
    problems followed by collisions of user definitions.
    """

    def __init__(
        self,
        definitions: Iterable[StoredDefinition] = (),
        *,
        warnings: Iterable[str] = (),
        cluster_forbidden: str = "",
    ) -> None:
        self.definitions: list[StoredDefinition] = list(definitions)
        self._load_warnings = list(warnings)
        # The API server's refusal to list the cluster's Kartas (a namespace-scoped user): the
        # likely cause of a kind nothing covers, which NoDefinitionError then says, and the
        # warning about it is dropped from :attr:`warnings` (said once, in the error).
        self.cluster_forbidden = cluster_forbidden
        self.forbidden_said = False
        self._claims: dict[GVK, list[StoredDefinition]] = {}
        self._unmapped: list[StoredDefinition] = []
        self._resolutions: dict[GVK, Resolution] = {}
        for d in self.definitions:
            gvk = d.gvk
            if gvk is None:
                self._unmapped.append(d)
            else:
                self._claims.setdefault(gvk, []).append(d)
        self._claims = {gvk: self._claims[gvk] for gvk in sorted(self._claims, key=str)}
        self._unmapped.sort(key=lambda d: (d.name, -_RANK.get(d.origin, 0)))

    # construction -------------------------------------------------------------------------------

    @classmethod
    def offline(cls, *, user_directory: Path | None = None, include_catalog: bool = True) -> DefinitionStore:
        """Built-in catalog plus the user directory (``$KARTA_DEFINITIONS`` when not given)."""
        return cls.load(user_directory=user_directory, include_catalog=include_catalog)

    @classmethod
    def load(
        cls,
        *,
        user_directory: Path | None = None,
        include_catalog: bool = True,
        cluster: Sequence[Karta] | None = None,
        cluster_warnings: Iterable[str] = (),
        cluster_forbidden: str = "",
    ) -> DefinitionStore:
        """Catalog < user directory < ``cluster`` (Kartas already read by the caller, or None;
        ``cluster_forbidden``: why they could not be listed, when it was forbidden)."""
        definitions: list[StoredDefinition] = []
        warnings: list[str] = []
        if include_catalog:
            from karta.catalog import catalog_index

            definitions.extend(CatalogDefinition(entry) for entry in catalog_index())
        user = user_directory if user_directory is not None else default_user_directory()
        if user.is_dir():
            definitions.extend(_load_directory(user, warnings))
        elif user.exists():
            warnings.append(f"ignoring {user}: the definitions directory is not a directory")
        warnings.extend(cluster_warnings)
        if cluster is not None:
            definitions.extend(_cluster(cluster))
        return cls(definitions, warnings=warnings, cluster_forbidden=cluster_forbidden)

    def with_cluster(self, kartas: Sequence[Karta], *, warnings: Iterable[str] = ()) -> DefinitionStore:
        """A new store with ``kartas`` added as cluster definitions (the seam for cluster access)."""
        return DefinitionStore(
            [*self.definitions, *_cluster(kartas)],
            warnings=[*self._load_warnings, *warnings],
            cluster_forbidden=self.cluster_forbidden,
        )

    # resolution of one GVK ----------------------------------------------------------------------

    def resolution(self, gvk: GVK) -> Resolution | None:
        """How ``gvk`` resolves (see the module docstring), or None when nothing claims it."""
        gvk = GVK(*gvk)
        cached = self._resolutions.get(gvk)
        if cached is None:
            claims = self._claims.get(gvk)
            if not claims:
                return None
            cached = self._resolutions[gvk] = _resolve(gvk, claims)
        return cached

    def _resolved(self, gvk: GVK) -> Resolution:
        resolution = self.resolution(gvk)
        assert resolution is not None, gvk  # only for claimed GVKs
        return resolution

    def gvks(self) -> list[GVK]:
        """Every root GVK some definition claims (valid or not), sorted; validates nothing."""
        return list(self._claims)

    def notes_for(self, *gvks: GVK | None) -> list[str]:
        """The notes of the resolutions of ``gvks`` (once each, in order): duplicate cluster
        Kartas ignored and invalid definitions passed over. Print them with the command's output."""
        out: list[str] = []
        for gvk in gvks:
            resolution = self.resolution(gvk) if gvk is not None else None
            for note in resolution.notes if resolution is not None else ():
                if note not in out:
                    out.append(note)
        return out

    # merged view --------------------------------------------------------------------------------

    @property
    def warnings(self) -> list[str]:
        """Load problems, then one line per root GVK claimed by colliding user definitions."""
        collisions: list[str] = []
        for gvk, claims in self._claims.items():
            if sum(1 for d in claims if d.origin == USER) < 2:
                continue  # a cheap check first: nothing to validate
            resolution = self.resolution(gvk)
            if resolution is not None and resolution.colliding:
                winners = resolution.colliding
                names = ", ".join(_named(d) for d in winners)
                collisions.append(
                    f"{len(winners)} {winners[0].origin} Karta definitions claim {gvk}: {names}"
                )
        said = self.forbidden_said and self.cluster_forbidden
        loaded = [w for w in self._load_warnings if not (said and self.cluster_forbidden in w)]
        return [*loaded, *collisions]

    def no_definition(self, what: str) -> NoDefinitionError:
        """ "no Karta definition covers ``what``"; when the cluster's Kartas could not be listed
        (forbidden), the error names that as the likely cause (and the warning saying so is
        dropped from :attr:`warnings`: it is said once, here)."""
        if not self.cluster_forbidden:
            return NoDefinitionError(f"no Karta definition covers {what}")
        self.forbidden_said = True
        return NoDefinitionError(
            f"no Karta definition covers {what} among the built-in and your own definitions; "
            "the cluster's Karta definitions, where it is likely to be, could not be listed "
            f"({self.cluster_forbidden})"
        )

    def visible(self) -> list[StoredDefinition]:
        """The definitions resolution uses: per root GVK (by GVK string) the one used, or the
        colliding ones; then the valid unmapped ones (by name). Validates what it must; for the
        GVKs alone use :meth:`gvks`."""
        out: list[StoredDefinition] = []
        for gvk in self._claims:
            resolution = self._resolved(gvk)
            out.extend([resolution.used] if resolution.used is not None else resolution.colliding)
        return out + [d for d in self._unmapped if d.valid]

    def listing(self) -> list[Listing]:
        """Every loaded definition with its status (validates every untrusted one): per root GVK
        (by GVK string) the claims, the used one first; then the unmapped ones."""
        out: list[Listing] = []
        for gvk in self._claims:
            out.extend(self._resolved(gvk).listings)
        out.extend(Listing(d, OK if d.valid else INVALID) for d in self._unmapped)
        return out

    def listing_of(self, definition: StoredDefinition) -> Listing:
        """The :class:`Listing` of one loaded definition."""
        gvk = definition.gvk
        resolution = self.resolution(gvk) if gvk is not None else None
        if resolution is not None:
            for entry in resolution.listings:
                if entry.definition is definition:
                    return entry
        return Listing(definition, OK if definition.valid else INVALID)

    def unmapped(self) -> list[StoredDefinition]:
        return list(self._unmapped)

    def is_ambiguous(self, gvk: GVK) -> bool:
        resolution = self.resolution(gvk)
        return resolution is not None and len(resolution.colliding) > 1

    # lookups ------------------------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every definition name, sorted, once (overridden and invalid ones too)."""
        return sorted({d.name for d in self.definitions})

    def named(self, name: str) -> list[StoredDefinition]:
        """Every loaded definition with exactly this ``metadata.name``: the one in use first,
        then by origin (cluster, user, catalog)."""
        matches = [d for d in self.definitions if d.name == name]
        return sorted(matches, key=lambda d: (self.listing_of(d).status != OK, -_RANK.get(d.origin, 0)))

    def by_name(self, name: str) -> StoredDefinition | None:
        """The definition with exactly this ``metadata.name`` (the one in use when several have
        it, else the highest origin); overridden and invalid ones are found too."""
        matches = self.named(name)
        return matches[0] if matches else None

    def by_gvk(self, group: str, version: str, kind: str) -> list[StoredDefinition]:
        """Exact root GVK: the definition used, or the colliding ones (more than one result)."""
        resolution = self.resolution(GVK(group, version, kind))
        if resolution is None:
            return []
        return [resolution.used] if resolution.used is not None else list(resolution.colliding)

    def by_group_kind(self, group: str, kind: str) -> list[StoredDefinition]:
        """The definitions used for ``group`` and ``kind`` (exact), at any version."""
        return [
            d for gvk in self._claims if (gvk.group, gvk.kind) == (group, kind) for d in self.by_gvk(*gvk)
        ]

    def by_kind(self, kind: str) -> list[StoredDefinition]:
        """The definitions used for the root kind ``kind``, compared case-insensitively."""
        wanted = kind.lower()
        return [d for gvk in self._claims if gvk.kind.lower() == wanted for d in self.by_gvk(*gvk)]

    def resolve(self, api_version: str, kind: str) -> list[StoredDefinition]:
        """Definitions for a workload's ``apiVersion``/``kind``: exact GVK, else group+kind at any version.

        One result is a match; several are either a collision (same GVK) or several versions of
        the kind (see :func:`ambiguity`); none means no valid definition covers the type.
        """
        group, _, version = api_version.rpartition("/")
        return self.by_gvk(group, version, kind) or self.by_group_kind(group, kind)

    # resolution (one rule for every consumer) ------------------------------------------------------

    def definition_for(self, gvk: GVK, *, served: Callable[[GVK], bool] | None = None) -> StoredDefinition:
        """The definition for objects of ``gvk``: the exact root GVK's; else, among the other
        versions of the same group and kind that have a usable definition, those the cluster
        serves (``served``; when none is served, or without ``served``, all of them), the most
        stable one's. Raises :class:`NoDefinitionError` when nothing covers the kind,
        :class:`InvalidDefinitionError` when only invalid definitions do and
        :class:`AmbiguousDefinitionError` when colliding definitions claim the chosen GVK."""
        gvk = GVK(*gvk)
        exact = self.resolution(gvk)
        if exact is not None and exact.usable:
            return _chosen(exact)
        claimed = [self._resolved(g) for g in self._claims if (g.group, g.kind) == (gvk.group, gvk.kind)]
        others = [r for r in claimed if r.usable and r.gvk != gvk]
        if not others:
            if claimed:  # only invalid definitions, at any version
                raise InvalidDefinitionError(_invalid(f"{gvk.kind} ({gvk.api_version})", claimed))
            raise self.no_definition(f"{gvk.kind} ({gvk.api_version})")
        if served is not None and len(others) > 1:
            others = [r for r in others if served(r.gvk)] or others
        by_version = {r.gvk.version: r for r in others}
        return _chosen(by_version[most_stable(by_version) or ""])

    def definition_for_token(self, token: str) -> StoredDefinition:
        """17.4 step 2, for a TYPE token API discovery cannot map: the definitions whose Kind is
        the token (any case) or, failing that, whose guessed plural is (``pytorchjobs`` for a kind
        that is not installed), narrowed by the qualifier after the first ``.`` (group, or
        ``version.group``). Several kinds: :class:`AmbiguousDefinitionError` listing their tokens;
        none: :class:`NoDefinitionError` (:class:`InvalidDefinitionError` when only invalid
        definitions match)."""
        name, _, qualifier = token.strip().lower().partition(".")
        found = [g for g in self._claims if g.kind.lower() == name] or [
            g for g in self._claims if plural_guess(g.kind) == name
        ]
        claimed = [g for g in found if _qualifies(g, qualifier)]
        resolutions = [self._resolved(g) for g in claimed]
        matches = [r for r in resolutions if r.usable]
        if not matches:
            if resolutions:
                raise InvalidDefinitionError(_invalid(f'"{token}"', resolutions))
            raise self.no_definition(f'"{token}"')
        if len(matches) > 1:
            tokens = sorted({r.gvk.token.lower() for r in matches})
            raise AmbiguousDefinitionError(
                f'"{token}" matches several Karta definitions: {", ".join(tokens)}; use one of these tokens'
            )
        return _chosen(matches[0])


def _invalid(what: str, resolutions: Sequence[Resolution]) -> str:
    """The message of :class:`InvalidDefinitionError`: the first invalid definition and its problem."""
    invalid = [e.definition for r in resolutions for e in r.listings if e.status == INVALID]
    more = f" (and {len(invalid) - 1} more invalid definitions)" if len(invalid) > 1 else ""
    first = invalid[0]
    problems = "; ".join(first.problems[:5]) + (" ..." if len(first.problems) > 5 else "")
    return (
        f"no valid Karta definition covers {what}: {describe_definition(first)} is invalid: {problems}{more}"
    )


def _chosen(resolution: Resolution) -> StoredDefinition:
    if resolution.used is not None:
        return resolution.used
    raise AmbiguousDefinitionError(ambiguity(resolution.colliding))


def _resolve(gvk: GVK, claims: Sequence[StoredDefinition]) -> Resolution:
    """The rule of the module docstring for the definitions claiming one GVK (load order)."""
    by_origin: dict[str, list[StoredDefinition]] = {}
    for d in claims:
        by_origin.setdefault(d.origin, []).append(d)
    used: StoredDefinition | None = None
    colliding: tuple[StoredDefinition, ...] = ()
    states: dict[int, Listing] = {}
    passed_over: list[StoredDefinition] = []  # invalid definitions at or above the one used
    duplicates: list[str] = []
    for origin in sorted(by_origin, key=lambda o: -_RANK.get(o, 0)):
        group = by_origin[origin]
        winner = used or (colliding[0] if colliding else None)
        if winner is not None:
            states.update((id(d), Listing(d, OVERRIDDEN if d.valid else INVALID, winner)) for d in group)
            continue
        valid = [d for d in group if d.valid]
        passed_over.extend(d for d in group if not d.valid)
        if len(valid) == 1:
            used = valid[0]
        elif len(valid) > 1 and origin == CLUSTER:
            ranked = sorted(valid, key=_seniority)
            used, ignored = ranked[0], ranked[1:]
            states.update((id(d), Listing(d, IGNORED, used)) for d in ignored)
            duplicates.append(
                f"{len(ranked)} cluster Karta definitions claim {gvk}: using {used.name} "
                f"({_why(used, ranked[1])}); ignoring {', '.join(d.name for d in ignored)} "
                f"as {'a duplicate' if len(ignored) == 1 else 'duplicates'}"
            )
        elif valid:
            colliding = tuple(valid)
            states.update((id(d), Listing(d, AMBIGUOUS)) for d in colliding)
    if used is not None:
        states[id(used)] = Listing(used, OK)
        fallback = f"using {used.origin} definition {used.name} instead"
    else:
        fallback = "the other definitions collide" if colliding else "no valid definition covers it"
    notes = [
        f"{describe_definition(d)} is invalid and not used for {gvk}: {_first(d)}; {fallback}"
        for d in passed_over
    ]
    states.update((id(d), Listing(d, INVALID, used)) for d in passed_over)
    rank = {id(d): (d is not used, -_RANK.get(d.origin, 0), i) for i, d in enumerate(claims)}
    listings = sorted(states.values(), key=lambda e: rank[id(e.definition)])
    return Resolution(gvk, used, colliding, tuple(listings), tuple([*notes, *duplicates]))


def _seniority(d: StoredDefinition) -> tuple[bool, str, str]:
    """Cluster duplicates in order of preference: Ready=True first, then the oldest, then by name."""
    created = d.karta.metadata.creation_timestamp or "\uffff"  # RFC 3339 in UTC sorts as text
    return (not d.ready, created, d.name)


def _why(used: StoredDefinition, runner_up: StoredDefinition) -> str:
    """Why ``used`` beat the next one in :func:`_seniority` order."""
    if used.ready and not runner_up.ready:
        return "Ready=True"
    ready = "Ready=True, " if used.ready else ""
    created, other = used.karta.metadata.creation_timestamp, runner_up.karta.metadata.creation_timestamp
    if created and (not other or created < other):
        return f"{ready}the oldest, created {created}"
    return f"{ready}the first by name"


def _first(d: StoredDefinition) -> str:
    problems = d.problems
    more = len(problems) - 1
    return problems[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else "")


def describe_definition(d: StoredDefinition) -> str:
    """``cluster Karta X``, ``user definition X (path)``, ``catalog definition X``: for messages."""
    if d.origin == CLUSTER:
        return f"cluster Karta {d.name}"
    if d.origin == USER:
        return f"user definition {d.name} ({d.source})"
    if d.origin == CATALOG:
        return f"catalog definition {d.name}"
    return f"definition {d.name} ({d.source})"


def _qualifies(gvk: GVK, qualifier: str) -> bool:
    if not qualifier:
        return True
    group, version, _ = gvk
    return qualifier in (group, f"{version}.{group}".rstrip("."), version)


def ambiguity(matches: Sequence[StoredDefinition]) -> str:
    """Why several resolution results cannot be chosen between, as one message."""
    gvks = {d.gvk for d in matches}
    if len(gvks) == 1:
        gvk = next(iter(gvks))
        assert gvk is not None
        names = ", ".join(_named(d) for d in matches)
        return (
            f"{len(matches)} Karta definitions claim {gvk}: {names}; remove all but one ({matches[0].origin})"
        )
    tokens = ", ".join(sorted(g.token for g in gvks if g is not None))
    return f"several Karta definitions cover this type at other versions: {tokens}"


def _named(d: StoredDefinition) -> str:
    return d.name if d.origin == CLUSTER else f"{d.name} ({d.source})"


def _cluster(kartas: Sequence[Karta]) -> list[StoredDefinition]:
    return [StoredDefinition(karta=k, origin=CLUSTER, source=CLUSTER, trusted=False) for k in kartas]


def _load_directory(directory: Path, warnings: list[str]) -> list[StoredDefinition]:
    from karta.errors import KartaError

    out: list[StoredDefinition] = []
    try:
        entries = sorted(directory.iterdir())
    except OSError as exc:
        warnings.append(f"cannot read the definitions directory {directory}: {exc.strerror or exc}")
        return out
    files = [p for p in entries if p.suffix in (".yaml", ".yml", ".json") and p.is_file()]
    for path in files:
        try:
            results = load_kartas(path, strict=False, source_name=str(path))
        except KartaError as exc:
            warnings.append(f"skipping {path}: {exc}")
            continue
        for result in results:
            errors = [f for f in result.findings if f.severity is Severity.ERROR]
            if result.karta is None:
                warnings.append(f"skipping a definition in {path}: {_message(errors)}")
                continue
            out.append(
                StoredDefinition(
                    karta=result.karta,
                    origin=USER,
                    source=str(path),
                    trusted=False,
                    load_problems=tuple(f.message for f in errors),
                )
            )
    return out


def _message(findings: list[Finding]) -> str:
    return findings[0].message if findings else "it could not be loaded"
