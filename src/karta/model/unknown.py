"""Unknown and missing fields (R17 and the CRD's required properties), found on the raw data.

:func:`check_fields` walks a raw definition (plain dicts and lists, camelCase keys) along the
model's field aliases before the model validates it. It reports every unknown key as
``unknown field "<json.path>"`` and every absent required property as
``missing required field "<json.path>"``, and returns a copy without the unknown keys, so that they
are dropped from the model. ``metadata`` is a Kubernetes ObjectMeta (its standard keys are fine and
not descended into); ``status`` is operator-managed (only ``conditions``, whose items are free).
Nulls are pruned, as the API server prunes them. Values of the wrong type are left alone here:
model validation reports them with their paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karta.model.base import Model
from karta.model.findings import Finding, Severity
from karta.model.schema import OBJECT_META_KEYS, REQUIRED, join_path, wire_fields
from karta.model.types import Karta, KartaStatus, ObjectMeta

__all__ = ["check_fields"]


def check_fields(data: Mapping[Any, Any], *, strict: bool) -> tuple[dict[Any, Any], list[Finding]]:
    """Return ``data`` without unknown keys, and the unknown/missing-field findings in document order."""
    walker = _Walker(Severity.ERROR if strict else Severity.WARNING)
    cleaned = walker.model(Karta, data, "")
    return cleaned, walker.findings


class _Walker:
    def __init__(self, severity: Severity) -> None:
        self.severity = severity
        self.findings: list[Finding] = []

    def _unknown(self, path: str) -> None:
        self.findings.append(Finding(self.severity, f'unknown field "{path}"', path))

    def model(self, model: type[Model], data: Mapping[Any, Any], path: str) -> dict[Any, Any]:
        if model is ObjectMeta:
            return self._metadata(data, path)
        if model is KartaStatus:
            return self._status(data, path)
        fields = wire_fields(model)
        out: dict[Any, Any] = {}
        for key, value in data.items():
            wf = fields.get(key) if isinstance(key, str) else None
            if wf is None:
                self._unknown(join_path(path, str(key)))
                continue
            if value is None:
                continue  # a null is pruned like the API server does: the field is absent
            if wf.model is not None and wf.is_list and isinstance(value, list):
                here = join_path(path, key)
                out[key] = [
                    self.model(wf.model, item, join_path(here, i)) if isinstance(item, Mapping) else item
                    for i, item in enumerate(value)
                ]
            elif wf.model is not None and not wf.is_list and isinstance(value, Mapping):
                out[key] = self.model(wf.model, value, join_path(path, key))
            else:
                out[key] = value  # a leaf: its path is only needed for a finding, so not built
        for key in REQUIRED.get(model, ()):
            # The API server prunes nulls before validation, so an explicit null is "absent" too.
            if data.get(key) is None:
                where = join_path(path, key)
                self.findings.append(Finding(self.severity, f'missing required field "{where}"', where))
        return out

    def _metadata(self, data: Mapping[Any, Any], path: str) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key, value in data.items():
            if isinstance(key, str) and key in OBJECT_META_KEYS:
                if value is not None:
                    out[key] = value
            else:
                self._unknown(join_path(path, str(key)))
        return out

    def _status(self, data: Mapping[Any, Any], path: str) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key, value in data.items():
            if key == "conditions":
                out[key] = value
            else:
                self._unknown(join_path(path, str(key)))
        return out
