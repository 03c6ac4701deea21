"""karta.scaffold on small hand-written schemas: shapes found, jq paths, status mapping, validity."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from karta.errors import ScaffoldError
from karta.extract import ComponentFactory
from karta.jq import Evaluator, is_assignable, parse
from karta.model import Severity, load_karta, validate_karta
from karta.scaffold import Draft, analyse_schema, crd_version, scaffold_crd, select_crd

CONTAINERS = {
    "type": "array",
    "items": {"type": "object", "properties": {"name": {"type": "string"}, "image": {"type": "string"}}},
}
POD_SPEC = {"type": "object", "properties": {"containers": CONTAINERS}}
TEMPLATE = {"type": "object", "properties": {"metadata": {"type": "object"}, "spec": POD_SPEC}}


def crd(spec: dict[str, Any], status: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": spec}},
    }
    if status is not None:
        schema["properties"]["status"] = {"type": "object", "properties": status}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "finetunes.acme.ai"},
        "spec": {
            "group": "acme.ai",
            "names": {"kind": "FineTune", "plural": "finetunes"},
            "scope": "Namespaced",
            "versions": extra.get(
                "versions",
                [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
            ),
        },
    }


def errors_of(text: str) -> list[str]:
    result = load_karta(yaml.safe_load(text), strict=True)
    assert result.karta is not None
    findings = [*result.findings, *validate_karta(result.karta)]
    return [f.message for f in findings if f.severity is Severity.ERROR]


INT = {"type": "integer"}


def test_plain_template_with_replicas_and_suspend() -> None:
    draft = scaffold_crd(
        [
            crd(
                {
                    "trainers": {"type": "object", "properties": {"count": INT, "template": TEMPLATE}},
                    "suspend": {"type": "boolean"},
                }
            )
        ]
    )
    assert draft.name == "acme-ai-finetune-v1"
    child = draft.component("trainers")
    assert child["specDefinition"] == {"podTemplateSpecPath": ".spec.trainers.template"}
    assert child["scaleDefinition"] == {"replicasPath": ".spec.trainers.count // 1"}
    assert "instanceIdPath" not in child
    root = draft.component("finetune")
    assert root["suspendDefinition"]["suspendActions"] == [{"path": ".spec.suspend", "value": "true"}]
    assert errors_of(draft.to_yaml()) == []


def test_map_of_templates_gives_instances_by_key() -> None:
    replica = {"type": "object", "properties": {"replicas": INT, "template": TEMPLATE}}
    draft = scaffold_crd([crd({"replicaSpecs": {"type": "object", "additionalProperties": replica}})])
    child = draft.component("replica")
    assert child["instanceIdPath"] == "(.spec.replicaSpecs // {}) | to_entries[] | .key"
    assert child["specDefinition"]["podTemplateSpecPath"] == ".spec.replicaSpecs[]?.template"
    assert child["scaleDefinition"]["replicasPath"] == ".spec.replicaSpecs[]? | (.replicas // 1)"
    assert "componentInstanceSelector" in child["podSelector"]
    # the paths pair up on a real object
    karta = load_karta(yaml.safe_load(draft.to_yaml())).karta
    obj = {
        "spec": {
            "replicaSpecs": {"Worker": {"replicas": 3, "template": {"spec": {}}}, "Master": {"template": {}}}
        }
    }
    comp = ComponentFactory(karta, obj, evaluator=Evaluator(trusted=True)).component("replica")
    assert comp.instance_ids() == ["Master", "Worker"]
    scales = comp.scales()
    assert scales is not None and scales["Worker"].replicas == 3 and scales["Master"].replicas == 1
    assert is_assignable(parse(child["specDefinition"]["podTemplateSpecPath"]))


def test_array_of_templates_uses_a_name_field_and_nested_levels_join_ids() -> None:
    group = {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["groupName"],
            "properties": {
                "groupName": {"type": "string"},
                "replicas": INT,
                "minReplicas": INT,
                "maxReplicas": INT,
                "template": TEMPLATE,
                "roles": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"podSpec": POD_SPEC}},
                },
            },
        },
    }
    draft = scaffold_crd([crd({"groups": group})])
    child = draft.component("groups")
    assert child["instanceIdPath"] == ".spec.groups[]?.groupName"
    assert child["scaleDefinition"] == {
        "replicasPath": ".spec.groups[]? | (.replicas // 1)",
        "minReplicasPath": ".spec.groups[]? | .minReplicas",
        "maxReplicasPath": ".spec.groups[]? | .maxReplicas",
    }
    roles = draft.component("roles")
    assert roles["specDefinition"] == {"podSpecPath": ".spec.groups[]?.roles[]?.podSpec"}
    assert roles["scaleDefinition"]["replicasPath"] == ".spec.groups[]?.roles[]? | 1"
    karta = load_karta(yaml.safe_load(draft.to_yaml())).karta
    obj = {
        "spec": {
            "groups": [{"groupName": "a", "roles": [{"podSpec": {}}, {"podSpec": {}}]}, {"groupName": "b"}]
        }
    }
    factory = ComponentFactory(karta, obj, evaluator=Evaluator(trusted=True))
    assert factory.component("roles").instance_ids() == ["a/0", "a/1"]
    assert factory.component("groups").instance_ids() == ["a", "b"]
    assert errors_of(draft.to_yaml()) == []


def test_replica_names_rank_before_distance_and_others_become_a_todo() -> None:
    job = {"type": "object", "properties": {"parallelism": INT, "template": TEMPLATE}}
    item = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "replicas": INT,
            "template": {"type": "object", "properties": {"spec": job}},
        },
    }
    draft = scaffold_crd([crd({"jobs": {"type": "array", "items": item}})])
    child = draft.component("jobs")
    assert child["scaleDefinition"]["replicasPath"] == ".spec.jobs[]? | (.replicas // 1)"
    todo = [t.message for t in draft.todos if t.path[-1] == "replicasPath"]
    assert any(".spec.jobs[]?.template.spec.parallelism" in m for m in todo)


def test_phase_enum_is_mapped_by_name_and_unmapped_values_are_listed() -> None:
    status = {
        "phase": {"type": "string", "enum": ["Pending", "Running", "Succeeded", "Failed", "Draining"]},
        "conditions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"type": {"type": "string"}, "status": {"type": "string"}},
            },
        },
    }
    draft = scaffold_crd([crd({"template": TEMPLATE}, status)])
    sd = draft.component("finetune")["statusDefinition"]
    assert sd["phaseDefinition"] == {"path": ".status.phase"}
    undecided = {"byExpression": {"expression": '(.status.phase // "") == ""', "expectedResult": "true"}}
    assert sd["statusMappings"] == {
        "initializing": [undecided, {"byPhase": "Pending"}],  # issue 28: the catalog's first rule
        "running": [{"byPhase": "Running"}],
        "completed": [{"byPhase": "Succeeded"}],
        "failed": [{"byPhase": "Failed"}],
    }
    assert "conditionsDefinition" not in sd  # unused definitions would be warnings
    text = draft.to_yaml()
    assert "Unmapped values: Draining" in text
    assert errors_of(text) == []


def test_conditions_without_phase_enum() -> None:
    status = {
        "conditions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"type": {"type": "string"}, "status": {"type": "string"}},
            },
        }
    }
    sd = scaffold_crd([crd({"template": TEMPLATE}, status)]).component("finetune")["statusDefinition"]
    assert sd["conditionsDefinition"] == {"path": ".status.conditions"}
    assert {"byConditions": [{"type": "Running", "status": "True"}]} in sd["statusMappings"]["running"]


@pytest.mark.parametrize(
    "status",
    [
        None,  # no status in the schema: .status.phase guessed
        {"phase": {"type": "string", "enum": ["Running", "Failed"]}},
        {"conditions": {"type": "array", "items": {"type": "object"}}},
    ],
    ids=["guessed-phase", "phase-enum", "conditions"],
)
def test_a_draft_reads_initializing_before_the_operator_writes_status(status: dict[str, Any] | None) -> None:
    """Issue 28: the catalog's rule "not decided yet is Initializing" is in every draft, so a
    just-created object is Initializing, not Undefined (and still Running once it says so)."""
    draft = scaffold_crd([crd({"template": TEMPLATE}, status)])
    karta = load_karta(yaml.safe_load(draft.to_yaml()), strict=True).karta
    assert karta is not None
    obj: dict[str, Any] = {"apiVersion": "acme.ai/v1", "kind": "FineTune", "metadata": {"name": "f"}}
    evaluator = Evaluator(trusted=False)

    def primary(written: dict[str, Any] | None) -> str:
        status = (
            ComponentFactory(
                karta, {**obj, **({"status": written} if written is not None else {})}, evaluator=evaluator
            )
            .root()
            .status()
        )
        assert status is not None
        return str(status.primary)

    for written in (None, {}, {"phase": ""}, {"conditions": []}):
        assert primary(written) == "Initializing", written
    assert primary({"phase": "Running", "conditions": [{"type": "Running", "status": "True"}]}) == "Running"


def test_no_status_and_no_pods_still_validates() -> None:
    draft = scaffold_crd([crd({"size": INT})])
    text = draft.to_yaml()
    assert "TODO: no PodTemplateSpec- or PodSpec-shaped field found" in text
    assert "the schema declares no phase or conditions" in text
    assert errors_of(text) == []


def test_spec_that_is_itself_a_pod_spec() -> None:
    draft = scaffold_crd([crd({"containers": CONTAINERS})])
    assert draft.component("pod")["specDefinition"] == {"podSpecPath": ".spec"}


def test_component_names_are_unique_dns_labels() -> None:
    a = {"type": "object", "properties": {"template": TEMPLATE}}
    draft = scaffold_crd(
        [
            crd(
                {
                    "finetune": {"type": "object", "properties": {"workerSpec": a}},
                    "other": {"type": "object", "properties": {"workerSpec": a}},
                }
            )
        ]
    )
    names = [c["name"] for c in draft.karta["spec"]["structureDefinition"]["childComponents"]]
    assert names == ["worker", "other-worker"]
    assert draft.component("finetune")["name"] == "finetune"


def test_selection_of_crd_and_version() -> None:
    schema = {"openAPIV3Schema": {"type": "object"}}
    versions = [
        {"name": "v1alpha1", "served": True, "storage": False, "schema": schema},
        {"name": "v1", "served": True, "storage": True, "schema": schema},
    ]
    doc = crd({}, versions=versions)
    other = crd({})
    other["spec"]["names"] = {"kind": "Other", "plural": "others"}
    assert crd_version(doc).version == "v1"
    assert crd_version(doc, version="v1alpha1").version == "v1alpha1"
    with pytest.raises(ScaffoldError, match="has no version 'v9'; it has v1alpha1, v1"):
        crd_version(doc, version="v9")
    assert select_crd([{"kind": "Pod"}, doc, other], kind="finetune") is doc
    with pytest.raises(ScaffoldError, match="choose one with --kind"):
        select_crd([doc, other])
    with pytest.raises(ScaffoldError, match="no CustomResourceDefinition found"):
        select_crd([{"apiVersion": "v1", "kind": "Pod"}])


def test_analysis_ignores_schemaless_fields() -> None:
    a = analyse_schema(
        {
            "type": "object",
            "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        }
    )
    assert a.pod_fields == [] and not a.has_spec_schema


# --- hostile CRDs ---------------------------------------------------------------------------------

HOSTILE = 'w"] | $ENV.HOME | .["'


def child_names(draft: Draft) -> list[str]:
    return [c["name"] for c in draft.karta["spec"]["structureDefinition"]["childComponents"]]


def case_variants(word: str, count: int) -> list[str]:
    """``count`` spellings of ``word`` in different cases (replica names compare case-insensitively)."""
    return ["".join(c.upper() if (i >> k) & 1 else c for k, c in enumerate(word)) for i in range(count)]


def test_hostile_property_names_stay_data_in_every_expression() -> None:
    item = {
        "type": "object",
        "properties": {
            HOSTILE: {"type": "string"},
            'a"b': {
                "type": "array",
                "items": {"type": "object", "properties": {"my\x00Name": {"type": "string"}, "t": TEMPLATE}},
            },
        },
    }
    draft = scaffold_crd([crd({HOSTILE: {"type": "object", "additionalProperties": item}})])
    child = draft.component("t")
    assert child["specDefinition"]["podTemplateSpecPath"] == (
        '.spec["w\\"] | $ENV.HOME | .[\\""][]?["a\\"b"][]?.t'
    )
    assert child["instanceIdPath"] == (
        '(.spec["w\\"] | $ENV.HOME | .[\\""] // {}) as $c0 | $c0 | keys[] as $k0 | $c0[$k0] as $v0 | '
        '($v0["a\\"b"] // []) as $c1 | $c1 | keys[] as $k1 | $c1[$k1] as $v1 | '
        '"\\($k0)/\\($v1["my\\u0000Name"])"'
    )
    text = draft.to_yaml()
    assert errors_of(text) == []
    karta = load_karta(yaml.safe_load(text)).karta
    obj = {"spec": {HOSTILE: {"k": {'a"b': [{"my\x00Name": "n0", "t": {}}]}}}}
    comp = ComponentFactory(karta, obj, evaluator=Evaluator(trusted=True)).component("t")
    assert comp.instance_ids() == ["k/n0"]


def test_replica_paths_under_quoted_fields() -> None:
    outer = {"type": "object", "properties": {"Replicas": INT, "min-Replicas": INT, "template": TEMPLATE}}
    child = scaffold_crd([crd({"my-group": outer})]).component("my-group")
    assert child["scaleDefinition"] == {"replicasPath": '.spec["my-group"].Replicas // 1'}
    item = {"type": "object", "properties": {"minSize": INT, "MAXSIZE": INT, "template": TEMPLATE}}
    child = scaffold_crd([crd({"g-1": {"type": "array", "items": item}})]).component("g-1")
    assert child["scaleDefinition"]["minReplicasPath"] == '.spec["g-1"][]? | .minSize'
    assert child["scaleDefinition"]["maxReplicasPath"] == '.spec["g-1"][]? | .MAXSIZE'


def test_comments_never_carry_the_crds_line_breaks_or_controls() -> None:
    status = {
        "phase": {"type": "string", "enum": ["Running", "x\ny: 1", "a\u2028b", "c\x85d", "e\x00", "\ufeff"]}
    }
    spec = {"x\ny: 1\u2029z": TEMPLATE}
    doc = crd(spec, status)
    doc["metadata"]["name"] = "finetunes.acme.ai\n# injected: true\u2028"
    text = scaffold_crd([doc]).to_yaml()
    assert all(line.isprintable() for line in text.splitlines())
    assert "# Unmapped values: x\\u000ay: 1, a\\u2028b, c\\u0085d, e\\u0000, \\ufeff." in text
    assert '#   .spec["x\\u000ay: 1\\u2029z"] (PodTemplateSpec)' in text
    assert "finetunes.acme.ai\\u000a# injected: true\\u2028" in text
    loaded = yaml.safe_load(text)
    assert loaded["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"] == {
        "initializing": [
            {"byExpression": {"expression": '(.status.phase // "") == ""', "expectedResult": "true"}}
        ],
        "running": [{"byPhase": "Running"}],
    }
    assert errors_of(text) == []


def test_byphase_values_with_controls_load_back_unchanged() -> None:
    values = ["Running", "Failed\n", "Pending\u2028", "Succeeded\t", "Done\x00"]
    draft = scaffold_crd([crd({"template": TEMPLATE}, {"phase": {"type": "string", "enum": values}})])
    text = draft.to_yaml()
    assert all(line.isprintable() for line in text.splitlines())
    assert yaml.safe_load(text) == draft.karta
    assert errors_of(text) == []


def test_malformed_schema_parts_are_skipped() -> None:
    doc = crd(
        {
            "list": {
                "type": "array",
                "items": {"type": "object", "required": 5, "properties": {1: INT, "t": TEMPLATE}},
            },
            "odd": {"type": "object", "properties": {None: TEMPLATE, True: TEMPLATE, "ok": "not a schema"}},
            "\ud800": TEMPLATE,  # a lone surrogate: only a Python caller can pass one, no object holds it
        },
        {
            "phase": {"type": "string", "enum": {"Running": 1}},
            "state": {"type": "string", "enum": ["Running", 3, "\udc00"]},
        },
    )
    draft = scaffold_crd([doc])
    assert [p.display for p in draft.analysis.pod_fields] == [".spec.list[]?.t"]
    assert draft.component("finetune")["statusDefinition"]["phaseDefinition"] == {"path": ".status.state"}
    assert errors_of(draft.to_yaml()) == []


def test_long_names_that_collide_are_numbered_within_63_characters() -> None:
    long = "w" * 70
    nested = {"type": "object", "properties": {long: TEMPLATE}}
    draft = scaffold_crd([crd({long: TEMPLATE, "template": nested, "pod": nested, "spec": nested})])
    assert child_names(draft) == ["w" * 63, "pod", "w" * 61 + "-2", "w" * 61 + "-3"]
    assert errors_of(draft.to_yaml()) == []


def test_many_names_without_letters_share_one_numbering() -> None:
    spec = {chr(0x4E00 + i): TEMPLATE for i in range(30)}
    assert child_names(scaffold_crd([crd(spec)])) == ["pod", *(f"pod-{i}" for i in range(2, 31))]


def test_a_todo_names_a_few_other_replica_fields_and_counts_the_rest() -> None:
    ints = {name: INT for name in case_variants("replicas", 40)}
    draft = scaffold_crd([crd({"group": {"type": "object", "properties": {**ints, "template": TEMPLATE}}})])
    assert draft.component("group")["scaleDefinition"]["replicasPath"] == ".spec.group.replicas // 1"
    (todo,) = [t.message for t in draft.todos if t.path[-1] == "replicasPath"]
    assert todo.startswith(
        "other replica-like fields here: .spec.group.Replicas, .spec.group.rEplicas, .spec.group.REplicas, "
        ".spec.group.rePlicas, .spec.group.RePlicas and 34 more; which one"
    )


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        ("group", "Acme.AI", "spec.group 'Acme.AI': a lowercase RFC 1123 subdomain"),
        ("group", 'a"] | $ENV.HOME', "spec.group 'a\"] | $ENV.HOME': a lowercase RFC 1123 subdomain"),
        ("kind", "Fine\nTune", "spec.names.kind 'Fine\\nTune': a lowercase RFC 1123 label must consist"),
        ("kind", "9Lives", "spec.names.kind '9Lives': an RFC 1035 label must start with a letter"),
        ("version", "V1", "the version name 'V1': a lowercase RFC 1123 label"),
    ],
)
def test_names_the_api_server_would_refuse_are_not_a_crd(where: str, value: str, message: str) -> None:
    doc = crd({"template": TEMPLATE})
    if where == "group":
        doc["spec"]["group"] = value
    elif where == "kind":
        doc["spec"]["names"]["kind"] = value
    else:
        doc["spec"]["versions"][0]["name"] = value
    with pytest.raises(ScaffoldError, match="is not a valid CRD") as err:
        scaffold_crd([doc])
    assert message in str(err.value)
    assert str(err.value).isprintable()
