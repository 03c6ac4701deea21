"""Shared rules: names (gang-backends.md 1.3: length limits, hash suffix, invalid names are errors),
metadata (1.5), quantities and minResources arithmetic."""

from __future__ import annotations

import hashlib
from decimal import Decimal

import pytest
from render_fixtures import definition, run, train_7

from karta.errors import GangError
from karta.extract.requests import format_quantity
from karta.render import render
from karta.render.common import dns_label, object_name
from karta.render.resources import parse_quantity


def test_long_names_keep_a_prefix_and_a_hash() -> None:
    name = "w" * 300
    short = object_name(name)
    assert len(short) == 253
    assert short == "w" * 244 + "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    assert (
        dns_label("x" * 64, what="PodSet name") == "x" * 54 + "-" + hashlib.sha256(b"x" * 64).hexdigest()[:8]
    )
    assert object_name("a.b-c") == "a.b-c"


@pytest.mark.parametrize("name", ["Train-7", "train_7", "-train", "a..b"])
def test_invalid_names_are_errors_not_rewritten(name: str) -> None:
    with pytest.raises(GangError, match="is not a DNS-1123 subdomain"):
        object_name(name)


def test_invalid_gang_name_reaches_the_user() -> None:
    with pytest.raises(GangError, match='group object name "train-7-Job" is not a DNS-1123 subdomain'):
        run("volcano", definition(podGroup={"name": "Job"}))


def test_namespace_is_omitted_for_a_manifest_without_one() -> None:
    obj = train_7()
    del obj["metadata"]["namespace"]
    (group,) = run("volcano", obj=obj).objects
    assert "namespace" not in group["metadata"]


def test_unknown_backend() -> None:
    from render_fixtures import EVALUATOR

    from karta.extract import ComponentFactory

    with pytest.raises(GangError, match="unknown gang backend 'yunikorn'"):
        render("yunikorn", ComponentFactory(definition(), train_7(), evaluator=EVALUATOR))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", "0.5"),
        ("2", "2"),
        ("1Gi", str(2**30)),
        ("1k", "1000"),
        ("1e3", "1000"),
        (3, "3"),
        ("1.5", "1.5"),
    ],
)
def test_parse_quantity(text: object, value: str) -> None:
    assert parse_quantity(text) == Decimal(value)


@pytest.mark.parametrize("text", ["lots", "1Zi", True])
def test_invalid_quantity(text: object) -> None:
    with pytest.raises(GangError, match="invalid resource quantity"):
        parse_quantity(text)


def test_invalid_quantity_in_a_pod_template_is_a_gang_error() -> None:
    obj = train_7()
    worker = obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    worker["containers"][0]["resources"] = {"requests": {"cpu": "1e3Ki"}}
    with pytest.raises(GangError, match="invalid resource quantity '1e3Ki'"):
        run("volcano", obj=obj, min_resources=True)
    assert run("volcano", obj=obj).objects  # without minResources the quantity is not read


@pytest.mark.parametrize(
    ("resource", "value", "text"),
    [
        ("nvidia.com/gpu", Decimal(33), "33"),
        ("cpu", Decimal("1.5"), "1500m"),
        ("memory", Decimal(2**34), "16Gi"),
        ("memory", Decimal(70_000_000), "70000000"),
        ("cpu", Decimal("0.0001"), "0.0001"),
    ],
)
def test_format_quantity(resource: str, value: Decimal, text: str) -> None:
    assert format_quantity(resource, value) == text


def test_min_resources_use_requests_over_limits_init_containers_and_overhead() -> None:
    obj = train_7()
    worker = obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    worker["containers"][0]["resources"] = {
        "limits": {"cpu": "8", "nvidia.com/gpu": 8},
        "requests": {"cpu": "4"},
    }
    worker["initContainers"] = [
        {"name": "init", "resources": {"requests": {"cpu": "16"}}},
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"memory": "1Gi"}}},
    ]
    worker["overhead"] = {"cpu": "250m"}
    (group,) = run("volcano", obj=obj, min_resources=True).objects
    # per worker: cpu max(16, 4) + 0.25, memory 1Gi, gpu 8; times 4 workers; plus the master's gpu
    assert group["spec"]["minResources"] == {"cpu": "65", "memory": "4Gi", "nvidia.com/gpu": "33"}
