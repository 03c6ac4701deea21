"""``kli scaffold`` and the CRD's ``subresources.scale`` (issue 12): specReplicasPath names the replica
count, statusReplicasPath gives a status when the schema has none, and a status path the schema
does not declare is never guessed silently (a TODO in the draft and a note on stderr)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.unit.scaffold.test_scaffold_schema import INT, TEMPLATE, crd, errors_of

from karta.extract import ComponentFactory
from karta.jq import Evaluator
from karta.model import load_karta
from karta.scaffold import scaffold_crd
from karta.scaffold.draft import scale_path_fields

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "crds"


def comments(text: str) -> str:
    """The draft's text with comment lines joined (a TODO wraps at 100 columns)."""
    return " ".join(line.strip().lstrip("#").strip() for line in text.splitlines())


def by_expression(expression: str) -> dict[str, Any]:
    return {"byExpression": {"expression": expression, "expectedResult": "true"}}


def with_scale(doc: dict[str, Any], **scale: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["spec"]["versions"][0]["subresources"] = {"scale": scale}
    return doc


def test_spec_replicas_path_chooses_among_the_replica_like_fields() -> None:
    spec = {"numWorkers": INT, "parallelism": INT, "template": TEMPLATE}
    plain = scaffold_crd([crd(spec)])
    assert plain.component("pod")["scaleDefinition"]["replicasPath"] == ".spec.numWorkers // 1"  # by name
    scaled = scaffold_crd([with_scale(crd(spec), specReplicasPath=".spec.parallelism")])
    assert scaled.component("pod")["scaleDefinition"]["replicasPath"] == ".spec.parallelism // 1"
    text = comments(scaled.to_yaml())
    assert "TODO: the CRD's subresources.scale.specReplicasPath (.spec.parallelism) is this field;" in text
    assert "Other replica-like fields here: .spec.numWorkers; are the pods their product?" in text
    assert errors_of(scaled.to_yaml()) == []


def test_spec_replicas_path_into_one_map_entry() -> None:
    entry = {"type": "object", "properties": {"replicas": INT, "template": TEMPLATE}}
    spec = {"replicaSpecs": {"type": "object", "additionalProperties": entry}}
    draft = scaffold_crd([with_scale(crd(spec), specReplicasPath=".spec.replicaSpecs.Worker.replicas")])
    [child] = draft.karta["spec"]["structureDefinition"]["childComponents"]
    assert child["scaleDefinition"]["replicasPath"] == ".spec.replicaSpecs[]? | (.replicas // 1)"
    assert "(.spec.replicaSpecs.Worker.replicas) is this field (for the Worker entry)" in comments(
        draft.to_yaml()
    )


def test_a_spec_replicas_path_next_to_no_pod_field_is_a_todo() -> None:
    draft = scaffold_crd([with_scale(crd({"template": TEMPLATE, "other": {"type": "object"}}),
                                     specReplicasPath=".spec.other.count")])  # fmt: skip
    text = draft.to_yaml()
    assert (
        "TODO: the CRD's subresources.scale.specReplicasPath (.spec.other.count) is not a replica "
        "count next to any pod field; if it scales the pods, use it in their replicasPath."
        in " ".join(line.strip().lstrip("# ") for line in text.splitlines())
    )
    assert errors_of(text) == []
    odd = scaffold_crd([with_scale(crd({"template": TEMPLATE}), specReplicasPath="spec[0]")])
    assert "(spec[0]) is not a path of fields" in " ".join(
        line.strip() for line in odd.to_yaml().splitlines()
    )


def test_status_replicas_path_when_the_schema_has_no_status_fields() -> None:
    doc = with_scale(crd({"replicas": INT, "template": TEMPLATE}), statusReplicasPath=".status.readyReplicas")
    draft = scaffold_crd([doc])
    status = draft.component("finetune")["statusDefinition"]
    assert "phaseDefinition" not in status  # nothing guessed
    assert status["statusMappings"] == {
        "initializing": [by_expression("(.status.readyReplicas // 0) == 0")],
        "running": [by_expression("(.status.readyReplicas // 0) > 0")],
    }
    assert draft.notes == []
    text = draft.to_yaml()
    assert "subresources.scale.statusReplicasPath (.status.readyReplicas)" in comments(text)
    assert errors_of(text) == []
    karta = load_karta(yaml.safe_load(text)).karta
    assert karta is not None
    for ready, primary in ((0, "Initializing"), (2, "Running")):
        obj = {"apiVersion": "acme.ai/v1", "kind": "FineTune", "metadata": {"name": "f"},
               "spec": {"replicas": 2}, "status": {"readyReplicas": ready}}  # fmt: skip
        result = ComponentFactory(karta, obj, evaluator=Evaluator()).root().status()
        assert result is not None and str(result.primary) == primary


def test_a_guessed_status_path_is_said_in_the_draft_and_as_a_note() -> None:
    draft = scaffold_crd([crd({"template": TEMPLATE})])
    assert draft.component("finetune")["statusDefinition"]["phaseDefinition"] == {"path": ".status.phase"}
    assert "guesses (not in the CRD's schema)" in comments(draft.to_yaml())
    assert draft.notes == [
        "the CRD's schema declares no status phase or conditions for FineTune: the draft guesses "
        ".status.phase and its values (see the TODO); replace them with the controller's real status field"
    ]
    # a phase field the schema declares (without values) is not a guessed path: no note
    declared = scaffold_crd([crd({"template": TEMPLATE}, {"phase": {"type": "string"}})])
    assert declared.notes == []


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        (".spec.replicas", ("spec", "replicas")),
        (".spec.a.b-c", ("spec", "a", "b-c")),
        ("spec.replicas", None),
        (".spec[0].replicas", None),
        (".spec..replicas", None),
        (".spec.*", None),
        ("", None),
        (None, None),
    ],
)
def test_scale_paths_are_fields_only(path: str | None, fields: tuple[str, ...] | None) -> None:
    assert scale_path_fields(path) == fields


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not checked out")
def test_the_corpus_crds_with_a_scale_subresource() -> None:
    pytorch = scaffold_crd([yaml.safe_load((CORPUS / "kubeflow.org_pytorchjobs.yaml").read_text())])
    assert (
        "subresources.scale.specReplicasPath (.spec.pytorchReplicaSpecs.Worker.replicas) is this field"
        in (" ".join(line.strip().lstrip("# ") for line in pytorch.to_yaml().splitlines()))
    )
    docs = list(yaml.safe_load_all((CORPUS / "leaderworkerset.x-k8s.io_leaderworkersets.yaml").read_text()))
    lws = scaffold_crd([d for d in docs if d])
    assert lws.crd.spec_replicas_path == ".spec.replicas"
    assert lws.crd.status_replicas_path == ".status.replicas"
    assert errors_of(lws.to_yaml()) == []
