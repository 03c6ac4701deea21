"""Lazy package exports (PEP 562), shared by the packages whose public names must cost nothing
until used (``karta``, ``karta.jq``, ``karta.model``, ``karta.kube``): ``kli`` start-up is budgeted."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``exports[name]`` on first use and caches the value in
    ``namespace`` (the package's ``globals()``)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__


def lazy_dir(exports: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[], list[str]]:
    """A module ``__dir__`` listing what is loaded plus what can be."""

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __dir__
