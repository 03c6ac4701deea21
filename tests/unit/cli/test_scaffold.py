"""``kli scaffold``: the draft validates with ``kli validate``, JSON output, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

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
