"""karta.schema.check_definition on small hand-written CRDs: each kind of finding and note."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from karta.model import Karta, Severity, load_karta
from karta.schema import SchemaCheck, check_definition, crd_for

STRING = {"type": "string"}
INT = {"type": "integer"}
CONTAINERS = {
    "type": "array",
    "items": {"type": "object", "properties": {"name": STRING, "image": STRING}},
}
POD_SPEC = {"type": "object", "properties": {"containers": CONTAINERS, "schedulerName": STRING}}
TEMPLATE = {"type": "object", "properties": {"metadata": {"type": "object"}, "spec": POD_SPEC}}
WHERE = "spec.versions[v1].schema.openAPIV3Schema"


def crd(**overrides: Any) -> dict[str, Any]:
    """A FineTune CRD: a map of replica specs (template + replicas), a list of tasks, a suspend
    boolean, a loose ``extra`` object and a status with conditions and a phase."""
    spec: dict[str, Any] = {
        "type": "object",
        "properties": {
            "replicaSpecs": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {"replicas": INT, "template": TEMPLATE, "ratio": {"type": "number"}},
                },
            },
            "tasks": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": STRING, "pod": POD_SPEC, "count": INT}},
            },
            "runPolicy": {"type": "object", "properties": {"suspend": {"type": "boolean"}, "size": INT}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "image": STRING,
        },
    }
    status = {
        "type": "object",
        "properties": {
            "phase": STRING,
            "conditions": {
                "type": "array",
                "items": {"type": "object", "properties": {"type": STRING, "status": STRING}},
            },
        },
    }
    spec["properties"].update(overrides.pop("spec", {}))
    schema = {"type": "object", "properties": {"spec": spec, "status": status}}
    versions = overrides.pop("versions", None) or [
        {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    ]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "finetunes.acme.ai"},
        "spec": {
            "group": "acme.ai",
            "names": {"kind": "FineTune", "plural": "finetunes"},
            "scope": "Namespaced",
            "versions": versions,
        },
    }


GOOD = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: acme-ai-finetune-v1}
spec:
  structureDefinition:
    rootComponent:
      name: finetune
      kind: {group: acme.ai, version: v1, kind: FineTune}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          running:
          - byExpression: {expression: 'any(.status.conditions[]?; .type == "Ready")', expectedResult: "true"}
      suspendDefinition:
        suspendActions: [{path: .spec.runPolicy.suspend, value: "true"}]
        resumeActions: [{path: .spec.runPolicy.suspend, value: "false"}]
    childComponents:
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: finetune
      specDefinition: {podTemplateSpecPath: .spec.replicaSpecs.Worker.template}
      scaleDefinition: {replicasPath: '.spec.replicaSpecs.Worker.replicas // 1'}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["acme.ai/role"]', value: worker}
    - name: task
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: finetune
      instanceIdPath: .spec.tasks[].name
      specDefinition: {podSpecPath: '.spec.tasks[].pod'}
      scaleDefinition: {replicasPath: '.spec.tasks[] | .count // 1'}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["acme.ai/role"]', value: task}
        componentInstanceSelector: {idPath: '.metadata.labels["acme.ai/task"]'}
"""


def definition(**replace: str) -> Karta:
    """GOOD with some expressions replaced (``old=new`` pairs given as a dict)."""
    text = GOOD
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    result = load_karta(yaml.safe_load(text), strict=True)
    assert result.karta is not None, result.findings
    return result.karta


def run(karta: Karta, the_crd: dict[str, Any] | None = None) -> SchemaCheck:
    return check_definition(karta, the_crd if the_crd is not None else crd())


def errors(check: SchemaCheck) -> list[tuple[str, str, str]]:
    return [
        (f.location.replace("spec.structureDefinition.", ""), f.schema_path, f.message) for f in check.errors
    ]


def test_a_definition_that_fits_has_no_finding() -> None:
    check = run(definition())
    assert check.findings == []
    assert check.crd == "finetunes.acme.ai" and check.version == "v1"
    assert check.paths >= 12 and check.expressions == 10  # the pod-side selectors are left out


def test_a_typo_names_the_field_the_schema_path_and_the_close_name() -> None:
    check = run(definition(**{".spec.replicaSpecs.Worker.template": ".spec.replicaSpec.Worker.template"}))
    ((location, schema_path, message),) = errors(check)
    assert location == "childComponents[0].specDefinition.podTemplateSpecPath"
    assert schema_path == f"{WHERE}.properties.spec.properties.replicaSpec"
    assert message == (
        f".spec.replicaSpec is not in the schema of acme.ai/v1 FineTune: {WHERE}.properties.spec: "
        "it has no field 'replicaSpec'; did you mean 'replicaSpecs'?"
    )


