"""PodQuerier: section 11 and the pod-side table of docs/spec/format.md#conformance."""

from __future__ import annotations

import re
from typing import Any

import pytest

from karta.errors import InstanceNotFoundError, PodQueryError
from karta.extract.pods import PodQuerier, go_format, single_value
from karta.jq import Evaluator
from karta.model.types import ComponentDefinition, PodGroupMember

EVALUATOR = Evaluator(trusted=True)

POD: dict[str, Any] = {
    "metadata": {"name": "p", "labels": {"role": "master", 'a"b': 'x"y', "idx": "0"}},
    "spec": {"priority": 3, "containers": [{"name": "a"}, {"name": "b"}]},
}


def querier(pod: dict[str, Any] | None = None) -> PodQuerier:
    return PodQuerier(POD if pod is None else pod, evaluator=EVALUATOR)


def component(pod_selector: dict[str, Any] | None = None, **extra: Any) -> ComponentDefinition:
    data: dict[str, Any] = {"name": "c", **extra}
    if pod_selector is not None:
        data["podSelector"] = pod_selector
    return ComponentDefinition.model_validate(data)


def type_selector(**selector: Any) -> ComponentDefinition:
    return component({"componentTypeSelector": selector})


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({"keyPath": ".metadata.labels.role", "value": "master"}, True),
        ({"keyPath": ".metadata.labels.role", "value": "worker"}, False),
        ({"keyPath": ".metadata.labels.role"}, True),
        ({"keyPath": ".metadata.labels.missing"}, False),
        ({"keyPath": '.metadata.labels["a\\"b"]', "value": 'x"y'}, True),
        ({"keyPath": ".spec.containers[].name", "value": "b"}, True),
        ({"keyPath": ".spec.priority", "value": "3"}, False),
        ({"matchLabels": {"role": "master"}}, True),
        ({"matchLabels": {"role": "master", "idx": "1"}}, False),
        ({"matchLabels": {"role": "master", "idx": "0"}}, True),
        ({"matchLabels": {"role": ""}}, False),
        ({"keyPath": ".metadata.labels.role", "value": "master", "matchLabels": {"idx": "0"}}, True),
        ({"keyPath": ".metadata.labels.role", "value": "master", "matchLabels": {"idx": "1"}}, False),
        ({"keyPath": ".metadata.labels.role", "value": "worker", "matchLabels": {"idx": "0"}}, False),
    ],
)
def test_component_type_selector(selector: dict[str, Any], expected: bool) -> None:
    assert querier().matches_component_type(type_selector(**selector)) is expected


def test_match_labels_empty_value_requires_present_empty_label() -> None:
    pod = {"metadata": {"name": "q", "labels": {"flag": ""}}}
    assert querier(pod).matches_component_type(type_selector(matchLabels={"flag": ""}))
    assert not querier(POD).matches_component_type(type_selector(matchLabels={"flag": ""}))


def test_no_selector_never_matches() -> None:
    assert not querier().matches_component_type(component())
    assert not querier().matches_component_type(component({"replicaSelector": {"keyPath": ".x"}}))


def test_type_selector_parse_error_is_an_error() -> None:
    with pytest.raises(PodQueryError, match="failed to parse JQ expression"):
        querier().matches_component_type(type_selector(keyPath=".metadata.labels.role ==", value="master"))


def test_instance_id_errors() -> None:
    with pytest.raises(PodQueryError, match="query result is empty") as info:
        querier().extract_instance_id(
            component({"componentInstanceSelector": {"idPath": ".metadata.labels.missing"}})
        )
    assert 'failed to extract instance id from path ".metadata.labels.missing"' in str(info.value)
    with pytest.raises(PodQueryError, match="expected single query result, got 2"):
        querier().extract_instance_id(
            component({"componentInstanceSelector": {"idPath": ".spec.containers[].name"}})
        )


def test_replica_key_renders_numbers_like_go() -> None:
    c = component({"replicaSelector": {"keyPath": ".spec.priority"}})
    assert querier().extract_replica_key(c) == "3"
    float_pod = {"metadata": {"name": "f"}, "spec": {"priority": 3.0}}
    assert querier(float_pod).extract_replica_key(c) == "3"
    with pytest.raises(
        PodQueryError, match=re.escape('failed to extract replica key from path ".metadata.x"')
    ):
        querier().extract_replica_key(component({"replicaSelector": {"keyPath": ".metadata.x"}}))


