"""The slice of the extraction API (``karta.extract.ComponentFactory``) that gang logic relies on.

Structural types, so gang code and its tests depend on what they use, not on the factory class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from karta.extract.types import Scale
from karta.model.types import ComponentDefinition, Karta

__all__ = ["ComponentLike", "FactoryLike"]


class ComponentLike(Protocol):
    @property
    def definition(self) -> ComponentDefinition: ...

    def instance_ids(self) -> Sequence[str]: ...

    def scales(self) -> dict[str, Scale] | None: ...


class FactoryLike(Protocol):
    @property
    def karta(self) -> Karta: ...

    def component(self, name: str) -> ComponentLike: ...
