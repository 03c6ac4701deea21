"""Extracted pod templates, pod specs, metadata and fragments are trimmed to the Kubernetes struct
of their target type [compat] (karta.extract.trim, field tree generated from the pinned OpenAPI):
unknown fields are dropped, the object is never modified, nothing is copied when nothing is
dropped, and a struct-holding field of the wrong JSON type is a conversion error naming it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from karta.errors import ConversionError
from karta.extract import ComponentFactory, trim
from karta.extract.convert import (
    CONTAINER_TYPE,
    CONTAINERS_TYPE,
    OBJECT_META_TYPE,
    POD_SPEC_TYPE,
    POD_TEMPLATE_SPEC_TYPE,
    RESOURCE_REQUIREMENTS_TYPE,
    STRING_TYPE,
)
from karta.jq import Evaluator
from karta.model.types import Karta

Build = Callable[..., Karta]

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "a"}, "managedFields": [{"fieldsV1": {"f:x": {}}}]},
    "spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}},
    },
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
}

KSVC_TEMPLATE = {  # a Knative Service's .spec.template
    "metadata": {"annotations": {"autoscaling.knative.dev/min-scale": "1"}},
    "spec": {
        "containerConcurrency": 10,
        "timeoutSeconds": 300,
        "containers": [{"image": "img", "ports": [{"containerPort": 8080, "appProtocol": "h2c"}]}],
    },
}

PREDICTOR = {  # a KServe predictor: a PodSpec with its own fields, a container with model fields
    "minReplicas": 1,
    "model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://m"},
    "containers": [
        {"name": "kserve-container", "image": "i", "modelFormat": {"name": "x"}, "storageUri": "s3://m"}
    ],
    "serviceAccountName": "sa",
}


def component(build: Build, evaluator: Evaluator, obj: Any, **spec: Any) -> Any:
    return ComponentFactory(build({"name": "w", "specDefinition": spec}), obj, evaluator=evaluator).root()


def test_a_pod_as_its_own_template_loses_apiversion_kind_and_status(
    build: Build, evaluator: Evaluator
) -> None:
    pod = copy.deepcopy(POD)
    templates = component(build, evaluator, pod, podTemplateSpecPath=".").pod_template_specs()
    assert templates == {"": {"metadata": POD["metadata"], "spec": POD["spec"]}}
    assert pod == POD
    # only the top level was copied: the kept parts are the object's own
    assert templates[""]["spec"] is pod["spec"]


def test_knative_template_loses_container_concurrency_and_timeout(build: Build, evaluator: Evaluator) -> None:
    obj = {"spec": {"template": copy.deepcopy(KSVC_TEMPLATE)}}
    (template,) = (
        component(build, evaluator, obj, podTemplateSpecPath=".spec.template").pod_template_specs().values()
    )
    assert template == {
        "metadata": KSVC_TEMPLATE["metadata"],
        "spec": {"containers": [{"image": "img", "ports": [{"containerPort": 8080}]}]},
    }
    assert obj["spec"]["template"] == KSVC_TEMPLATE


def test_kserve_predictor_pod_spec_and_container_fragments(build: Build, evaluator: Evaluator) -> None:
    obj = {"spec": {"predictor": copy.deepcopy(PREDICTOR)}}
    specs = component(build, evaluator, obj, podSpecPath=".spec.predictor").pod_specs()
    assert specs == {
        "": {"containers": [{"name": "kserve-container", "image": "i"}], "serviceAccountName": "sa"}
    }
    fragments = component(
        build,
        evaluator,
        obj,
        fragmentedPodSpecDefinition={
            "containersPath": ".spec.predictor.containers",
            "containerPath": ".spec.predictor.containers[0]",
        },
    ).fragmented_pod_specs()
    kept = {"name": "kserve-container", "image": "i"}
    assert fragments == {"": {"containers": [kept], "container": kept}}
    assert obj["spec"]["predictor"] == PREDICTOR


def test_nothing_dropped_is_the_same_object() -> None:
    template = {"metadata": {"name": "x"}, "spec": copy.deepcopy(POD["spec"])}
    assert POD_TEMPLATE_SPEC_TYPE.convert(template, 0) is template
    assert POD_TEMPLATE_SPEC_TYPE.convert_all([template])[0] is template
    assert STRING_TYPE.trim_to is None


def test_nulls_stay_and_unknown_nulls_go() -> None:
    spec = {"containers": None, "affinity": None, "runtimeClassName": None, "extra": None}
    assert POD_SPEC_TYPE.convert(spec, 0) == {"containers": None, "affinity": None, "runtimeClassName": None}
    assert CONTAINERS_TYPE.convert([None, {"name": "a", "x": 1}], 0) == [None, {"name": "a"}]
    # arrays of structs without structs inside (a call-free loop when nothing is dropped)
    tolerations = [{"key": "a"}, None, {"key": "b", "x": 1}]
    assert POD_SPEC_TYPE.convert({"tolerations": tolerations}, 0) == {
        "tolerations": [{"key": "a"}, None, {"key": "b"}]
    }
    kept = {"tolerations": [{"key": "a"}, {"key": "b", "effect": "NoSchedule"}]}
    assert POD_SPEC_TYPE.convert(kept, 0) is kept


def test_plain_items_of_an_array_of_structs_pass_and_the_others_are_trimmed() -> None:
    # A volume whose source holds no structs (or only plain ones) is passed in the array's loop;
    # one with something to drop is trimmed, and only it is copied.
    plain = [
        {"name": "a", "emptyDir": {}},
        None,
        {"name": "b", "configMap": {"name": "c", "items": [{"key": "k", "path": "p"}]}, "secret": None},
        {"name": "c", "projected": {"sources": [{"configMap": {"name": "x"}}]}},
    ]
    kept = {"volumes": plain}
    assert POD_SPEC_TYPE.convert(kept, 0) is kept
    dropped = [
        *copy.deepcopy(plain),
        {"name": "d", "emptyDir": {"medium": "Memory", "x": 1}},
        {"name": "e", "configMap": {"items": [{"key": "k", "y": 2}]}},
        {"name": "f", "hostPath": {"path": "/p"}, "z": 3},
    ]
    out = POD_SPEC_TYPE.convert({"volumes": dropped}, 0)["volumes"]
    assert out[:4] == plain and all(a is b for a, b in zip(out[:4], dropped[:4], strict=True))
    assert out[4:] == [
        {"name": "d", "emptyDir": {"medium": "Memory"}},
        {"name": "e", "configMap": {"items": [{"key": "k"}]}},
        {"name": "f", "hostPath": {"path": "/p"}},
    ]
    assert dropped[4]["emptyDir"] == {"medium": "Memory", "x": 1}  # the input is not modified
    containers = [{"name": "c", "ports": [{"containerPort": 1}], "resources": {"limits": {"cpu": 1}}}]
    assert CONTAINERS_TYPE.convert(containers, 0) is containers


@pytest.mark.parametrize(
    ("volumes", "where", "expected", "got"),
    [
        ([{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": []}], "[1].emptyDir", "object", "array"),
        ([{"name": "a", "configMap": {"items": {}}}], "[0].configMap.items", "array", "object"),
        ([{"name": "a", "emptyDir": {}}, "v"], "[1]", "object", "string"),
        ([{"name": "a", "x": 1, "secret": {"items": [1]}}], "[0].secret.items[0]", "object", "number"),
    ],
)
def test_a_mismatch_in_an_array_of_structs_is_placed(
    volumes: list[Any], where: str, expected: str, got: str
) -> None:
    detail = f".volumes{where}: expected {expected}, got {got}"
    message = f"failed to convert object at index 0 to type PodSpec: {detail}"
    with pytest.raises(ConversionError) as info:
        POD_SPEC_TYPE.convert({"volumes": volumes}, 0)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("spec", "where", "expected", "got"),
    [
        (
            {"containers": [{"name": "a"}, {"name": "b", "ports": "80"}]},
            ".containers[1].ports",
            "array",
            "string",
        ),
        (
            {"containers": [{"ports": [{"containerPort": 1}, 2]}]},
            ".containers[0].ports[1]",
            "object",
            "number",
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": {}}
                    }
                }
            },
            ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
            "array",
            "object",
        ),
        # the first field in the object's own order is the one named
        ({"volumes": [1], "tolerations": "x", "dnsConfig": []}, ".volumes[0]", "object", "number"),
        ({"tolerations": "x", "volumes": [1]}, ".tolerations", "array", "string"),
    ],
)
def test_a_struct_field_of_the_wrong_type_is_a_conversion_error(
    spec: dict[str, Any], where: str, expected: str, got: str
) -> None:
    message = f"failed to convert object at index 1 to type PodSpec: {where}: expected {expected}, got {got}"
    with pytest.raises(ConversionError) as info:
        POD_SPEC_TYPE.convert_all([{}, spec])
    assert str(info.value) == message
    with pytest.raises(ConversionError) as info:
        POD_SPEC_TYPE.convert(spec, 1)
    assert str(info.value) == message


def test_wrong_type_under_extraction_general_and_generated(build: Build, evaluator: Evaluator) -> None:
    # The generated extraction code declines the value; the general code gives the message.
    obj = {"spec": {"template": {"spec": {"containers": [{"name": "c", "env": {"A": "1"}}]}}}}
    for _ in range(3):  # the generated code is used from a definition's second use on
        c = component(build, evaluator, obj, podTemplateSpecPath=".spec.template")
        with pytest.raises(
            ConversionError, match=r"PodTemplateSpec: \.spec\.containers\[0\]\.env: expected array"
        ):
            c.pod_template_specs()
    fn = c._plan.extraction_fn()
    assert fn is not None and fn(obj, 100) is None  # declined
    fine = {"spec": {"template": {"spec": {"containers": [{"name": "c", "env": [], "x": 1}]}, "y": 2}}}
    parts = fn(fine, 100)
    assert parts is not None
    assert parts["pod_template_spec_path"] == [{"spec": {"containers": [{"name": "c", "env": []}]}}]


def test_maps_of_structs_and_recursive_structs() -> None:
    compiler = trim._Compiler(
        {
            "Tree": ("name children byName", {"children": "[]Tree", "byName": "{}Leaf"}),
            "Leaf": ("v", {}),
        }
    )
    tree = compiler.struct("Tree")
    value = {
        "name": "r",
        "x": 1,
        "children": [{"name": "a", "children": []}],
        "byName": {"k": {"v": 1, "w": 2}},
    }
    assert tree(value) == {
        "name": "r",
        "children": [{"name": "a", "children": []}],
        "byName": {"k": {"v": 1}},
    }
    same = {"children": [{"byName": {"k": {"v": 1}, "n": None}}]}
    assert tree(same) is same
    with pytest.raises(trim.Mismatch) as info:
        tree({"children": [{"byName": {"k": 3}}]})
    assert info.value.describe() == ".children[0].byName.k: expected object, got number"


# --- the generated extraction code trims in its shape tests ---------------------------------------

SAMPLES = [
    copy.deepcopy(POD),
    {"metadata": {"name": "x"}, "spec": copy.deepcopy(POD["spec"])},
    copy.deepcopy(KSVC_TEMPLATE),
    {"spec": copy.deepcopy(PREDICTOR)},
    {"spec": {"containers": [{"name": "a", "env": [{"name": "E", "valueFrom": {"x": 1, "fieldRef": {}}}]}]}},
    {"spec": {"dnsConfig": {"options": [{"name": "ndots", "y": 1}]}, "extra": {}}},
    {"metadata": {"labels": {"a": "b"}, "ownerReferences": [{"kind": "K", "z": 1}]}, "spec": {}},
    {"spec": {"tolerations": [None, {"key": "k", "q": 1}], "containers": [{"ports": [None, {"name": "p"}]}]}},
    {"spec": {"volumes": [{"name": "v", "emptyDir": {"medium": "Memory", "m": 1}}], "tolerations": []}},
    {
        "spec": {
            "volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "configMap": {"items": [{"key": "k"}]}}]
        }
    },
    {"spec": {"volumes": [None, {"name": "b", "secret": {"items": [{"key": "k", "x": 1}]}}]}},
]


def _extraction(build: Build, evaluator: Evaluator, obj: Any, aligned: bool, **spec: Any) -> dict[str, Any]:
    """The parts the generated extraction function returns for ``obj`` (it must not decline)."""
    id_path = ".items[].n" if aligned else ".ids[]"  # other paths than .items[]: the general form
    karta = build({"name": "w", "instanceIdPath": id_path, "specDefinition": spec})
    fn = ComponentFactory(karta, obj, evaluator=evaluator).root()._plan.extraction_fn()
    assert fn is not None
    parts = fn(obj, 100)
    assert parts is not None
    return parts


@pytest.mark.parametrize("aligned", [True, False], ids=["aligned", "general-form"])
def test_generated_and_general_trim_alike(build: Build, evaluator: Evaluator, aligned: bool) -> None:
    samples = [dict(copy.deepcopy(s), n=f"i{k}") for k, s in enumerate(SAMPLES)]
    obj = {"ids": [s["n"] for s in samples], "items": samples}
    before = copy.deepcopy(obj)
    parts = _extraction(
        build,
        evaluator,
        obj,
        aligned,
        podTemplateSpecPath=".items[]",
        podSpecPath=".items[].spec",
        metadataPath=".items[].metadata",
    )
    assert parts["pod_template_spec_path"] == POD_TEMPLATE_SPEC_TYPE.convert_all(samples)
    assert parts["pod_spec_path"] == POD_SPEC_TYPE.convert_all([s.get("spec") for s in samples])
    assert parts["metadata_path"] == OBJECT_META_TYPE.convert_all([s.get("metadata") for s in samples])
    assert obj == before  # trimmed copies only
    # nothing dropped: the object itself, not a copy
    assert parts["pod_spec_path"][1] is samples[1]["spec"]
    assert parts["metadata_path"][1] is samples[1]["metadata"]
    fragments = _extraction(
        build,
        evaluator,
        obj,
        aligned,
        fragmentedPodSpecDefinition={
            "containersPath": ".items[].spec.containers",
            "containerPath": ".items[].spec.containers[0]",
            "resourcesPath": ".items[].spec.containers[0].resources",
            "podAffinityPath": ".items[].spec.affinity.podAffinity",
        },
    )["fragments"]
    expected = []
    for s in samples:
        containers = (s.get("spec") or {}).get("containers")
        first = containers[0] if containers else None
        record = {
            "containers": CONTAINERS_TYPE.convert(containers, 0),
            "container": CONTAINER_TYPE.convert(first, 0),
            "resources": RESOURCE_REQUIREMENTS_TYPE.convert((first or {}).get("resources"), 0),
        }
        expected.append({key: value for key, value in record.items() if value})
    assert fragments == expected
    assert obj == before


# --- write-back keeps what the Kubernetes struct lacks [fix] ----------------------------------------


def test_fragment_write_back_keeps_the_containers_own_fields(build: Build, evaluator: Evaluator) -> None:
    obj = {"spec": {"predictor": copy.deepcopy(PREDICTOR)}}
    karta = build(
        {
            "name": "w",
            "specDefinition": {
                "fragmentedPodSpecDefinition": {
                    "containerPath": ".spec.predictor.model",
                    "containersPath": ".spec.predictor.containers",
                    "imagePath": ".spec.predictor.containers[0].image",
                }
            },
        }
    )
    factory = ComponentFactory(karta, obj, evaluator=evaluator)
    (record,) = factory.root().fragmented_pod_specs().values()
    assert "modelFormat" not in record["containers"][0]  # what consumers see is trimmed
    record = copy.deepcopy(record)
    record["containers"][0]["image"] = "i2"
    record["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    record["container"] = {"resources": {"limits": {"cpu": "1"}}}
    factory.root().update_fragmented_pod_spec({"": record})
    predictor = factory.obj["spec"]["predictor"]
    assert predictor["model"] == {
        "resources": {"limits": {"cpu": "1"}},
        "modelFormat": {"name": "sklearn"},
        "storageUri": "gs://m",
    }
    assert predictor["containers"] == [
        {
            "name": "kserve-container",
            "image": "i2",
            "env": [{"name": "A", "value": "1"}],
            "modelFormat": {"name": "x"},
            "storageUri": "s3://m",
        }
    ]
    assert obj["spec"]["predictor"] == PREDICTOR  # the caller's object is untouched


def test_whole_write_back_keeps_unknown_fields_and_drops_removed_known_ones(
    build: Build, evaluator: Evaluator
) -> None:
    obj = {"spec": {"template": copy.deepcopy(KSVC_TEMPLATE)}}
    obj["spec"]["template"]["spec"]["containers"].insert(0, {"name": "side", "image": "s", "x-side": 1})
    obj["spec"]["template"]["spec"]["containers"][1]["name"] = "main"
    karta = build({"name": "w", "specDefinition": {"podTemplateSpecPath": ".spec.template"}})
    factory = ComponentFactory(karta, obj, evaluator=evaluator)
    (template,) = factory.root().pod_template_specs().values()
    assert "containerConcurrency" not in template["spec"]
    template = copy.deepcopy(template)
    template["spec"]["containers"].reverse()  # matched by name, not position
    del template["metadata"]  # a known field removed by the caller stays removed (9.2)
    factory.root().update_pod_template_spec({"": template})
    assert factory.obj["spec"]["template"] == {
        "spec": {
            "containers": [
                {"image": "img", "ports": [{"containerPort": 8080, "appProtocol": "h2c"}], "name": "main"},
                {"name": "side", "image": "s", "x-side": 1},
            ],
            "containerConcurrency": 10,
            "timeoutSeconds": 300,
        }
    }


def test_a_pod_written_back_as_its_own_template_keeps_apiversion_kind_and_status(
    build: Build, evaluator: Evaluator
) -> None:
    karta = build({"name": "w", "specDefinition": {"podTemplateSpecPath": "."}})
    factory = ComponentFactory(karta, copy.deepcopy(POD), evaluator=evaluator)
    (template,) = factory.root().pod_template_specs().values()
    template = copy.deepcopy(template)
    template["metadata"]["labels"]["b"] = "c"
    factory.root().update_pod_template_spec({"": template})
    expected = copy.deepcopy(POD)
    expected["metadata"]["labels"]["b"] = "c"
    assert factory.obj == expected


def test_restore_puts_back_only_what_the_struct_lacks() -> None:
    before = {"name": "c", "image": "i", "modelFormat": {"name": "m"}, "env": [{"name": "A", "x": 1}]}
    after = {"name": "c", "env": [{"name": "A"}, {"name": "B"}]}
    restored = trim.restore(before, after, "Container")
    assert restored == {
        "name": "c",
        "env": [{"name": "A", "x": 1}, {"name": "B"}],
        "modelFormat": {"name": "m"},
    }
    assert restored["modelFormat"] is not before["modelFormat"]  # copies, never aliases
    clean = {"name": "c"}
    assert trim.restore({"name": "c", "image": "i"}, clean, "Container") is clean
    assert trim.restore("not an object", clean, "Container") is clean
    assert trim.restore([{"x": 1}], [{"image": "j"}], "[]Container") == [{"image": "j", "x": 1}]


@pytest.mark.parametrize(
    "env",
    [[["name"]], ["name"], [{"name": "a"}, 3], {"name": "a"}],
    ids=["list-item", "string-item", "number-item", "object"],
)
def test_generated_code_declines_an_array_of_structs_with_other_items(
    build: Build, evaluator: Evaluator, env: Any
) -> None:
    # Each test of an array of structs runs over all items at once; an item that is not an
    # object (even a list of known field names) is left to the general code, which reports it.
    obj = {"items": [{"n": "a", "spec": {"containers": [{"name": "c", "env": env}]}}]}
    karta = build(
        {"name": "w", "instanceIdPath": ".items[].n", "specDefinition": {"podSpecPath": ".items[].spec"}}
    )
    c = ComponentFactory(karta, obj, evaluator=evaluator).root()
    fn = c._plan.extraction_fn()
    assert fn is not None and fn(obj, 100) is None
    with pytest.raises(ConversionError, match=r"PodSpec: \.containers\[0\]\.env"):
        c.pod_specs()
