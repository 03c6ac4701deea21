"""Fragmented pod specs (docs/spec/format.md#fragmented and #fragmented-write-back): the eleven fragment
fields.

Owns the table that ties each ``*Path`` field of ``fragmentedPodSpecDefinition`` to its record key
and target type, the assembly of records from independently evaluated paths, and the fixed order
in which fields are written back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta._records import record
from karta.extract.convert import (
    CONTAINER_TYPE,
    CONTAINERS_TYPE,
    NODE_AFFINITY_TYPE,
    POD_AFFINITY_TYPE,
    RESOURCE_CLAIMS_TYPE,
    RESOURCE_REQUIREMENTS_TYPE,
    STRING_MAP_TYPE,
    STRING_TYPE,
    TargetType,
)
from karta.model.types import FragmentedPodSpecDefinition


@record(slots=True)
class FragmentField:
    key: str  # the record key, e.g. ``schedulerName``
    attr: str  # the model attribute holding the path, e.g. ``scheduler_name_path``
    path_field: str  # the wire name of the path field, e.g. ``schedulerNamePath``
    target: TargetType

    def path(self, definition: FragmentedPodSpecDefinition) -> str | None:
        value: str | None = getattr(definition, self.attr)
        return value or None


def _field(key: str, target: TargetType) -> FragmentField:
    attr = "".join("_" + c.lower() if c.isupper() else c for c in key) + "_path"
    return FragmentField(key=key, attr=attr, path_field=f"{key}Path", target=target)


#: The fields in the order of the format's table (6.2).
FIELDS: tuple[FragmentField, ...] = (
    _field("schedulerName", STRING_TYPE),
    _field("labels", STRING_MAP_TYPE),
    _field("annotations", STRING_MAP_TYPE),
    _field("resources", RESOURCE_REQUIREMENTS_TYPE),
    _field("resourceClaims", RESOURCE_CLAIMS_TYPE),
    _field("podAffinity", POD_AFFINITY_TYPE),
    _field("nodeAffinity", NODE_AFFINITY_TYPE),
    _field("containers", CONTAINERS_TYPE),
    _field("container", CONTAINER_TYPE),
    _field("priorityClassName", STRING_TYPE),
    _field("image", STRING_TYPE),
)
_BY_KEY = {f.key: f for f in FIELDS}

#: The fixed write-back order of section 9.3 (it matters when paths overlap).
WRITE_ORDER: tuple[FragmentField, ...] = tuple(
    _BY_KEY[key]
    for key in (
        "schedulerName",
        "priorityClassName",
        "image",
        "labels",
        "annotations",
        "resources",
        "podAffinity",
        "nodeAffinity",
        "container",
        "resourceClaims",
        "containers",
    )
)


def assemble(
    results: Mapping[str, Sequence[Any]] | Sequence[tuple[str, Sequence[Any]]],
) -> list[dict[str, Any]]:
    """Records from converted per-field results (key -> list, or (key, list) pairs); empty values
    are left out."""
    pairs = list(results.items()) if isinstance(results, Mapping) else results
    count = max((len(values) for _, values in pairs), default=0)
    records: list[dict[str, Any]] = [{} for _ in range(count)]
    for key, values in pairs:
        for row, value in zip(records, values, strict=False):
            if value:  # converted values are str, dict or list: truthy exactly when not empty
                row[key] = value
    return records
