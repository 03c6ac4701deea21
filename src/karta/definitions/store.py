"""The merged set of Karta definitions the tools resolve workloads against (R13, section 17.3).

Three origins, in increasing precedence per root GVK: ``catalog`` (built-in, trusted: expressions
run in-process), ``user`` (files in ``$KARTA_DEFINITIONS``, default ``~/.karta/definitions``) and
``cluster`` (``kartas.run.ai`` objects, handed in by the caller; this module never talks to a
cluster). For each root GVK only the definitions of the highest origin present are visible; two or
more of them is a collision, reported as a warning, and resolving that GVK is ambiguous.
Definitions without a usable root GVK (no version or kind) are kept as "unmapped" and listed last.

Resolution has one rule, used by every consumer (``kli`` offline and live, the controller):
:meth:`DefinitionStore.definition_for` takes the exact root GVK, else the definitions of the same
group and kind at other versions, narrowed to the versions the cluster serves when that is known,
and of those the most stable version. :meth:`DefinitionStore.definition_for_token` is 17.4's
fallback for a TYPE token that API discovery cannot map (a kind, or a guessed plural, optionally
qualified by group or version).

Files that fail to load become warnings, never fatal: one broken file must not hide the others.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from karta.errors import AmbiguousDefinitionError, NoDefinitionError
from karta.model import Finding, Karta, Severity, load_kartas
from karta.model.gvk import GVK, most_stable
from karta.model.names import plural_guess

__all__ = [
    "CATALOG",
    "CLUSTER",
    "ORIGINS",
    "USER",
    "DefinitionStore",
    "StoredDefinition",
    "ambiguity",
    "default_user_directory",
]

CATALOG = "catalog"
USER = "user"
CLUSTER = "cluster"
ORIGINS = (CATALOG, USER, CLUSTER)  # increasing precedence
_RANK = {origin: rank for rank, origin in enumerate(ORIGINS)}


def default_user_directory() -> Path:
    """``$KARTA_DEFINITIONS``, else ``~/.karta/definitions``."""
    env = os.environ.get("KARTA_DEFINITIONS")
    if env:
        return Path(env)
    return Path.home() / ".karta" / "definitions"


@dataclass(frozen=True)
class StoredDefinition:
    """One definition and where it came from; ``trusted`` is True for built-ins only."""

    karta: Karta
    origin: str  # "catalog", "user" or "cluster"
    source: str  # file path, or "cluster"
    trusted: bool

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


class DefinitionStore:
    """All loaded definitions and the merged view of them (precedence per root GVK).

    ``definitions`` holds everything that loaded (shadowed ones too); :meth:`visible` is what
    listing and resolution see. ``warnings`` are load problems followed by collisions.
    """

    def __init__(self, definitions: Iterable[StoredDefinition] = (), *, warnings: Iterable[str] = ()) -> None:
        self.definitions: list[StoredDefinition] = list(definitions)
        self._load_warnings = list(warnings)
        self._by_gvk: dict[GVK, list[StoredDefinition]] = {}
        self._unmapped: list[StoredDefinition] = []
        self._merge()

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
    ) -> DefinitionStore:
        """Catalog < user directory < ``cluster`` (Kartas already read by the caller, or None)."""
        definitions: list[StoredDefinition] = []
        warnings: list[str] = []
        if include_catalog:
            from karta.catalog import CATALOG_DATA_DIR, catalog_definitions

            definitions.extend(
                StoredDefinition(
                    karta=k, origin=CATALOG, source=str(CATALOG_DATA_DIR / f"{k.name}.yaml"), trusted=True
                )
                for k in catalog_definitions()
            )
        user = user_directory if user_directory is not None else default_user_directory()
        if user.is_dir():
            definitions.extend(_load_directory(user, warnings))
        elif user.exists():
            warnings.append(f"ignoring {user}: the definitions directory is not a directory")
        warnings.extend(cluster_warnings)
        if cluster is not None:
            definitions.extend(_cluster(cluster))
        return cls(definitions, warnings=warnings)

    def with_cluster(self, kartas: Sequence[Karta], *, warnings: Iterable[str] = ()) -> DefinitionStore:
        """A new store with ``kartas`` added as cluster definitions (the seam for cluster access)."""
        return DefinitionStore(
            [*self.definitions, *_cluster(kartas)], warnings=[*self._load_warnings, *warnings]
        )

    # merged view --------------------------------------------------------------------------------

    def _merge(self) -> None:
        grouped: dict[GVK, list[StoredDefinition]] = {}
        for d in self.definitions:
            gvk = d.gvk
            if gvk is None:
                self._unmapped.append(d)
            else:
                grouped.setdefault(gvk, []).append(d)
        self._collisions: list[str] = []
        for gvk in sorted(grouped, key=str):
            entries = grouped[gvk]
            top = max(_RANK.get(d.origin, 0) for d in entries)
            winners = [d for d in entries if _RANK.get(d.origin, 0) == top]
            self._by_gvk[gvk] = winners
            if len(winners) > 1:
                names = ", ".join(_describe(d) for d in winners)
                self._collisions.append(
                    f"{len(winners)} {winners[0].origin} Karta definitions claim {gvk}: {names}"
                )
        self._unmapped.sort(key=lambda d: (d.name, -_RANK.get(d.origin, 0)))

    @property
    def warnings(self) -> list[str]:
        """Load problems, then one line per colliding root GVK."""
        return [*self._load_warnings, *self._collisions]

    def visible(self) -> list[StoredDefinition]:
        """The merged definitions: by root GVK string, then the unmapped ones (by name)."""
        return [d for gvk in self._by_gvk for d in self._by_gvk[gvk]] + list(self._unmapped)

    def unmapped(self) -> list[StoredDefinition]:
        return list(self._unmapped)

    def is_ambiguous(self, gvk: GVK) -> bool:
        return len(self._by_gvk.get(gvk, ())) > 1

    # lookups ------------------------------------------------------------------------------------

    def by_name(self, name: str) -> StoredDefinition | None:
        """The visible definition with exactly this ``metadata.name``; cluster, then user, then catalog."""
        matches = [d for d in self.visible() if d.name == name]
        if not matches:
            return None
        return max(matches, key=lambda d: _RANK.get(d.origin, 0))

    def by_gvk(self, group: str, version: str, kind: str) -> list[StoredDefinition]:
        """Exact root GVK; more than one result means the GVK is claimed by colliding definitions."""
        return list(self._by_gvk.get(GVK(group, version, kind), ()))

    def by_group_kind(self, group: str, kind: str) -> list[StoredDefinition]:
        """Every visible definition for ``group`` and ``kind`` (exact), at any version."""
        return [d for gvk, ds in self._by_gvk.items() if (gvk.group, gvk.kind) == (group, kind) for d in ds]

    def by_kind(self, kind: str) -> list[StoredDefinition]:
        """Every visible definition whose root kind is ``kind``, compared case-insensitively."""
        wanted = kind.lower()
        return [d for gvk, ds in self._by_gvk.items() if gvk.kind.lower() == wanted for d in ds]

    def resolve(self, api_version: str, kind: str) -> list[StoredDefinition]:
        """Definitions for a workload's ``apiVersion``/``kind``: exact GVK, else group+kind at any version.

        One result is a match; several are either a collision (same GVK) or several versions of
        the kind (see :func:`ambiguity`); none means no definition covers the type.
        """
        group, _, version = api_version.rpartition("/")
        return self.by_gvk(group, version, kind) or self.by_group_kind(group, kind)

    # resolution (one rule for every consumer) ------------------------------------------------------

    def definition_for(self, gvk: GVK, *, served: Callable[[GVK], bool] | None = None) -> StoredDefinition:
        """The definition for objects of ``gvk``: the exact root GVK; else, among the definitions
        of the same group and kind at other versions, those whose version the cluster serves
        (``served``; when none is served, or without ``served``, all of them), of the most stable
        version. Raises :class:`NoDefinitionError` when nothing covers the kind and
        :class:`AmbiguousDefinitionError` when colliding definitions claim the chosen GVK."""
        gvk = GVK(*gvk)
        exact = self.by_gvk(*gvk)
        if len(exact) == 1:
            return exact[0]
        if exact:
            raise AmbiguousDefinitionError(ambiguity(exact))
        others = self.by_group_kind(gvk.group, gvk.kind)
        if not others:
            raise NoDefinitionError(f"no Karta definition covers {gvk.kind} ({gvk.api_version})")
        if served is not None and len(others) > 1:
            others = [d for d in others if d.gvk is not None and served(d.gvk)] or others
        by_version: dict[str, list[StoredDefinition]] = {}
        for d in others:
            by_version.setdefault(d.gvk.version if d.gvk else "", []).append(d)
        best = by_version[most_stable(by_version) or ""]
        if len(best) > 1:
            raise AmbiguousDefinitionError(ambiguity(best))
        return best[0]

    def definition_for_token(self, token: str) -> StoredDefinition:
        """17.4 step 2, for a TYPE token API discovery cannot map: the definitions whose Kind is
        the token (any case) or, failing that, whose guessed plural is (``pytorchjobs`` for a kind
        that is not installed), narrowed by the qualifier after the first ``.`` (group, or
        ``version.group``). Several kinds: :class:`AmbiguousDefinitionError` listing their tokens;
        none: :class:`NoDefinitionError`."""
        name, _, qualifier = token.strip().lower().partition(".")
        found = self.by_kind(name) or [
            d for d in self.visible() if d.gvk is not None and plural_guess(d.gvk.kind) == name
        ]
        matches = [d for d in found if _qualifies(d, qualifier)]
        if not matches:
            raise NoDefinitionError(f'no Karta definition covers "{token}"')
        gvks = {d.gvk for d in matches}
        if len(gvks) > 1:
            tokens = sorted({d.gvk.token.lower() for d in matches if d.gvk})
            raise AmbiguousDefinitionError(
                f'"{token}" matches several Karta definitions: {", ".join(tokens)}; use one of these tokens'
            )
        if len(matches) > 1:
            raise AmbiguousDefinitionError(ambiguity(matches))
        return matches[0]


def _qualifies(d: StoredDefinition, qualifier: str) -> bool:
    if not qualifier or d.gvk is None:
        return True
    group, version, _ = d.gvk
    return qualifier in (group, f"{version}.{group}".rstrip("."), version)


def ambiguity(matches: Sequence[StoredDefinition]) -> str:
    """Why several resolution results cannot be chosen between, as one message."""
    gvks = {d.gvk for d in matches}
    if len(gvks) == 1:
        gvk = next(iter(gvks))
        assert gvk is not None
        names = ", ".join(_describe(d) for d in matches)
        return (
            f"{len(matches)} Karta definitions claim {gvk}: {names}; remove all but one ({matches[0].origin})"
        )
    tokens = ", ".join(sorted(g.token for g in gvks if g is not None))
    return f"several Karta definitions cover this type at other versions: {tokens}"


def _describe(d: StoredDefinition) -> str:
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
            if result.karta is None or errors:
                warnings.append(f"skipping a definition in {path}: {_first(errors)}")
                continue
            out.append(StoredDefinition(karta=result.karta, origin=USER, source=str(path), trusted=False))
    return out


def _first(findings: list[Finding]) -> str:
    return findings[0].message if findings else "it could not be loaded"
