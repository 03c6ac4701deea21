"""Writing values back through a component's paths (docs/spec/format.md#write-back).

Every function here is pure: it returns a new workload object and never mutates its input or the
values it is given (values are copied into the result).

[fix] The values karta hands out are trimmed to their Kubernetes struct (:mod:`karta.extract.trim`,
section 4), but writing one back keeps the fields of the user's object that the struct lacks
(KServe's ``modelFormat``/``storageUri`` in a container, a Pod's ``apiVersion``): at every location
written, :func:`karta.extract.trim.restore` puts them back. The original writes its typed value,
which drops them from the user's object.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from karta.errors import ConversionError, JqError, WriteBackError
from karta.extract import trim as trimming
from karta.extract.convert import TargetType, is_empty
from karta.extract.fragments import WRITE_ORDER
from karta.jq import Evaluator, setpath
from karta.jq.evaluator import PathElem
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
    *,
    evaluator: Evaluator,
    obj: Any,
    path: str,
    values: Sequence[Any],
    multi_instance: bool,
    what: str,
    target: TargetType | None = None,
) -> Any:
    """Replace whole values: AssignZip for a multi-instance component, else Assign of the one
    value; with ``target``, the fields of ``obj`` its Kubernetes struct lacks are kept [fix]."""
    values = copy.deepcopy(list(values))  # the result must never alias the caller's values
    try:
        if multi_instance:
            result = evaluator.assign_zip(path, obj, values)
        else:
            result = evaluator.assign(path, obj, values[0])
        if target is not None and target.trim_to is not None:
            for location in evaluator.paths(path, obj):
                result = _restore_at(obj, result, location, target.trim_to)
        return result
    except (WriteBackError, JqError) as exc:
        raise WriteBackError(f"{what} '{path}': {exc}") from exc


_MISSING = object()


def _get(data: Any, location: Sequence[PathElem]) -> Any:
    """The value at ``location`` in ``data``, or ``_MISSING``."""
    for step in location:
        in_object = step.__class__ is str and data.__class__ is dict and step in data
        in_array = step.__class__ is int and data.__class__ is list and -len(data) <= step < len(data)
        if not (in_object or in_array):
            return _MISSING
        data = data[step]
    return data


def _restore_at(before: Any, result: Any, location: Sequence[PathElem], descriptor: str) -> Any:
    """``result`` (the written object, the caller's own copy) with the fields of the value
    ``before`` had at ``location`` that the struct lacks put back (:func:`trimming.restore`)."""
    previous, written = _get(before, location), _get(result, location)
    if previous is _MISSING or written is _MISSING or previous is None or written is None:
        return result
    restored = trimming.restore(previous, written, descriptor)
    return result if restored is written else setpath(result, location, restored)


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
                written = copy.deepcopy(value)
                descriptor = fragment.target.trim_to
                if descriptor is not None:  # [fix] the fields the struct lacks stay
                    previous = _get(result, target)
                    if previous is not _MISSING and previous is not None and written is not None:
                        written = trimming.restore(previous, written, descriptor)
                result = setpath(result, target, written)
        except WriteBackError as exc:
            raise WriteBackError(f"{what}: {exc}") from exc
    return result
