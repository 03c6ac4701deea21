"""``kli definitions [NAME]`` (17.7): table, filters, json/yaml shapes, origins, warnings, config."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.cli.commands import definitions as cmd_definitions
from karta.definitions import DefinitionStore
from karta.model import karta_from_dict

SEE_ALL = 'Run "kli definitions" to see what is available'


def karta_dict(name: str, gvk: tuple[str, str, str] | None, children: int = 0) -> dict[str, Any]:
    root: dict[str, Any] = {"name": "root", "specDefinition": {"podSpecPath": ".spec.template.spec"}}
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
    assert lines[0].split() == ["NAME", "KIND", "ORIGIN", "COMPONENTS"]
    rows = [line.split(None, 3) for line in lines[1:]]
    assert len(rows) >= 35
    assert [row[0] for row in rows] == sorted(row[0] for row in rows)
    by_name = {row[0]: row for row in rows}
    # on a terminal of 100 columns the whole catalog fits: a KIND its NAME spells shows the Kind
    # alone, and COMPONENTS keeps whole names, then "+N more" or "+N"
    assert max(len(line) for line in lines) <= 100
    assert by_name["core-pod-v1"][1:] == ["Pod", "catalog", "pod"]
    assert by_name["kubeflow-org-pytorchjob-v1"][1:3] == ["PyTorchJob", "catalog"]
    assert by_name["kubeflow-org-tfjob-v1"][3] == "tfjob, chief, +4"
    # columns are aligned
    assert len({line.index("catalog") for line in lines[1:]}) == 1
    # off a terminal (a pipe, a file) nothing is cut, as kubectl
    piped = {line.split(None, 1)[0]: line for line in kli("definitions").out.splitlines()}
    assert piped["kubeflow-org-tfjob-v1"].split(None, 3)[1:] == [
        "TFJob.v1.kubeflow.org",
        "catalog",
        "tfjob, chief, master, ps, +2 more",
    ]
    # a narrower table keeps Kind.version.group and the cap of 3 (the root is not counted)
    r = kli("definitions", "--group", "kubeflow.org", "--kind", "pytorchjob")
    assert r.out.splitlines()[1].split(None, 3)[1:] == [
        "PyTorchJob.v1.kubeflow.org",
        "catalog",
        "pytorchjob, master, worker",
    ]
    assert kli("definitions", "core-pod-v1").out.splitlines()[1].split()[1:] == ["Pod.v1", "catalog", "pod"]
    r = kli("definitions", "kubeflow-org-tfjob-v1")
    assert r.out.splitlines()[1].endswith(
        "TFJob.v1.kubeflow.org   catalog   tfjob, chief, master, ps, +2 more"
    )
    r = kli("definitions", "leaderworkerset-x-k8s-io-leaderworkerset-v1", "--component-limit", "3")
    assert r.out.splitlines()[1].endswith("leaderworkerset, group, leader, worker")  # asked for: not cut


def test_component_limit(kli: Callable[..., Any]) -> None:
    r = kli("definitions", "milvus-io-milvus-v1beta1", "--component-limit", "1")
    assert r.out.splitlines()[1].endswith("milvus, standalone, +10 more")
    r = kli("definitions", "milvus-io-milvus-v1beta1", "--component-limit", "0")
    assert "more" not in r.out and r.out.splitlines()[1].endswith("querynode, indexnode, streamingnode")
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
    assert r.out.splitlines()[1].split() == ["batch-job-v1", "Job.v1.batch", "catalog", "job"]


def test_list_json_and_yaml_are_enveloped(kli: Callable[..., Any]) -> None:
    data = json.loads(kli("definitions", "-o", "json").out)
    assert set(data) == {"items", "count"} and data["count"] == len(data["items"]) >= 35
    assert all(item["kind"] == "Karta" for item in data["items"])
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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("batch-job-v1", "--group", "batch"), "NAME and --group cannot be combined"),
        (("--kind", "Job"), "--kind needs --group"),
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
    assert r.out.splitlines()[1].split(None, 3) == [
        "my-job",
        "Job.v1.batch",
        "user",
        "root, c0, c1, c2, +2 more",
    ]
    assert "batch-job-v1" not in kli("definitions").out


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
    assert [line.split()[0] for line in r.out.splitlines()[1:]] == ["a", "b"]
    warnings = r.err.splitlines()
    assert warnings[0].startswith(f"warning: skipping {user_dir / 'broken.yaml'}")
    assert warnings[1].startswith("warning: 2 user Karta definitions claim example.com/v1, Kind=Thing: a (")


def test_cluster_definitions_unmapped_and_kai_visibility(
    kli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = [
        karta_from_dict(karta_dict("aaa-unmapped", None)),
        karta_from_dict(karta_dict("kubeflow-org-pytorchjob-v1", ("kubeflow.org", "v1", "PyTorchJob"))),
    ]
    store = DefinitionStore.load(user_directory=Path("/nonexistent"), cluster=cluster)
    monkeypatch.setattr(cmd_definitions, "open_store", lambda *_a, **_k: store)
    r = kli("definitions")
    assert r.code == 0
    rows = [line.split(None, 3) for line in r.out.splitlines()[1:]]
    assert rows[-1] == ["aaa-unmapped", "<none>", "cluster", "root"]  # unmapped last
    assert ["kubeflow-org-pytorchjob-v1", "PyTorchJob.v1.kubeflow.org", "cluster", "root"] in rows
    assert r.err == (
        "warning: cluster Karta kubeflow-org-pytorchjob-v1 is not visible to KAI Scheduler: "
        "label run.ai/karta-group is missing; label run.ai/karta-version is missing; "
        "label run.ai/karta-kind is missing\n"
    )
    r = kli("definitions", "kubeflow-org-pytorchjob-v1", "-o", "json")
    assert json.loads(r.out)["spec"]["structureDefinition"]["rootComponent"]["name"] == "root"


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
