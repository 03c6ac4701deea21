"""The Karta CustomResourceDefinition (``kartas.run.ai``) shipped with karta.

Owns the packaged manifest ``kartas.run.ai.yaml`` and access to it. The manifest is generated from
the Python model by :func:`build_crd` (``python -m karta.crd`` rewrites it, ``--check`` verifies
it); nothing here talks to a cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from karta.crd.schema import (
    CRD_NAME,
    LIST_KIND,
    PLURAL,
    PRINTER_COLUMNS,
    SHORT_NAMES,
    SINGULAR,
    VERSION,
    build_crd,
    build_schema,
)

__all__ = [
    "CRD_FILE",
    "CRD_NAME",
    "LIST_KIND",
    "PLURAL",
    "PRINTER_COLUMNS",
    "SHORT_NAMES",
    "SINGULAR",
    "VERSION",
    "build_crd",
    "build_schema",
    "load_crd",
    "render_crd_yaml",
]

CRD_FILE = Path(__file__).resolve().parent / f"{CRD_NAME}.yaml"

_HEADER = (
    "# The Karta CustomResourceDefinition (docs/spec/format.md#crd, #field-tree and #crd-rules).\n"
    "# Generated from karta.model by `python -m karta.crd`; do not edit by hand.\n"
)


def render_crd_yaml() -> str:
    """The text of the shipped manifest, as the generator writes it."""
    body = yaml.safe_dump(build_crd(), sort_keys=False, default_flow_style=False, width=1000)
    return _HEADER + body


def load_crd() -> dict[str, Any]:
    """The shipped manifest ``kartas.run.ai.yaml`` as a dict."""
    data = yaml.safe_load(CRD_FILE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data
