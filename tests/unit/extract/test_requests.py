"""Quantities, effective pod requests (17.5 step 8), exact (scheduler objects) and rounded (the
Resources table formats of 17.6)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karta.errors import KartaError, QuantityError
from karta.extract.requests import (
    Requests,
    container_requests,
    format_cpu,
    format_memory,
    format_quantity,
    fragment_requests,
    fragment_resources,
    parse_quantity,
    pod_requests,
    pod_resources,
    resource_amounts,
)

GPU = ("nvidia.com/gpu",)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Fraction(1, 2)),
        ("4", Fraction(4)),
        ("1.5", Fraction(3, 2)),
        ("16Gi", Fraction(16 * 2**30)),
        ("70M", Fraction(70_000_000)),
        ("128974848", Fraction(128974848)),
        ("129e6", Fraction(129_000_000)),
        ("1E3", Fraction(1000)),
        ("100n", Fraction(1, 10**7)),
        ("2k", Fraction(2000)),
        (" 1Ki ", Fraction(1024)),
        (".5", Fraction(1, 2)),
        (3, Fraction(3)),
        (0.25, Fraction(1, 4)),
    ],
)
def test_parse_quantity(text: Any, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("bad", ["", "abc", "1Gb", "1 Gi", "--1", None, True, [], float("nan"), "1e"])
def test_parse_quantity_rejects(bad: Any) -> None:
    with pytest.raises(ValueError, match="not a quantity"):
        parse_quantity(bad)


@pytest.mark.parametrize(
    ("millis", "text"), [(0, "0"), (500, "500m"), (4000, "4"), (1500, "1500m"), (68000, "68"), (1, "1m")]
)
def test_format_cpu(millis: int, text: str) -> None:
    assert format_cpu(millis) == text


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0"),
        (16 * 2**30, "16Gi"),
        (272 * 2**30, "272Gi"),
        (70_000_000, "70M"),
        (1536 * 2**20, "1536Mi"),
        (40_000_000_000, "40G"),  # exact in Ki only, far shorter in G
        (1000 * 1024, "1000Ki"),  # as short in binary: binary wins
        (1023, "1023"),
        (2**60, "1Ei"),
    ],
)
def test_format_memory(size: int, text: str) -> None:
    assert format_memory(size) == text


@given(st.integers(min_value=0, max_value=2**62))
def test_format_memory_round_trips(size: int) -> None:
    assert parse_quantity(format_memory(size)) == size


def c(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "resources": resources, **extra}


def test_container_request_falls_back_to_limit_per_resource() -> None:
    container = c({"cpu": "500m"}, {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": 2})
    assert container_requests(container, gpu_resources=GPU) == Requests(2, 500, 2**30)
    assert container_requests({"name": "x"}, gpu_resources=GPU) == Requests()
    assert container_requests("junk", gpu_resources=GPU) == Requests()
    assert container_requests(c({"cpu": "lots"}, {"cpu": "1"}), gpu_resources=GPU) == Requests(0, 1000, 0)


def test_gpu_resource_names_are_configurable_and_summed() -> None:
    container = c({"nvidia.com/gpu": 1, "amd.com/gpu": 2})
    assert container_requests(container, gpu_resources=GPU).gpus == 1
    assert container_requests(container, gpu_resources=("amd.com/gpu",)).gpus == 2
    assert container_requests(container, gpu_resources=("nvidia.com/gpu", "amd.com/gpu")).gpus == 3


def test_pod_request_is_max_of_biggest_init_and_containers_plus_sidecars() -> None:
    spec = {
        "initContainers": [
            c({"cpu": "3", "memory": "100Mi"}),
            c({"cpu": "1"}, restartPolicy="Always"),  # sidecar: runs alongside the containers
        ],
        "containers": [c({"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "1"}), c({"cpu": "500m"})],
    }
    # containers + sidecar: cpu 2, memory 1Gi, gpu 1; biggest init: cpu 3, memory 100Mi
    assert pod_requests(spec, gpu_resources=GPU) == Requests(1, 3000, 2**30)


def test_pod_level_requests_override_and_overhead_is_added() -> None:
    spec = {
        "containers": [c({"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 1})],
        "resources": {"requests": {"cpu": "4"}, "limits": {"memory": "8Gi"}},
        "overhead": {"cpu": "250m", "memory": "120Mi"},
    }
    assert pod_requests(spec, gpu_resources=GPU) == Requests(1, 4250, 8 * 2**30 + 120 * 2**20)


def test_pod_request_of_junk_is_zero() -> None:
    assert pod_requests(None, gpu_resources=GPU) == Requests()
    assert pod_requests({"containers": "nope", "initContainers": [1, None]}, gpu_resources=GPU) == Requests()


def test_fragment_request_uses_containers_then_resources() -> None:
    fragment = {
        "containers": [c({"cpu": "1"})],
        "container": c({"memory": "2Gi"}),
        "resources": {"requests": {"cpu": "16"}},
    }
    assert fragment_requests(fragment, gpu_resources=GPU) == Requests(0, 1000, 2 * 2**30)
    only_resources = {
        "resources": {"limits": {"nvidia.com/gpu": "4", "cpu": "8"}},
        "container": {"name": "x"},
    }
    assert fragment_requests(only_resources, gpu_resources=GPU) == Requests(4, 8000, 0)
    assert fragment_requests({}, gpu_resources=GPU) == Requests()
    assert fragment_requests(None, gpu_resources=GPU) == Requests()


def test_requests_arithmetic() -> None:
    a = Requests(1, 500, 1024)
    assert a + a == Requests(2, 1000, 2048)
    assert a.times(3) == Requests(3, 1500, 3072)
    assert a.max(Requests(0, 800, 10)) == Requests(1, 800, 1024)
    assert a.to_dict() == {"gpus": 1, "cpuMillis": 500, "memoryBytes": 1024}
    assert Requests().is_zero() and not a.is_zero()


def test_fractional_values_round_up() -> None:
    assert container_requests(c({"cpu": "100u", "memory": "1.5"}), gpu_resources=GPU) == Requests(0, 1, 2)


@pytest.mark.parametrize("bad", ["1e3Ki", "2e1m", "1.2.3", float("inf")])
def test_kubernetes_grammar_only(bad: Any) -> None:
    # an exponent and a suffix together are not a Kubernetes quantity (nor is a non-finite number)
    with pytest.raises(QuantityError) as caught:
        parse_quantity(bad)
    assert isinstance(caught.value, KartaError) and isinstance(caught.value, ValueError)
    assert caught.value.value == bad


def test_strict_amounts_raise_and_lenient_ones_fall_back_to_the_limit() -> None:
    block = {"requests": {"cpu": "lots", "memory": "1Gi"}, "limits": {"cpu": "2"}}
    with pytest.raises(QuantityError, match="not a quantity: 'lots'"):
        resource_amounts(block)
    assert resource_amounts(block, lenient=True) == {"cpu": Fraction(2), "memory": Fraction(2**30)}
    with pytest.raises(QuantityError):  # strict: an invalid limit is an error even under a request
        resource_amounts({"requests": {"cpu": "1"}, "limits": {"cpu": "x"}})
    assert resource_amounts("junk") == {}


def test_exact_pod_resources_keep_every_resource_unrounded() -> None:
    spec = {
        "initContainers": [
            c({"cpu": "3"}),
            c({"memory": "100u"}, restartPolicy="Always"),
        ],
        "containers": [c({"cpu": "100u", "ephemeral-storage": "1Gi"}), c({"cpu": "100u"})],
        "resources": {"limits": {"memory": "2Gi", "nvidia.com/gpu": "8"}},  # gpu: not a pod-level override
        "overhead": {"cpu": "250m"},
    }
    assert pod_resources(spec) == {
        "cpu": Fraction(3) + Fraction(1, 4),
        "memory": Fraction(2 * 2**30),
        "ephemeral-storage": Fraction(2**30),
    }
    # rounded per block: each 100u container counts 1m, 3 cores win; memory is rounded up to 1 byte
    assert pod_requests(spec, gpu_resources=GPU) == Requests(0, 3250, 2 * 2**30)
    with pytest.raises(QuantityError):
        pod_resources({"containers": [c({"cpu": "lots"})]})
    assert pod_requests({"containers": [c({"cpu": "lots"})]}, gpu_resources=GPU) == Requests()


def test_fragments_exact_and_rounded_differ_on_what_declares_something() -> None:
    fragment = {"containers": [c({"cpu": "0"})], "resources": {"requests": {"cpu": "16"}}}
    assert fragment_resources(fragment) == {"cpu": Fraction(0)}  # the containers name a resource
    assert fragment_requests(fragment, gpu_resources=GPU) == Requests(0, 16000, 0)  # but request none
    assert fragment_resources({"container": {"name": "x"}, "resources": {"limits": {"cpu": "8"}}}) == {
        "cpu": Fraction(8)
    }
    assert fragment_resources(None) == {}


@pytest.mark.parametrize(
    ("resource", "value", "text"),
    [
        ("cpu", Fraction(3, 2), "1500m"),
        ("cpu", Fraction(1, 10**4), "0.0001"),
        ("cpu", Fraction(123456789, 10**9), "0.123456789"),
        ("memory", Fraction(3 * 2**40), "3Ti"),
        ("memory", Fraction(1, 2**40), "0.0000000000009094947017729282379150390625"),
        ("ephemeral-storage", 2**31, "2Gi"),
        ("nvidia.com/gpu", 0, "0"),
    ],
)
def test_format_quantity_is_exact(resource: str, value: Fraction | int, text: str) -> None:
    assert format_quantity(resource, value) == text
    assert parse_quantity(text) == value
