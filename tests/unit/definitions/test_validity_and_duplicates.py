"""Which definition a root GVK uses when some are invalid or several cluster Kartas claim it
(issue 12): an invalid definition is never used and never blocks a valid one; valid cluster
duplicates are ranked Ready, oldest, name; user collisions stay ambiguous; validation is lazy."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from tests.unit.definitions.test_definition_store import PYTORCH, karta_dict, write

from karta.definitions import AMBIGUOUS, CATALOG, IGNORED, INVALID, OK, OVERRIDDEN, DefinitionStore
from karta.errors import AmbiguousDefinitionError, InvalidDefinitionError, NoDefinitionError
from karta.model import Karta, karta_from_dict
from karta.model.gvk import GVK

THING = ("example.com", "v1", "Thing")
NOWHERE = Path("/nonexistent")


def cluster_karta(
    name: str,
    gvk: tuple[str, str, str] = THING,
    *,
    created: str | None = None,
    ready: str | None = None,
    generation: int | None = None,
    observed: int | None = None,
    invalid: bool = False,
) -> Karta:
    body: dict[str, Any] = copy.deepcopy(karta_dict(name, gvk))
    if created is not None:
        body["metadata"]["creationTimestamp"] = created
    if generation is not None:
        body["metadata"]["generation"] = generation
    if ready is not None:
        condition: dict[str, Any] = {"type": "Ready", "status": ready}
        if observed is not None:
            condition["observedGeneration"] = observed
        body["status"] = {"conditions": [{"type": "Validated", "status": "True"}, condition]}
    if invalid:
        del body["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    return karta_from_dict(body)


def store(*cluster: Karta, catalog: bool = False, user: Path = NOWHERE) -> DefinitionStore:
    return DefinitionStore.load(user_directory=user, include_catalog=catalog, cluster=list(cluster))


def statuses(s: DefinitionStore, gvk: tuple[str, str, str] = THING) -> list[tuple[str, str]]:
    resolution = s.resolution(GVK(*gvk))
    assert resolution is not None
    return [(e.definition.name, e.text) for e in resolution.listings]


# --------------------------------------------------------------------------- cluster duplicates


def test_ready_wins_over_older_and_name() -> None:
    s = store(
        cluster_karta("a-old", created="2024-01-01T00:00:00Z", ready="False"),
        cluster_karta("z-new", created="2025-01-01T00:00:00Z", ready="True"),
    )
    assert s.definition_for(GVK(*THING)).name == "z-new"
    assert s.notes_for(GVK(*THING)) == [
        "2 cluster Karta definitions claim example.com/v1, Kind=Thing: using z-new (Ready=True); "
        "ignoring a-old as a duplicate"
    ]
    assert statuses(s) == [("z-new", OK), ("a-old", "ignored (duplicate of z-new)")]


def test_then_the_oldest_then_the_name() -> None:
    s = store(
        cluster_karta("b", created="2024-02-01T00:00:00Z", ready="True"),
        cluster_karta("c", created="2024-01-01T00:00:00Z", ready="True"),
        cluster_karta("a", created="2024-03-01T00:00:00Z", ready="True"),
    )
    assert s.definition_for(GVK(*THING)).name == "c"
    assert s.notes_for(GVK(*THING)) == [
        "3 cluster Karta definitions claim example.com/v1, Kind=Thing: using c (Ready=True, the "
        "oldest, created 2024-01-01T00:00:00Z); ignoring b, a as duplicates"
    ]
    same_age = store(
        cluster_karta("n2", created="2024-01-01T00:00:00Z"),
        cluster_karta("n1", created="2024-01-01T00:00:00Z"),
    )
    assert same_age.definition_for(GVK(*THING)).name == "n1"
    assert "using n1 (the first by name)" in same_age.notes_for(GVK(*THING))[0]
    # a Karta without a creation time is not older than one with it
    untimed = store(cluster_karta("a"), cluster_karta("b", created="2024-01-01T00:00:00Z"))
    assert untimed.definition_for(GVK(*THING)).name == "b"


def test_a_ready_condition_of_an_older_generation_does_not_count() -> None:
    s = store(
        cluster_karta("stale", ready="True", generation=3, observed=2, created="2024-01-01T00:00:00Z"),
        cluster_karta("fresh", ready="True", generation=3, observed=3, created="2025-01-01T00:00:00Z"),
    )
    assert s.definition_for(GVK(*THING)).name == "fresh"
    stale = next(d for d in s.definitions if d.name == "stale")
    assert not stale.ready


def test_duplicates_are_found_through_every_lookup() -> None:
    s = store(cluster_karta("b"), cluster_karta("a"))
    assert [d.name for d in s.by_gvk(*THING)] == ["a"]
    assert [d.name for d in s.by_kind("thing")] == ["a"]
    assert s.definition_for_token("things").name == "a"
    assert s.definition_for(GVK("example.com", "v2", "Thing")).name == "a"  # other-version rule
    assert [d.name for d in s.visible()] == ["a"]
    assert s.by_name("b") is not None and s.listing_of(s.by_name("b")).status == IGNORED  # type: ignore[arg-type]


# --------------------------------------------------------------------------- invalid definitions


def test_an_invalid_cluster_karta_never_blocks_the_builtin() -> None:
    s = store(cluster_karta("broken", PYTORCH, invalid=True), catalog=True)
    chosen = s.definition_for(GVK(*PYTORCH))
    assert (chosen.name, chosen.origin) == ("kubeflow-org-pytorchjob-v1", CATALOG)
    assert s.notes_for(GVK(*PYTORCH)) == [
        "cluster Karta broken is invalid and not used for kubeflow.org/v1, Kind=PyTorchJob: root "
        "component must have status definition; using catalog definition kubeflow-org-pytorchjob-v1 "
        "instead"
    ]
    assert statuses(s, PYTORCH) == [("kubeflow-org-pytorchjob-v1", OK), ("broken", INVALID)]
    broken = s.by_name("broken")
    assert broken is not None and not broken.valid
    assert broken.problems == ("root component must have status definition",)
    entry = s.listing_of(broken)
    assert entry.to_dict() == {
        "origin": "cluster",
        "source": "cluster",
        "status": INVALID,
        "valid": False,
        "problems": ["root component must have status definition"],
        "usedInstead": "kubeflow-org-pytorchjob-v1",
    }


def test_an_invalid_duplicate_leaves_the_valid_one() -> None:
    s = store(
        cluster_karta("a-broken", invalid=True, ready="True", created="2020-01-01T00:00:00Z"),
        cluster_karta("b-good"),
    )
    assert s.definition_for(GVK(*THING)).name == "b-good"
    assert s.notes_for(GVK(*THING)) == [
        "cluster Karta a-broken is invalid and not used for example.com/v1, Kind=Thing: root "
        "component must have status definition; using cluster definition b-good instead"
    ]


def test_only_invalid_definitions_fail_resolution_with_the_first_problem() -> None:
    s = store(cluster_karta("broken", invalid=True))
    message = (
        "no valid Karta definition covers Thing (example.com/v1): cluster Karta broken is invalid: "
        "root component must have status definition"
    )
    with pytest.raises(InvalidDefinitionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        s.definition_for(GVK(*THING))
    with pytest.raises(InvalidDefinitionError, match="cluster Karta broken is invalid"):
        s.definition_for(GVK("example.com", "v2", "Thing"))
    with pytest.raises(InvalidDefinitionError, match='covers "thing": cluster Karta broken'):
        s.definition_for_token("thing")
    assert issubclass(InvalidDefinitionError, NoDefinitionError)  # no usable definition
    assert s.by_gvk(*THING) == [] and s.visible() == []
    assert s.notes_for(GVK(*THING))[0].endswith("; no valid definition covers it")


def test_an_invalid_exact_version_falls_back_to_another_version() -> None:
    s = store(cluster_karta("v2-broken", ("example.com", "v2", "Thing"), invalid=True), cluster_karta("v1"))
    assert s.definition_for(GVK("example.com", "v2", "Thing")).name == "v1"
    assert s.notes_for(GVK("example.com", "v2", "Thing"))[0].startswith(
        "cluster Karta v2-broken is invalid and not used for example.com/v2, Kind=Thing"
    )


def test_user_definitions_invalid_and_colliding(tmp_path: Path) -> None:
    broken = karta_dict("broken", THING)
    del broken["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    write(tmp_path, "broken.yaml", broken)
    write(tmp_path, "good.yaml", karta_dict("good", THING))
    s = store(user=tmp_path)
    assert s.definition_for(GVK(*THING)).name == "good"  # an invalid one does not collide
    assert s.warnings == []
    write(tmp_path, "other.yaml", karta_dict("other", THING))
    s = store(user=tmp_path)
    with pytest.raises(
        AmbiguousDefinitionError, match=r"2 Karta definitions claim example\.com/v1, Kind=Thing"
    ):
        s.definition_for(GVK(*THING))
    assert statuses(s) == [("broken", INVALID), ("good", AMBIGUOUS), ("other", AMBIGUOUS)]  # load order
    assert len(s.warnings) == 1 and s.warnings[0].startswith("2 user Karta definitions claim")
    # an invalid cluster Karta does not settle a user collision either
    s = store(cluster_karta("c", invalid=True), user=tmp_path)
    with pytest.raises(AmbiguousDefinitionError):
        s.definition_for(GVK(*THING))
    assert s.notes_for(GVK(*THING))[0].endswith("; the other definitions collide")


def test_a_user_file_with_a_duplicate_key_is_kept_as_invalid(tmp_path: Path) -> None:
    text = (
        "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: dup, name: dup2}\n"
        "spec:\n  structureDefinition:\n    rootComponent:\n      name: r\n"
        "      kind: {group: example.com, version: v1, kind: Thing}\n"
        "      statusDefinition:\n        phaseDefinition: {path: .status.phase}\n"
        "        statusMappings: {running: [{byPhase: R}]}\n"
    )
    (tmp_path / "dup.yaml").write_text(text)
    s = store(user=tmp_path)
    [entry] = s.listing()
    assert entry.status == INVALID and "duplicate key" in entry.definition.problems[0]


# --------------------------------------------------------------------------- names and laziness


def test_by_name_prefers_the_definition_in_use() -> None:
    same = cluster_karta("kubeflow-org-pytorchjob-v1", PYTORCH)  # as karta-controller installs it
    s = store(same, catalog=True)
    found = s.named("kubeflow-org-pytorchjob-v1")
    assert [(d.origin, s.listing_of(d).status) for d in found] == [("cluster", OK), ("catalog", OVERRIDDEN)]
    assert s.by_name("kubeflow-org-pytorchjob-v1") is found[0]
    assert "kubeflow-org-pytorchjob-v1" in s.names()


def test_validation_is_lazy_per_gvk(monkeypatch: pytest.MonkeyPatch) -> None:
    import karta.model

    calls: list[str] = []
    real = karta.model.validate_or_raise

    def counting(k: Karta | None) -> Any:
        calls.append(k.name if k is not None else "")
        return real(k)

    monkeypatch.setattr(karta.model, "validate_or_raise", counting)
    s = store(*(cluster_karta(f"k{i}", ("example.com", "v1", f"Kind{i}")) for i in range(5)), catalog=True)
    assert calls == [] and len(s.gvks()) > 5  # nothing validated to build the store or list GVKs
    s.definition_for(GVK("example.com", "v1", "Kind3"))
    s.definition_for(GVK("kubeflow.org", "v1", "PyTorchJob"))  # built-ins are not validated again
    assert calls == ["k3"]
    s.definition_for(GVK("example.com", "v1", "Kind3"))
    assert calls == ["k3"]  # once
    s.listing()
    assert sorted(calls) == ["k0", "k1", "k2", "k3", "k4"]
