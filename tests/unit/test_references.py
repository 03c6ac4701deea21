"""``karta.references`` (extension E3, docs/format-extensions.md E3.3 and E3.5): the plan a
consumer fetches from (namespaces, names, selectors, reference expressions that see only the
workload), offline matching, the bindings (null / [] when missing, a forbidden read reported and
never silent), the limits, and the bound evaluation of a whole definition: status, components,
scale and gang from the referenced objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from karta import references
from karta.errors import ReferenceLimitError
from karta.extract import ComponentFactory
from karta.gang import compute_gang_plan
from karta.jq import Evaluator
from karta.model import Karta, load_karta
from karta.references import Fetched, ReferenceLimits, ReferenceRequest

HERE = Path(__file__).resolve().parent / "cli" / "references"


def _karta(extra: list[dict[str, Any]] | None = None) -> Karta:
    doc = yaml.safe_load((HERE / "definition.yaml").read_text())
    doc["spec"]["structureDefinition"]["references"].extend(extra or [])
    result = load_karta(doc, strict=True)
    assert result.karta is not None, result.findings
    return result.karta


WORKLOAD = yaml.safe_load((HERE / "workload.yaml").read_text())
REFS = list(yaml.safe_load_all((HERE / "refs.yaml").read_text()))
EVALUATOR = Evaluator()


def test_the_plan_names_what_to_fetch() -> None:
    runtime, configs = references.plan_references(_karta(), WORKLOAD, EVALUATOR)
    assert (runtime.api_version, runtime.kind, runtime.namespace, runtime.name, runtime.is_list) == (
        "example.com/v1",
        "RunTemplate",
        "team",
        "big",
        False,
    )
    assert (configs.api_version, configs.kind, configs.namespace, configs.is_list) == (
        "v1",
        "ConfigMap",
        "team",
        True,
    )
    assert configs.selector == "example.com/run=run1,tier=trainer"
    assert runtime.fetches and configs.fetches


def test_namespace_expression_and_selector_requirements() -> None:
    other = {
        "name": "peers",
        "gvk": {"group": "example.com", "version": "v1", "kind": "TrainRun"},
        "namespaceExpression": '.metadata.annotations["example.com/peers-in"]',
        "list": {
            "matchExpressions": [
                {"key": "team", "operator": "In", "values": ["a", ".metadata.namespace"]},
                {"key": "done", "operator": "DoesNotExist"},
            ]
        },
    }
    obj = {
        **WORKLOAD,
        "metadata": {**WORKLOAD["metadata"], "annotations": {"example.com/peers-in": "elsewhere"}},
    }
    *_, peers = references.plan_references(_karta([other]), obj, EVALUATOR)
    assert peers.namespace == "elsewhere"
    assert peers.selector == "team in (a,team),!done"
    assert peers.matches(
        {
            "apiVersion": "example.com/v1",
            "kind": "TrainRun",
            "metadata": {"namespace": "elsewhere", "labels": {"team": "team"}},
        }
    )
    assert not peers.matches(
        {
            "apiVersion": "example.com/v1",
            "kind": "TrainRun",
            "metadata": {"namespace": "elsewhere", "labels": {"team": "team", "done": "y"}},
        }
    )
    assert not peers.matches(
        {
            "apiVersion": "example.com/v1",
            "kind": "TrainRun",
            "metadata": {"namespace": "team", "labels": {"team": "a"}},
        }
    )
    *_, peers = references.plan_references(_karta([other]), WORKLOAD, EVALUATOR)
    assert peers.namespace == "team"  # null: the workload's


def test_a_failing_reference_expression_is_an_error_not_missing() -> None:
    obj = {**WORKLOAD, "spec": {**WORKLOAD["spec"], "templateRef": {"name": 7}}}
    resolution = references.resolve(_karta(), obj, EVALUATOR, REFS)
    assert resolution.bindings["runtime"] is None
    (problem,) = resolution.errors
    assert problem.kind == "error"
    assert (
        "reference 'runtime' (RunTemplate example.com/v1): reference 'runtime' lookup.nameExpression"
        in problem.message
    )
    assert "must yield one string (or null), got a number" in problem.message


def test_offline_matching_by_gvk_namespace_name_and_labels() -> None:
    resolution = references.resolve(_karta(), WORKLOAD, EVALUATOR, REFS)
    assert resolution.bindings["runtime"]["spec"]["nodes"] == 3
    assert [c["metadata"]["name"] for c in resolution.bindings["configs"]] == [
        "c1"
    ]  # c2 is in another namespace
    assert resolution.problems == ()


def test_cluster_scoped_objects_match_any_namespace() -> None:
    cluster_scoped = {**REFS[0], "metadata": {"name": "big"}}
    resolution = references.resolve(_karta(), WORKLOAD, EVALUATOR, [cluster_scoped])
    assert resolution.bindings["runtime"] is cluster_scoped


def test_missing_is_null_and_empty_with_notes() -> None:
    resolution = references.resolve(_karta(), WORKLOAD, EVALUATOR, [])
    assert resolution.bindings == {"runtime": None, "configs": []}
    assert [p.kind for p in resolution.problems] == ["note", "note"]
    assert resolution.errors == ()


def _every_config() -> Karta:
    doc = yaml.safe_load((HERE / "definition.yaml").read_text())
    for ref in doc["spec"]["structureDefinition"]["references"]:
        if "list" in ref:
            ref["list"] = {}
    result = load_karta(doc, strict=True)
    assert result.karta is not None, result.findings
    return result.karta


def test_a_list_without_a_selector_matches_every_object_of_the_namespace() -> None:
    """``list: {}`` (E3.6: how KServe's runtimes, which carry no label, are read): an empty
    selector, every object of the kind in the workload's namespace (cluster-scoped: all)."""
    karta = _every_config()
    _, configs = references.plan_references(karta, WORKLOAD, EVALUATOR)
    assert configs.selector == "" and configs.fetches and configs.target == "(every object of the kind)"
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "team"}}
    resolution = references.resolve(karta, WORKLOAD, EVALUATOR, [*REFS, other])
    assert sorted(c["metadata"]["name"] for c in resolution.bindings["configs"]) == ["c1", "x"]
    (note,) = references.resolve(karta, WORKLOAD, EVALUATOR, REFS[:1]).problems
    assert "no given object is a ConfigMap v1 (every object of the kind) in namespace team" in note.message
    with pytest.raises(ReferenceLimitError, match="matches 2 objects; at most 1 are allowed"):
        references.resolve(karta, WORKLOAD, EVALUATOR, [*REFS, other], limits=ReferenceLimits(list_objects=1))


