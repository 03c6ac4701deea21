"""karta.rbac, the library side of ``kli rbac``: the ClusterRole grants every object each chosen
backend renders (through the registry's rules), plurals come from CRD documents or are guessed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from karta.errors import GangError
from karta.rbac import build_rbac, crd_plurals
from karta.render import BACKENDS

sys.path.insert(0, str(Path(__file__).resolve().parent / "render"))
from render_fixtures import definition, run, train_7_pods


def _allows(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(
        group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]
        for rule in rules
    )


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_the_role_covers_what_the_backend_renders(backend: str) -> None:
    from karta.model.names import plural_guess

    (role,), notes = build_rbac([definition()], name="r", backends=(backend,))
    rules = role["rules"]
    assert _allows(rules, "kubeflow.org", "pytorchjobs", "watch")
    assert _allows(rules, "", "pods", "list")
    assert notes == [
        "pytorchjobs.kubeflow.org: plural of PyTorchJob guessed (lower-cased kind + s); "
        "pass --crd to use the CRD's"
    ]
    options = {"composite": True} if backend == "workload-api" else {}
    for obj in run(backend, pods=train_7_pods(), **options).objects:
        group = obj["apiVersion"].rpartition("/")[0]
        for verb in ("create", "update", "patch", "get"):
            assert _allows(rules, group, plural_guess(obj["kind"]), verb), (backend, obj["kind"], verb)


def test_binding_and_unknown_backend() -> None:
    objects, _ = build_rbac([definition()], name="r", service_account=("ns", "sa"))
    assert [o["kind"] for o in objects] == ["ClusterRole", "ClusterRoleBinding"]
    assert objects[1]["subjects"] == [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]
    with pytest.raises(GangError, match="unknown gang backend 'slurm'"):
        build_rbac([definition()], name="r", backends=("slurm",))


def test_crd_plurals_skip_what_is_not_a_crd_with_names() -> None:
    crd = {
        "kind": "CustomResourceDefinition",
        "spec": {"group": "kubeflow.org", "names": {"kind": "PyTorchJob", "plural": "pytorchjobs"}},
    }
    documents = [crd, {"kind": "Pod"}, {"kind": "CustomResourceDefinition", "spec": {"names": {}}}, "x", None]
    plurals = crd_plurals(documents)
    assert plurals == {("kubeflow.org", "PyTorchJob"): "pytorchjobs"}
    (role,), notes = build_rbac([definition()], name="r", plurals=plurals)
    assert notes == []
    assert {
        "apiGroups": ["kubeflow.org"],
        "resources": ["pytorchjobs"],
        "verbs": ["get", "list", "watch"],
    } in (role["rules"])


def test_referenced_kinds_are_read_only_for_every_consumer() -> None:
    """Extension E3: the kinds a definition's references read (lookup and list) get get/list/watch
    and nothing more, in ``kli rbac``'s role and in the controller's (``owners=False``)."""
    import yaml

    from karta.model import load_karta

    here = Path(__file__).resolve().parent / "cli" / "references"
    karta = load_karta(yaml.safe_load((here / "definition.yaml").read_text()), strict=True).karta
    assert karta is not None
    crd = {
        "kind": "CustomResourceDefinition",
        "spec": {"group": "example.com", "names": {"kind": "RunTemplate", "plural": "runtemplates"}},
    }
    for owners in (True, False):
        (role,), _ = build_rbac([karta], name="r", plurals=crd_plurals([crd]), owners=owners)
        rules = role["rules"]
        for group, resource in (("example.com", "runtemplates"), ("", "configmaps")):
            assert _allows(rules, group, resource, "get") and _allows(rules, group, resource, "watch")
            assert not any(
                _allows(rules, group, resource, verb) for verb in ("create", "update", "patch", "delete")
            )
