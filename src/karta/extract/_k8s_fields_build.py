"""The generator of ``karta/extract/_k8s_fields.py`` from the OpenAPI v3 document of the pinned
Kubernetes API server (run by ``bash hack/k8s-fields.sh [--check]``).

The original converts every extracted pod template, pod spec and fragment into its typed
Kubernetes struct, which drops the fields that struct does not have (docs/spec/format.md#typed-results). The
field tree of those structs is generated here from the Kubernetes OpenAPI of the pinned version
(``/openapi/v3/api/v1`` of the test control plane), never written by hand: ``hack/k8s-fields.sh``
starts the control plane and writes the file with :func:`render` (``hack/k8s_fields.py``: the
library does not talk to Kubernetes); an e2e test renders it again from the test cluster's document
and checks the file in the tree is current, so a stale file fails the suite.

The generated module holds only what trimming needs: for every struct reachable from the targets
(:data:`ROOTS`), its field names, and for the fields that hold structs (directly, in arrays or in
maps) the struct they hold. Scalars, quantities, int-or-strings, times and free-form objects are
leaves: trimming never descends into them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

TARGET = Path(__file__).resolve().parent / "_k8s_fields.py"
COMMAND = "bash hack/k8s-fields.sh"
OPENAPI_PATH = "/openapi/v3/api/v1"
PINNED_VERSION = "v1.37.2"  # the control plane of hack/cluster (KUBE_VERSION in hack/cluster/build.sh)

# The typed targets karta converts to (section 4): target name -> OpenAPI schema name.
ROOTS: dict[str, str] = {
    "PodTemplateSpec": "io.k8s.api.core.v1.PodTemplateSpec",
    "PodSpec": "io.k8s.api.core.v1.PodSpec",
    "ObjectMeta": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    "Container": "io.k8s.api.core.v1.Container",
    "ResourceRequirements": "io.k8s.api.core.v1.ResourceRequirements",
    "PodResourceClaim": "io.k8s.api.core.v1.PodResourceClaim",
    "PodAffinity": "io.k8s.api.core.v1.PodAffinity",
    "NodeAffinity": "io.k8s.api.core.v1.NodeAffinity",
}

_REF_PREFIX = "#/components/schemas/"


class SchemaError(Exception):
    """The OpenAPI document is not what this generator understands."""


def _ref(prop: Mapping[str, Any]) -> str | None:
    ref = prop.get("$ref")
    if ref is None:
        all_of = prop.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            ref = all_of[0].get("$ref")
    if ref is None:
        return None
    if not isinstance(ref, str) or not ref.startswith(_REF_PREFIX):
        raise SchemaError(f"unexpected reference {ref!r}")
    return ref[len(_REF_PREFIX) :]


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


class _Walker:
    def __init__(self, schemas: Mapping[str, Any]) -> None:
        self.schemas = schemas
        self.structs: dict[str, tuple[list[str], dict[str, str]]] = {}
        self.full_names: dict[str, str] = {}

    def is_struct(self, name: str) -> bool:
        schema = self.schemas.get(name)
        if not isinstance(schema, dict):
            raise SchemaError(f"schema {name} is missing")
        return isinstance(schema.get("properties"), dict)

    def descriptor(self, prop: Mapping[str, Any], where: str) -> str | None:
        """``Name``, ``[]D`` or ``{}D`` when ``prop`` holds structs (D a descriptor), else None."""
        ref = _ref(prop)
        if ref is not None:
            if not self.is_struct(ref):
                return None
            self.visit(ref)
            return _short(ref)
        kind = prop.get("type")
        if kind == "array":
            item = self.descriptor(prop.get("items") or {}, f"{where}[]")
            return None if item is None else "[]" + item
        if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
            value = self.descriptor(prop["additionalProperties"], f"{where}{{}}")
            return None if value is None else "{}" + value
        if isinstance(prop.get("properties"), dict):
            raise SchemaError(f"{where}: inline struct schemas are not supported")
        return None

    def visit(self, name: str) -> None:
        short = _short(name)
        if short in self.structs:
            if self.full_names[short] != name:
                raise SchemaError(f"two structs named {short}: {self.full_names[short]} and {name}")
            return
        self.full_names[short] = name
        fields: list[str] = []
        nested: dict[str, str] = {}
        self.structs[short] = (fields, nested)  # before the fields: recursive types terminate
        for field, prop in sorted(self.schemas[name]["properties"].items()):
            fields.append(field)
            described = self.descriptor(prop, f"{short}.{field}")
            if described is not None:
                nested[field] = described


def _wrapped(words: list[str], width: int = 96) -> list[str]:
    """``words`` joined by spaces, in pieces that fit a line (each but the last ends in a space)."""
    chunks: list[str] = []
    current = ""
    for word in words:
        if current and len(current) + len(word) > width:
            chunks.append(current)
            current = ""
        current += word + " "
    chunks.append(current.rstrip())
    return chunks


def render(openapi: Mapping[str, Any], version: str) -> str:
    """The text of the generated module for ``openapi`` (the document of ``/openapi/v3/api/v1``)."""
    try:
        schemas = openapi["components"]["schemas"]
    except (KeyError, TypeError) as exc:
        raise SchemaError("no components.schemas in the OpenAPI document") from exc
    walker = _Walker(schemas)
    for name in ROOTS.values():
        walker.visit(name)
    lines = [
        '"""The Kubernetes field tree of the typed conversion targets (generated by',
        f"``{COMMAND}`` from ``{OPENAPI_PATH}`` of kube-apiserver {version}; do not edit):",
        'see :mod:`karta.extract._k8s_fields_build` and :mod:`karta.extract.trim`."""',
        "",
        f'VERSION = "{version}"',
        "",
        "# Target name -> struct.",
        "ROOTS = {",
        *(f'    "{target}": "{_short(name)}",' for target, name in ROOTS.items()),
        "}",
        "",
        "# Struct -> (its fields, space-separated; {field: the struct it holds, as Name, []Name or {}Name}).",
        "STRUCTS = {",
    ]
    for short in sorted(walker.structs):
        fields, nested = walker.structs[short]
        lines.append(f'    "{short}": (')
        lines.extend(f'        "{chunk}"' for chunk in _wrapped(fields))
        lines[-1] += ","
        if nested:
            lines.append("        {")
            lines.extend(f'            "{field}": "{held}",' for field, held in nested.items())
            lines.append("        },")
        else:
            lines.append("        {},")
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"
