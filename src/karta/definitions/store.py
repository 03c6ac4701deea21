"""An offline store of Karta definitions: built-in catalog files plus a user directory.

Built-in definitions are trusted (their expressions run in-process); user definitions are not
(expressions that cannot be proven bounded run in the jq sandbox). Files that fail to load are kept
as warnings, never fatal: one broken file must not hide the others.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from karta.model import Finding, Karta, Severity, load_kartas


def default_user_directory() -> Path:
    """``$KARTA_DEFINITIONS``, else ``~/.karta/definitions``."""
    env = os.environ.get("KARTA_DEFINITIONS")
    if env:
        return Path(env)
    return Path.home() / ".karta" / "definitions"


@dataclass(frozen=True)
class StoredDefinition:
    karta: Karta
    origin: str  # "catalog" or "user"
    source: str  # file path
    trusted: bool


@dataclass
class DefinitionStore:
    definitions: list[StoredDefinition] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def offline(cls, *, user_directory: Path | None = None, include_catalog: bool = True) -> DefinitionStore:
        store = cls()
        if include_catalog:
            from karta.catalog import CATALOG_DATA_DIR, catalog_definitions

            store.definitions.extend(
                StoredDefinition(
                    karta=k, origin="catalog", source=str(CATALOG_DATA_DIR / f"{k.name}.yaml"), trusted=True
                )
                for k in catalog_definitions()
            )
        user = user_directory if user_directory is not None else default_user_directory()
        if user.is_dir():
            store._load_directory(user, origin="user", trusted=False)
        return store

    def _load_directory(self, directory: Path, *, origin: str, trusted: bool) -> None:
        from karta.errors import KartaError

        files = sorted(
            p for p in directory.iterdir() if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
        )
        for path in files:
            try:
                results = load_kartas(path, strict=False, source_name=str(path))
            except KartaError as exc:
                self.warnings.append(f"skipping {path}: {exc}")
                continue
            for result in results:
                errors = [f for f in result.findings if f.severity is Severity.ERROR]
                if result.karta is None or errors:
                    self.warnings.append(f"skipping a definition in {path}: {_first(errors)}")
                    continue
                self.definitions.append(
                    StoredDefinition(karta=result.karta, origin=origin, source=str(path), trusted=trusted)
                )

    def resolve(self, api_version: str, kind: str) -> list[StoredDefinition]:
        """Definitions for a workload's ``apiVersion``/``kind``: exact GVK, else group+kind.

        Within one match level the user directory wins over the catalog; several user
        definitions for one GVK are all returned, so the caller can report the collision.
        """
        group, _, version = api_version.rpartition("/")
        exact = [d for d in self.definitions if _gvk(d) == (group, version, kind)]
        candidates = exact or [d for d in self.definitions if _gvk(d)[0::2] == (group, kind)]
        users = [d for d in candidates if d.origin == "user"]
        return users or candidates


def _gvk(d: StoredDefinition) -> tuple[str, str, str]:
    k = d.karta.root.kind
    return (k.group, k.version, k.kind) if k is not None else ("", "", "")


def _first(findings: list[Finding]) -> str:
    return findings[0].message if findings else "it could not be loaded"
