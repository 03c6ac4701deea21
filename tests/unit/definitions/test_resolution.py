"""The one resolution rule (DefinitionStore.definition_for) and 17.4's token fallback
(definition_for_token): exact GVK, other versions (served first, most stable), collisions."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.definitions.test_definition_store import karta, karta_dict, write

from karta.definitions import DefinitionStore
from karta.errors import AmbiguousDefinitionError, NoDefinitionError
from karta.model.gvk import GVK, version_key

THING = ("example.com", "v1", "Thing")


def _store(*kartas: tuple[str, tuple[str, str, str]]) -> DefinitionStore:
    base = DefinitionStore.offline(user_directory=Path("/nonexistent"), include_catalog=False)
    return base.with_cluster([karta(name, gvk) for name, gvk in kartas])


def test_exact_gvk_wins_over_other_versions() -> None:
    store = _store(("v1", THING), ("v2", ("example.com", "v2", "Thing")))
    assert store.definition_for(GVK(*THING)).name == "v1"
    assert store.definition_for(GVK("example.com", "v2", "Thing")).name == "v2"


def test_other_versions_most_stable_first_and_served_ones_preferred() -> None:
    store = _store(
        ("alpha", ("example.com", "v1alpha1", "Thing")),
        ("beta", ("example.com", "v1beta1", "Thing")),
        ("ga", ("example.com", "v1", "Thing")),
    )
    unknown = GVK("example.com", "v9", "Thing")
    assert store.definition_for(unknown).name == "ga"
    served = {GVK("example.com", "v1alpha1", "Thing"), GVK("example.com", "v1beta1", "Thing")}
    assert store.definition_for(unknown, served=served.__contains__).name == "beta"
    # none of them served: still the most stable one
    assert store.definition_for(unknown, served=lambda gvk: False).name == "ga"


def test_nothing_for_the_kind_is_no_definition() -> None:
    store = _store(("a", THING))
    with pytest.raises(NoDefinitionError, match=r"no Karta definition covers Other \(example.com/v1\)"):
        store.definition_for(GVK("example.com", "v1", "Other"))
    with pytest.raises(NoDefinitionError, match=r"covers Pod \(v1\)"):
        store.definition_for(GVK("", "v1", "Pod"))


def test_colliding_user_definitions_are_ambiguous_at_any_step(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write(tmp_path, f"{name}.yaml", karta_dict(name, THING))
    store = DefinitionStore.offline(user_directory=tmp_path, include_catalog=False)
    with pytest.raises(
        AmbiguousDefinitionError, match=r"2 Karta definitions claim example\.com/v1, Kind=Thing"
    ):
        store.definition_for(GVK(*THING))
    with pytest.raises(AmbiguousDefinitionError):  # reached through the other-version fallback
        store.definition_for(GVK("example.com", "v2", "Thing"))
    # a cluster Karta for the kind settles it (cluster over user)
    assert store.with_cluster([karta("c", THING)]).definition_for(GVK(*THING)).name == "c"


def test_a_file_and_a_live_object_resolve_alike() -> None:
    """The manifest of an object and the object as served resolve through the same rule."""
    store = DefinitionStore.offline(user_directory=Path("/nonexistent"))
    for gvk in [
        GVK("batch", "v1", "Job"),
        GVK("kubeflow.org", "v1", "PyTorchJob"),
        GVK("ray.io", "v1", "RayJob"),
    ]:
        offline = store.definition_for(gvk)
        live = store.definition_for(gvk, served=lambda g, gvk=gvk: g == gvk)
        assert offline.name == live.name


def test_token_fallback_kind_plural_and_qualifier() -> None:
    store = _store(("t1", THING), ("t2", ("example.com", "v2", "Thing")), ("w", ("other.io", "v1", "Widget")))
    assert store.definition_for_token("widget").name == "w"
    assert store.definition_for_token("widgets").name == "w"  # the guessed plural
    assert store.definition_for_token("Thing.v2.example.com").name == "t2"
    with pytest.raises(AmbiguousDefinitionError, match=r"thing.v1.example.com, thing.v2.example.com"):
        store.definition_for_token("thing")
    with pytest.raises(NoDefinitionError, match='covers "gadget"'):
        store.definition_for_token("gadget")


def test_gvk_spellings() -> None:
    gvk = GVK.of("kubeflow.org/v1", "PyTorchJob")
    assert gvk == ("kubeflow.org", "v1", "PyTorchJob")
    assert (gvk.api_version, gvk.token, str(gvk)) == (
        "kubeflow.org/v1",
        "PyTorchJob.v1.kubeflow.org",
        "kubeflow.org/v1, Kind=PyTorchJob",
    )
    core = GVK.of("v1", "Pod")
    assert (core.group, core.api_version, core.token) == ("", "v1", "Pod.v1")
    assert max(["v1beta1", "v1", "v2alpha1"], key=version_key) == "v1"
