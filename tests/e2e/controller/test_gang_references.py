"""References (extension E3, issue 26) live, on the real API server: a hand-written definition
whose TrainRun (a test CRD) takes its pod template and node count from a cluster-scoped
RunTemplate (a second test CRD) through a lookup reference.

- ``kli describe trainrun/NAME`` reads the runtime through the API and shows its nodes and GPUs;
- the controller (in-process, coscheduling) renders the gang from the runtime, from its shared
  cache; editing the runtime's node count re-renders every TrainRun that uses it (and only those),
  and the rows of its web view (``--ui``) follow;
  deleting the runtime gives a ``ReferenceNotFound`` event and the gang follows what the
  definition computes with null (no stale gang); the same definition pointed at a kind the
  controller may not read (impersonating a user without it) gives a ``GangRenderFailed`` event
  naming the reference and the kind, writes nothing, and the controller stays ready.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.cli.main import main
from karta.errors import ApiError
from karta.kube import KubeClient
from karta.ui import UiServer

from ..kubehttp import KubeHTTP, ok
from .gangs_support import (
    client_for,
    events_for,
    eventually,
    group_objects,
    install_crds,
    running_controller,
    wait_served,
)

GROUP = "refs.karta.example"
DENIED_GROUP = "denied.karta.example"


def _crd(group: str, kind: str, plural: str, scope: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


CRDS = (
    _crd(GROUP, "TrainRun", "trainruns", "Namespaced"),
    _crd(GROUP, "RunTemplate", "runtemplates", "Cluster"),
    _crd(DENIED_GROUP, "RunTemplate", "runtemplates", "Cluster"),
)


def _definition(template_group: str = GROUP) -> dict[str, Any]:
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "trainrun-through-its-template"},
        "spec": {
            "structureDefinition": {
                "references": [
                    {
                        "name": "runtime",
                        "gvk": {"group": template_group, "version": "v1", "kind": "RunTemplate"},
                        "lookup": {"nameExpression": ".spec.templateRef.name"},
                    }
                ],
                "rootComponent": {
                    "name": "trainrun",
                    "kind": {"group": GROUP, "version": "v1", "kind": "TrainRun"},
                    "specDefinition": {"podTemplateSpecPath": "$runtime.spec.template"},
                    "scaleDefinition": {"replicasPath": "$runtime.spec.nodes // 1"},
                    "statusDefinition": {
                        "statusMappings": {
                            "running": [
                                {"byExpression": {"expression": "$runtime != null", "expectedResult": "true"}}
                            ]
                        }
                    },
                },
            },
            "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "trainrun"}}},
        },
    }


def _template(name: str, nodes: int, *, group: str = GROUP) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/v1",
        "kind": "RunTemplate",
        "metadata": {"name": name},
        "spec": {
            "nodes": nodes,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "trainer:1",
                            "resources": {"limits": {"nvidia.com/gpu": "8"}},
                        }
                    ]
                }
            },
        },
    }


def _run(name: str, template: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "TrainRun",
        "metadata": {"name": name},
        "spec": {"templateRef": {"name": template}},
    }


@pytest.fixture(scope="module")
def kube(cluster: KubeHTTP, corpus: Path) -> Iterator[KubeClient]:
    for crd in CRDS:
        cluster.ensure_crd(copy.deepcopy(crd))
    install_crds(cluster, corpus, ("scheduling.x-k8s.io_podgroups.yaml",))
    client = client_for(cluster)
    wait_served(
        client,
        [(GROUP, "v1", "TrainRun"), (GROUP, "v1", "RunTemplate"), (DENIED_GROUP, "v1", "RunTemplate")],
    )
    yield client
    client.close()


@pytest.fixture
def templates(kube: KubeClient) -> Iterator[Callable[..., dict[str, Any]]]:
    made: list[tuple[str, str]] = []

    def make(name: str, nodes: int, *, group: str = GROUP) -> dict[str, Any]:
        made.append((group, name))
        return kube.create(_template(name, nodes, group=group))

    yield make
    for group, name in made:
        with contextlib.suppress(ApiError):  # the test deleted it
            kube.delete(kube.discovery.for_gvk(group, "v1", "RunTemplate"), name)


def _definitions(directory: Path, template_group: str = GROUP) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "trainrun.yaml").write_text(yaml.safe_dump(_definition(template_group)))
    return directory


def _view_gpus(server: UiServer, ns: str) -> dict[str, int]:
    with urllib.request.urlopen(f"{server.url}api/workloads?namespace={ns}", timeout=10) as answer:
        items = json.loads(answer.read())["items"]
    return {r["name"]: r["gpus"] for r in items}


def _minimums(kube: KubeClient, ns: str) -> dict[str, int]:
    return {
        o["metadata"]["ownerReferences"][0]["name"]: o["spec"]["minMember"]
        for o in group_objects(kube, "coscheduling", ns)
    }


def test_kli_describe_reads_the_runtime_live(
    cluster: KubeHTTP,
    kube: KubeClient,
    ns: str,
    tmp_path: Path,
    templates: Callable[..., dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    suffix = uuid.uuid4().hex[:6]
    templates(f"big-{suffix}", 3)
    kube.create(_run("run1", f"big-{suffix}"), namespace=ns)
    monkeypatch.setenv("KARTA_DEFINITIONS", str(_definitions(tmp_path / "defs")))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    capsys.readouterr()
    code = main(
        ["describe", "trainrun/run1", "-n", ns, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = yaml.safe_load(out)
    assert doc["resources"]["gpus"] == 24, out  # 3 nodes of 8 GPUs, from the runtime
    assert doc["components"][0]["replicas"]["desired"] == 3, out
    assert doc["phases"] == ["Running"], out  # "$runtime != null"
    # The gang the runtime implies, through the same live resolution.
    capsys.readouterr()
    code = main(
        [
            "gang",
            "trainrun/run1",
            "-n",
            ns,
            "--kubeconfig",
            str(cluster.kubeconfig),
            "--backend",
            "coscheduling",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "minMember: 3" in out, out
    # A runtime that is not there: null, said on stderr, never an error.
    kube.create(_run("run2", f"gone-{suffix}"), namespace=ns)
    code = main(["describe", "trainrun/run2", "-n", ns, "--kubeconfig", str(cluster.kubeconfig)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"RunTemplate/gone-{suffix} not found" in err, err


def test_controller_renders_the_gang_from_the_runtime(
    cluster: KubeHTTP, kube: KubeClient, ns: str, tmp_path: Path, templates: Callable[..., dict[str, Any]]
) -> None:
    suffix = uuid.uuid4().hex[:6]
    big, small = f"big-{suffix}", f"small-{suffix}"
    templates(big, 3)
    templates(small, 2)
    with running_controller(
        cluster,
        backend="coscheduling",
        namespace=ns,
        definitions_dir=_definitions(tmp_path / "d"),
        ui=True,
        ui_bind_address="127.0.0.1:0",
    ) as ctl:
        for name, template in (("a", big), ("b", big), ("c", small)):
            kube.create(_run(name, template), namespace=ns)
        eventually(lambda: _minimums(kube, ns) == {"a": 3, "b": 3, "c": 2}, what="gangs from the runtimes")
        server = ctl.parts["ui-server"]
        assert isinstance(server, UiServer)
        eventually(lambda: _view_gpus(server, ns) == {"a": 24, "b": 24, "c": 16}, what="the web view's GPUs")
        # Editing the runtime's node count re-renders every TrainRun that uses it.
        rtype = kube.discovery.for_gvk(GROUP, "v1", "RunTemplate")
        started = time.monotonic()
        kube.patch(rtype, big, {"spec": {"nodes": 5}})
        eventually(lambda: _minimums(kube, ns) == {"a": 5, "b": 5, "c": 2}, what="gangs after the edit")
        print(f"\nruntime edit -> both gangs re-rendered in {time.monotonic() - started:.2f}s")
        # The web view's rows follow the runtime too (its shared cache's index marks them).
        eventually(
            lambda: _view_gpus(server, ns) == {"a": 40, "b": 40, "c": 16}, what="the view after the edit"
        )
        # Deleting the runtime: a clear event, and the gang follows the definition's null case.
        kube.delete(rtype, big)
        eventually(lambda: _minimums(kube, ns) == {"a": 1, "b": 1, "c": 2}, what="gangs after the deletion")
        eventually(lambda: events_for(kube, ns, "a", "ReferenceNotFound"), what="ReferenceNotFound event")
        (event, *_) = events_for(kube, ns, "a", "ReferenceNotFound")
        assert f"RunTemplate/{big} not found" in event["message"], event["message"]
        # The runtime back: the gang with it.
        templates(big, 4)
        eventually(lambda: _minimums(kube, ns) == {"a": 4, "b": 4, "c": 2}, what="gangs after re-creation")


def _grant_all_but(cluster: KubeHTTP, user: str, denied: str) -> None:
    """A ClusterRole for ``user`` with every verb on every group the API server serves, but
    ``denied`` (RBAC has no deny: the groups are listed; other tests of the session install CRDs
    of covered kinds, and a covered kind the controller may not read keeps it unready)."""
    served = ok(cluster.get("/apis"))["groups"]
    groups = ["", *sorted({g["name"] for g in served} - {denied})]
    assert denied not in groups
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": user},
        "rules": [{"apiGroups": groups, "resources": ["*"], "verbs": ["*"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": user},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": user},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    for path, body in (
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles", role),
        ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding),
    ):
        answer = cluster.post(path, body)
        assert answer.status in (201, 409), answer.body


def test_a_kind_the_controller_may_not_read_is_reported(
    cluster: KubeHTTP,
    kube: KubeClient,
    ns: str,
    tmp_path: Path,
    templates: Callable[..., dict[str, Any]],
) -> None:
    user = f"karta-refs-{uuid.uuid4().hex[:6]}"
    _grant_all_but(cluster, user, DENIED_GROUP)
    suffix = uuid.uuid4().hex[:6]
    templates(f"big-{suffix}", 3, group=DENIED_GROUP)
    directory = _definitions(tmp_path / "d", DENIED_GROUP)
    with running_controller(
        cluster, backend="coscheduling", namespace=ns, definitions_dir=directory, as_user=user
    ) as ctl:
        kube.create(_run("a", f"big-{suffix}"), namespace=ns)
        eventually(lambda: events_for(kube, ns, "a", "GangRenderFailed"), what="GangRenderFailed event")
        (event, *_) = events_for(kube, ns, "a", "GangRenderFailed")
        assert (
            f"reference 'runtime' (RunTemplate {DENIED_GROUP}/v1): reading is forbidden" in event["message"]
        ), event["message"]
        assert _minimums(kube, ns) == {}  # nothing written from a reference it could not read
        assert ctl.manager.ready()[0]


def test_kli_warns_of_a_reference_it_may_not_read(
    cluster: KubeHTTP,
    kube: KubeClient,
    ns: str,
    tmp_path: Path,
    templates: Callable[..., dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Live ``kli describe`` as a user who may not read the referenced kind: the workload is
    described (the reference bound null) and a warning names the reference and the kind."""
    user = f"karta-refs-kli-{uuid.uuid4().hex[:6]}"
    _grant_all_but(cluster, user, DENIED_GROUP)
    suffix = uuid.uuid4().hex[:6]
    templates(f"big-{suffix}", 3, group=DENIED_GROUP)
    kube.create(_run("run1", f"big-{suffix}"), namespace=ns)
    monkeypatch.setenv("KARTA_DEFINITIONS", str(_definitions(tmp_path / "defs", DENIED_GROUP)))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    capsys.readouterr()
    code = main(
        [
            "describe",
            "trainrun/run1",
            "-n",
            ns,
            "--kubeconfig",
            str(cluster.kubeconfig),
            "--as",
            user,
            "-o",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert (
        f"warning: TrainRun/run1: reference 'runtime' (RunTemplate {DENIED_GROUP}/v1): reading is forbidden"
        in err
    ), err
    assert yaml.safe_load(out)["phases"] == ["Undefined"], out  # "$runtime != null" is false: not Running
