"""Pod requests and Kubernetes quantities, the one implementation of docs/spec/format.md#workload-tree step 8
for every consumer of the library: ``kli describe`` and ``kli get`` (per-pod GPUs, CPU and memory), the
renderers' ``minResources`` (docs/spec/gang-backends.md#volcano-rendering step 5,
#coscheduling-rendering step 3) and the controller.

The rule, for every resource of a ``resources`` block, is the request, falling back to the limit.
A pod (template or spec style) requests the larger of its biggest init container and the sum of its
containers plus its restartable (sidecar) init containers; pod-level cpu/memory requests override;
the pod overhead is added. A fragmented pod spec requests the sum of ``containers`` plus
``container``, or its ``resources`` when those declare nothing.

Pure arithmetic on pod-spec mappings (nothing is extracted here), counted in one of two ways:

- exact (:func:`pod_resources`, :func:`fragment_resources`): every resource as a Fraction, and an
  invalid quantity is a :class:`~karta.errors.QuantityError`; scheduler objects are computed from
  these and written with :func:`format_quantity`;
- rounded (:func:`pod_requests`, :func:`fragment_requests`, :func:`container_requests`): the GPUs
  (the configured extended resources, summed), CPU millicores and memory bytes of
  :class:`Requests`, each ``resources`` block rounded up on its own (as Kubernetes' ``MilliValue``)
  and never below 0, an invalid quantity skipped (so an invalid request falls back to the limit);
  ``kli`` displays these with :func:`format_cpu` and :func:`format_memory`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from karta._records import record
from karta.errors import QuantityError
from karta.extract.types import DEFAULT_GPU_RESOURCES, RequestsDict

__all__ = [
    "DEFAULT_GPU_RESOURCES",
    "Requests",
    "RequestsDict",
    "ResourceList",
    "add_resources",
    "container_requests",
    "format_cpu",
    "format_memory",
    "format_quantity",
    "fragment_requests",
    "fragment_resources",
    "parse_quantity",
    "pod_requests",
    "pod_resources",
    "resource_amounts",
]

ResourceList = dict[str, Fraction]
"""Resource name → amount (cores for ``cpu``, bytes for ``memory``)."""

# Kubernetes' grammar: a signed decimal number, then one binary or decimal SI suffix or a decimal
# exponent (never both)
_QUANTITY = re.compile(
    r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$"
)
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))
_SUFFIX = {
    **{suffix: Fraction(size) for suffix, size in _BINARY + _DECIMAL},
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
}


def parse_quantity(value: Any) -> Fraction:
    """A Kubernetes quantity (``500m``, ``16Gi``, ``1.5``, ``1e3``, or a YAML number) as a Fraction.

    Raises QuantityError (a ValueError) for anything else, booleans and non-finite floats included.
    """
    if isinstance(value, bool):
        raise QuantityError(value)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(value)
        return Fraction(str(value))
    if not isinstance(value, str):
        raise QuantityError(value)
    match = _QUANTITY.match(value.strip())
    if match is None:
        raise QuantityError(value)
    number = Fraction(match.group(1))
    if match.group(2):
        return number * _SUFFIX[match.group(2)]
    if match.group(3):
        return number * Fraction(10) ** int(match.group(3))
    return number


def resource_amounts(resources: Any, *, lenient: bool = False) -> ResourceList:
    """Per resource named in one ``{requests, limits}`` block, the request, falling back to the limit.

    Strict (the default), every quantity of the block must parse (QuantityError otherwise); lenient,
    one that does not is skipped, so an invalid request falls back to a valid limit.
    """
    out: ResourceList = {}
    if not isinstance(resources, Mapping):
        return out
    for part in ("limits", "requests"):  # requests override limits
        values = resources.get(part)
        if not isinstance(values, Mapping):
            continue
        for key, value in values.items():
            try:
                out[str(key)] = parse_quantity(value)
            except QuantityError:
                if not lenient:
                    raise
    return out


def add_resources(total: ResourceList, other: Mapping[str, Fraction], *, times: int = 1) -> None:
    """``total += other × times``, per resource."""
    for key, value in other.items():
        total[key] = total.get(key, Fraction(0)) + value * times


# --- the rule, for a way of counting one resources block ------------------------------------------

_Block = Callable[[Any], ResourceList]  # a resources block (or None) → what the caller counts of it


def _containers(value: Any) -> list[Mapping[str, Any]]:
    return [c for c in value if isinstance(c, Mapping)] if isinstance(value, list) else []


def _pod(pod_spec: Any, block: _Block) -> ResourceList:
    if not isinstance(pod_spec, Mapping):
        return {}
    total: ResourceList = {}
    for container in _containers(pod_spec.get("containers")):
        add_resources(total, block(container.get("resources")))
    plain_inits: list[ResourceList] = []
    for container in _containers(pod_spec.get("initContainers")):
        if container.get("restartPolicy") == "Always":  # a sidecar runs alongside the containers
            add_resources(total, block(container.get("resources")))
        else:
            plain_inits.append(block(container.get("resources")))
    for own in plain_inits:
        for key, value in own.items():
            total[key] = max(total.get(key, Fraction(0)), value)
    pod_level = block(pod_spec.get("resources"))
    total.update({key: pod_level[key] for key in ("cpu", "memory") if key in pod_level})
    overhead = pod_spec.get("overhead")
    if isinstance(overhead, Mapping):
        add_resources(total, block({"requests": overhead}))
    return total


def _fragment(fragment: Any, block: _Block, declares: Callable[[ResourceList], bool]) -> ResourceList:
    if not isinstance(fragment, Mapping):
        return {}
    containers = _containers(fragment.get("containers"))
    single = fragment.get("container")
    if isinstance(single, Mapping):
        containers.append(single)
    total: ResourceList = {}
    for container in containers:
        add_resources(total, block(container.get("resources")))
    return total if declares(total) else block(fragment.get("resources"))


# --- exact ----------------------------------------------------------------------------------------


def pod_resources(pod_spec: Any) -> ResourceList:
    """The effective request of one pod, every resource exact; QuantityError for an invalid quantity."""
    return _pod(pod_spec, resource_amounts)


def fragment_resources(fragment: Any) -> ResourceList:
    """A fragmented pod spec's request, every resource exact: ``containers`` plus ``container``, or
    ``resources`` when they name no resource; QuantityError for an invalid quantity."""
    return _fragment(fragment, resource_amounts, bool)


def format_quantity(resource: str, value: Fraction | Decimal | int) -> str:
    """Canonical text for a scheduler object: integers plain (binary suffixes for exact memory and
    storage sizes), else millis (``1500m``), else the exact decimal value."""
    amount = Fraction(value)
    if amount.denominator == 1:
        number = amount.numerator
        if number and ("memory" in resource or "storage" in resource):
            for suffix, size in _BINARY:
                if number % size == 0:
                    return f"{number // size}{suffix}"
        return str(number)
    millis = amount * 1000
    if millis.denominator == 1:
        return f"{millis.numerator}m"
    with localcontext() as context:  # wide enough for the exact value of a terminating fraction
        context.prec = max(28, len(str(amount.numerator)) + 4 * len(str(amount.denominator)))
        decimal = Decimal(amount.numerator) / Decimal(amount.denominator)
        return format(decimal.normalize(), "f")


# --- rounded --------------------------------------------------------------------------------------

_GPUS = "gpus"  # the rounded block's key for the summed GPU resources


@record(slots=True)
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

    def to_dict(self) -> RequestsDict:
        return {"gpus": self.gpus, "cpuMillis": self.cpu_millis, "memoryBytes": self.memory_bytes}


def _rounded(gpu_resources: Sequence[str]) -> _Block:
    """One block's GPUs, millicores and bytes, each rounded up and at least 0; invalid ones skipped."""

    def block(resources: Any) -> ResourceList:
        amounts = resource_amounts(resources, lenient=True)
        out: ResourceList = {}
        gpus = [amounts[name] for name in gpu_resources if name in amounts]
        if gpus:
            out[_GPUS] = Fraction(max(0, math.ceil(sum(gpus))))
        if "cpu" in amounts:
            out["cpu"] = Fraction(max(0, math.ceil(amounts["cpu"] * 1000)))
        if "memory" in amounts:
            out["memory"] = Fraction(max(0, math.ceil(amounts["memory"])))
        return out

    return block


def _requests(rounded: Mapping[str, Fraction]) -> Requests:
    return Requests(
        gpus=int(rounded.get(_GPUS, 0)),
        cpu_millis=int(rounded.get("cpu", 0)),
        memory_bytes=int(rounded.get("memory", 0)),
    )


def container_requests(container: Any, *, gpu_resources: Sequence[str]) -> Requests:
    """One container's requests (each falling back to its limit)."""
    if not isinstance(container, Mapping):
        return Requests()
    return _requests(_rounded(gpu_resources)(container.get("resources")))


def pod_requests(pod_spec: Any, *, gpu_resources: Sequence[str]) -> Requests:
    """The effective request of one pod, rounded (see the module docstring)."""
    return _requests(_pod(pod_spec, _rounded(gpu_resources)))


def fragment_requests(fragment: Any, *, gpu_resources: Sequence[str]) -> Requests:
    """A fragmented pod spec's request, rounded: ``containers`` plus ``container``, else ``resources``
    when those request no GPU, CPU or memory."""
    return _requests(_fragment(fragment, _rounded(gpu_resources), lambda total: any(total.values())))


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
