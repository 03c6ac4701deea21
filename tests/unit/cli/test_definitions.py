"""``kli definitions [NAME]`` (17.7): table, filters, json/yaml shapes, origins, warnings, config."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.unit.definitions.test_definition_store import STATUS_DEFINITION

from karta.cli.commands import definitions as cmd_definitions
from karta.definitions import DefinitionStore
from karta.model import karta_from_dict

SEE_ALL = 'Run "kli definitions" to see what is available'


def karta_dict(name: str, gvk: tuple[str, str, str] | None, children: int = 0) -> dict[str, Any]:
    root: dict[str, Any] = {
        "name": "root",
        "specDefinition": {"podSpecPath": ".spec.template.spec"},
        "statusDefinition": copy.deepcopy(STATUS_DEFINITION),
    }
    if gvk is not None:
        root["kind"] = {"group": gvk[0], "version": gvk[1], "kind": gvk[2]}
    structure: dict[str, Any] = {"rootComponent": root}
    if children:
        root.pop("specDefinition")
        structure["childComponents"] = [
            {"name": f"c{i}", "ownerRef": "root", "specDefinition": {"podSpecPath": f".spec.p{i}"}}
            for i in range(children)
        ]
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {"structureDefinition": structure},
    }


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "defs"
    directory.mkdir()
    monkeypatch.setenv("KARTA_DEFINITIONS", str(directory))
    return directory


@pytest.fixture(autouse=True)
def _no_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KARTA_OUTPUT", raising=False)
    monkeypatch.delenv("KARTA_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_table_lists_the_catalog_sorted_by_name(kli: Callable[..., Any]) -> None:
    r = kli("definitions", tty=True)
    assert r.code == 0, r.err
    assert r.err == ""
    lines = r.out.splitlines()
    # the whole catalog fits 100 columns: COMPONENTS, with no room left for a component name and a
    # count, is left out, and KIND too (its longest NAME, 54 characters, leaves no room for the
    # Kind alone: every NAME spells its kind, lower-cased)
    assert lines[0].split() == ["NAME", "ORIGIN", "STATUS"]
    rows = [line.split() for line in lines[1:]]
    assert len(rows) >= 35
    assert [row[0] for row in rows] == sorted(row[0] for row in rows)
    by_name = {row[0]: row for row in rows}
    assert max(len(line) for line in lines) <= 100
    assert by_name["core-pod-v1"][1:] == ["catalog", "ok"]
    assert by_name["kubeflow-org-pytorchjob-v1"][1:] == ["catalog", "ok"]
    assert {row[2] for row in rows} == {"ok"}  # every built-in is valid and in use
    # a group's list has room: COMPONENTS keeps whole names, then "+N more" or "+N"
    r = kli("definitions", "--group", "kubeflow.org", tty=True)
    assert r.out.splitlines()[0].split() == ["NAME", "KIND", "ORIGIN", "STATUS", "COMPONENTS"]
    assert (
        "kubeflow-org-tfjob-v1                    TFJob               catalog   ok       tfjob, chief, +4"
        in r.out
    )
    # columns are aligned
    assert len({line.index("catalog") for line in lines[1:]}) == 1
    # off a terminal (a pipe, a file) nothing is cut, as kubectl
    piped = {line.split(None, 1)[0]: line for line in kli("definitions").out.splitlines()}
    assert piped["kubeflow-org-tfjob-v1"].split(None, 4)[1:] == [
        "TFJob.v1.kubeflow.org",
        "catalog",
        "ok",
        "tfjob, chief, master, ps, +2 more",
    ]
    # a narrower table keeps Kind.version.group and the cap of 3 (the root is not counted)
    r = kli("definitions", "--group", "kubeflow.org", "--kind", "pytorchjob", tty=True)
    assert r.out.splitlines()[1].split(None, 4)[1:] == [
        "PyTorchJob",  # Kind.version.group would make the line 103 columns wide
        "catalog",
        "ok",
        "pytorchjob, master, worker",
    ]
    assert kli("definitions", "core-pod-v1").out.splitlines()[1].split()[1:] == [
        "Pod.v1",
        "catalog",
        "ok",
        "pod",
    ]
    r = kli("definitions", "kubeflow-org-tfjob-v1")
    assert r.out.splitlines()[1].endswith(
        "TFJob.v1.kubeflow.org   catalog   ok       tfjob, chief, master, ps, +2 more"
    )
    r = kli("definitions", "leaderworkerset-x-k8s-io-leaderworkerset-v1", "--component-limit", "3")
    assert r.out.splitlines()[1].endswith("leaderworkerset, group, leader, worker")  # asked for: not cut


def test_component_limit(kli: Callable[..., Any]) -> None:
    r = kli("definitions", "milvus-io-milvus-v1beta1", "--component-limit", "1")
    assert r.out.splitlines()[1].endswith("milvus, standalone, +14 more")
    r = kli("definitions", "milvus-io-milvus-v1beta1", "--component-limit", "0")
    assert "more" not in r.out and r.out.splitlines()[1].endswith("streamingnode, etcd, minio, pulsar, kafka")
    r = kli("definitions", "--component-limit", "-1")
    assert r.code == 2


def test_by_name_yaml_round_trips_through_validate(
    kli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    r = kli("definitions", "kubeflow-org-pytorchjob-v1", "-o", "yaml")
    assert r.code == 0, r.err
    doc = yaml.safe_load(r.out)
    assert doc["kind"] == "Karta" and doc["metadata"]["name"] == "kubeflow-org-pytorchjob-v1"
    monkeypatch.setattr("sys.stdin", io.StringIO(r.out))
    v = kli("validate", "-")
    assert v.code == 0, v.err
    assert v.out.startswith("OK: kubeflow-org-pytorchjob-v1 is a valid Karta definition")


def test_by_name_json_is_the_karta_alone(kli: Callable[..., Any]) -> None:
    r = kli("definitions", "batch-job-v1", "-o", "json")
    doc = json.loads(r.out)
    assert doc["apiVersion"] == "run.ai/v1alpha1" and doc["metadata"]["name"] == "batch-job-v1"
    assert "items" not in doc


def test_by_name_table_is_one_row(kli: Callable[..., Any]) -> None:
    r = kli("definitions", "batch-job-v1")
    assert r.out.splitlines()[1].split() == ["batch-job-v1", "Job.v1.batch", "catalog", "ok", "job"]


def test_list_json_and_yaml_are_enveloped(kli: Callable[..., Any]) -> None:
    data = json.loads(kli("definitions", "-o", "json").out)
    assert set(data) == {"items", "count"} and data["count"] == len(data["items"]) >= 35
    assert all(item["kind"] == "Karta" for item in data["items"])
    pod = next(item for item in data["items"] if item["metadata"]["name"] == "core-pod-v1")
    assert pod["resolution"] == {
        "origin": "catalog",
        "source": pod["resolution"]["source"],
        "status": "ok",
        "valid": True,
        "problems": [],
    }
    assert pod["resolution"]["source"].endswith("core-pod-v1.yaml")
    names = [item["metadata"]["name"] for item in data["items"]]
    assert names == sorted(names)
    assert yaml.safe_load(kli("definitions", "-o", "yaml").out) == data


def test_wide_is_rejected(kli: Callable[..., Any]) -> None:
    r = kli("definitions", "-o", "wide")
    assert r.code == 2 and "wide" in r.err


def test_filters(kli: Callable[..., Any]) -> None:
    def names(*args: str) -> list[str]:
        r = kli("definitions", *args, "-o", "json")
        assert r.code == 0, r.err
        return [i["metadata"]["name"] for i in json.loads(r.out)["items"]]

    assert names("--group", "kubeflow.org", "--kind", "mpijob") == [
        "kubeflow-org-mpijob-v1",
        "kubeflow-org-mpijob-v2beta1",
    ]
    assert names("--group", "kubeflow.org", "--kind", "MPIJob", "--version", "v2beta1") == [
        "kubeflow-org-mpijob-v2beta1"
    ]
    assert names("--group", "batch") == ["batch-cronjob-v1", "batch-job-v1"]
    assert names("--group", "", "--kind", "pod") == ["core-pod-v1"]
    assert "batch-job-v1" not in names("--group", "batch.volcano.sh")  # group is exact
    # --kind alone, when one group has the kind
    assert names("--kind", "PyTorchJob") == ["kubeflow-org-pytorchjob-v1"]
    assert names("--kind", "pod") == ["core-pod-v1"]
    assert names("--kind", "mpijob", "--version", "v1") == ["kubeflow-org-mpijob-v1"]


def test_kind_of_several_groups_lists_them(kli: Callable[..., Any]) -> None:
    r = kli("definitions", "--kind", "job")
    assert (r.code, r.out) == (2, "")
    assert r.err == (
        "error: --kind 'job' is a kind of several API groups: batch, batch.volcano.sh\n"
        "hint: choose one with --group GROUP\n"
    )
    r = kli("definitions", "--kind", "nothing")
    assert r.code == 4 and "no Karta definition matches --kind 'nothing'" in r.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("batch-job-v1", "--group", "batch"), "NAME and --group cannot be combined"),
        (("--kind", "Job"), "--kind 'Job' is a kind of several API groups: batch, batch.volcano.sh"),
        (("--group", "batch", "--version", "v1"), "--version needs --kind"),
    ],
)
def test_filter_usage_errors(kli: Callable[..., Any], args: tuple[str, ...], message: str) -> None:
    r = kli("definitions", *args)
    assert r.code == 2
    assert message in r.err


def test_unknown_name_and_empty_filter_result_are_errors(kli: Callable[..., Any]) -> None:
    r = kli("definitions", "no-such-definition")
    assert r.code == 4 and r.out == ""
    assert "no Karta definition named 'no-such-definition'" in r.err and SEE_ALL in r.err
    r = kli("definitions", "kubeflow-org-pytorchjob")
    assert r.code == 4
    assert r.err.splitlines()[1].startswith("hint: did you mean kubeflow-org-pytorchjob-v1 or ")
    r = kli("definitions", "--group", "example.com", "-o", "json")
    assert r.code == 4 and r.out == ""
    assert SEE_ALL in r.err
    r = kli("definitions", "--group", "batch", "--kind", "Job", "--version", "v9")
    assert r.code == 4 and SEE_ALL in r.err


def test_user_definitions_replace_builtins_and_show_their_origin(
    kli: Callable[..., Any], user_dir: Path
) -> None:
    (user_dir / "job.yaml").write_text(
        yaml.safe_dump(karta_dict("my-job", ("batch", "v1", "Job"), children=5))
    )
    r = kli("definitions", "--group", "batch", "--kind", "job")
    assert r.code == 0, r.err
    assert r.out.splitlines()[1].split(None, 4) == [
        "my-job",
        "Job.v1.batch",
        "user",
        "ok",
        "root, c0, c1, c2, +2 more",
    ]
    assert "batch-job-v1" not in kli("definitions").out  # overridden: hidden from the list
    r = kli("definitions", "--group", "batch", "--kind", "job", "--all")
    rows = [line.split()[:4] for line in r.out.splitlines()[1:]]
    assert rows == [
        ["batch-job-v1", "Job.v1.batch", "catalog", "overridden"],
        ["my-job", "Job.v1.batch", "user", "ok"],
    ]
    assert "overridden (by my-job)" in r.out
    # by name, the overridden built-in is found and marked
    r = kli("definitions", "batch-job-v1")
    assert r.code == 0, r.err
    assert r.out.splitlines()[1].split()[:5] == [
        "batch-job-v1",
        "Job.v1.batch",
        "catalog",
        "overridden",
        "(by",
    ]
    assert r.err == (
        f"warning: catalog definition batch-job-v1 is overridden by user definition my-job "
        f"({user_dir / 'job.yaml'}): workloads of its kind use that one\n"
    )
    assert json.loads(kli("definitions", "batch-job-v1", "-o", "json").out)["metadata"]["name"] == (
        "batch-job-v1"
    )


def test_an_invalid_user_definition_is_listed_and_never_used(kli: Callable[..., Any], user_dir: Path) -> None:
    broken = karta_dict("my-job", ("batch", "v1", "Job"))
    del broken["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    (user_dir / "job.yaml").write_text(yaml.safe_dump(broken))
    r = kli("definitions", "--group", "batch", "--kind", "job")
    assert r.code == 0, r.err
    assert [line.split()[:4] for line in r.out.splitlines()[1:]] == [
        ["batch-job-v1", "Job.v1.batch", "catalog", "ok"],
        ["my-job", "Job.v1.batch", "user", "invalid"],
    ]
    assert r.err == (
        f"warning: user definition my-job ({user_dir / 'job.yaml'}) is invalid and not used for "
        "batch/v1, Kind=Job: root component must have status definition; using catalog definition "
        "batch-job-v1 instead\n"
    )
    item = next(
        i
        for i in json.loads(kli("definitions", "--group", "batch", "-o", "json").out)["items"]
        if i["metadata"]["name"] == "my-job"
    )
    assert item["resolution"] == {
        "origin": "user",
        "source": str(user_dir / "job.yaml"),
        "status": "invalid",
        "valid": False,
        "problems": ["root component must have status definition"],
        "usedInstead": "batch-job-v1",
    }


def test_collisions_and_load_problems_are_warnings_after_the_output(
    kli: Callable[..., Any], user_dir: Path
) -> None:
    for name in ("a", "b"):
        (user_dir / f"{name}.yaml").write_text(
            yaml.safe_dump(karta_dict(name, ("example.com", "v1", "Thing")))
        )
    (user_dir / "broken.yaml").write_text("kind: [")
    r = kli("definitions", "--group", "example.com")
    assert r.code == 0
    assert [line.split()[:4] for line in r.out.splitlines()[1:]] == [
        ["a", "Thing.v1.example.com", "user", "ambiguous"],
        ["b", "Thing.v1.example.com", "user", "ambiguous"],
    ]
    warnings = r.err.splitlines()
    assert warnings[0].startswith(f"warning: skipping {user_dir / 'broken.yaml'}")
    assert warnings[1].startswith("warning: 2 user Karta definitions claim example.com/v1, Kind=Thing: a (")


def _cluster_karta(name: str, gvk: tuple[str, str, str] | None, **metadata: Any) -> Any:
    body = karta_dict(name, gvk)
    body["metadata"].update(metadata.pop("meta", {}))
    if "ready" in metadata:
        body["status"] = {"conditions": [{"type": "Ready", "status": metadata.pop("ready")}]}
    if metadata.pop("invalid", False):
        del body["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    return karta_from_dict(body)


def test_cluster_definitions_unmapped_and_kai_visibility(
    kli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = [
        _cluster_karta("aaa-unmapped", None),
        _cluster_karta("kubeflow-org-pytorchjob-v1", ("kubeflow.org", "v1", "PyTorchJob")),
    ]
    store = DefinitionStore.load(user_directory=Path("/nonexistent"), cluster=cluster)
    monkeypatch.setattr(cmd_definitions, "open_store", lambda *_a, **_k: store)
    r = kli("definitions")
    assert r.code == 0
    rows = [line.split(None, 4) for line in r.out.splitlines()[1:]]
    assert rows[-1][:4] == ["aaa-unmapped", "<none>", "cluster", "invalid"]  # unmapped last
    assert ["kubeflow-org-pytorchjob-v1", "PyTorchJob.v1.kubeflow.org", "cluster", "ok", "root"] in rows
    assert r.err == (
        "warning: cluster Karta aaa-unmapped is invalid: root component must have full kind "
        "(group, version, kind)\n"
        "warning: cluster Karta kubeflow-org-pytorchjob-v1 is not visible to KAI Scheduler: "
        "label run.ai/karta-group is missing; label run.ai/karta-version is missing; "
        "label run.ai/karta-kind is missing\n"
    )
    r = kli("definitions", "kubeflow-org-pytorchjob-v1", "-o", "json")
    assert json.loads(r.out)["spec"]["structureDefinition"]["rootComponent"]["name"] == "root"
    # by name: both the cluster one (in use) and the built-in it overrides
    r = kli("definitions", "kubeflow-org-pytorchjob-v1")
    assert [line.split()[2:4] for line in r.out.splitlines()[1:]] == [
        ["cluster", "ok"],
        ["catalog", "overridden"],
    ]


def test_duplicate_cluster_kartas_one_is_used_and_the_others_are_ignored(
    kli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    thing = ("example.com", "v1", "Thing")
    cluster = [
        _cluster_karta("newer", thing, meta={"creationTimestamp": "2025-03-01T00:00:00Z"}),
        _cluster_karta("older", thing, meta={"creationTimestamp": "2025-01-01T00:00:00Z"}),
        _cluster_karta("broken", thing, invalid=True),
    ]
    store = DefinitionStore.load(user_directory=Path("/nonexistent"), cluster=cluster)
    monkeypatch.setattr(cmd_definitions, "open_store", lambda *_a, **_k: store)
    r = kli("definitions", "--group", "example.com")
    assert r.code == 0, r.err
    assert [line.split()[0::3][:2] + line.split()[3:6] for line in r.out.splitlines()[1:]] == [
        ["broken", "invalid", "invalid", "root"],
        ["newer", "ignored", "ignored", "(duplicate", "of"],
        ["older", "ok", "ok", "root"],
    ]
    assert "ignored (duplicate of older)" in r.out
    assert r.err.splitlines()[:2] == [
        "warning: cluster Karta broken is invalid and not used for example.com/v1, Kind=Thing: root "
        "component must have status definition; using cluster definition older instead",
        "warning: 2 cluster Karta definitions claim example.com/v1, Kind=Thing: using older (the "
        "oldest, created 2025-01-01T00:00:00Z); ignoring newer as a duplicate",
    ]
    items = json.loads(kli("definitions", "--group", "example.com", "-o", "json").out)["items"]
    assert [
        (i["metadata"]["name"], i["resolution"]["status"], i["resolution"].get("usedInstead")) for i in items
    ] == [
        ("broken", "invalid", "older"),
        ("newer", "ignored", "older"),
        ("older", "ok", None),
    ]


def test_no_definitions_at_all(kli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmd_definitions, "open_store", lambda *_a, **_k: DefinitionStore())
    r = kli("definitions")
    assert (r.code, r.out, r.err) == (0, "", "No Karta definitions found.\n")
    r = kli("definitions", "-o", "json")
    assert json.loads(r.out) == {"items": [], "count": 0}


def test_output_format_precedence(
    kli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("output: yaml\n")
    assert kli("definitions", "batch-job-v1", "--config", str(config)).out.startswith(
        "apiVersion: run.ai/v1alpha1"
    )
    monkeypatch.setenv("KARTA_CONFIG", str(config))
    assert kli("definitions", "batch-job-v1").out.startswith("apiVersion: run.ai/v1alpha1")
    monkeypatch.setenv("KARTA_OUTPUT", "json")
    assert kli("definitions", "batch-job-v1").out.startswith("{")
    assert kli("definitions", "batch-job-v1", "-o", "table").out.startswith("NAME")
    monkeypatch.setenv("KARTA_OUTPUT", "wide")  # valid for other commands: table here
    assert kli("definitions", "batch-job-v1").out.startswith("NAME")


def test_bad_config_is_a_usage_error(kli: Callable[..., Any], tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("colour: always\n")
    r = kli("definitions", "--config", str(config))
    assert r.code == 2 and "unknown key 'colour'" in r.err
    r = kli("definitions", "--config", str(tmp_path / "missing.yaml"))
    assert r.code == 2 and "no such file" in r.err
