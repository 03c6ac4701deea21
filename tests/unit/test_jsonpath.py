"""karta.jsonpath: kubectl's JSONPath subset. The expected outputs are what kubectl 1.32 prints for
the same templates over the same objects (checked by hand against a real API server)."""

from __future__ import annotations

from typing import Any

import pytest

from karta.errors import JsonPathError
from karta.jsonpath import parse_path, parse_template

JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "mnist", "namespace": "ml-team", "generation": 1, "labels": {"b": "2", "a": "1"}},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "restartPolicy": "OnFailure"},
            "Worker": {"replicas": 3, "restartPolicy": "OnFailure"},
        }
    },
}
LIST = {
    "kind": "List",
    "items": [
        JOB,
        {"kind": "PyTorchJob", "metadata": {"name": "other", "generation": 4, "annotations": None}},
    ],
}


def render(template: str, data: Any = LIST) -> str:
    return parse_template(template).render(data)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{.items[*].metadata.name}", "mnist other"),
        (
            '{range .items[*]}{.metadata.name}{"\\t"}{.kind}{"\\n"}{end}',
            "mnist\tPyTorchJob\nother\tPyTorchJob\n",
        ),
        ("{.items[0].metadata.labels}", '{"a":"1","b":"2"}'),
        ("{.items[0].spec.pytorchReplicaSpecs.*.replicas}", "1 3"),
        ("{..restartPolicy}", "OnFailure OnFailure"),
        ('{.items[?(@.metadata.name=="other")].metadata.generation}', "4"),
        ("{.items[?(@.metadata.generation>1)].metadata.name}", "other"),
        ("{.items[?(@.metadata.generation<=1)].metadata.name}", "mnist"),
        ('{.items[?(@.metadata.name!="other")].metadata.name}', "mnist"),
        ("{.items[?(@.spec)].metadata.name}", "mnist"),
        ("{.items[-1:].metadata.name}", "other"),
        ("{.items[0:1].metadata.name}", "mnist"),
        ("{.items[::2].metadata.name}", "mnist"),
        ("{.items[0]['metadata']['name']}", "mnist"),
        ("{.items[0].metadata['name','namespace']}", "mnist ml-team"),
        ("{.items[0,1].metadata.name}", "mnist other"),
        ("{.items[1].metadata.annotations}", "null"),
        ("{.kind} {$.kind} {@.kind}", "List List List"),
        ("{.nope}x{.items[5].metadata.name}y{.kind[0]}", "xy"),  # missing keys print nothing
        ("text only", "text only"),
        ('{\'x\'}{"a\\"b"}', 'xa"b'),
        ("{range .items[*]}[{range .spec.pytorchReplicaSpecs.*}<{.replicas}>{end}]{end}", "[<1><3>][]"),
        ("{range .items}{.metadata.name};{end}", "mnist;other;"),
        ('{.items[?(@.metadata.name=="a)b")].kind}', ""),
    ],
)
def test_templates_print_what_kubectl_prints(template: str, expected: str) -> None:
    assert render(template) == expected


def test_escaped_dots_in_names_and_the_relaxed_path_forms() -> None:
    obj = {"metadata": {"annotations": {"kubernetes.io/change-cause": "scale"}}}
    assert render("{.metadata.annotations.kubernetes\\.io/change-cause}", obj) == "scale"
    for text in ("{.metadata.name}", ".metadata.name", "metadata.name", " .metadata.name "):
        assert parse_path(text).find(JOB) == ["mnist"]
    assert parse_path(".").find(JOB) == [JOB]
    assert parse_path("$.metadata.name").find(JOB) == ["mnist"]


def test_deep_data_is_walked_without_recursion() -> None:
    deep: dict[str, Any] = {"name": "leaf"}
    for _ in range(5000):
        deep = {"child": deep}
    assert parse_path("..name").find(deep) == ["leaf"]


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{.items[0].metadata.name", "not closed"),
        ("{}", "empty action"),
        ("{.a}{end}", "without a {range"),
        ("{range .items[*]}{.a}", "not closed with {end}"),
        ("{range}", "needs a path"),
        ("{.items.length()}", "functions"),
        ('{.items[?(@.name=~"x")]}', "regular expressions"),
        ("{.items[?(@.a==1 && @.b==2)]}", "&& or ||"),
        ("{.spec.replicas+1}", "arithmetic"),
        ("{.items[?(@.a==@.b)]}", "comparing two paths"),
        ("{.items[::0]}", "step of a slice must be positive"),
        ("{.items[x]}", "is not an index"),
        ("{.items[]}", "empty brackets"),
        ("{.items[0}", "is not closed"),
        ("{.items[?(.a)]}", "starts with @"),
        ("{.items[?(@.a==bogus)]}", "is not a literal"),
        ('{"\\q"}', "unknown escape"),
        ('{"abc}', "not closed"),
        ("{.a,.b}", "unexpected ','"),
    ],
)
def test_what_is_not_supported_is_an_error_naming_the_template(template: str, why: str) -> None:
    with pytest.raises(JsonPathError) as info:
        parse_template(template)
    message = str(info.value)
    assert repr(template) in message and why in message, message


def test_a_path_is_one_action() -> None:
    with pytest.raises(JsonPathError, match="expected one path"):
        parse_path("{.a}{.b}")
    with pytest.raises(JsonPathError, match="empty"):
        parse_path("{}")


def test_filter_comparisons_keep_types_apart() -> None:
    items = {"items": [{"v": 1}, {"v": "1"}, {"v": True}, {"v": None}, {"v": 1.5}]}
    assert render("{.items[?(@.v==1)].v}", items) == "1"
    assert render('{.items[?(@.v=="1")].v}', items) == "1"
    assert render("{.items[?(@.v==true)].v}", items) == "true"
    assert render("{.items[?(@.v==null)].v}", items) == "null"
    assert render("{.items[?(@.v>1)].v}", items) == "1.5"
    assert render('{.items[?(@.v<"2")].v}', items) == "1"