def test_group_keys() -> None:
    member = PodGroupMember.model_validate(
        {"componentName": "c", "groupByKeyPaths": [".metadata.labels.role", '"gpu"', ".spec.priority"]}
    )
    assert querier().extract_group_keys(member) == ["master", "gpu", "3"]
    bad = PodGroupMember.model_validate({"componentName": "c", "groupByKeyPaths": [".metadata.labels.none"]})
    with pytest.raises(
        PodQueryError, match=re.escape('failed to extract group key from path ".metadata.labels.none"')
    ):
        querier().extract_group_keys(bad)
    assert querier().extract_group_keys(PodGroupMember(component_name="c")) == []


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([], True),
        (['.metadata.labels.role == "master"'], True),
        (['.metadata.labels.role == "master"', ".spec.priority > 5"], False),
        ([".metadata.labels.role"], False),
        (["1"], False),
        (["false"], False),
    ],
)
def test_filters(filters: list[str], expected: bool) -> None:
    member = PodGroupMember(component_name="c", filters=tuple(filters))
    assert querier().passes_filters(member) is expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (".metadata.labels.none", "query result is empty"),
        (".spec.containers[] | true", "expected single query result, got 2"),
        ("empty", "expected single query result, got 0"),
        ('""', "query result is empty"),
        (".spec.containers | .x", "JQ execution error"),
    ],
)
def test_filter_errors(expression: str, message: str) -> None:
    member = PodGroupMember(component_name="c", filters=(expression,))
    with pytest.raises(PodQueryError, match=message) as info:
        querier().passes_filters(member)
    assert f'failed to evaluate filter "{expression}"' in str(info.value)


def test_matching_instance_id() -> None:
    plain = component()
    assert querier().matching_instance_id(plain, [""]) == ""
    with pytest.raises(PodQueryError, match="no instance selector provided but instance ids are not empty"):
        querier().matching_instance_id(plain, ["a", "b"])
    by_idx = component({"componentInstanceSelector": {"idPath": ".metadata.labels.idx"}}, instanceIdPath=".x")
    with pytest.raises(InstanceNotFoundError, match='could not match instance id "0"') as info:
        querier().matching_instance_id(by_idx, ["1", "2"])
    assert "existing instance ids [1 2]" in str(info.value)
    assert querier().matching_instance_id(by_idx, ["0", "1"]) == "0"


def test_results_are_cached_including_errors() -> None:
    calls: list[str] = []

    class CountingEvaluator(Evaluator):
        def evaluate(self, expression: str, data: Any) -> list[Any]:
            calls.append(expression)
            return super().evaluate(expression, data)

    q = PodQuerier(POD, evaluator=CountingEvaluator())
    c = type_selector(keyPath=".metadata.labels.role", value="master")
    assert q.matches_component_type(c) and q.matches_component_type(c)
    bad = component({"replicaSelector": {"keyPath": ".spec.containers | .x"}})
    for _ in range(2):
        with pytest.raises(PodQueryError):
            q.extract_replica_key(bad)
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("s", "s"),
        (3, "3"),
        (3.0, "3"),
        (2.5, "2.5"),
        (True, "true"),
        (False, "false"),
        (None, "<nil>"),
        ([1, "a"], "[1 a]"),
        ({"b": 1, "a": True}, "map[a:true b:1]"),
    ],
)
def test_go_format(value: Any, text: str) -> None:
    assert go_format(value) == text


def test_single_value() -> None:
    assert single_value([7]) == "7"
    with pytest.raises(PodQueryError, match="query result is empty <nil>"):
        single_value([None])
    with pytest.raises(PodQueryError, match="expected single query result, got 0"):
        single_value([])


def test_querier_exposes_pod_identity() -> None:
    q = PodQuerier({"metadata": {"name": "n", "namespace": "ns"}})
    assert (q.name, q.namespace, dict(q.labels)) == ("n", "ns", {})
