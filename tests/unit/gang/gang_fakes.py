"""A minimal stand-in for ``karta.extract.ComponentFactory`` used by the gang tests.

It evaluates ``instanceIdPath`` and the scale paths directly (positional pairing, numeric strings
accepted), which is all that subtree scale and gang plans read from a factory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from karta.extract.types import Scale
from karta.jq import Evaluator
from karta.model.types import ComponentDefinition, Karta

EVALUATOR = Evaluator(trusted=True)


def _int(value: Any) -> int | None:
    if value is None:
        return None
    return int(value)


@dataclass
class FakeComponent:
    definition: ComponentDefinition
    obj: dict[str, Any]

    @property
    def name(self) -> str:
        return self.definition.name

    def instance_ids(self) -> list[str]:
        if not self.definition.instance_id_path:
            return [""]
        return [str(v) for v in EVALUATOR.evaluate(self.definition.instance_id_path, self.obj)]

    def scales(self) -> dict[str, Scale] | None:
        scale = self.definition.scale_definition
        if scale is None:
            return None
        columns = [
            EVALUATOR.evaluate(path, self.obj) if path else []
            for path in (scale.replicas_path, scale.min_replicas_path, scale.max_replicas_path)
        ]
        count = max(len(c) for c in columns)
        ids = self.instance_ids()
        assert count == len(ids), (count, ids)
        return {
            instance: Scale(*(_int(c[i]) if i < len(c) else None for c in columns))
            for i, instance in enumerate(ids)
        }


class FakeFactory:
    def __init__(self, karta: Karta, obj: dict[str, Any]) -> None:
        self.karta = karta
        self.obj = obj
        self.evaluator = EVALUATOR

    def component(self, name: str) -> FakeComponent:
        for definition in self.karta.components:
            if definition.name == name:
                return FakeComponent(definition, self.obj)
        raise KeyError(name)
