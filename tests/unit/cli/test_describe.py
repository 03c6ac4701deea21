"""``kli describe -f FILE`` (17.6 file mode): every corpus manifest, reviewed goldens, JSON shape,
resource arithmetic through real objects, resolution, errors and exit codes.

Goldens live in ``describe_golden/``; ``KARTA_REGEN_GOLDEN=1`` rewrites them (review the diff by
hand against the manifest before committing).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO.parent / "shared" / "corpus" / "workloads"
GOLDEN = Path(__file__).resolve().parent / "describe_golden"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")

# Kinds of the corpus that are not workloads (no definition covers them): exit 4 is right for these.
NOT_WORKLOADS = {
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("v1", "PersistentVolumeClaim"),
    ("scheduling.run.ai/v2", "Queue"),
    ("scheduling.run.ai/v2alpha2", "PodGroup"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"),
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
    ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"),
}


def corpus_documents() -> list[tuple[str, int, dict[str, Any]]]:
    if not CORPUS.is_dir():
        return []
    out: list[tuple[str, int, dict[str, Any]]] = []
    for path in sorted(CORPUS.glob("*/*.yaml")):
        with path.open("rb") as handle:
            docs = [d for d in yaml.safe_load_all(handle) if isinstance(d, dict)]
        out.extend((str(path.relative_to(CORPUS)), i, doc) for i, doc in enumerate(docs))
    return out


DOCS = corpus_documents()


@pytest.fixture(autouse=True)
def _no_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KARTA_OUTPUT", raising=False)
    monkeypatch.delenv("KARTA_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def describe_doc(kli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """Describe one document fed on standard input (corpus files may hold several documents)."""

    def run(doc: Any, *args: str) -> Any:
        text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False)
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
        return kli("describe", "-f", "-", *args)

    return run


def corpus_doc(rel: str, index: int = 0) -> dict[str, Any]:
    with (CORPUS / rel).open("rb") as handle:
        docs = [d for d in yaml.safe_load_all(handle) if isinstance(d, dict)]
    return docs[index]


@needs_corpus
def test_corpus_is_there() -> None:
    assert len(DOCS) >= 80


@needs_corpus
@pytest.mark.parametrize(("rel", "index", "doc"), DOCS, ids=[f"{r}#{i}" for r, i, _ in DOCS])
def test_every_corpus_document_describes(
    describe_doc: Callable[..., Any], rel: str, index: int, doc: Any
) -> None:
    r = describe_doc(doc, "-o", "json")
    if (doc.get("apiVersion"), doc.get("kind")) in NOT_WORKLOADS:
        assert r.code == 4, r.err
        assert json.loads(r.out)["error"] == "no_definition_for_type"
        return
    assert r.code == 0, r.err
    # a definition with references (extension E3) read without --ref: one note per reference
    # saying it is bound as null (a list: as []), nothing else
    notes = [
        line
        for line in r.err.splitlines()
        if "reference '" in line and ("bound as null" in line or "bound as []" in line)
    ]
    assert r.err == "".join(f"{line}\n" for line in notes)
    view = json.loads(r.out)
    assert view["fileMode"] is True
    assert view["kind"] == doc["kind"] and view["apiVersion"] == doc["apiVersion"]
    assert view["origin"] == "catalog"
    table = describe_doc(doc)
    assert table.code == 0, table.err
    assert "(file mode: no live status)" in table.out
    assert "TOTAL" in table.out


@needs_corpus
def test_a_corpus_file_can_be_described_by_path(kli: Callable[..., Any]) -> None:
    r = kli("describe", "-f", str(CORPUS / "kubeflow-training-v1/pytorchjob-simple.yaml"))
    assert r.code == 0, r.err
    assert r.out.startswith("PyTorchJob/pytorch-simple   namespace: kubeflow   ")


GOLDENS = [
    ("pytorchjob-mnist-nccl-gpu", "kubeflow-training-v1/pytorchjob-mnist-nccl-gpu.yaml", 0),
    ("jobset-paralleljobs", "jobset/paralleljobs.yaml", 0),
    ("lws-vllm-gpu", "lws/lws-vllm-gpu.yaml", 0),
    ("dynamo-v1beta1-sglang-disagg-multinode", "dynamo/dgd-v1beta1-sglang-disagg-multinode.yaml", 0),
    ("kserve-isvc-huggingface-llama2-gpu", "kserve/isvc-huggingface-llama2-gpu.yaml", 0),
]


@needs_corpus
@pytest.mark.parametrize(("golden", "rel", "index"), GOLDENS, ids=[g for g, _, _ in GOLDENS])
def test_reviewed_goldens(describe_doc: Callable[..., Any], golden: str, rel: str, index: int) -> None:
    doc = corpus_doc(rel, index)
    table = describe_doc(doc)
    assert table.code == 0, table.err
    data = describe_doc(doc, "-o", "json")
    assert data.code == 0, data.err
    text_path, json_path = GOLDEN / f"{golden}.txt", GOLDEN / f"{golden}.json"
    if os.environ.get("KARTA_REGEN_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        text_path.write_text(table.out)
        json_path.write_text(data.out)
    assert table.out == text_path.read_text()
    assert json.loads(data.out) == json.loads(json_path.read_text())


def test_json_shape_of_a_pod(describe_doc: Callable[..., Any]) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2024-05-01T10:00:00Z"},
        "spec": {
            "initContainers": [
                {"name": "fetch", "resources": {"requests": {"cpu": "2", "memory": "64Mi"}}},
                {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}},
            ],
            "containers": [
                {
                    "name": "main",
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "1Gi"},
                        "limits": {"nvidia.com/gpu": "2", "memory": "2Gi"},
                    },
                }
            ],
            "overhead": {"memory": "70M"},
        },
        "status": {"phase": "Running"},
    }
    r = describe_doc(pod, "-o", "json")
    assert r.code == 0, r.err
    cpu, memory = 2000, 2**30 + 70_000_000  # init container's 2 CPU > 750m; memory 1Gi + overhead
    assert json.loads(r.out) == {
        "name": "p",
        "namespace": "ml",
        "kind": "Pod",
        "apiVersion": "v1",
        "createdAt": "2024-05-01T10:00:00Z",
        "definition": "core-pod-v1",
        "origin": "catalog",
        "phases": ["Running"],
        "fileMode": True,
        "resources": {"gpus": 2, "cpuMillis": cpu, "memoryBytes": memory, "pods": 1},
        "components": [
            {
                "name": "pod",
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "replicas": {"desired": 1, "current": 0, "ready": 0},
                "resources": {"gpus": 2, "cpuMillis": cpu, "memoryBytes": memory},
            }
        ],
    }
    table = describe_doc(pod).out
    assert table.splitlines()[:4] == [
        "Pod/p   namespace: ml   definition: core-pod-v1 (catalog)",
        "(file mode: no live status)",
        "",
        "`-- pod    replicas: 1    gpu: 2",
    ]
    assert "Phase:" not in table
    assert table.splitlines()[-1].split() == ["TOTAL", "1", "2", "2", "1143741824"]


def test_yaml_output_and_phases_without_status(describe_doc: Callable[..., Any]) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"parallelism": 3, "template": {"spec": {"containers": [{"name": "c"}]}}},
    }
    r = describe_doc(job, "-o", "yaml")
    view = yaml.safe_load(r.out)
    assert view["resources"] == {"gpus": 0, "cpuMillis": 0, "memoryBytes": 0, "pods": 3}
    assert view["namespace"] is None and view["createdAt"] is None
    assert view["phases"]


def test_nested_scales_multiply(describe_doc: Callable[..., Any]) -> None:
    """An LWS of 3 groups of size 4: 3 leaders and 9 workers, the group row is not a resource row."""
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "l"},
        "spec": {
            "replicas": 3,
            "leaderWorkerTemplate": {
                "size": 4,
                "workerTemplate": {
                    "spec": {"containers": [{"name": "w", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
                },
            },
        },
    }
    r = describe_doc(lws, "-o", "json")
    view = json.loads(r.out)
    assert view["resources"]["pods"] == 12
    assert view["resources"]["gpus"] == 12  # the leader reuses the worker template
    [group] = view["components"]
    assert group["name"] == "group" and group["replicas"]["desired"] == 3
    assert [(c["name"], c["replicas"]["desired"]) for c in group["children"]] == [
        ("leader", 3),
        ("worker", 9),
    ]
    table = describe_doc(lws).out
    assert "\ngroup " not in table.split("Resources:")[1]


def test_gpu_resources_come_from_the_config(describe_doc: Callable[..., Any], tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("gpuResources: [google.com/tpu, nvidia.com/gpu]\n")
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "tpu"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "slice",
                    "replicas": 2,
                    "template": {
                        "spec": {
                            "parallelism": 4,
                            "template": {
                                "spec": {
                                    "containers": [
                                        {"name": "c", "resources": {"limits": {"google.com/tpu": 4}}}
                                    ]
                                }
                            },
                        }
                    },
                }
            ]
        },
    }
    assert json.loads(describe_doc(jobset, "-o", "json").out)["resources"]["gpus"] == 0
    view = json.loads(describe_doc(jobset, "-o", "json", "--config", str(config)).out)
    assert view["resources"] == {"gpus": 32, "cpuMillis": 0, "memoryBytes": 0, "pods": 8}
    [replicated] = view["components"]
    assert [(c["name"], c["replicas"]["desired"]) for c in replicated["children"]] == [("slice", 8)]


def test_component_limit_closes_with_a_count(describe_doc: Callable[..., Any]) -> None:
    tfjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "t"},
        "spec": {
            "tfReplicaSpecs": {
                role: {"replicas": 1, "template": {"spec": {"containers": [{"name": "tensorflow"}]}}}
                for role in ("Chief", "PS", "Worker")
            }
        },
    }
    lines = describe_doc(tfjob, "--component-limit", "2").out.splitlines()
    assert [line.split()[1] if line.startswith("|--") else line for line in lines[3:6]] == [
        "chief",
        "ps",
        "`-- ... and 1 more component(s) (1 of 3 not shown; --component-limit 0 shows all)",
    ]
    resources = describe_doc(tfjob, "--component-limit", "2").out.split("Resources:")[1]
    assert "worker" in resources  # the Resources table is never truncated


def test_absent_replica_types_are_not_rows(describe_doc: Callable[..., Any]) -> None:
    tfjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "t"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "t"}]}}}
            }
        },
    }
    view = json.loads(describe_doc(tfjob, "-o", "json").out)
    assert [c["name"] for c in view["components"]] == ["worker"]


def test_no_definition_exits_4(describe_doc: Callable[..., Any]) -> None:
    thing = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}}
    r = describe_doc(thing)
    assert (r.code, r.out) == (4, "")
    assert r.err.startswith("error: no Karta definition covers Thing (example.com/v1)\n")
    r = describe_doc(thing, "-o", "json")
    assert r.code == 4
    assert json.loads(r.out) == {
        "error": "no_definition_for_type",
        "gvk": "example.com/v1, Kind=Thing",
        "message": "no Karta definition covers this workload type",
        "hint": '"kli definitions" lists the types Karta covers; '
        "apply a Karta definition to the cluster to cover this one",
    }
    r = describe_doc({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}, "-o", "yaml")
    assert r.code == 4 and yaml.safe_load(r.out)["gvk"] == "/v1, Kind=Service"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Pod\nmetadata: {name: p}\n", "has no apiVersion"),
        ("apiVersion: v1\nmetadata: {name: p}\n", "has no kind"),
        (
            "apiVersion: v1\nkind: Pod\n---\nkind: Pod\n",
            "stdin (document 2): the workload object has no apiVersion",
        ),
        ("", "the file is empty"),
        ("- a\n", "expected a workload object"),
        ("a: [\n", "cannot parse stdin"),
    ],
)
def test_bad_input_is_a_usage_error(describe_doc: Callable[..., Any], text: str, message: str) -> None:
    r = describe_doc(text)
    assert r.code == 2
    assert message in r.err


def test_empty_documents_are_ignored(describe_doc: Callable[..., Any]) -> None:
    r = describe_doc(
        "---\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n---\n"
    )
    assert r.code == 0, r.err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("describe",), 2, "describe needs TYPE [NAME...], TYPE/NAME... or -f FILE"),
        (("describe", "jobs", "a", "-l", "x=y"), 2, "-l and -A go with TYPE alone"),
        (("describe", "jobs/a", "b"), 2, "mixed TYPE/NAME and bare words"),
        (("describe", "jobs", "-R"), 2, "-R/--recursive goes with -f DIR"),
        (("describe", "pytorchjob", "-f", "x.yaml"), 2, "cannot be combined with -f"),
        (("describe", "-f", "x.yaml", "-o", "wide"), 2, "wide"),
        (("describe", "-f", "x.yaml", "--pod-limit", "-1"), 2, "--pod-limit"),
        (("describe", "pytorchjob/train"), 1, "no cluster configured"),
        (("describe", "-f", "does-not-exist.yaml"), 2, "no such file"),
    ],
)
def test_flags_and_modes(kli: Callable[..., Any], args: tuple[str, ...], code: int, message: str) -> None:
    r = kli(*args)
    assert r.code == code, r.err
    assert message in r.err


def write_user_definition(directory: Path, name: str, version: str = "v1") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "thing",
                    "kind": {"group": "example.com", "version": version, "kind": "Thing"},
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": ".spec.replicas"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {"running": [{"byPhase": "Running"}]},
                    },
                }
            }
        },
    }
    (directory / f"{name}.yaml").write_text(yaml.safe_dump(karta))


THING = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "metadata": {"name": "t"},
    "spec": {
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
    },
}


def test_user_definitions_resolve_and_show_their_origin(
    describe_doc: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "defs"))
    write_user_definition(tmp_path / "defs", "my-thing")
    r = describe_doc(THING)
    assert r.code == 0, r.err
    assert r.out.startswith("Thing/t   namespace: <none>   definition: my-thing (user)\n")
    assert r.out.splitlines()[-1].split() == ["TOTAL", "2", "0", "2", "0"]


def test_other_versions_resolve_with_a_warning(
    describe_doc: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "defs"))
    write_user_definition(tmp_path / "defs", "my-thing-v1")
    r = describe_doc({**THING, "apiVersion": "example.com/v2"}, "-o", "json")
    assert r.code == 0
    assert json.loads(r.out)["definition"] == "my-thing-v1"
    assert r.err == (
        "warning: Thing example.com/v2 is described with my-thing-v1, a definition for version v1\n"
    )
    # several other versions: the most stable one, as for a live object (one resolution rule)
    write_user_definition(tmp_path / "defs", "my-thing-v3", version="v3")
    r = describe_doc({**THING, "apiVersion": "example.com/v2"})
    assert r.code == 0, r.err
    assert "definition: my-thing-v3 (user)" in r.out
    assert r.err == (
        "warning: Thing example.com/v2 is described with my-thing-v3, a definition for version v3\n"
    )


def test_colliding_definitions_are_ambiguous(
    describe_doc: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path / "defs"))
    write_user_definition(tmp_path / "defs", "one")
    write_user_definition(tmp_path / "defs", "two")
    r = describe_doc(THING)
    assert r.code == 2
    assert "error: 2 Karta definitions claim example.com/v1, Kind=Thing: one (" in r.err


def test_an_invalid_user_definition_fails_cleanly(
    describe_doc: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    defs = tmp_path / "defs"
    defs.mkdir()
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "broken"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "thing",
                    "kind": {"group": "example.com", "version": "v1", "kind": "Thing"},
                    "specDefinition": {"podTemplateSpecPath": ".spec.template | ("},
                }
            }
        },
    }
    (defs / "broken.yaml").write_text(yaml.safe_dump(karta))
    monkeypatch.setenv("KARTA_DEFINITIONS", str(defs))
    r = describe_doc(THING)
    assert r.code == 1  # an invalid definition is never used; the only one: no valid definition
    assert r.err.startswith(
        "error: no valid Karta definition covers Thing (example.com/v1): "
        f"user definition broken ({defs / 'broken.yaml'}) is invalid: root component must have status "
        "definition; failed to parse JQ expression"
    )
    assert 'hint: "kli definitions" marks the invalid definitions' in r.err


def test_output_from_environment(describe_doc: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    monkeypatch.setenv("KARTA_OUTPUT", "json")
    assert json.loads(describe_doc(pod).out)["name"] == "p"
    assert describe_doc(pod, "-o", "table").out.startswith("Pod/p")


def test_help_is_listed(kli: Callable[..., Any]) -> None:
    r = kli("--help")
    assert "describe" in r.out and "definitions" in r.out
