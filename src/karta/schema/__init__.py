"""Checking a Karta definition against its CRD's OpenAPI schema, without any manifest.

:func:`check_definition` looks every object path the definition's expressions read up in the
schema of the root version and checks what each field yields (pod templates, pod specs, scale,
phase, conditions, instance ids, fragments, suspend values); :func:`crd_for` picks the CRD of a
definition among several. :func:`analyse` is the static analysis of one jq expression it is built
on (which object paths it reads, what it yields), :func:`resolve` the walk of a schema. What
cannot be decided is a note, never a pass. Pure: no cluster, no CLI.

Names are resolved lazily (PEP 562): importing the package costs nothing until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "SchemaCheck": "karta.schema.check",
    "SchemaFinding": "karta.schema.check",
    "check_definition": "karta.schema.check",
    "crd_for": "karta.schema.check",
    "crd_label": "karta.schema.check",
    "Analysis": "karta.schema.paths",
    "analyse": "karta.schema.paths",
    "path_text": "karta.schema.paths",
    "Outcome": "karta.schema.openapi",
    "resolve": "karta.schema.openapi",
}

__all__ = [
    "Analysis",
    "Outcome",
    "SchemaCheck",
    "SchemaFinding",
    "analyse",
    "check_definition",
    "crd_for",
    "crd_label",
    "path_text",
    "resolve",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.schema.check import SchemaCheck, SchemaFinding, check_definition, crd_for, crd_label
    from karta.schema.openapi import Outcome, resolve
    from karta.schema.paths import Analysis, analyse, path_text