def test_forbidden_is_reported_never_silent() -> None:
    runtime, configs = references.plan_references(_karta(), WORKLOAD, EVALUATOR)
    resolution = references.bind_references(
        [
            Fetched(runtime, forbidden='runtemplates.example.com "big" is forbidden'),
            Fetched(configs, tuple(REFS[1:2])),
        ]
    )
    assert resolution.bindings["runtime"] is None
    (problem,) = resolution.errors
    assert problem.kind == "forbidden"
    assert problem.message == (
        "reference 'runtime' (RunTemplate example.com/v1): reading is forbidden: "
        'runtemplates.example.com "big" is forbidden'
    )


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        (ReferenceLimits(references=1), "the definition has 2 references; at most 1 are allowed"),
        (
            ReferenceLimits(list_objects=0),
            "reference 'configs' (ConfigMap v1) matches 1 objects; at most 0 are allowed",
        ),
        (ReferenceLimits(object_bytes=100), "reference 'runtime' (RunTemplate example.com/v1): an object of"),
        (ReferenceLimits(total_bytes=200), "the referenced objects are over 200 bytes together"),
    ],
)
def test_limits(limits: ReferenceLimits, message: str) -> None:
    with pytest.raises(ReferenceLimitError, match=message.replace("(", r"\(").replace(")", r"\)")):
        references.resolve(_karta(), WORKLOAD, EVALUATOR, REFS, limits=limits)


def test_no_references_is_the_base_evaluator() -> None:
    resolution = references.bind_references([])
    assert resolution.evaluator(EVALUATOR) is EVALUATOR


@pytest.mark.parametrize("trusted", [False, True])
def test_the_whole_definition_reads_the_references(trusted: bool) -> None:
    karta = _karta()
    base = Evaluator(trusted=trusted)
    evaluator = references.resolve(karta, WORKLOAD, base, REFS).evaluator(base)
    for _ in range(2):  # the second time through generated code where there is some
        factory = ComponentFactory(karta, WORKLOAD, evaluator=evaluator)
        root = factory.root()
        status = root.status()
        assert status is not None and list(status.matched) == ["Running"]
        scales = root.scales()
        assert scales is not None and [s.replicas for s in scales.values()] == [4]
        templates = root.pod_template_specs()
        assert templates is not None
        assert [c["image"] for t in templates.values() for c in t["spec"]["containers"]] == ["trainer:1"]
        plan = compute_gang_plan(factory)
        assert [g.min_member for g in plan.gangs] == [4]


def test_requests_match_only_what_they_fetch() -> None:
    request = ReferenceRequest("r", "", "v1", "ConfigMap", False, namespace="team", error="bad")
    assert not request.fetches
    assert not request.matches(REFS[1])


def test_referenced_kinds_for_rbac_and_watches() -> None:
    again = {
        "name": "other",
        "gvk": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "lookup": {"nameExpression": ".a"},
    }
    assert references.referenced_kinds(_karta([again])) == [
        ("example.com", "v1", "RunTemplate"),
        ("", "v1", "ConfigMap"),
    ]


def test_a_budget_breach_in_a_reference_expression_ends_the_object() -> None:
    from karta.errors import JqBudgetError

    bomb = {
        "name": "bomb",
        "gvk": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "lookup": {"nameExpression": ".metadata.name * 100000000 | length | tostring"},
    }
    with pytest.raises(JqBudgetError, match="output budget exceeded"):
        references.plan_references(_karta([bomb]), WORKLOAD, Evaluator())
