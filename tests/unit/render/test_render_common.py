"""Shared rules: names (docs/spec/gang-backends.md#naming: length limits, hash suffix, invalid names are
errors), metadata (1.5), quantities and minResources arithmetic."""

from __future__ import annotations

import hashlib
import re
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


# -- names with dots (docs/spec/gang-backends.md#naming: object names are DNS-1123 subdomains) ---------------

DOTTED = "llama-3.1-8b-instruct-fp8-l4-model"


def test_dotted_names_are_object_names_and_label_values() -> None:
    from karta.model.names import dns_subdomain_error, label_value_error

    obj = train_7()
    obj["metadata"]["name"] = DOTTED
    for backend in ("volcano", "coscheduling"):
        (group,) = run(backend, obj=obj).objects
        assert group["metadata"]["name"] == f"{DOTTED}-job"
    short = object_name("a" * 50 + ".b" * 20, label_value=True)
    assert len(short) == 63
    assert dns_subdomain_error(short) is None and label_value_error(short) is None


def test_shortening_never_leaves_a_dot_before_the_hash() -> None:
    from karta.gang import shorten_name

    name = "a" * 53 + ".bbbbbbbbbbbbbbbb"  # the 54-character prefix ends with "."
    short = object_name(name, label_value=True)
    assert short == "a" * 53 + "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    assert short == shorten_name(name, 63)


def test_dns_labels_still_refuse_dots() -> None:
    with pytest.raises(GangError, match=re.escape('PodSet name "a.b" is not a DNS-1123 label')):
        dns_label("a.b", what="PodSet name")


@pytest.mark.parametrize(
    ("name", "label_value", "message"),
    [
        ("my.group", False, None),
        ("a" * 253, False, None),
        ("a" * 63, True, None),
        ("a" * 254, False, "has 254 characters; at most 253"),
        ("a" * 64, True, "has 64 characters; at most 63 (it is also written as a pod label value)"),
        ("My.Group", False, "is not a DNS-1123 subdomain"),
        ("a..b", False, "is not a DNS-1123 subdomain"),
        ("", False, "is not a DNS-1123 subdomain"),
    ],
)
def test_given_group_names_are_checked_never_shortened(
    name: str, label_value: bool, message: str | None
) -> None:
    from karta.render.common import check_group_name

    if message is None:
        assert check_group_name(name, label_value=label_value) == name
    else:
        with pytest.raises(GangError, match=re.escape(message)):
            check_group_name(name, label_value=label_value)


def test_registry_checks_the_group_name_per_backend() -> None:
    from karta.render import check_group_name, options_for

    check_group_name("volcano", options_for("volcano", {"group_name": "a" * 100}))
    with pytest.raises(GangError, match="at most 63"):
        check_group_name("coscheduling", options_for("coscheduling", {"group_name": "a" * 100}))
    with pytest.raises(GangError, match="needs KAI mode B"):
        check_group_name("kai", options_for("kai", {"group_name": "g"}))
    check_group_name("kai", options_for("kai", {"group_name": "g", "kai_managed": True}))
    check_group_name("kueue", options_for("kueue"))  # no name: nothing to check


@pytest.mark.parametrize("backend", ["kai", "workload-api", "volcano", "coscheduling"])
def test_a_given_group_name_is_for_one_gang(backend: str) -> None:
    from render_fixtures import train_7_pods

    by_replica_type = definition(
        podGroups=[
            {
                "name": "rt",
                "members": [
                    {
                        "componentName": "pytorchjob",
                        "groupByKeyPaths": ['.metadata.labels["training.kubeflow.org/replica-type"]'],
                    }
                ],
            }
        ]
    )
    extra = {"kai_managed": True} if backend == "kai" else {}
    with pytest.raises(
        GangError, match=r'group name "g" names one group object, and this workload has 2 gangs'
    ):
        run(backend, by_replica_type, pods=train_7_pods(), group_name="g", **extra)


def test_pod_patches_split_what_existing_pods_accept_from_what_only_creation_sets() -> None:
    from render_fixtures import patch_of, train_7_pods

    result = run("volcano", pods=train_7_pods())
    (first, *_) = result.pod_patches
    assert first.namespace == "ml-team"
    assert first.existing_pod_patch() == {"metadata": patch_of(result, first.pod)["metadata"]}
    assert first.creation_only() == {"schedulerName": "volcano"}
    assert first.creation_only({"spec": {"schedulerName": "volcano"}}) == {}
    (binding, *_) = run("workload-api", pods=train_7_pods()).pod_patches
    assert binding.existing_pod_patch() == {}
    assert binding.creation_only() == {"schedulingGroup": {"podGroupName": "train-7-job"}}
