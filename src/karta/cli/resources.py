"""Resource arithmetic of ``kli describe`` (section 17.5 step 8, 17.6): Kubernetes quantities, the
effective request of one pod, and the CPU/memory formatting of the Resources table.

Requests are kept as integers: GPUs (rounded up), CPU in millicores (rounded up, as Kubernetes'
``MilliValue``) and memory in bytes (rounded up). For each resource the request is used, falling
back to the limit. Which extended resources count as GPUs is configurable (``gpuResources``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = [
    "Requests",
    "container_requests",
    "format_cpu",
    "format_memory",
    "fragment_requests",
    "parse_quantity",
    "pod_requests",
]

_QUANTITY = re.compile(
    r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$"
)
_SUFFIX = {
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def parse_quantity(value: Any) -> Fraction:
    """A Kubernetes quantity (``500m``, ``16Gi``, ``1.5``, ``1e3``, or a YAML number) as a Fraction.

    Raises ValueError for anything else.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a quantity: {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a quantity: {value!r}")
        return Fraction(str(value))
    if not isinstance(value, str):
        raise ValueError(f"not a quantity: {value!r}")
    match = _QUANTITY.match(value.strip())
    if match is None:
        raise ValueError(f"not a quantity: {value!r}")
    number = Fraction(match.group(1))
    if match.group(2):
        return number * _SUFFIX[match.group(2)]
    if match.group(3):
        return number * Fraction(10) ** int(match.group(3))
    return number


@dataclass(frozen=True, slots=True)
class Requests:
    """GPUs, CPU millicores and memory bytes requested (per pod, or summed over pods)."""

    gpus: int = 0
    cpu_millis: int = 0
    memory_bytes: int = 0

    def __add__(self, other: Requests) -> Requests:
        return Requests(
            self.gpus + other.gpus,
            self.cpu_millis + other.cpu_millis,
            self.memory_bytes + other.memory_bytes,
        )

    def times(self, count: int) -> Requests:
        return Requests(self.gpus * count, self.cpu_millis * count, self.memory_bytes * count)

    def max(self, other: Requests) -> Requests:
        """Per resource, the larger of the two."""
        return Requests(
            max(self.gpus, other.gpus),
            max(self.cpu_millis, other.cpu_millis),
            max(self.memory_bytes, other.memory_bytes),
        )

    def is_zero(self) -> bool:
        return not (self.gpus or self.cpu_millis or self.memory_bytes)

    def to_dict(self) -> dict[str, int]:
        return {"gpus": self.gpus, "cpuMillis": self.cpu_millis, "memoryBytes": self.memory_bytes}


def _amount(resources: Any, name: str) -> Fraction | None:
    """The request for ``name``, falling back to the limit; None when neither parses."""
    if not isinstance(resources, Mapping):
        return None
    for part in ("requests", "limits"):
        values = resources.get(part)
        if isinstance(values, Mapping) and name in values:
            try:
                return parse_quantity(values[name])
            except ValueError:
                continue
    return None


def _requests(resources: Any, gpu_resources: Sequence[str]) -> Requests:
    cpu = _amount(resources, "cpu")
    memory = _amount(resources, "memory")
    gpus = sum((_amount(resources, name) or Fraction(0) for name in gpu_resources), Fraction(0))
    return Requests(
        gpus=max(0, math.ceil(gpus)),
        cpu_millis=max(0, math.ceil(cpu * 1000)) if cpu is not None else 0,
        memory_bytes=max(0, math.ceil(memory)) if memory is not None else 0,
    )


def container_requests(container: Any, *, gpu_resources: Sequence[str]) -> Requests:
    """One container's requests (each falling back to its limit)."""
    if not isinstance(container, Mapping):
        return Requests()
    return _requests(container.get("resources"), gpu_resources)


def _containers(value: Any) -> list[Mapping[str, Any]]:
    return [c for c in value if isinstance(c, Mapping)] if isinstance(value, list) else []


def pod_requests(pod_spec: Any, *, gpu_resources: Sequence[str]) -> Requests:
    """The effective request of one pod (17.5 step 8).

    The larger of the biggest init container and the sum of the containers plus the restartable
    (sidecar) init containers; pod-level cpu/memory requests (``spec.resources``) override; the pod
    overhead is added.
    """
    if not isinstance(pod_spec, Mapping):
        return Requests()
    total = Requests()
    for container in _containers(pod_spec.get("containers")):
        total = total + container_requests(container, gpu_resources=gpu_resources)
    biggest_init = Requests()
    for container in _containers(pod_spec.get("initContainers")):
        own = container_requests(container, gpu_resources=gpu_resources)
        if container.get("restartPolicy") == "Always":
            total = total + own
        else:
            biggest_init = biggest_init.max(own)
    effective = total.max(biggest_init)
    pod_level = pod_spec.get("resources")
    cpu = _amount(pod_level, "cpu")
    memory = _amount(pod_level, "memory")
    if cpu is not None:
        effective = Requests(effective.gpus, max(0, math.ceil(cpu * 1000)), effective.memory_bytes)
    if memory is not None:
        effective = Requests(effective.gpus, effective.cpu_millis, max(0, math.ceil(memory)))
    overhead = pod_spec.get("overhead")
    if isinstance(overhead, Mapping):
        effective = effective + _requests({"requests": overhead}, gpu_resources)
    return effective


def fragment_requests(fragment: Any, *, gpu_resources: Sequence[str]) -> Requests:
    """A fragmented pod spec's request: ``containers`` plus ``container``, else ``resources``."""
    if not isinstance(fragment, Mapping):
        return Requests()
    containers = _containers(fragment.get("containers"))
    single = fragment.get("container")
    if isinstance(single, Mapping):
        containers.append(single)
    declared = Requests()
    for container in containers:
        declared = declared + container_requests(container, gpu_resources=gpu_resources)
    if not declared.is_zero():
        return declared
    return _requests(fragment.get("resources"), gpu_resources)


def format_cpu(millis: int) -> str:
    """``500m``, ``4``, ``1500m`` (whole cores without a suffix)."""
    if millis % 1000 == 0:
        return str(millis // 1000)
    return f"{millis}m"


def format_memory(size: int) -> str:
    """Memory in the largest unit that divides it exactly: ``16Gi``, ``70M``, ``1536Mi``, ``40G``.

    Binary units are preferred; a decimal unit is used when the value is not exact in binary units
    or is much shorter in decimal ones (40G is 39062500Ki in binary units); else plain bytes.
    """
    if size == 0:
        return "0"
    binary = next(((size // f, s) for s, f in _BINARY if size % f == 0), None)
    decimal = next(((size // f, s) for s, f in _DECIMAL if size % f == 0), None)
    if binary is not None and (decimal is None or binary[0] <= decimal[0]):
        return f"{binary[0]}{binary[1]}"
    if decimal is not None:
        return f"{decimal[0]}{decimal[1]}"
    return str(size)
