"""The built-in catalog: the Karta definitions shipped with karta, as YAML data (R13, section 18).

Owns: reading every ``data/<slug>.yaml`` once, checking the catalog's own rules (file name =
``metadata.name`` = slug of the root GVK, exactly one definition per root GVK, zero findings from
the strict loader and the validator) and handing out copies. Any violation is a
:class:`~karta.errors.DefinitionError`: a broken built-in is a packaging bug, never a user problem.

The validator (which parses and safety-checks every jq expression, most of the load time) is not
re-run on the shipped files at run time: ``tests/catalog`` validates each of them strictly and
requires zero findings, so repeating it would only slow down every ``kli inspect``. A catalog read
from any other directory (``CATALOG_DATA_DIR`` patched) is validated in full.
"""

from __future__ import annotations

import functools
from pathlib import Path

from karta.errors import DefinitionError
from karta.model import GVK, GroupVersionKind, Karta, load_karta, validate_karta

__all__ = ["CATALOG_DATA_DIR", "catalog_by_gvk", "catalog_definitions", "catalog_slugs", "slug_for"]

CATALOG_DATA_DIR = Path(__file__).resolve().parent / "data"
_SHIPPED_DATA_DIR = CATALOG_DATA_DIR  # validated by the test suite (see the module docstring)


def slug_for(gvk: GroupVersionKind) -> str:
    """``<group with . replaced by -, or core>-<kind lower-cased>-<version>`` (section 18.1)."""
    group = gvk.group.replace(".", "-") if gvk.group else "core"
    return f"{group}-{gvk.kind.lower()}-{gvk.version}"


def _check_name(path: Path, karta: Karta) -> None:
    assert karta.root_gvk is not None
    slug = slug_for(karta.root_gvk)
    if karta.name != path.stem or slug != path.stem:
        raise DefinitionError(
            f"built-in definition {path.name}: file name, metadata.name ({karta.name!r}) "
            f"and slug ({slug!r}) must be equal"
        )


def _load_file(path: Path, *, validate: bool) -> Karta:
    result = load_karta(path, strict=True, source_name=path.name)
    karta = result.karta
    findings = list(result.findings)
    if karta is not None and validate:
        findings.extend(f for f in validate_karta(karta) if f not in findings)
    if karta is None or findings:
        detail = "; ".join(f"{f.severity}: {f.message}" for f in findings) or "it could not be loaded"
        raise DefinitionError(f"built-in definition {path.name} is invalid: {detail}")
    if karta.root_gvk is None or not karta.root_gvk.version or not karta.root_gvk.kind:
        raise DefinitionError(f"built-in definition {path.name} has no root version and kind")
    return karta


@functools.cache
def _catalog() -> tuple[Karta, ...]:
    by_gvk: dict[GVK, tuple[Path, Karta]] = {}
    validate = CATALOG_DATA_DIR != _SHIPPED_DATA_DIR
    for path in sorted(CATALOG_DATA_DIR.glob("*.yaml")):
        karta = _load_file(path, validate=validate)
        assert karta.root_gvk is not None
        key = karta.root_gvk.gvk
        if key in by_gvk:
            raise DefinitionError(
                f"duplicate root GVK {karta.root_gvk} in the built-in catalog: "
                f"{by_gvk[key][0].name} and {path.name}"
            )
        by_gvk[key] = (path, karta)
    for path, karta in by_gvk.values():
        _check_name(path, karta)
    return tuple(sorted((karta for _, karta in by_gvk.values()), key=lambda karta: str(karta.root_gvk)))


def catalog_definitions() -> list[Karta]:
    """Every built-in definition, sorted by GVK string; deep copies, safe to mutate."""
    return [karta.model_copy(deep=True) for karta in _catalog()]


def catalog_slugs() -> list[str]:
    """The names of the built-in definitions, in the order of :func:`catalog_definitions`."""
    return [karta.name for karta in _catalog()]


def catalog_by_gvk(group: str, version: str, kind: str) -> Karta | None:
    """The built-in definition whose root GVK is exactly ``group/version, Kind=kind`` (a copy), or None."""
    for karta in _catalog():
        assert karta.root_gvk is not None
        if karta.root_gvk.gvk == (group, version, kind):
            return karta.model_copy(deep=True)
    return None