def test_a_typo_in_a_status_expression_is_found_too() -> None:
    check = run(definition(**{"any(.status.conditions[]?": "any(.status.condition[]?"}))
    ((location, _, message),) = errors(check)
    assert location == "rootComponent.statusDefinition.statusMappings.running[0].byExpression.expression"
    assert message.startswith(".status.condition is not in the schema")


def test_a_pod_template_path_that_is_not_template_shaped() -> None:
    check = run(definition(**{".spec.replicaSpecs.Worker.template": ".spec.replicaSpecs.Worker"}))
    ((location, schema_path, message),) = errors(check)
    assert location == "childComponents[0].specDefinition.podTemplateSpecPath"
    assert schema_path == f"{WHERE}.properties.spec.properties.replicaSpecs.additionalProperties"
    assert message.startswith(".spec.replicaSpecs.Worker is not a PodTemplateSpec")


def test_a_pod_template_path_at_a_pod_spec_says_which_style_fits() -> None:
    check = run(
        definition(**{"{podSpecPath: '.spec.tasks[].pod'}": "{podTemplateSpecPath: '.spec.tasks[].pod'}"})
    )
    ((_, _, message),) = errors(check)
    assert "(it is PodSpec-shaped: use podSpecPath)" in message


def test_a_pod_spec_path_that_is_not_pod_spec_shaped() -> None:
    check = run(definition(**{"'.spec.tasks[].pod'": "'.spec.tasks[].name'"}))
    ((location, _, message),) = errors(check)
    assert location == "childComponents[1].specDefinition.podSpecPath"
    assert message.startswith(".spec.tasks[].name is not a PodSpec (containers with name and image)")


def test_a_scale_path_that_is_not_an_integer_or_a_string() -> None:
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": ".spec.replicaSpecs.Worker.ratio"}))
    ((location, schema_path, message),) = errors(check)
    assert location == "childComponents[0].scaleDefinition.replicasPath"
    assert schema_path.endswith(".additionalProperties.properties.ratio")
    assert "is a number in the schema" in message and "not an integer or a string" in message


def test_a_scale_path_that_yields_a_boolean() -> None:
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": ".spec.runPolicy.suspend"}))
    ((_, _, message),) = errors(check)
    assert ".spec.runPolicy.suspend is a boolean in the schema" in message
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": ".spec.image == null"}))
    ((_, _, message),) = errors(check)
    assert message == "the expression yields a boolean, not an integer or a string"


@pytest.mark.parametrize(
    ("scale", "shown"), [("2.5", "2.5"), ('"two"', '"two"'), ("1e12", "1000000000000.0")]
)
def test_a_literal_scale_that_is_not_a_replica_count(scale: str, shown: str) -> None:
    check = run(
        definition(
            **{".spec.replicaSpecs.Worker.replicas // 1": f".spec.replicaSpecs.Worker.replicas // {scale}"}
        )
    )
    ((_, _, message),) = errors(check)
    assert message == (
        f"the expression yields ({shown}), which is not a replica count (docs/spec/format.md#scale)"
    )


def test_an_iteration_over_a_non_list() -> None:
    check = run(definition(**{"'.spec.tasks[] | .count // 1'": "'.spec.image[] | 1'"}))
    ((location, schema_path, message),) = errors(check)
    assert location == "childComponents[1].scaleDefinition.replicasPath"
    assert schema_path == f"{WHERE}.properties.spec.properties.image"
    assert message.startswith(".spec.image[] does not fit the schema")
    assert "it is a string, not a list or a map: iterating it is an error" in message
    check = run(definition(**{"'.spec.tasks[] | .count // 1'": "'.spec.runPolicy[] | 1'"}))
    ((_, _, message),) = errors(check)
    assert "it is an object with fixed fields, not a list or a map" in message


def test_a_map_and_a_list_may_be_iterated() -> None:
    scale = "'(.spec.tasks[] | .count // 1), (.spec.replicaSpecs[] | .replicas)'"
    check = run(definition(**{"'.spec.tasks[] | .count // 1'": scale}))
    assert check.errors == []


def test_a_field_of_a_list_and_an_index_of_an_object_do_not_fit() -> None:
    check = run(definition(**{"instanceIdPath: .spec.tasks[].name": "instanceIdPath: .spec.tasks.name"}))
    assert "it is an array, which has no fields" in errors(check)[0][2]
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": ".spec.runPolicy[0]"}))
    assert "it is an object, not a list: an index is an error" in errors(check)[0][2]


def test_preserve_unknown_fields_is_a_note_not_a_pass() -> None:
    check = run(
        definition(**{".spec.replicaSpecs.Worker.replicas // 1": ".spec.extra.replicas // .spec.extra.size"})
    )
    assert check.errors == []
    (note,) = check.notes
    assert note.severity is Severity.NOTE
    assert note.location == "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath"
    assert note.schema_path == f"{WHERE}.properties.spec.properties.extra"
    assert note.message == (
        "not checked: .spec.extra.replicas, .spec.extra.size and below "
        f"({WHERE}.properties.spec.properties.extra: x-kubernetes-preserve-unknown-fields)"
    )


