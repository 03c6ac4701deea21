"""Conformance cases C1, C2, C5, C6 and 20.15 of docs/spec/format.md through ComponentFactory."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from karta.errors import ConversionError, ExtractionError, WriteBackError
from karta.extract import ComponentFactory, ExtractedInstance, Scale
from karta.jq import Evaluator
from karta.model.types import Karta, ResourceStatus

Build = Callable[..., Karta]

# --- C1 -------------------------------------------------------------------------------------------


def test_c1_array_of_pod_specs(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    factory = ComponentFactory(c1_karta, c1, evaluator=evaluator)
    job = factory.component("job")
    assert job.instance_ids() == ["indexer", "processor"]
    specs = job.pod_specs()
    assert specs is not None
    assert list(specs) == ["indexer", "processor"]
    assert [s["containers"][0]["name"] for s in specs.values()] == ["indexer", "processor"]
    metadata = job.pod_metadata()
    assert metadata is not None
    assert [m["labels"]["role"] for m in metadata.values()] == ["indexer", "processor"]
    assert job.scales() == {"indexer": Scale(replicas=2), "processor": Scale(replicas=3)}
    assert job.pod_template_specs() is None
    assert job.fragmented_pod_specs() is None
    status = factory.root().status()
    assert status is not None
    assert status.matched == [ResourceStatus.RUNNING]
    assert status.primary is ResourceStatus.RUNNING
    assert job.status() is None


def test_c1_extracted_instances(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    instances = ComponentFactory(c1_karta, c1, evaluator=evaluator).component("job").extracted_instances()
    assert list(instances) == ["indexer", "processor"]
    indexer = instances["indexer"]
    assert isinstance(indexer, ExtractedInstance)
    assert indexer.instance_id == "indexer"
    assert indexer.pod_spec == c1["spec"]["replicatedJobs"][0]["spec"]
    assert indexer.metadata == c1["spec"]["replicatedJobs"][0]["metadata"]
    assert indexer.scale == Scale(replicas=2)
    assert indexer.pod_template_spec is None
    assert indexer.fragmented_pod_spec is None


def test_c1_root_is_single_instance(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    factory = ComponentFactory(c1_karta, c1, evaluator=evaluator)
    root = factory.root()
    assert root.instance_ids() == [""]
    assert root.scales() is None
    assert root.extracted_instances() == {"": ExtractedInstance(instance_id="")}
    assert [c.name for c in factory.children()] == ["job"]
    assert [c.name for c in factory.children_of("jobgroup")] == ["job"]
    assert factory.children_of("job") == []
    assert factory.has_pod_definitions()


def test_c1_empty_instance_id(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    c1["spec"]["replicatedJobs"][0]["name"] = ""
    job = ComponentFactory(c1_karta, c1, evaluator=evaluator).component("job")
    with pytest.raises(ExtractionError) as info:
        job.instance_ids()
    assert "instance id path contained empty string values" in str(info.value)
    assert "[,processor]" in str(info.value)
    with pytest.raises(ExtractionError, match="empty string values"):
        job.pod_specs()


def test_c1_duplicate_instance_id(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    c1["spec"]["replicatedJobs"][1]["name"] = "indexer"
    job = ComponentFactory(c1_karta, c1, evaluator=evaluator).component("job")
    with pytest.raises(ExtractionError, match='duplicate instance id "indexer"'):
        job.instance_ids()


# --- C2 -------------------------------------------------------------------------------------------


def test_c2_map_of_fragmented_services(c2_karta: Karta, c2: dict[str, Any], evaluator: Evaluator) -> None:
    root = ComponentFactory(c2_karta, c2, evaluator=evaluator).root()
    assert root.instance_ids() == ["api", "cache", "worker"]
    specs = root.fragmented_pod_specs()
    assert specs is not None
    assert list(specs) == ["api", "cache", "worker"]
    assert "annotations" not in specs["cache"]
    assert "labels" not in specs["cache"] and "labels" not in specs["worker"]
    assert specs["api"]["container"]["name"] == "api-server-main"
    assert specs["worker"]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert specs["cache"] == {"containers": [{"name": "redis", "image": "redis"}]}
    assert root.scales() == {
        "api": Scale(replicas=3, min_replicas=2, max_replicas=10),
        "cache": Scale(replicas=1),
        "worker": Scale(replicas=5),
    }


# --- C5 -------------------------------------------------------------------------------------------

C5_SCALE = {
    "minReplicasPath": '.metadata.annotations["autoscaling.example/min-scale"] // 1',
    "maxReplicasPath": '.metadata.annotations["autoscaling.example/max-scale"]',
}


def _c5(build: Build, evaluator: Evaluator, annotations: dict[str, str]) -> dict[str, Scale] | None:
    karta = build({"name": "svc", "scaleDefinition": C5_SCALE})
    obj = {"metadata": {"name": "s", "annotations": annotations}}
    return ComponentFactory(karta, obj, evaluator=evaluator).root().scales()


def test_c5_strings(build: Build, evaluator: Evaluator) -> None:
    annotations = {"autoscaling.example/min-scale": "2", "autoscaling.example/max-scale": "3"}
    assert _c5(build, evaluator, annotations) == {"": Scale(min_replicas=2, max_replicas=3)}


def test_c5_none(build: Build, evaluator: Evaluator) -> None:
    assert _c5(build, evaluator, {}) == {"": Scale(min_replicas=1)}


def test_c5_not_a_number(build: Build, evaluator: Evaluator) -> None:
    with pytest.raises(ConversionError, match='replicas value "abc"'):
        _c5(build, evaluator, {"autoscaling.example/min-scale": "abc"})


def test_c5_not_an_integer(build: Build, evaluator: Evaluator) -> None:
    with pytest.raises(ConversionError, match=r'replicas value "2\.5"'):
        _c5(build, evaluator, {"autoscaling.example/min-scale": "2.5"})


# --- C6 -------------------------------------------------------------------------------------------


def _strip_services(workload: dict[str, Any], *keys: str) -> None:
    for service in workload["spec"]["services"].values():
        for key in keys:
            service.pop(key, None)


def test_c6_round_trip_adds_nothing(c2_karta: Karta, c2: dict[str, Any], evaluator: Evaluator) -> None:
    _strip_services(c2, "labels", "annotations", "resources")
    before = copy.deepcopy(c2)
    factory = ComponentFactory(c2_karta, c2, evaluator=evaluator)
    root = factory.root()
    specs = root.fragmented_pod_specs()
    assert specs is not None
    root.update_fragmented_pod_spec(specs)
    assert factory.resource() == before
    assert c2 == before  # the input object is never modified


def test_c6_r6_partial_labels(c2_karta: Karta, c2: dict[str, Any], evaluator: Evaluator) -> None:
    _strip_services(c2, "labels")
    c2["spec"]["services"]["api"]["labels"] = {"service-name": "api"}
    factory = ComponentFactory(c2_karta, c2, evaluator=evaluator)
    root = factory.root()
    specs = root.fragmented_pod_specs()
    assert specs is not None
    new = copy.deepcopy(specs)
    new["api"]["labels"] = {"service-name": "api", "team": "x"}
    root.update_fragmented_pod_spec(new)
    services = factory.obj["spec"]["services"]
    assert services["api"]["labels"] == {"service-name": "api", "team": "x"}
    assert "labels" not in services["cache"]
    assert "labels" not in services["worker"]
    # caches were dropped: reads see the written object
    updated = root.fragmented_pod_specs()
    assert updated is not None
    assert updated["api"]["labels"]["team"] == "x"


def test_c6_metadata_read_modify_write(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    factory = ComponentFactory(c1_karta, c1, evaluator=evaluator)
    job = factory.component("job")
    metadata = job.pod_metadata()
    assert metadata is not None
    modified = copy.deepcopy(metadata)
    for meta in modified.values():
        meta["labels"]["team"] = "x"
    job.update_pod_metadata(modified)
    jobs = factory.obj["spec"]["replicatedJobs"]
    assert jobs[0]["metadata"]["labels"] == {"role": "indexer", "job-name": "indexer", "team": "x"}
    assert jobs[1]["metadata"]["labels"] == {"role": "processor", "team": "x"}
    after = job.pod_metadata()
    assert after is not None
    assert after["processor"]["labels"]["team"] == "x"


def test_c6_whole_object_replacement(c1_karta: Karta, c1: dict[str, Any], evaluator: Evaluator) -> None:
    factory = ComponentFactory(c1_karta, c1, evaluator=evaluator)
    job = factory.component("job")
    specs = job.pod_specs()
    assert specs is not None
    new = copy.deepcopy(specs)
    new["indexer"] = {"containers": [{"name": "indexer"}]}
    job.update_pod_spec(new)
    assert factory.obj["spec"]["replicatedJobs"][0]["spec"] == {"containers": [{"name": "indexer"}]}
    assert factory.obj["spec"]["replicatedJobs"][1]["spec"]["containers"][0]["image"] == "busybox"
    assert factory.resource()["metadata"]["name"] == "jg"


# --- 20.15 suspend and resume -----------------------------------------------------------------------

SUSPEND = {
    "suspendActions": [
        {"path": ".spec.suspend", "value": "true"},
        {"path": ".spec.mode", "value": '"Suspended"'},
    ],
    "resumeActions": [{"path": ".spec.suspend", "value": "false"}, {"path": ".spec.mode", "value": "null"}],
}


def test_suspend_and_resume(build: Build, evaluator: Evaluator) -> None:
    factory = ComponentFactory(
        build({"name": "w", "suspendDefinition": SUSPEND}), {"spec": {}}, evaluator=evaluator
    )
    factory.root().suspend()
    assert factory.obj == {"spec": {"suspend": True, "mode": "Suspended"}}
    factory.root().resume()
    assert factory.obj == {"spec": {"suspend": False, "mode": None}}


def test_suspend_value_not_json(build: Build, evaluator: Evaluator) -> None:
    definition = {
        "suspendActions": [{"path": ".spec.suspend", "value": "yes"}],
        "resumeActions": [{"path": ".spec.suspend", "value": "false"}],
    }
    obj: dict[str, Any] = {"spec": {}}
    factory = ComponentFactory(
        build({"name": "w", "suspendDefinition": definition}), obj, evaluator=evaluator
    )
    with pytest.raises(WriteBackError) as info:
        factory.root().suspend()
    assert str(info.value).startswith("suspendActions[0]:")
    assert factory.obj == {"spec": {}}


def test_resume_error_is_prefixed(build: Build, evaluator: Evaluator) -> None:
    definition = {
        "suspendActions": [{"path": ".spec.suspend", "value": "true"}],
        "resumeActions": [{"path": ".spec.suspend", "value": "false"}, {"path": "{a: .x}", "value": "1"}],
    }
    factory = ComponentFactory(
        build({"name": "w", "suspendDefinition": definition}), {"spec": {}}, evaluator=evaluator
    )
    with pytest.raises(WriteBackError) as info:
        factory.root().resume()
    assert str(info.value).startswith("resumeActions[1]:")
    assert factory.obj == {"spec": {}}  # all or nothing


def test_no_suspend_definition_is_a_no_op(build: Build, evaluator: Evaluator) -> None:
    obj = {"spec": {"x": 1}}
    factory = ComponentFactory(build({"name": "w"}), obj, evaluator=evaluator)
    factory.root().suspend()
    factory.root().resume()
    assert factory.obj is obj
