"""Writing values back through a component's paths (section 9 of the format).

Every function here is pure: it returns a new workload object and never mutates its input or the
values it is given (values are copied into the result).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from karta.errors import ConversionError, JqError, WriteBackError
from karta.extract.convert import TargetType, is_empty
from karta.extract.fragments import WRITE_ORDER
from karta.jq import Evaluator, setpath
from karta.model.types import FragmentedPodSpecDefinition


def order_values(instance_ids: Sequence[str], values: Mapping[str, Any]) -> list[Any]:
    """The values in instance-id order; a missing id fails, extra ids are ignored (9.2)."""
    ordered: list[Any] = []
    for instance_id in instance_ids:
        if instance_id not in values:
            raise WriteBackError(f"value not found for instance id: {instance_id}")
        ordered.append(values[instance_id])
    return ordered


def check_values(values: Sequence[Any], target: TargetType, *, what: str) -> None:
    """Reject values that would not convert to the field's type; null is allowed."""
    for index, value in enumerate(values):
        if value is None:
            continue
        try:
            target.convert(value, index)
        except ConversionError as exc:
            raise WriteBackError(f"{what}: {exc}") from exc


def write_whole(
    *, evaluator: Evaluator, obj: Any, path: str, values: Sequence[Any], multi_instance: bool, what: str
) -> Any:
    """Replace whole values: AssignZip for a multi-instance component, else Assign of the one value."""
    values = copy.deepcopy(list(values))  # the result must never alias the caller's values
    try:
        if multi_instance:
            return evaluator.assign_zip(path, obj, values)
        return evaluator.assign(path, obj, values[0])
    except (WriteBackError, JqError) as exc:
        raise WriteBackError(f"{what} '{path}': {exc}") from exc


def write_fragments(
    *,
    evaluator: Evaluator,
    obj: Any,
    definition: FragmentedPodSpecDefinition,
    records: Sequence[Mapping[str, Any]],
    multi_instance: bool,
) -> Any:
    """Write fragmented records field by field in the order of 9.3, leaving empty positions alone (R6)."""
    result = copy.deepcopy(obj)
    for fragment in WRITE_ORDER:
        values = [record.get(fragment.key) for record in records]
        path = fragment.path(definition)
        all_empty = all(is_empty(v) for v in values)
        if path is None:
            if not all_empty:
                raise WriteBackError(
                    f"{fragment.key}: {fragment.path_field} path is not defined and values are not empty"
                )
            continue
        if all_empty:
            continue
        check_values(values, fragment.target, what=fragment.path_field)
        what = f"{fragment.path_field} '{path}'"
        try:
            targets = evaluator.paths(path, result)
        except JqError as exc:
            raise WriteBackError(f"{what}: {exc}") from exc
        if multi_instance:
            if len(targets) != len(values):
                raise WriteBackError(
                    f"{what}: array length mismatch: expected {len(targets)} values but got {len(values)}"
                )
            pairs = [(t, v) for t, v in zip(targets, values, strict=True) if not is_empty(v)]
        else:
            pairs = [(t, values[0]) for t in targets]
        try:
            for target, value in pairs:
                result = setpath(result, target, copy.deepcopy(value))
        except WriteBackError as exc:
            raise WriteBackError(f"{what}: {exc}") from exc
    return result