def test_a_pod_template_in_a_loose_schema_is_not_checked_and_says_so() -> None:
    loose = crd(
        spec={
            "replicaSpecs": {
                "type": "object",
                "additionalProperties": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            }
        }
    )
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": "1"}), loose)
    assert check.errors == []
    assert [n.location.rsplit(".", 1)[-1] for n in check.notes] == ["podTemplateSpecPath"]


def test_an_expression_that_cannot_be_followed_is_a_note() -> None:
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": "[..] | length"}))
    assert check.errors == []
    (note,) = check.notes
    assert (
        note.message
        == "not checked: part of the expression cannot be followed: recursive descent (..) (character 2)"
    )
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": 'getpath(["spec", "size"])'}))
    messages = [n.message for n in check.notes]
    assert (
        "not checked: part of the expression cannot be followed: getpath/1 is not followed (character 1)"
        in messages
    )
    assert any("the result cannot be followed" in m for m in messages)


def test_a_suspend_value_of_another_type_than_its_field() -> None:
    check = run(definition(**{'value: "true"': "value: '\"yes\"'"}))
    ((location, schema_path, message),) = errors(check)
    assert location == "rootComponent.suspendDefinition.suspendActions[0].path"
    assert schema_path.endswith("properties.runPolicy.properties.suspend")
    assert message.startswith(
        'the action writes a string ("yes") to .spec.runPolicy.suspend, which is a boolean'
    )


def test_a_phase_path_that_is_not_a_string_and_conditions_that_are_not_a_list() -> None:
    phase, conditions = "phaseDefinition: {path: .status.", "conditionsDefinition: {path: .status."
    swapped = {f"{phase}phase}}": f"{phase}conditions}}", f"{conditions}conditions}}": f"{conditions}phase}}"}
    check = run(definition(**swapped))
    messages = sorted(m for _, _, m in errors(check))
    assert messages[0].startswith(".status.conditions is an array in the schema")
    assert messages[0].endswith("not a string")
    assert messages[1].startswith(".status.phase is a string in the schema") and messages[1].endswith(
        "not a list"
    )


ANNOTATED = '.metadata.annotations["acme.ai/size"] // .metadata.generation'


def test_metadata_is_object_meta_whatever_the_crd_says() -> None:
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": ANNOTATED}))
    assert check.findings == []
    check = run(definition(**{".spec.replicaSpecs.Worker.replicas // 1": ".metadata.label"}))
    assert "did you mean 'labels'?" in errors(check)[0][2]


def test_a_version_the_crd_lacks_or_does_not_serve() -> None:
    other = crd()
    other["spec"]["versions"][0]["name"] = "v2"
    ((location, _, message),) = errors(run(definition(), other))
    assert location == "rootComponent.kind.version"
    assert message == "the CRD finetunes.acme.ai: finetunes.acme.ai has no version 'v1'; it has v2"
    unserved = crd()
    unserved["spec"]["versions"][0]["served"] = False
    assert [m for _, _, m in errors(run(definition(), unserved))] == [
        "the CRD finetunes.acme.ai does not serve version v1 (served: false)"
    ]


def test_the_crd_that_lists_the_version_is_chosen() -> None:
    other = crd()
    other["spec"]["versions"][0]["name"] = "v2"
    assert crd_for(definition(), [other, crd()]) is not None
    assert crd_for(definition(), [other, crd()])["spec"]["versions"][0]["name"] == "v1"  # type: ignore[index]
    assert crd_for(definition(), [other]) is other  # then the version finding says why


def test_a_crd_of_another_kind() -> None:
    other = copy.deepcopy(crd())
    other["spec"]["names"]["kind"] = "Other"
    karta = definition()
    assert crd_for(karta, [other]) is None and crd_for(karta, [other, crd()]) is not None
    ((location, _, message),) = errors(run(karta, other))
    assert location == "rootComponent.kind"
    assert (
        message
        == "the CRD finetunes.acme.ai defines acme.ai/Other, not the definition's root kind acme.ai/FineTune"
    )


@pytest.mark.parametrize(
    "hostile",
    [
        {"versions": [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": "nope"}}]},
        {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"properties": {"spec": []}}}}]},
        {
            "versions": [
                {
                    "name": "v1",
                    "schema": {
                        "openAPIV3Schema": {
                            "properties": {
                                "spec": {"properties": {"replicaSpecs": {"additionalProperties": 3}}}
                            }
                        }
                    },
                }
            ]
        },
    ],
)
def test_a_hostile_schema_is_a_finding_or_a_note_never_a_crash(hostile: dict[str, Any]) -> None:
    check = run(definition(), crd(**hostile))
    assert check.findings  # nothing passes silently
