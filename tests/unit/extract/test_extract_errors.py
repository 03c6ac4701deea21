"""Extraction edge cases and every error substring of sections 4, 5, 7 and 9."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from karta.errors import ConversionError, ExtractionError, WriteBackError
from karta.extract import ComponentFactory, ExtractedInstance, Scale
from karta.jq import Evaluator
from karta.model.types import Karta

Build = Callable[..., Karta]


def root(build: Build, evaluator: Evaluator, obj: Any, **fields: Any) -> Any:
    return ComponentFactory(build({"name": "w", **fields}), obj, evaluator=evaluator).root()


# --- component lookup ----------------------------------------------------------------------------------


def test_component_not_found(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    factory = ComponentFactory(c1_karta, c1, evaluator=evaluator)
    with pytest.raises(ExtractionError, match="component nope not found"):
        factory.component("nope")
    with pytest.raises(ExtractionError, match="component nope not found"):
        factory.children_of("nope")
    assert factory.component("job") is factory.component("job")


def test_default_evaluator_is_shared(c1_karta: Karta, c1: dict[str, Any]) -> None:
    a, b = ComponentFactory(c1_karta, c1), ComponentFactory(c1_karta, c1)
    assert a.evaluator is b.evaluator
    assert a.component("job").instance_ids() == ["indexer", "processor"]


def test_has_pod_definitions_false(build: Build, evaluator: Evaluator) -> None:
    assert not ComponentFactory(build({"name": "w"}), {}, evaluator=evaluator).has_pod_definitions()


# --- instance ids -------------------------------------------------------------------------------------


def test_instance_id_null_is_empty(build: Build, evaluator: Evaluator) -> None:
    component = root(build, evaluator, {"items": [{"n": "a"}, {}]}, instanceIdPath=".items[].n")
    with pytest.raises(ExtractionError, match=r"instance id path contained empty string values \[a,\]"):
        component.instance_ids()


def test_instance_id_number_is_a_conversion_error(build: Build, evaluator: Evaluator) -> None:
    component = root(build, evaluator, {"items": [{"n": "a"}, {"n": 2}]}, instanceIdPath=".items[].n")
    with pytest.raises(ConversionError, match="failed to convert object at index 1 to type string"):
        component.instance_ids()


def test_instance_ids_may_be_empty(build: Build, evaluator: Evaluator) -> None:
    component = root(
        build,
        evaluator,
        {"items": []},
        instanceIdPath=".items[].n",
        specDefinition={"podTemplateSpecPath": ".items[].t"},
    )
    assert component.instance_ids() == []
    assert component.pod_template_specs() == {}
    assert component.extracted_instances() == {}


def test_instance_ids_returned_list_is_independent(build: Build, evaluator: Evaluator) -> None:
    component = root(build, evaluator, {"items": [{"n": "a"}]}, instanceIdPath=".items[].n")
    component.instance_ids().append("x")
    assert component.instance_ids() == ["a"]


# --- pairing ------------------------------------------------------------------------------------------


def test_count_mismatch_names_component_and_path(build: Build, evaluator: Evaluator) -> None:
    obj = {"items": [{"n": "a"}, {"n": "b"}], "replicas": 2}
    component = root(
        build, evaluator, obj, instanceIdPath=".items[].n", scaleDefinition={"replicasPath": ".replicas"}
    )
    with pytest.raises(ExtractionError) as info:
        component.scales()
    message = str(info.value)
    assert "instance ids count (2) does not match results count (1)" in message
    assert ".replicas" in message and "w" in message


def test_single_instance_path_with_no_results_fails(build: Build, evaluator: Evaluator) -> None:
    component = root(
        build, evaluator, {"spec": {}}, specDefinition={"podTemplateSpecPath": ".spec.t | select(.)"}
    )
    with pytest.raises(ExtractionError, match=r"instance ids count \(1\) does not match results count \(0\)"):
        component.pod_template_specs()


def test_single_instance_path_with_two_results_fails(build: Build, evaluator: Evaluator) -> None:
    component = root(build, evaluator, {"a": {}, "b": {}}, specDefinition={"podSpecPath": ".a, .b"})
    with pytest.raises(ExtractionError, match=r"instance ids count \(1\) does not match results count \(2\)"):
        component.pod_specs()


def test_null_result_is_one_empty_value(build: Build, evaluator: Evaluator) -> None:
    component = root(
        build,
        evaluator,
        {"spec": {}},
        specDefinition={"podTemplateSpecPath": ".spec.template", "metadataPath": ".spec.meta"},
    )
    assert component.pod_template_specs() == {"": {}}
    assert component.pod_metadata() == {"": {}}
    assert component.pod_specs() is None


def test_undefined_paths_are_none(build: Build, evaluator: Evaluator) -> None:
    component = root(build, evaluator, {}, specDefinition={}, scaleDefinition={})
    assert component.pod_template_specs() is None
    assert component.pod_specs() is None
    assert component.pod_metadata() is None
    assert component.fragmented_pod_specs() is None
    assert component.scales() is None
    assert component.status() is None
    assert component.extracted_instances() == {"": ExtractedInstance(instance_id="")}


def test_pod_template_dot_on_a_pod(build: Build, evaluator: Evaluator) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c"}]},
    }
    component = root(build, evaluator, pod, specDefinition={"podTemplateSpecPath": "."})
    # The Pod's apiVersion and kind are not PodTemplateSpec fields: dropped (karta.extract.trim).
    assert component.pod_template_specs() == {"": {"metadata": pod["metadata"], "spec": pod["spec"]}}


# --- typed conversion ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attr", "value", "type_name"),
    [
        ("podTemplateSpecPath", "text", "PodTemplateSpec"),
        ("podTemplateSpecPath", {"spec": []}, "PodTemplateSpec"),
        ("podTemplateSpecPath", {"metadata": {"labels": {"a": 1}}}, "PodTemplateSpec"),
        ("podTemplateSpecPath", {"spec": {"containers": {"name": "c"}}}, "PodTemplateSpec"),
        ("podTemplateSpecPath", {"spec": {"containers": ["c"]}}, "PodTemplateSpec"),
        ("podTemplateSpecPath", {"spec": {"schedulerName": 3}}, "PodTemplateSpec"),
        ("podSpecPath", {"affinity": []}, "PodSpec"),
        ("podSpecPath", {"nodeSelector": {"a": {"b": 1}}}, "PodSpec"),
        ("podSpecPath", {"tolerations": {}}, "PodSpec"),
        ("podSpecPath", {"resourceClaims": ["x"]}, "PodSpec"),
        ("podSpecPath", 5, "PodSpec"),
        ("metadataPath", {"annotations": []}, "ObjectMeta"),
        ("metadataPath", {"name": 1}, "ObjectMeta"),
    ],
)
def test_structured_shape_mismatch(
    build: Build, evaluator: Evaluator, attr: str, value: Any, type_name: str
) -> None:
    component = root(build, evaluator, {"v": value}, specDefinition={attr: ".v"})
    read = {
        "podTemplateSpecPath": component.pod_template_specs,
        "podSpecPath": component.pod_specs,
        "metadataPath": component.pod_metadata,
    }[attr]
    with pytest.raises(ConversionError, match=f"failed to convert object at index 0 to type {type_name}"):
        read()


def test_structured_accepts_nulls_numbers_and_drops_unknown_fields(
    build: Build, evaluator: Evaluator
) -> None:
    template = {
        "metadata": {"labels": None, "creationTimestamp": None, "custom": [1]},
        "spec": {
            "containers": [
                {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "2"}}, "ports": None}
            ],
            "affinity": None,
            "whatever": {"x": 1},
        },
    }
    original = copy.deepcopy(template)
    component = root(build, evaluator, {"t": template}, specDefinition={"podTemplateSpecPath": ".t"})
    assert component.pod_template_specs() == {
        "": {
            "metadata": {"labels": None, "creationTimestamp": None},
            "spec": {
                "containers": [
                    {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "2"}}, "ports": None}
                ],
                "affinity": None,
            },
        }
    }
    assert template == original  # trimmed copies, the object itself is untouched


@pytest.mark.parametrize(
    ("field", "value", "type_name"),
    [
        ("schedulerNamePath", 1, "string"),
        ("imagePath", ["x"], "string"),
        ("priorityClassNamePath", True, "string"),
        ("labelsPath", {"a": 1}, r"map\[string\]string"),
        ("annotationsPath", "x", r"map\[string\]string"),
        ("resourcesPath", [], "ResourceRequirements"),
        ("resourceClaimsPath", {}, r"\[\]PodResourceClaim"),
        ("podAffinityPath", {"requiredDuringSchedulingIgnoredDuringExecution": {}}, "PodAffinity"),
        ("nodeAffinityPath", {"preferredDuringSchedulingIgnoredDuringExecution": {}}, "NodeAffinity"),
        ("resourcesPath", {"limits": {"cpu": True}}, "ResourceRequirements"),
        ("resourcesPath", {"requests": {"custom": {"x": "1"}}}, "ResourceRequirements"),
        ("containerPath", {"name": "c", "env": {}}, "Container"),
        ("containersPath", [{"name": 3}], r"\[\]Container"),
        ("resourceClaimsPath", [{"name": 1}], r"\[\]PodResourceClaim"),
        ("nodeAffinityPath", "x", "NodeAffinity"),
        ("containersPath", {"name": "c"}, r"\[\]Container"),
        ("containerPath", [{"name": "c"}], "Container"),
    ],
)
def test_fragment_conversion_errors(
    build: Build, evaluator: Evaluator, field: str, value: Any, type_name: str
) -> None:
    component = root(
        build, evaluator, {"v": value}, specDefinition={"fragmentedPodSpecDefinition": {field: ".v"}}
    )
    with pytest.raises(ConversionError, match=f"failed to convert object at index 0 to type {type_name}"):
        component.fragmented_pod_specs()


def test_fragment_strings_and_null_fields(build: Build, evaluator: Evaluator) -> None:
    obj = {"s": {"sched": "kai", "image": "img:1", "prio": None}}
    definition = {
        "schedulerNamePath": ".s.sched",
        "imagePath": ".s.image",
        "priorityClassNamePath": ".s.prio",
        "labelsPath": ".s.labels",
    }
    component = root(build, evaluator, obj, specDefinition={"fragmentedPodSpecDefinition": definition})
    assert component.fragmented_pod_specs() == {"": {"schedulerName": "kai", "image": "img:1"}}


def test_fragment_count_is_the_largest(build: Build, evaluator: Evaluator) -> None:
    obj = {"ids": ["a", "b", "c"], "images": ["x", "y", "z"], "sched": ["s0"]}
    definition = {"imagePath": ".images[]", "schedulerNamePath": ".sched[]"}
    component = root(
        build,
        evaluator,
        obj,
        instanceIdPath=".ids[]",
        specDefinition={"fragmentedPodSpecDefinition": definition},
    )
    assert component.fragmented_pod_specs() == {
        "a": {"image": "x", "schedulerName": "s0"},
        "b": {"image": "y"},
        "c": {"image": "z"},
    }


def test_fragment_count_mismatch(build: Build, evaluator: Evaluator) -> None:
    obj = {"ids": ["a", "b"], "images": ["x", "y", "z"]}
    component = root(
        build,
        evaluator,
        obj,
        instanceIdPath=".ids[]",
        specDefinition={"fragmentedPodSpecDefinition": {"imagePath": ".images[]"}},
    )
    with pytest.raises(ExtractionError, match=r"instance ids count \(2\) does not match results count \(3\)"):
        component.fragmented_pod_specs()


# --- scale --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, 3),
        (3.0, 3),
        ("2", 2),
        ("+2", 2),
        ("-1", -1),
        ("0", 0),
        (None, None),
        (2**31 - 1, 2**31 - 1),
        ("-2147483648", -(2**31)),
    ],
)
def test_scale_values(build: Build, evaluator: Evaluator, value: Any, expected: int | None) -> None:
    component = root(build, evaluator, {"r": value}, scaleDefinition={"replicasPath": ".r"})
    assert component.scales() == {"": Scale(replicas=expected)}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.5, "is not an integer"),
        ("abc", 'replicas value "abc" at index 0 is not a number'),
        ("2.5", 'replicas value "2.5" at index 0 is not a number'),
        (" 2", "is not a number"),
        ("", 'replicas value "" at index 0 is not a number'),
        (True, "is not a number"),
        ([1], "is not a number"),
        ({"a": 1}, "is not a number"),
        (2**31, "out of the 32-bit integer range"),
        ("2147483648", "out of the 32-bit integer range"),
        (-(2**31) - 1, "out of the 32-bit integer range"),
    ],
)
def test_scale_errors(build: Build, evaluator: Evaluator, value: Any, text: str) -> None:
    component = root(build, evaluator, {"r": value}, scaleDefinition={"maxReplicasPath": ".r"})
    with pytest.raises(ConversionError) as info:
        component.scales()
    assert text in str(info.value)
    assert "maxReplicas" in str(info.value)


def test_scale_never_clamps_and_literal_paths(build: Build, evaluator: Evaluator) -> None:
    component = root(
        build,
        evaluator,
        {},
        scaleDefinition={"replicasPath": "1", "minReplicasPath": "5", "maxReplicasPath": "2"},
    )
    assert component.scales() == {"": Scale(replicas=1, min_replicas=5, max_replicas=2)}


def test_scale_missing_positions_are_none(build: Build, evaluator: Evaluator) -> None:
    obj = {"ids": ["a", "b"], "r": [1, 2], "m": [7]}
    component = root(
        build,
        evaluator,
        obj,
        instanceIdPath=".ids[]",
        scaleDefinition={"replicasPath": ".r[]", "minReplicasPath": ".m[]", "maxReplicasPath": ".none[]?"},
    )
    assert component.scales() == {"a": Scale(1, 7), "b": Scale(2)}


def test_scale_no_broadcast(build: Build, evaluator: Evaluator) -> None:
    component = root(
        build, evaluator, {"ids": ["a", "b"]}, instanceIdPath=".ids[]", scaleDefinition={"replicasPath": "1"}
    )
    with pytest.raises(ExtractionError, match="does not match results count"):
        component.scales()


# --- resource and write-back -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "text"),
    [
        ({"kind": "K", "metadata": {"name": "n"}}, "missing apiVersion"),
        ({"apiVersion": "v1", "metadata": {"name": "n"}}, "missing kind"),
        ({"apiVersion": "v1", "kind": "K", "metadata": {}}, "missing metadata.name or metadata.generateName"),
        ({"apiVersion": "v1", "kind": "K"}, "missing metadata.name or metadata.generateName"),
        ([], "missing apiVersion"),
    ],
)
def test_resource_checks(build: Build, evaluator: Evaluator, obj: Any, text: str) -> None:
    with pytest.raises(ExtractionError, match=text):
        ComponentFactory(build({"name": "w"}), obj, evaluator=evaluator).resource()


def test_resource_generate_name(build: Build, evaluator: Evaluator) -> None:
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {"generateName": "x-"}}
    assert ComponentFactory(build({"name": "w"}), obj, evaluator=evaluator).resource() is obj


def test_update_missing_instance_value(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    job = ComponentFactory(c1_karta, c1, evaluator=evaluator).component("job")
    with pytest.raises(WriteBackError, match="value not found for instance id: processor"):
        job.update_pod_spec({"indexer": {}, "other": {}})


def test_update_extra_ids_ignored_and_values_copied(
    c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator
) -> None:
    factory = ComponentFactory(c1_karta, c1, evaluator=evaluator)
    new_spec = {"containers": [{"name": "n"}]}
    factory.component("job").update_pod_spec({"indexer": new_spec, "processor": new_spec, "extra": {}})
    new_spec["containers"].append({"name": "later"})
    jobs = factory.obj["spec"]["replicatedJobs"]
    assert jobs[0]["spec"] == jobs[1]["spec"] == {"containers": [{"name": "n"}]}


def test_update_single_instance_template(build: Build, evaluator: Evaluator) -> None:
    obj = {"spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}}
    factory = ComponentFactory(
        build({"name": "w", "specDefinition": {"podTemplateSpecPath": ".spec.template"}}),
        obj,
        evaluator=evaluator,
    )
    component = factory.root()
    assert component.pod_template_specs() == {"": obj["spec"]["template"]}
    component.update_pod_template_spec({"": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}}})
    assert factory.obj == {
        "spec": {"template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}}}
    }
    assert component.pod_template_specs() == {"": factory.obj["spec"]["template"]}
    assert obj == {"spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}}


def test_update_undefined_path(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    job = ComponentFactory(c1_karta, c1, evaluator=evaluator).component("job")
    with pytest.raises(WriteBackError, match="podTemplateSpecPath is not defined"):
        job.update_pod_template_spec({"indexer": {}, "processor": {}})
    with pytest.raises(WriteBackError, match="fragmentedPodSpecDefinition is not defined"):
        job.update_fragmented_pod_spec({"indexer": {}, "processor": {}})


def test_update_rejects_wrong_shapes(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    job = ComponentFactory(c1_karta, c1, evaluator=evaluator).component("job")
    with pytest.raises(WriteBackError, match="failed to convert object at index 1 to type PodSpec"):
        job.update_pod_spec({"indexer": {}, "processor": {"containers": "x"}})


def test_update_read_only_path_fails(build: Build, evaluator: Evaluator) -> None:
    obj = {"spec": {}}
    factory = ComponentFactory(
        build({"name": "w", "specDefinition": {"podSpecPath": ".spec.pod // {}"}}), obj, evaluator=evaluator
    )
    assert factory.root().pod_specs() == {"": {}}
    with pytest.raises(WriteBackError, match="podSpecPath"):
        factory.root().update_pod_spec({"": {"containers": []}})


def test_update_zip_length_mismatch(build: Build, evaluator: Evaluator) -> None:
    obj = {"ids": ["a", "b"], "specs": [{}]}
    factory = ComponentFactory(
        build({"name": "w", "instanceIdPath": ".ids[]", "specDefinition": {"podSpecPath": ".specs[]"}}),
        obj,
        evaluator=evaluator,
    )
    with pytest.raises(WriteBackError, match="array length mismatch: expected 1 values but got 2"):
        factory.root().update_pod_spec({"a": {}, "b": {}})


def test_update_fallback_path(build: Build, evaluator: Evaluator) -> None:
    obj = {"fallback": {"containers": []}}
    factory = ComponentFactory(
        build({"name": "w", "specDefinition": {"podSpecPath": ".primary // .fallback"}}),
        obj,
        evaluator=evaluator,
    )
    factory.root().update_pod_spec({"": {"containers": [{"name": "x"}]}})
    assert factory.obj == {"fallback": {"containers": [{"name": "x"}]}}


# --- fragmented write-back --------------------------------------------------------------------------------


def _fragment_root(
    build: Build, evaluator: Evaluator, obj: Any, definition: dict[str, str], **extra: Any
) -> Any:
    karta = build({"name": "w", "specDefinition": {"fragmentedPodSpecDefinition": definition}, **extra})
    return ComponentFactory(karta, obj, evaluator=evaluator)


def test_fragment_write_path_not_defined(build: Build, evaluator: Evaluator) -> None:
    factory = _fragment_root(build, evaluator, {}, {"imagePath": ".image"})
    with pytest.raises(WriteBackError, match="path is not defined and values are not empty"):
        factory.root().update_fragmented_pod_spec({"": {"image": "x", "labels": {"a": "b"}}})
    factory.root().update_fragmented_pod_spec({"": {"image": "x", "labels": {}, "schedulerName": ""}})
    assert factory.obj == {"image": "x"}


def test_fragment_write_order_container_after_image(build: Build, evaluator: Evaluator) -> None:
    obj = {"c": {"name": "main", "image": "old"}}
    factory = _fragment_root(build, evaluator, obj, {"imagePath": ".c.image", "containerPath": ".c"})
    factory.root().update_fragmented_pod_spec(
        {"": {"image": "new", "container": {"name": "main", "image": "mine"}}}
    )
    assert factory.obj == {"c": {"name": "main", "image": "mine"}}


def test_fragment_write_single_instance_sets_every_location(build: Build, evaluator: Evaluator) -> None:
    obj = {"cs": [{"image": "a"}, {"image": "b"}]}
    factory = _fragment_root(build, evaluator, obj, {"imagePath": ".cs[].image"})
    factory.root().update_fragmented_pod_spec({"": {"image": "z"}})
    assert factory.obj == {"cs": [{"image": "z"}, {"image": "z"}]}


def test_fragment_write_zip_mismatch(build: Build, evaluator: Evaluator) -> None:
    obj = {"ids": ["a", "b"], "images": ["x"]}
    factory = _fragment_root(build, evaluator, obj, {"imagePath": ".images[]"}, instanceIdPath=".ids[]")
    with pytest.raises(WriteBackError, match="array length mismatch: expected 1 values but got 2"):
        factory.root().update_fragmented_pod_spec({"a": {"image": "1"}, "b": {"image": "2"}})
    assert factory.obj == obj


def test_fragment_write_rejects_wrong_type(build: Build, evaluator: Evaluator) -> None:
    factory = _fragment_root(build, evaluator, {}, {"labelsPath": ".labels"})
    with pytest.raises(WriteBackError, match="failed to convert object at index 0"):
        factory.root().update_fragmented_pod_spec({"": {"labels": {"a": 1}}})


def test_fragment_write_skips_empty_positions_in_the_middle(build: Build, evaluator: Evaluator) -> None:
    obj = {"ids": ["a", "b", "c"], "items": [{}, {}, {}]}
    factory = _fragment_root(
        build, evaluator, obj, {"schedulerNamePath": ".items[].scheduler"}, instanceIdPath=".ids[]"
    )
    factory.root().update_fragmented_pod_spec(
        {"a": {"schedulerName": "s"}, "b": {"schedulerName": ""}, "c": {"schedulerName": "t"}}
    )
    assert factory.obj["items"] == [{"scheduler": "s"}, {}, {"scheduler": "t"}]
