"""The validator: section 14.1 order and short circuits, 14.2, 20.13 (C12), 20.4 rows, R2, R6, R10, CRD."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from model_data import children, fuller, gang, minimal, root

from karta.errors import ValidationError
from karta.model import Finding, Karta, Severity, karta_from_dict, validate_karta, validate_or_raise

Mutation = Callable[[dict[str, Any]], None]


def _findings(data: dict[str, Any]) -> list[Finding]:
    return validate_karta(karta_from_dict(data))


def _messages(data: dict[str, Any]) -> list[str]:
    return [f.message for f in _findings(data)]


def _with(base: Callable[[], dict[str, Any]], mutate: Mutation) -> dict[str, Any]:
    data = base()
    mutate(data)
    return data


def _child(name: str, owner: str | None, **extra: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, **extra}
    if owner is not None:
        c["ownerRef"] = owner
    return c


def test_valid_definitions_have_no_findings() -> None:
    assert _findings(minimal()) == []
    assert _findings(fuller()) == []


def test_nil() -> None:
    assert validate_karta(None) == [Finding(Severity.ERROR, "karta is nil", "")]


# --- 20.13 C12 -----------------------------------------------------------------------------------------


def test_name_uniqueness_stops_validation() -> None:
    data = minimal()
    children(data).extend([_child("w", "batchrun"), _child("w", "batchrun"), _child("x", "ghost")])
    root(data).pop("statusDefinition")
    assert _messages(data) == ["component name w is not unique"]
    assert _findings(data)[0].location == "spec.structureDefinition.childComponents[1].name"


def test_exactly_one_cycle_finding() -> None:
    data = minimal()
    children(data).extend([_child("a", "b"), _child("b", "a"), _child("c", "d"), _child("d", "c")])
    cycles = [m for m in _messages(data) if "ownership cycle detected involving component" in m]
    assert cycles == ["ownership cycle detected involving component a"]


def test_cycle_check_is_skipped_when_steps_3_to_5_found_something() -> None:
    data = minimal()
    children(data).extend([_child("a", "b"), _child("b", "a"), _child("", "a")])
    messages = _messages(data)
    assert "component name is empty" in messages
    assert not any("ownership cycle" in m for m in messages)


def _set(path: list[str | int], value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        target: Any = root(data)
        for key in path[:-1]:
            target = target.setdefault(key, {}) if isinstance(key, str) else target[key]
        target[path[-1]] = value

    return mutate


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            _set(["specDefinition", "podSpecPath"], ".spec"),
            "component 'batchrun' has multiple pod spec definitions",
        ),
        (_set(["specDefinition", "podTemplateSpecPath"], "del(.spec)"), "del function is not allowed"),
        (
            _set(
                ["statusDefinition", "statusMappings", "running", 0, "byExpression"],
                {"expression": "(.a | del(.b))", "expectedResult": "x"},
            ),
            "del function is not allowed",
        ),
        (
            _set(["specDefinition", "podTemplateSpecPath"], ".. | .spec?"),
            "recursive descent operator '..' is not allowed",
        ),
        (
            _set(["specDefinition", "podTemplateSpecPath"], "[.. | .spec?]"),
            "recursive descent operator '..' is not allowed",
        ),
        (_set(["scaleDefinition", "replicasPath"], ".spec.x |= 1"), "modifying operator '|=' is not allowed"),
        (
            _set(["instanceIdPath"], ".spec.jobs[].name"),
            "has instance id path but no pod component instance selector",
        ),
        (
            _set(["kind"], {"group": "", "version": "v1", "kind": "Service"}),
            "root component must have full kind (group, version, kind)",
        ),
    ],
)
def test_c12_rows_on_the_root(mutate: Mutation, expected: str) -> None:
    messages = _messages(_with(minimal, mutate))
    assert any(expected in m for m in messages), messages


def test_c12_pod_root_with_empty_group_is_valid() -> None:
    data = _with(minimal, _set(["kind"], {"group": "", "version": "v1", "kind": "Pod"}))
    assert _findings(data) == []


def test_c12_ghost_member_and_sub_group() -> None:
    data = fuller()
    gang(data)["podGroups"] = [{"name": "g", "members": [{"componentName": "ghost"}]}]
    gang(data)["podGroup"]["subGroups"].append({"componentName": "ghost"})
    messages = _messages(data)
    assert (
        "pod-group member component 'ghost' is not defined (should be a root or child component)" in messages
    )
    assert "sub-group component 'ghost' is not defined" in messages


def _selector(selector: dict[str, Any]) -> Mutation:
    return lambda data: children(data)[0]["podSelector"].update(componentTypeSelector=selector)


def test_c12_value_without_key_path() -> None:
    messages = _messages(_with(fuller, _selector({"value": "x"})))
    [finding] = [m for m in messages if "value without keyPath" in m]
    assert "value requires keyPath" in finding


def test_c12_invalid_match_labels_key() -> None:
    messages = _messages(_with(fuller, _selector({"matchLabels": {"bad key!": "v"}})))
    assert any('Invalid value: "bad key!"' in m for m in messages), messages


def test_c12_misspelt_fragmented_definition_is_a_load_finding() -> None:
    from karta.model import load_karta

    data = minimal()
    root(data)["specDefinition"] = {"fragmentedPodDefinition": {"imagePath": ".spec.image"}}
    result = load_karta(data)
    assert [f.message for f in result.findings] == [
        'unknown field "spec.structureDefinition.rootComponent.specDefinition.fragmentedPodDefinition"'
    ]


# --- 14.1 messages and order ---------------------------------------------------------------------------


def test_root_and_children_messages_in_order() -> None:
    data = minimal()
    root(data)["kind"] = {"group": "x", "version": "", "kind": "K"}
    root(data)["ownerRef"] = "someone"
    root(data).pop("statusDefinition")
    children(data).extend([_child("orphan", None), _child("lost", "nowhere")])
    assert _messages(data)[:5] == [
        "root component must have full kind (group, version, kind)",
        "root component cannot have owner ref",
        "root component must have status definition",
        "child component 'orphan' has no owner ref",
        "child component 'lost' has owner ref to non-existing component 'nowhere'",
    ]


def test_root_without_kind() -> None:
    data = minimal()
    del root(data)["kind"]
    findings = _findings(data)
    assert findings[0].message == "root component must have full kind (group, version, kind)"
    assert findings[0].location == "spec.structureDefinition.rootComponent.kind"


def test_instance_selector_without_instance_id_path() -> None:
    data = fuller()
    children(data)[0]["podSelector"]["componentInstanceSelector"] = {"idPath": ".metadata.name"}
    assert "component 'master' has pod component instance selector but no instance id path" in _messages(data)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (
            {},
            "has neither keyPath nor matchLabels in componentTypeSelector: "
            "at least one of keyPath or matchLabels must be set",
        ),
        ({"matchLabels": {}}, "empty matchLabels"),
        ({"keyPath": ""}, "keyPath must be at least 1 character long"),
    ],
)
def test_type_selector_crd_rules(selector: dict[str, Any], expected: str) -> None:
    messages = _messages(_with(fuller, _selector(selector)))
    assert any(expected in m for m in messages), messages


def test_match_labels_findings_are_sorted_and_one_per_bad_key_or_value() -> None:
    labels = {
        "z/ok": "",
        "b": "bad value!",
        "a!": "x",
        "example.com/name": "v",
        "UPPER.example.com/x": "v",
        "x" * 64: "v",
        "ok": "y" * 64,
        "a/b/c": "v",
        "/name": "v",
    }
    findings = [
        f
        for f in _findings(_with(fuller, _selector({"matchLabels": labels})))
        if "Invalid value" in f.message
    ]
    invalid = [f.message.split("Invalid value: ", 1)[1].split(":")[0] for f in findings]
    assert invalid == [
        '"/name"',
        '"UPPER.example.com/x"',
        '"a!"',
        '"a/b/c"',
        '"bad value!"',
        f'"{"y" * 64}"',
        f'"{"x" * 64}"',
    ]
    assert all(f.severity is Severity.ERROR for f in findings)
    assert findings[0].location.endswith('componentTypeSelector.matchLabels["/name"]')


def test_structure_then_expressions_then_fixes() -> None:
    data = minimal()
    root(data)["specDefinition"]["podTemplateSpecPath"] = ".spec.template // {}"
    root(data)["specDefinition"]["podSpecPath"] = "del(.x)"
    root(data)["statusDefinition"]["statusMappings"]["degraded"] = [{}]
    messages = _messages(data)
    assert messages[0] == "component 'batchrun' has multiple pod spec definitions"
    assert "del function is not allowed" in messages[1]
    assert "empty status matcher always matches" in messages[2]
    assert "podTemplateSpecPath': path is not assignable" in messages[3]
    assert "podSpecPath': path is not assignable" in messages[4]


def test_process_dependent_builtins_are_warnings() -> None:
    data = _with(minimal, _set(["scaleDefinition", "replicasPath"], "$ENV.REPLICAS // env.R"))
    findings = _findings(data)
    assert findings and all(f.severity is Severity.WARNING for f in findings)
    assert all(
        f.message.startswith(
            "JQ expression '$ENV.REPLICAS // env.R' at 'spec.structureDefinition.rootComponent"
        )
        and "failed validation: " in f.message
        for f in findings
    )


def test_parse_failure_names_expression_and_field() -> None:
    data = _with(minimal, _set(["scaleDefinition", "replicasPath"], ".spec.["))
    [finding] = _findings(data)
    assert finding.message.startswith(
        "failed to parse JQ expression '.spec.[' at "
        "'spec.structureDefinition.rootComponent.scaleDefinition.replicasPath': "
    )
    assert finding.location == "spec.structureDefinition.rootComponent.scaleDefinition.replicasPath"
    assert finding.severity is Severity.ERROR


def test_every_jq_field_is_checked_with_its_json_path() -> None:
    bad = "del(.x)"
    data = fuller()
    worker = children(data)[1]
    worker["specDefinition"] = {"fragmentedPodSpecDefinition": {"imagePath": bad}}
    worker["instanceIdPath"] = bad
    worker["podSelector"] = {
        "componentTypeSelector": {"keyPath": bad},
        "componentInstanceSelector": {"idPath": bad},
        "replicaSelector": {"keyPath": bad},
    }
    root(data)["suspendDefinition"]["resumeActions"][0]["path"] = bad
    root(data)["statusDefinition"]["phaseDefinition"] = {"path": bad}
    root(data)["statusDefinition"]["statusMappings"]["degraded"] = [{"byPhase": "x"}]
    gang(data)["podGroups"] = [
        {
            "name": "g",
            "members": [{"componentName": "worker", "groupByKeyPaths": ['"a"', bad], "filters": [bad]}],
        }
    ]
    locations = [
        f.location for f in _findings(data) if "failed validation: del function is not allowed" in f.message
    ]
    r = "spec.structureDefinition.rootComponent"
    w = "spec.structureDefinition.childComponents[1]"
    g = "spec.optimizationInstructions.gangScheduling.podGroups[0].members[0]"
    assert locations == [
        f"{r}.statusDefinition.phaseDefinition.path",
        f"{r}.suspendDefinition.resumeActions[0].path",
        f"{w}.specDefinition.fragmentedPodSpecDefinition.imagePath",
        f"{w}.instanceIdPath",
        f"{w}.podSelector.componentTypeSelector.keyPath",
        f"{w}.podSelector.componentInstanceSelector.idPath",
        f"{w}.podSelector.replicaSelector.keyPath",
        f"{g}.groupByKeyPaths[1]",
        f"{g}.filters[0]",
    ]


# --- 20.4 validator rows and R2 -------------------------------------------------------------------------


def _mappings(**mappings: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        root(data)["statusDefinition"]["statusMappings"] = mappings

    return mutate


def test_c3_empty_matcher_warns() -> None:
    findings = _findings(_with(minimal, _mappings(running=[{}])))
    empty = [f for f in findings if "empty status matcher always matches" in f.message]
    assert len(empty) == 1 and empty[0].severity is Severity.WARNING
    assert (
        empty[0].location
        == "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running[0]"
    )


def test_c3_by_conditions_without_definition_is_an_error() -> None:
    findings = _findings(_with(minimal, _mappings(running=[{"byConditions": [{"type": "Ready"}]}])))
    [error] = [f for f in findings if f.is_error]
    assert "uses byConditions but has no conditionsDefinition" in error.message


def test_r2_by_phase_without_definition_and_unused_definitions() -> None:
    data = fuller()
    status = root(data)["statusDefinition"]
    status["statusMappings"]["degraded"] = [{"byPhase": "Degraded"}]
    findings = _findings(data)
    assert [(f.severity, "uses byPhase but has no phaseDefinition" in f.message) for f in findings] == [
        (Severity.ERROR, True)
    ]
    status["phaseDefinition"] = {"path": ".status.phase"}
    status["statusMappings"] = {"running": [{"byPhase": "Running"}]}
    findings = _findings(data)
    assert [(f.severity, f.message) for f in findings] == [
        (
            Severity.WARNING,
            "conditionsDefinition of component 'pytorchjob' is not used by any status matcher "
            "(no byConditions)",
        )
    ]
    status["statusMappings"] = {"running": [{"byConditions": [{"type": "Ready"}]}]}
    assert [f.message for f in _findings(data)] == [
        "phaseDefinition of component 'pytorchjob' is not used by any status matcher (no byPhase)"
    ]


def test_r2_empty_status_mappings() -> None:
    data = minimal()
    root(data)["statusDefinition"] = {"statusMappings": {}}
    [finding] = _findings(data)
    assert "statusMappings is empty" in finding.message and finding.severity is Severity.WARNING


def test_r2_action_values_must_be_json() -> None:
    data = fuller()
    suspend = root(data)["suspendDefinition"]
    suspend["suspendActions"].append({"path": ".spec.x", "value": "Suspended"})
    suspend["resumeActions"][0]["value"] = ""
    suspend["suspendActions"].append({"path": ".spec.y", "value": '"Suspended"'})
    findings = [f for f in _findings(data) if "value is not valid JSON" in f.message]
    assert [f.location for f in findings] == [
        "spec.structureDefinition.rootComponent.suspendDefinition.suspendActions[1].value",
        "spec.structureDefinition.rootComponent.suspendDefinition.resumeActions[0].value",
    ]
    assert all(f.severity is Severity.WARNING for f in findings)  # R2: "the rest are warnings"


# --- R6 ----------------------------------------------------------------------------------------------------


def test_r6_write_back_paths_that_are_not_paths_warn() -> None:
    data = fuller()
    master = children(data)[0]
    master["specDefinition"] = {"podSpecPath": ".spec.x // {}", "metadataPath": '{"labels": .spec.l}'}
    children(data)[1]["specDefinition"] = {
        "fragmentedPodSpecDefinition": {"imagePath": '.spec.image // "busybox"'}
    }
    root(data)["suspendDefinition"]["suspendActions"][0]["path"] = (
        ".spec.a // .spec.b"  # both sides paths: fine
    )
    root(data)["suspendDefinition"]["resumeActions"][0]["path"] = "[.spec.a]"
    findings = [f for f in _findings(data) if "not assignable" in f.message]
    assert all(f.severity is Severity.WARNING for f in findings)
    # Every write-back path that is not assignable is a warning of its own, at its own field,
    # naming its expression: one resume path and three read-only pod-spec paths, four warnings.
    by_field = {f.location.rsplit(".", 1)[-1]: f for f in findings}
    assert len(findings) == 4
    assert sorted(by_field) == ["imagePath", "metadataPath", "path", "podSpecPath"]
    suspend = by_field["path"]
    assert "resumeActions[0].path': path is not assignable" in suspend.message
    assert "suspending or resuming through it will fail" in suspend.message
    for field, expression, reason in (
        ("podSpecPath", ".spec.x // {}", "(array or object"),
        ("metadataPath", '{"labels": .spec.l}', "(array or object"),
        ("imagePath", '.spec.image // "busybox"', "(a literal"),
    ):
        message = by_field[field].message
        assert message.startswith(f"JQ expression '{expression}' at '"), message
        assert f"{field}': path is not assignable {reason}" in message
        assert message.endswith(
            "reading works, but writing a pod spec back through it fails (kli never writes pod specs back)"
        )
    # Read-only paths elsewhere (scale, status) are not write-back paths.
    assert not any("replicasPath" in f.location for f in findings)
    # Callers that never write back leave all of them out.
    without = validate_karta(karta_from_dict(data), write_back=False)
    assert not any("not assignable" in f.message for f in without)
    assert [f for f in _findings(data) if "not assignable" not in f.message] == without


def test_r6_one_read_only_pod_spec_path_names_its_expression() -> None:
    data = fuller()
    children(data)[0]["specDefinition"] = {"podTemplateSpecPath": "{metadata: .spec.m, spec: .spec.p}"}
    [finding] = [f for f in _findings(data) if "not assignable" in f.message]
    assert finding.message.startswith(
        "JQ expression '{metadata: .spec.m, spec: .spec.p}' at "
        "'spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath': "
        "path is not assignable (array or object construction is not a path); reading works"
    )


# --- R10 ---------------------------------------------------------------------------------------------------


def test_r10_topology_rules() -> None:
    data = fuller()
    pg = gang(data)["podGroup"]
    pg["topology"] = {"topologyName": "", "requiredTopologyLevel": "", "preferredTopologyLevel": ""}
    pg["subGroups"][0]["topology"] = {
        "topologyName": "t",
        "requiredTopologyLevel": "",
        "preferredTopologyLevel": "rack",
    }
    pg["subGroups"][1]["topology"] = {
        "topologyName": "t",
        "requiredTopologyLevel": "",
        "preferredTopologyLevel": "",
    }
    findings = _findings(data)
    assert [(f.message, f.location) for f in findings] == [
        (
            "topology constraint must include topology name",
            "spec.optimizationInstructions.gangScheduling.podGroup.topology",
        ),
        (
            "topology constraint must include preferred or required topology level",
            "spec.optimizationInstructions.gangScheduling.podGroup.topology",
        ),
        (
            "topology constraint must include preferred or required topology level",
            "spec.optimizationInstructions.gangScheduling.podGroup.subGroups[1].topology",
        ),
    ]


def test_r10_sub_group_without_scale_in_its_subtree_warns() -> None:
    data = fuller()
    del children(data)[0]["scaleDefinition"]
    findings = _findings(data)
    assert [(f.severity, "must expose a replica scale definition" in f.message) for f in findings] == [
        (Severity.WARNING, True)
    ]
    # A descendant with a scale definition is enough.
    children(data).append(_child("helper", "master", scaleDefinition={"replicasPath": ".spec.n"}))
    assert _findings(data) == []


def test_r10_sub_group_names_must_be_dns_labels() -> None:
    data = fuller()
    children(data)[0]["name"] = "Master_0"
    gang(data)["podGroup"]["subGroups"][0]["componentName"] = "Master_0"
    messages = _messages(data)
    assert any("'Master_0' is not a valid sub-group name" in m for m in messages), messages


def test_r10_empty_sub_group_component() -> None:
    data = fuller()
    gang(data)["podGroup"]["subGroups"].append({"componentName": ""})
    assert "subgroup component name cannot be empty" in _messages(data)


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("job", True),
        ("a.b", True),
        ("Job", False),
        ("job_", False),
        ("-x", True),
        ("x" * 213, True),
        ("x" * 214, False),
    ],
)
def test_r10_pod_group_name_keeps_the_kai_name_a_subdomain(name: str, valid: bool) -> None:
    data = fuller()
    gang(data)["podGroup"]["name"] = name
    messages = [m for m in _messages(data) if "valid DNS-1123 subdomain" in m]
    assert (messages == []) is valid, messages


# --- CRD list rules ----------------------------------------------------------------------------------------


def test_duplicate_list_map_keys() -> None:
    data = fuller()
    data["spec"]["structureDefinition"]["additionalChildKinds"] = [
        {"group": "apps", "version": "v1", "kind": "Deployment"},
        {"group": "extensions", "version": "v1beta1", "kind": "Deployment"},
    ]
    gang(data)["podGroup"]["subGroups"].append({"componentName": "master"})
    gang(data)["podGroups"] = [
        {
            "name": "g",
            "members": [
                {"componentName": "master", "filters": ["true", "true"]},
                {"componentName": "master"},
            ],
        },
        {"name": "g", "members": [{"componentName": "worker"}]},
    ]
    duplicates = [m for m in _messages(data) if m.startswith("duplicate")]
    assert duplicates == [
        "duplicate sub-group component 'master'",
        "duplicate filters entry 'true'",
        "duplicate pod-group member component 'master' in pod group 'g'",
        "duplicate pod-group name 'g'",
        "duplicate additionalChildKinds kind 'Deployment'",
    ]


def test_action_lists_need_an_item() -> None:
    data = fuller()
    root(data)["suspendDefinition"]["resumeActions"] = []
    messages = _messages(data)
    assert "component 'pytorchjob' has no resumeActions: resumeActions must have at least 1 item" in messages


# --- validate_or_raise ----------------------------------------------------------------------------------


def test_validate_or_raise() -> None:
    assert validate_or_raise(karta_from_dict(fuller())) == []
    warn = _with(minimal, _mappings(running=[{}], failed=[{"byPhase": "Failed"}]))
    assert [f.severity for f in validate_or_raise(karta_from_dict(warn))] == [Severity.WARNING]
    data = minimal()
    root(data).pop("statusDefinition")
    root(data)["ownerRef"] = "x"
    with pytest.raises(ValidationError) as info:
        validate_or_raise(karta_from_dict(data))
    assert str(info.value) == (
        "invalid karta: root component cannot have owner ref\nroot component must have status definition"
    )
    assert len(info.value.findings) == 2


def test_findings_are_stable() -> None:
    data = fuller()
    children(data).append(_child("bad", None, instanceIdPath="del(.x)"))
    karta: Karta = karta_from_dict(data)
    assert validate_karta(karta) == validate_karta(karta)
