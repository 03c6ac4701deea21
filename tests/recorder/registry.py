"""The operators the recorder knows: name -> the pinned version its fixtures are recorded at, the
up.sh operators it needs, and its flows and judges modules (``flows/<name>.py``,
``judges/<name>.py``). A new operator adds one line here and those two modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .judges import Judge

if TYPE_CHECKING:
    from .session import Session

__all__ = ["OPERATORS", "Flow", "Operator", "flows", "judges"]

Flow = Callable[["Session"], None]


@dataclass(frozen=True)
class Operator:
    name: str
    version: str  # the pinned version (hack/cluster/go.mod, hack/<operator>/go.mod)
    up_operators: tuple[str, ...]  # hack/cluster/up.sh --operators


OPERATORS: Mapping[str, Operator] = {
    op.name: op
    for op in (
        Operator("kube", "v1.37.2", ()),
        Operator("training", "v1.9.3", ("training",)),
        Operator("kuberay", "v1.5.0", ("kuberay",)),
    )
}


def flows(operator: str) -> Mapping[str, Mapping[str, Flow]]:
    """kind -> flow name -> flow, from ``flows/<operator>.py``'s ``FLOWS``."""
    found: Mapping[str, Mapping[str, Flow]] = importlib.import_module(
        f"tests.recorder.flows.{operator}"
    ).FLOWS
    return found


def judges(operator: str) -> Mapping[str, Judge]:
    """kind -> judge, from ``judges/<operator>.py``'s ``JUDGES``."""
    found: Mapping[str, Judge] = importlib.import_module(f"tests.recorder.judges.{operator}").JUDGES
    return found
