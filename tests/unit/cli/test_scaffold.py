"""``kli scaffold``: the draft validates with ``kli validate``, JSON output, usage errors; any CRD
(hostile names, descriptions, enums, nesting) gives a draft that loads and validates, or exits 2."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tests.unit.scaffold.test_scaffold_schema import POD_SPEC, TEMPLATE

from karta.model.names import dns_subdomain_error

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "finetunes.acme.ai"},
    "spec": {
        "group": "acme.ai",
        "names": {"kind": "FineTune", "plural": "finetunes"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "trainers": {
                                        "type": "object",
                                        "properties": {
                                            "count": {"type": "integer"},
                                            "template": {
                                                "type": "object",
                                                "properties": {
                                                    "metadata": {"type": "object"},
                                                    "spec": {
                                                        "type": "object",
                                                        "properties": {
                                                            "containers": {
                                                                "type": "array",
                                                                "items": {
                                                                    "type": "object",
                                                                    "properties": {
                                                                        "name": {"type": "string"},
                                                                        "image": {"type": "string"},
                                                                    },
                                                                },
                                                            }
                                                        },
                                                    },
                                                },
                                            },
                                        },
                                    }
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "state": {
                                        "type": "string",
                                        "enum": ["Pending", "Training", "Done", "Error"],
                                    }
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}


def write(tmp_path: Path, *docs: object) -> str:
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump_all(list(docs)))
    return str(path)


def test_draft_passes_validate(kli, tmp_path: Path) -> None:
    r = kli("scaffold", "--crd", write(tmp_path, CRD))
    assert r.code == 0, r.err
    assert r.out.startswith("# Draft Karta for FineTune (acme.ai/v1)")
    assert "podTemplateSpecPath: .spec.trainers.template" in r.out
    assert "replicasPath: .spec.trainers.count // 1" in r.out
    assert "# TODO: placeholder labels" in r.out
    assert "Unmapped values: Training." in r.out.replace("\n        # ", " ")
    assert "completed: [{byPhase: Done}]" in r.out
    draft = tmp_path / "draft.yaml"
    draft.write_text(r.out)
    v = kli("validate", str(draft))
    assert v.code == 0, v.out + v.err
    assert v.out == "OK: acme-ai-finetune-v1 is a valid Karta definition (GVK: acme.ai/v1, Kind=FineTune)\n"


def test_json_is_the_bare_definition(kli, tmp_path: Path) -> None:
    r = kli("scaffold", "--crd", write(tmp_path, CRD), "-o", "json")
    assert r.code == 0
    data = json.loads(r.out)
    assert data["metadata"] == {"name": "acme-ai-finetune-v1"}
    assert "TODOs; -o yaml shows them as comments" in r.err


def test_kind_selects_among_several_crds(kli, tmp_path: Path) -> None:
    other = json.loads(json.dumps(CRD))
    other["spec"]["names"] = {"kind": "Other", "plural": "others"}
    path = write(tmp_path, {"apiVersion": "v1", "kind": "Namespace"}, CRD, other)
    r = kli("scaffold", "--crd", path)
    assert r.code == 2
    assert "defines 2 CRDs (FineTune, Other); choose one with --kind" in r.err
    r = kli("scaffold", "--crd", path, "--kind", "other")
    assert r.code == 0 and "kind: {group: acme.ai, version: v1, kind: Other}" in r.out


def test_usage_errors(kli, tmp_path: Path) -> None:
    path = write(tmp_path, CRD)
    r = kli("scaffold", "--crd", path, "--version", "v2")
    assert (r.code, r.err) == (2, f"error: {path}: finetunes.acme.ai has no version 'v2'; it has v1\n")
    assert kli("scaffold", "--crd", str(tmp_path / "missing.yaml")).code == 2
    assert kli("scaffold", "--crd", write(tmp_path, {"kind": "Pod"})).code == 2
    assert kli("scaffold").code == 2


# --- any CRD: the draft always parses and validates -----------------------------------------------

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=10)  # YAML cannot carry surrogates
NAMES = TEXT | st.sampled_from(
    [
        'w"] | $ENV.HOME | .["',
        "a\\(1)",
        "x\ny: 1",
        "line\u2028sep",
        "rtl\u200f\u202e",
        "--- ",
        "# c",
        "replicas",
        "Replicas",
        "numWorkers",
        "minReplicas",
        "maxReplicas",
        "suspend",
        "template",
        "metadata",
        "spec",
        "containers",
        "name",
        "groupName",
        "image",
        "phase",
        "state",
        "jobPhase",
        "conditions",
        "type",
        "status",
    ]
)
leaves = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "boolean", "number"])},
    optional={
        "description": TEXT,
        "enum": st.lists(TEXT | st.sampled_from(["Running", "Failed", "Done"]) | st.integers(), max_size=5),
    },
) | st.sampled_from([POD_SPEC, TEMPLATE])


def objects(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    props = st.dictionaries(NAMES, inner, max_size=5)
    obj = st.builds(lambda p, d: {"type": "object", "properties": p, "description": d}, props, TEXT)
    return (
        obj
        | st.builds(lambda o: {"type": "array", "items": o}, obj)
        | st.builds(lambda o: {"type": "object", "additionalProperties": o}, obj)
    )


schemas = st.recursive(leaves, objects, max_leaves=25)
GROUPS = st.sampled_from(["acme.ai", "kubeflow.org", "a.b-c.d"])
KINDS = st.sampled_from(["FineTune", "Job", "X-Y"])
VERSIONS = st.sampled_from(["v1", "v1alpha1"])


@st.composite
def crds(draw: st.DrawFn) -> dict[str, Any]:
    spec = draw(st.dictionaries(NAMES, schemas, max_size=6))
    status = draw(st.dictionaries(NAMES, schemas, max_size=4))
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": spec}}}
    if status:
        schema["properties"]["status"] = {"type": "object", "properties": status}
    # mostly names the API server accepts; sometimes any text for one of them
    wrong = draw(st.sampled_from([None, None, None, None, None, "group", "kind", "version"]))
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": draw(TEXT | st.just("finetunes.acme.ai"))},
        "spec": {
            "group": draw(TEXT if wrong == "group" else GROUPS),
            "names": {"kind": draw(TEXT if wrong == "kind" else KINDS), "plural": draw(TEXT)},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": draw(TEXT if wrong == "version" else VERSIONS),
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def valid_names(doc: dict[str, Any]) -> bool:
    group, kind = doc["spec"]["group"], doc["spec"]["names"]["kind"]
    version = doc["spec"]["versions"][0]["name"]
    label = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
    return (
        dns_subdomain_error(group) is None
        and len(kind) <= 63
        and label.fullmatch(kind.lower()) is not None
        and len(version) <= 63
        and label.fullmatch(version) is not None
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(crds())
def test_any_crd_gives_a_draft_that_loads_and_validates(kli, tmp_path: Path, doc: dict[str, Any]) -> None:
    path = write(tmp_path, doc)
    r = kli("scaffold", "--crd", path)
    if not valid_names(doc):  # not a CRD the API server would accept: a clear one-line usage error
        assert r.code == 2, r.out
        assert r.err.startswith(f"error: {path}: ")
        assert len(r.err.splitlines()) == 1 and r.err.rstrip("\n").isprintable()
        return
    assert r.code == 0, r.err
    event(f"{r.out.count('- name: ')} child components")
    assert all(line.isprintable() for line in r.out.splitlines()), "no control character, no line break"
    loaded = yaml.safe_load(r.out)
    j = kli("scaffold", "--crd", path, "-o", "json")
    assert j.code == 0, j.err
    assert json.loads(j.out) == loaded
    for name, text in (("draft.yaml", r.out), ("draft.json", j.out)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        v = kli("validate", str(tmp_path / name))
        assert v.code == 0, v.out + v.err


def test_a_guessed_status_path_is_a_note_on_stderr(kli, tmp_path: Path) -> None:
    """Issue 12: with neither a phase nor conditions in the schema the draft guesses .status.phase,
    and says so on stderr whatever the output format, besides the TODO in the YAML."""
    from tests.unit.scaffold.test_scaffold_schema import crd

    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(crd({"template": TEMPLATE})))
    note = (
        "warning: the CRD's schema declares no status phase or conditions for FineTune: the draft "
        "guesses .status.phase and its values (see the TODO); replace them with the controller's "
        "real status field\n"
    )
    r = kli("scaffold", "--crd", str(path))
    assert (r.code, r.err) == (0, note)
    r = kli("scaffold", "--crd", str(path), "-o", "json")
    assert r.code == 0 and r.err.startswith(note)
