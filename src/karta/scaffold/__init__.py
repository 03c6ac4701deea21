"""Draft Karta definitions from a CRD's OpenAPI schema (``kli scaffold``).

:func:`scaffold_crd` picks the CRD and version, :func:`analyse_schema` finds pod templates and
pod specs (alone, in maps, in arrays), replica-like integers, ``suspend`` booleans, conditions and
phase-like enums, and :func:`build_draft` turns that into a Karta that validates, with ``TODO:``
comments where a human must decide. Pure: no cluster, no CLI.
"""

from __future__ import annotations

from typing import Any

from karta.scaffold.crd import CrdVersion, crd_version, select_crd
from karta.scaffold.draft import Draft, Todo, build_draft, instance_id_path
from karta.scaffold.schema import PodField, SchemaAnalysis, Segment, analyse_schema, jq_path

__all__ = [
    "CrdVersion",
    "Draft",
    "PodField",
    "SchemaAnalysis",
    "Segment",
    "Todo",
    "analyse_schema",
    "build_draft",
    "crd_version",
    "instance_id_path",
    "jq_path",
    "scaffold_crd",
    "select_crd",
]


def scaffold_crd(documents: list[Any], *, kind: str | None = None, version: str | None = None) -> Draft:
    """The draft Karta for the CRD among ``documents`` (``kind``) at ``version`` (default: storage)."""
    crd = crd_version(select_crd(documents, kind=kind), version=version)
    return build_draft(crd, analyse_schema(crd.schema))
