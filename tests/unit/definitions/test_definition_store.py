"""Where definitions come from (R13, 17.3): precedence per root GVK, collisions, unmapped
definitions, lookups, the user directory and KAI visibility of cluster definitions (R15)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.definitions import (
    CATALOG,
    CLUSTER,
    INVALID,
    OK,
    OVERRIDDEN,
    USER,
    DefinitionStore,
    ambiguity,
    default_user_directory,
    kai_visibility_warnings,
)
from karta.model import Karta, karta_from_dict
from karta.model.gvk import GVK

PYTORCH = ("kubeflow.org", "v1", "PyTorchJob")
STATUS_DEFINITION = {  # the least a valid root needs
    "phaseDefinition": {"path": ".status.phase"},
    "statusMappings": {"running": [{"byPhase": "Running"}]},
}


def karta_dict(
    name: str, gvk: tuple[str, str, str] | None = PYTORCH, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    root: dict[str, Any] = {
        "name": "root",
        "specDefinition": {"podSpecPath": ".spec.template.spec"},
        "statusDefinition": copy.deepcopy(STATUS_DEFINITION),
    }
    if gvk is not None:
        root["kind"] = {"group": gvk[0], "version": gvk[1], "kind": gvk[2]}
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name, **({"labels": labels} if labels else {})},
        "spec": {"structureDefinition": {"rootComponent": root}},
    }


def karta(
    name: str, gvk: tuple[str, str, str] | None = PYTORCH, labels: dict[str, str] | None = None
) -> Karta:
    return karta_from_dict(karta_dict(name, gvk, labels))


def write(directory: Path, filename: str, *docs: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def names(items: list[Any]) -> list[str]:
    return [d.name for d in items]


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    return tmp_path / "none"


def test_offline_store_holds_the_catalog(empty_dir: Path) -> None:
    store = DefinitionStore.offline(user_directory=empty_dir)
    visible = store.visible()
    assert len(visible) >= 35
    assert {d.origin for d in visible} == {CATALOG}
    assert all(d.trusted for d in visible)
    assert store.warnings == []
    assert names(store.resolve("kubeflow.org/v1", "PyTorchJob")) == ["kubeflow-org-pytorchjob-v1"]
    assert names(store.resolve("v1", "Pod")) == ["core-pod-v1"]


def test_resolution_falls_back_to_group_and_kind_at_any_version(empty_dir: Path) -> None:
    store = DefinitionStore.offline(user_directory=empty_dir)
    assert names(store.resolve("kubeflow.org/v2", "PyTorchJob")) == ["kubeflow-org-pytorchjob-v1"]
    several = store.resolve("kubeflow.org/v3", "MPIJob")
    assert names(several) == ["kubeflow-org-mpijob-v1", "kubeflow-org-mpijob-v2beta1"]
    assert ambiguity(several) == (
        "several Karta definitions cover this type at other versions: "
        "MPIJob.v1.kubeflow.org, MPIJob.v2beta1.kubeflow.org"
    )
    assert store.resolve("example.com/v1", "PyTorchJob") == []
    assert store.resolve("kubeflow.org/v1", "pytorchjob") == []  # kinds are exact here


def test_user_directory_replaces_the_builtin_for_its_gvk(tmp_path: Path) -> None:
    write(tmp_path, "mine.yaml", karta_dict("my-pytorch"))
    write(tmp_path, "other.yml", karta_dict("my-thing", ("example.com", "v1", "Thing")))
    store = DefinitionStore.offline(user_directory=tmp_path)
    [chosen] = store.resolve("kubeflow.org/v1", "PyTorchJob")
    assert (chosen.name, chosen.origin, chosen.trusted) == ("my-pytorch", USER, False)
    assert chosen.source == str(tmp_path / "mine.yaml")
    assert names(store.resolve("example.com/v1", "Thing")) == ["my-thing"]
    assert "kubeflow-org-pytorchjob-v1" not in names(store.visible())
    shadowed = store.by_name("kubeflow-org-pytorchjob-v1")  # overridden, but found by name
    assert shadowed is not None and shadowed.origin == CATALOG
    listing = store.listing_of(shadowed)
    assert (listing.status, listing.used, listing.text) == (OVERRIDDEN, chosen, "overridden (by my-pytorch)")
    assert "kubeflow-org-pytorchjob-v1" in names(store.definitions)


def test_two_user_definitions_for_one_gvk_collide(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", karta_dict("a"))
    write(tmp_path, "b.yaml", karta_dict("b"))
    store = DefinitionStore.offline(user_directory=tmp_path)
    assert store.warnings == [
        f"2 user Karta definitions claim kubeflow.org/v1, Kind=PyTorchJob: a ({tmp_path / 'a.yaml'}), "
        f"b ({tmp_path / 'b.yaml'})"
    ]
    matches = store.resolve("kubeflow.org/v1", "PyTorchJob")
    assert names(matches) == ["a", "b"]
    assert store.is_ambiguous(PYTORCH)
    assert ambiguity(matches).startswith("2 Karta definitions claim kubeflow.org/v1, Kind=PyTorchJob: a (")


def test_cluster_wins_over_user_and_catalog(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", karta_dict("user-a"))
    write(tmp_path, "b.yaml", karta_dict("user-b"))  # a user collision hidden by the cluster
    store = DefinitionStore.load(user_directory=tmp_path, cluster=[karta("from-cluster")])
    [chosen] = store.resolve("kubeflow.org/v1", "PyTorchJob")
    assert (chosen.name, chosen.origin, chosen.source, chosen.trusted) == (
        "from-cluster",
        CLUSTER,
        "cluster",
        False,
    )
    assert store.warnings == []


def test_cluster_duplicates_are_not_an_error(empty_dir: Path) -> None:
    store = DefinitionStore.offline(user_directory=empty_dir).with_cluster(
        [karta("y"), karta("x")], warnings=["could not list something"]
    )
    assert store.warnings == ["could not list something"]  # not a warning of every command
    [chosen] = store.resolve("kubeflow.org/v1", "PyTorchJob")
    assert chosen.name == "x"  # same age (none recorded): the first by name
    assert store.notes_for(GVK(*PYTORCH)) == [
        "2 cluster Karta definitions claim kubeflow.org/v1, Kind=PyTorchJob: using x (the first by "
        "name); ignoring y as a duplicate"
    ]
    assert not store.is_ambiguous(GVK(*PYTORCH))
    assert [(e.definition.name, e.text) for e in store.listing() if e.definition.gvk == PYTORCH] == [
        ("x", OK),
        ("y", "ignored (duplicate of x)"),
        ("kubeflow-org-pytorchjob-v1", "overridden (by x)"),
    ]


def test_unmapped_definitions_are_listed_last(empty_dir: Path) -> None:
    no_kind = karta("zz-no-kind", None)
    no_version = karta("aa-no-version", ("example.com", "", "Thing"))
    store = DefinitionStore.offline(user_directory=empty_dir).with_cluster([no_kind, no_version])
    listing = store.listing()
    assert [(e.definition.name, e.status) for e in listing[-2:]] == [
        ("aa-no-version", INVALID),  # a root without a full kind is invalid
        ("zz-no-kind", INVALID),
    ]
    assert names(store.unmapped()) == ["aa-no-version", "zz-no-kind"]
    assert not {"aa-no-version", "zz-no-kind"} & set(names(store.visible()))  # never used
    assert store.resolve("example.com/", "Thing") == []
    assert store.by_name("zz-no-kind") is not None


def test_listing_is_sorted_by_gvk_string(empty_dir: Path) -> None:
    store = DefinitionStore.offline(user_directory=empty_dir)
    keys = [f"{d.gvk[0]}/{d.gvk[1]}, Kind={d.gvk[2]}" for d in store.visible() if d.gvk is not None]
    assert keys == sorted(keys)


def test_lookup_by_name_prefers_the_cluster(tmp_path: Path) -> None:
    write(tmp_path, "job.yaml", karta_dict("same-name", ("example.com", "v1", "A")))
    store = DefinitionStore.load(
        user_directory=tmp_path, cluster=[karta("same-name", ("example.com", "v1", "B"))]
    )
    found = store.by_name("same-name")
    assert found is not None and found.origin == CLUSTER
    assert store.by_name("nope") is None
    assert store.by_name("batch-job-v1") is not None


def test_lookup_by_kind_is_case_insensitive_and_by_gvk_exact(empty_dir: Path) -> None:
    store = DefinitionStore.offline(user_directory=empty_dir)
    assert names(store.by_kind("job")) == ["batch-volcano-sh-job-v1alpha1", "batch-job-v1"]
    assert names(store.by_kind("PYTORCHJOB")) == ["kubeflow-org-pytorchjob-v1"]
    assert names(store.by_gvk("batch", "v1", "Job")) == ["batch-job-v1"]
    assert store.by_gvk("batch", "v1", "job") == []
    assert names(store.by_group_kind("kubeflow.org", "MPIJob")) == [
        "kubeflow-org-mpijob-v1",
        "kubeflow-org-mpijob-v2beta1",
    ]


def test_broken_user_files_are_warnings_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("a: [unclosed\n")
    write(tmp_path, "notkarta.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    write(tmp_path, "good.yaml", karta_dict("good", ("example.com", "v1", "Thing")))
    (tmp_path / "README.md").write_text("not a definition")
    (tmp_path / "sub.yaml").mkdir()
    store = DefinitionStore.offline(user_directory=tmp_path)
    assert names(store.resolve("example.com/v1", "Thing")) == ["good"]
    assert len(store.warnings) == 2
    assert store.warnings[0].startswith(f"skipping {tmp_path / 'bad.yaml'}: ")
    assert store.warnings[1].startswith(f"skipping a definition in {tmp_path / 'notkarta.yaml'}: ")


def test_multi_document_user_files_load_every_definition(tmp_path: Path) -> None:
    write(
        tmp_path,
        "many.yaml",
        karta_dict("one", ("example.com", "v1", "A")),
        karta_dict("two", ("example.com", "v1", "B")),
    )
    store = DefinitionStore.offline(user_directory=tmp_path, include_catalog=False)
    assert names(store.visible()) == ["one", "two"]


def test_a_file_in_place_of_the_directory_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "defs"
    path.write_text("")
    store = DefinitionStore.offline(user_directory=path, include_catalog=False)
    assert store.visible() == []
    assert store.warnings == [f"ignoring {path}: the definitions directory is not a directory"]


def test_default_user_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KARTA_DEFINITIONS", str(tmp_path))
    assert default_user_directory() == tmp_path
    monkeypatch.delenv("KARTA_DEFINITIONS")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_user_directory() == Path.home() / ".karta" / "definitions"


def test_gvk_token() -> None:
    assert GVK("", "v1", "Pod").token == "Pod.v1"
    assert GVK(*PYTORCH).token == "PyTorchJob.v1.kubeflow.org"


def test_kai_visibility_of_cluster_definitions(empty_dir: Path) -> None:
    good = karta(
        "good",
        labels={
            "run.ai/karta-group": "kubeflow.org",
            "run.ai/karta-version": "v1",
            "run.ai/karta-kind": "PyTorchJob",
        },
    )
    core = karta(
        "core",
        ("", "v1", "Pod"),
        labels={"run.ai/karta-group": "", "run.ai/karta-version": "v1", "run.ai/karta-kind": "Pod"},
    )
    missing = karta("missing", ("example.com", "v1", "A"))
    wrong = karta(
        "wrong",
        ("example.com", "v1", "B"),
        labels={"run.ai/karta-group": "example.com", "run.ai/karta-version": "v2", "run.ai/karta-kind": "B"},
    )
    unmapped = karta("unmapped", None)
    store = DefinitionStore.offline(user_directory=empty_dir).with_cluster(
        [good, core, missing, wrong, unmapped]
    )
    assert kai_visibility_warnings(store.visible()) == [
        "cluster Karta missing is not visible to KAI Scheduler: label run.ai/karta-group is missing; "
        "label run.ai/karta-version is missing; label run.ai/karta-kind is missing",
        "cluster Karta wrong is not visible to KAI Scheduler: "
        'label run.ai/karta-version is "v2", expected "v1"',
    ]
