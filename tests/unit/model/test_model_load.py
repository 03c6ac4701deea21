"""Loading: sources, identity, legacy kind, unknown/missing fields (R17), typed findings, R1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from model_data import children, fuller, minimal, root

from karta.errors import DefinitionError, ValidationError
from karta.model import (
    ConditionsDefinition,
    Karta,
    LoadResult,
    Severity,
    karta_from_dict,
    load_karta,
    load_kartas,
)

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"


def _messages(result: LoadResult) -> list[str]:
    return [f.message for f in result.findings]


# --- sources --------------------------------------------------------------------------------------


def test_yaml_json_dict_bytes_and_path_give_the_same_karta(tmp_path: Path) -> None:
    data = fuller()
    text = yaml.safe_dump(data, sort_keys=False)
    file = tmp_path / "def.yaml"
    file.write_text(text)
    results = [
        load_karta(data),
        load_karta(text),
        load_karta(text.encode()),
        load_karta(json.dumps(data)),
        load_karta(json.dumps(data, indent="\t")),
        load_karta(file),
    ]
    for result in results:
        assert result.findings == []
        assert result.karta == results[0].karta
    assert results[-1].source == str(file)
    karta = results[0].karta
    assert isinstance(karta, Karta)
    assert [c.name for c in karta.components] == ["pytorchjob", "master", "worker"]


def test_empty_documents_are_ignored() -> None:
    text = "---\n---\n" + yaml.safe_dump(minimal()) + "---\n"
    assert load_karta(text).karta is not None


def test_several_documents_name_the_source() -> None:
    text = yaml.safe_dump(minimal()) + "---\n" + yaml.safe_dump(fuller())
    with pytest.raises(DefinitionError, match=r"defs\.yaml holds 2 documents"):
        load_karta(text, source_name="defs.yaml")


def test_empty_text_is_a_definition_error() -> None:
    with pytest.raises(DefinitionError, match="holds no Karta"):
        load_karta("# just a comment\n", source_name="x.yaml")


def test_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(DefinitionError, match=f"cannot read {missing}: "):
        load_karta(missing)


def test_not_utf8(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="cannot read x: not UTF-8"):
        load_karta(b"\xff\xfe\xfa", source_name="x")


@pytest.mark.parametrize(
    "raw", [b"\xff\xfe\xfa", b"\xef\xbb\xbfkind: \xff", b"ab\xe2\x82", b"\xef\xbb\xbf\xef\xbb"]
)
def test_not_utf8_names_what_utf_8_sig_names(raw: bytes) -> None:
    """The reason and position of a decoding error are those of ``bytes.decode("utf-8-sig")`` (a
    leading byte order mark dropped, positions counted after it)."""
    try:
        raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        expected = f"cannot read x: not UTF-8 text ({exc.reason} at byte {exc.start})"
    with pytest.raises(DefinitionError) as caught:
        load_karta(raw, source_name="x")
    assert str(caught.value) == expected


def test_byte_order_mark_is_dropped() -> None:
    text = yaml.safe_dump(minimal()).encode()
    assert load_karta(b"\xef\xbb\xbf" + text, source_name="x") == load_karta(text, source_name="x")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("a: [1, 2\nb: c", r"cannot parse in\.yaml: .*\(line"),
        ("key: 'unterminated", r"cannot parse in\.yaml"),
        ("- a\n- b\n", r"in\.yaml is not a Karta: expected an object \(mapping\), got array"),
        ("just a string", "got string"),
        ("[1, 2]", "got array"),
        ("42", "got integer"),
    ],
)
def test_bad_text_is_a_clean_definition_error(text: str, match: str) -> None:
    with pytest.raises(DefinitionError, match=match):
        load_karta(text, source_name="in.yaml")


def test_timestamps_stay_strings() -> None:
    data = minimal()
    text = yaml.safe_dump(data).replace(
        "name: example-org-batchrun-v1",
        "name: example-org-batchrun-v1\n  creationTimestamp: 2024-01-02T03:04:05Z",
    )
    result = load_karta(text)
    assert result.karta is not None
    assert result.karta.metadata.creation_timestamp == "2024-01-02T03:04:05Z"


# --- identity -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("apps/v1", "Deployment"), ("run.ai/v1", "Karta"), ("run.ai/v1alpha1", "KartaList"), (None, "Karta")],
)
def test_wrong_identity_names_what_was_expected(api_version: str | None, kind: str) -> None:
    data = minimal()
    data["kind"] = kind
    if api_version is None:
        del data["apiVersion"]
    else:
        data["apiVersion"] = api_version
    with pytest.raises(DefinitionError, match=r'expected apiVersion "run\.ai/v1alpha1" and kind "Karta"'):
        load_karta(data, source_name="w.yaml")


def test_missing_identity_is_a_finding_strict_error_lenient_warning() -> None:
    data = minimal()
    del data["apiVersion"], data["kind"]
    strict = load_karta(data)
    lenient = load_karta(data, strict=False)
    assert strict.karta is not None and lenient.karta is not None
    assert [(f.severity, "missing apiVersion and kind" in f.message) for f in strict.findings] == [
        (Severity.ERROR, True)
    ]
    assert [f.severity for f in lenient.findings] == [Severity.WARNING]


def test_legacy_resource_interface_is_converted_with_a_warning() -> None:
    data = fuller()
    data["apiVersion"] = "optimization.nvidia.com/v1alpha1"
    data["kind"] = "ResourceInterface"
    result = load_karta(data)
    assert result.karta is not None
    assert result.karta.api_version == "run.ai/v1alpha1"
    assert result.karta.kind == "Karta"
    assert result.karta.spec == load_karta(fuller()).karta.spec  # type: ignore[union-attr]
    [finding] = result.findings
    assert finding.severity is Severity.WARNING
    assert "ResourceInterface" in finding.message and "converted" in finding.message


# --- unknown and missing fields (R17) -------------------------------------------------------------


def test_misspelt_fragmented_definition_is_reported_and_dropped() -> None:
    data = minimal()
    root(data)["specDefinition"] = {"fragmentedPodDefinition": {"imagePath": ".spec.image"}}
    strict = load_karta(data)
    path = "spec.structureDefinition.rootComponent.specDefinition.fragmentedPodDefinition"
    assert _messages(strict) == [f'unknown field "{path}"']
    assert strict.findings[0].severity is Severity.ERROR
    assert strict.findings[0].location == path
    assert strict.karta is not None
    assert strict.karta.root.spec_definition is not None
    assert strict.karta.root.spec_definition.fragmented_pod_spec_definition is None
    lenient = load_karta(data, strict=False)
    assert [f.severity for f in lenient.findings] == [Severity.WARNING]


def test_unknown_fields_everywhere_in_document_order() -> None:
    data = fuller()
    data["extra"] = 1
    data["spec"]["bogus"] = {}
    children(data)[1]["podSelector"]["componentTypeSelector"]["keyPathh"] = ".x"
    data["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"]["subGroups"][0]["min"] = 2
    root(data)["statusDefinition"]["statusMappings"]["running"][0]["byConditions"][0]["Type"] = "x"
    result = load_karta(data)
    assert _messages(result) == [
        'unknown field "spec.structureDefinition.rootComponent.statusDefinition.statusMappings'
        '.running[0].byConditions[0].Type"',
        'unknown field "spec.structureDefinition.childComponents[1].podSelector.componentTypeSelector'
        '.keyPathh"',
        'unknown field "spec.optimizationInstructions.gangScheduling.podGroup.subGroups[0].min"',
        'unknown field "spec.bogus"',
        'unknown field "extra"',
    ]
    assert result.karta is not None


def test_metadata_standard_fields_are_fine_others_are_unknown() -> None:
    data = minimal()
    data["metadata"].update(
        {
            "uid": "u",
            "resourceVersion": "1",
            "generation": 3,
            "managedFields": [{"manager": "kubectl"}],
            "ownerReferences": [],
            "finalizers": ["x"],
            "generateName": "g-",
            "selfLink": "/x",
            "deletionGracePeriodSeconds": 0,
            "labels": {"run.ai/karta-kind": "BatchRun"},
            "annotations": {"a": "b"},
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "deletionTimestamp": "2024-01-01T00:00:00Z",
            "namespace": "",
            "colour": "blue",
        }
    )
    data["status"] = {"conditions": [{"type": "Ready", "status": "True", "anything": 1}], "phase": "x"}
    result = load_karta(data)
    assert _messages(result) == ['unknown field "metadata.colour"', 'unknown field "status.phase"']
    karta = result.karta
    assert karta is not None
    assert karta.metadata.model_extra is not None and "colour" not in karta.metadata.model_extra
    assert karta.metadata.model_extra["managedFields"] == [{"manager": "kubectl"}]
    assert karta.status is not None and karta.status.conditions[0]["anything"] == 1


def test_missing_required_fields() -> None:
    data = fuller()
    children(data)[0]["kind"] = {"version": "v1", "kind": "Pod"}
    root(data)["suspendDefinition"]["suspendActions"] = [{"path": ".spec.suspend"}]
    root(data)["statusDefinition"]["conditionsDefinition"] = {"typeFieldName": "t"}
    data["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"]["topology"] = {"topologyName": "t"}
    result = load_karta(data)
    assert _messages(result) == [
        'missing required field "spec.structureDefinition.rootComponent.statusDefinition'
        '.conditionsDefinition.path"',
        'missing required field "spec.structureDefinition.rootComponent.suspendDefinition'
        '.suspendActions[0].value"',
        'missing required field "spec.structureDefinition.childComponents[0].kind.group"',
        'missing required field "spec.optimizationInstructions.gangScheduling.podGroup.topology'
        '.requiredTopologyLevel"',
        'missing required field "spec.optimizationInstructions.gangScheduling.podGroup.topology'
        '.preferredTopologyLevel"',
    ]
    assert all(f.severity is Severity.ERROR for f in result.findings)
    assert all(f.severity is Severity.WARNING for f in load_karta(data, strict=False).findings)


def test_nulls_are_pruned_like_the_api_server() -> None:
    data = minimal()
    root(data)["ownerRef"] = None
    root(data)["scaleDefinition"]["minReplicasPath"] = None
    data["status"] = None
    result = load_karta(data)
    assert result.findings == []
    assert result.karta is not None and result.karta.root.owner_ref is None


# --- wrong types --------------------------------------------------------------------------------


def test_wrong_scalar_types_are_errors_with_paths_and_a_hint() -> None:
    data = fuller()
    children(data)[1]["scaleDefinition"]["replicasPath"] = 1
    root(data)["suspendDefinition"]["suspendActions"][0]["value"] = True
    root(data)["statusDefinition"]["statusMappings"]["running"][0]["byConditions"][0]["status"] = True
    result = load_karta(data, strict=False)
    assert result.karta is None
    messages = _messages(result)
    assert (
        "spec.structureDefinition.childComponents[1].scaleDefinition.replicasPath: "
        'expected a string, got integer 1; quote it: "1"'
    ) in messages
    assert (
        "spec.structureDefinition.rootComponent.suspendDefinition.suspendActions[0].value: "
        'expected a string, got boolean true; quote it: "true"'
    ) in messages
    assert any(".byConditions[0].status: expected a string, got boolean" in m for m in messages)
    assert all(f.severity is Severity.ERROR for f in result.findings)
    locations = {f.location for f in result.findings}
    assert "spec.structureDefinition.childComponents[1].scaleDefinition.replicasPath" in locations


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: children(d).append("worker"), "childComponents[2]: expected an object, got string"),
        (
            lambda d: d["spec"]["structureDefinition"].update(childComponents={"a": 1}),
            "expected an array, got object",
        ),
        (lambda d: root(d).update(kind="Pod"), "rootComponent.kind: expected an object, got string"),
        (lambda d: root(d).update(name=["x"]), "rootComponent.name: expected a string, got array"),
        (lambda d: d.update(spec=[]), "spec: expected an object, got array"),
        (
            lambda d: d["metadata"].update(labels={"a": 1}),
            "metadata.labels.a: expected a string, got integer 1",
        ),
        (
            lambda d: children(d)[0]["podSelector"]["componentTypeSelector"].update(matchLabels={1: "x"}),
            "matchLabels: keys must be strings, got integer 1",
        ),
    ],
)
def test_wrong_structural_types_give_findings_not_tracebacks(mutate: Any, expected: str) -> None:
    data = fuller()
    mutate(data)
    result = load_karta(data)
    assert result.karta is None
    assert any(expected in m for m in _messages(result)), _messages(result)


# --- R1 ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("empty", ["absent", "", None])
def test_condition_field_names_default_when_absent_or_empty(empty: str | None) -> None:
    data = fuller()
    cd = root(data)["statusDefinition"]["conditionsDefinition"]
    if empty != "absent":
        cd.update(typeFieldName=empty, statusFieldName=empty, messageFieldName=empty, reasonFieldName=empty)
    karta = karta_from_dict(data)
    status = karta.root.status_definition
    assert status is not None and status.conditions_definition is not None
    c = status.conditions_definition
    assert (c.type_field_name, c.status_field_name, c.message_field_name, c.reason_field_name) == (
        "type",
        "status",
        "message",
        "reason",
    )


def test_condition_field_names_default_in_code_and_keep_explicit_values() -> None:
    c = ConditionsDefinition(path=".status.c", type_field_name="", reason_field_name="why")
    assert (c.type_field_name, c.reason_field_name) == ("type", "why")


# --- load_kartas and karta_from_dict ------------------------------------------------------------------


def test_load_kartas_reads_every_document_and_isolates_bad_ones(tmp_path: Path) -> None:
    listing = {"apiVersion": "v1", "kind": "List", "items": [minimal(), fuller()]}
    bad = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    file = tmp_path / "many.yaml"
    file.write_text(yaml.safe_dump_all([fuller(), None, bad, listing, [1]]))
    results = load_kartas(file)
    assert [r.karta.name if r.karta else None for r in results] == [
        "kubeflow-org-pytorchjob-v1",
        None,
        "example-org-batchrun-v1",
        "kubeflow-org-pytorchjob-v1",
        None,
    ]
    assert "is not a Karta" in results[1].findings[0].message
    assert "document 3" in results[1].source
    assert "items[1]" in results[3].source


def test_karta_from_dict_is_lenient_but_raises_on_errors() -> None:
    data = minimal()
    data["whatever"] = 1
    assert karta_from_dict(data).name == "example-org-batchrun-v1"
    root(data)["name"] = 5
    with pytest.raises(ValidationError, match=r"invalid karta: .*rootComponent\.name: expected a string"):
        karta_from_dict(data)
    with pytest.raises(DefinitionError):
        karta_from_dict({"apiVersion": "v1", "kind": "Pod"})


# --- corpus: workloads are not Kartas -------------------------------------------------------------------


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    # Workload manifests only: the CRDs are 18 MB of OpenAPI schema, slow to parse and no more telling.
    return sorted(p for p in (CORPUS / "workloads").rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_corpus_manifests_are_clean_negative_inputs() -> None:
    files = _corpus_files()
    assert files
    for path in files:
        try:
            results = load_kartas(path)
        except DefinitionError:
            continue
        for result in results:
            # Every corpus document is a workload, a fragment or a CRD: never a valid Karta.
            assert result.errors, path
