"""Draft Karta definitions from a CRD's OpenAPI schema (``kli scaffold``).

:func:`scaffold_crd` picks the CRD and version, :func:`analyse_schema` finds pod templates and
pod specs (alone, in maps, in arrays), replica-like integers, ``suspend`` booleans, conditions and
phase-like enums, and :func:`build_draft` turns that into a Karta that validates, with ``TODO:``
comments where a human must decide; :func:`jq_path` and :func:`jq_string` write every piece of jq
the draft builds from CRD names, which stay data, never code. Pure: no cluster, no CLI.

Names are resolved lazily (PEP 562): importing the package costs nothing until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "CrdVersion": "karta.scaffold.crd",
    "crd_version": "karta.scaffold.crd",
    "is_crd": "karta.scaffold.crd",
    "select_crd": "karta.scaffold.crd",
    "Draft": "karta.scaffold.draft",
    "Todo": "karta.scaffold.draft",
    "build_draft": "karta.scaffold.draft",
    "instance_id_path": "karta.scaffold.draft",
    "scaffold_crd": "karta.scaffold.draft",
    "PodField": "karta.scaffold.schema",
    "Replicas": "karta.scaffold.schema",
    "SchemaAnalysis": "karta.scaffold.schema",
    "Segment": "karta.scaffold.schema",
    "analyse_schema": "karta.scaffold.schema",
    "jq_path": "karta.scaffold.jqtext",
    "jq_string": "karta.scaffold.jqtext",
}

__all__ = [
    "CrdVersion",
    "Draft",
    "PodField",
    "Replicas",
    "SchemaAnalysis",
    "Segment",
    "Todo",
    "analyse_schema",
    "build_draft",
    "crd_version",
    "instance_id_path",
    "is_crd",
    "jq_path",
    "jq_string",
    "scaffold_crd",
    "select_crd",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.scaffold.crd import CrdVersion, crd_version, is_crd, select_crd
    from karta.scaffold.draft import Draft, Todo, build_draft, instance_id_path, scaffold_crd
    from karta.scaffold.jqtext import jq_path, jq_string
    from karta.scaffold.schema import PodField, Replicas, SchemaAnalysis, Segment, analyse_schema
