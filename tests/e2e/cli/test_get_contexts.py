"""``kli get`` on several clusters (issue 14 item 4) against two real control planes: the session's
``cluster`` (context ``east``) and ``controllers_cluster`` (context ``west``), merged into one
kubeconfig with a third context ``dead`` at a closed port.

Each live cluster serves a Widget CRD of this module and a cluster Karta of its own for it (a
different definition in each, so that a row's phase and ORIGIN show which cluster's definitions
resolved it), and Widgets in one namespace (the contexts' namespace). Checked: the CLUSTER column
and the row order (context by context), the warning naming the dead context (exit 0), ``-o json``
(``cluster`` per item, ``clusters`` per context), ``--all-contexts``, ``-A``, ``--sort-by``,
``-o name``, ``-o custom-columns``, ``--no-headers``, NAMEs found in one cluster or none, a type
no cluster covers (exit 4), every cluster dead (exit 1), and beside a live one a context whose
user may not list Widgets (403), one whose token is rejected (401) and a server that never
answers (bounded by ``--request-timeout``): warnings, exit 0.
"""

from __future__ import annotations

import json
import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.kube import ConfigOverrides, KubeClient

from ..kube.conftest import wait_discovered
from ..kubehttp import REVIEWS, KubeHTTP, access_review, closed_port, merged_kubeconfig, ok, wait_allowed
from .conftest import Result, ensure_karta_crd
from .getsupport import create_in_one_second

GROUP = "multi.karta.test"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def _karta(name: str, mappings: dict[str, str]) -> dict[str, Any]:
    """A cluster Karta for Widgets: each phase when ``.status.state`` is the given word."""
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "widget",
                    "kind": {"group": GROUP, "version": "v1", "kind": "Widget"},
                    "statusDefinition": {
                        "statusMappings": {
                            phase: [
                                {
                                    "byExpression": {
                                        "expression": f'.status.state == "{word}"',
                                        "expectedResult": "true",
                                    }
                                }
                            ]
                            for phase, word in mappings.items()
                        }
                    },
                }
            }
        },
    }


# east knows "Done" as nothing; west's definition maps it to completed
KARTAS = {
    "east": _karta("east-widgets", {"running": "Running", "failed": "Failed"}),
    "west": _karta("west-widgets", {"running": "Running", "completed": "Done"}),
}
WIDGETS = {
    "east": [("alpha", "Running"), ("beta", "Failed"), ("both", "Done")],
    "west": [("both", "Done"), ("gamma", "Running")],
}


@dataclass
class Clusters:
    kubeconfig: Path
    namespace: str


@pytest.fixture(scope="module")
def clusters(
    cluster: KubeHTTP, controllers_cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Clusters]:
    namespace = f"multi-{uuid.uuid4().hex[:8]}"
    live = {"east": cluster, "west": controllers_cluster}
    for name, kube in live.items():
        ensure_karta_crd(kube)
        kube.ensure_crd(CRD)
        with KubeClient.from_config(ConfigOverrides(kubeconfig=str(kube.kubeconfig))) as client:
            wait_discovered(client, CRD)
            client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
            client.create(KARTAS[name])
            # one creationTimestamp second per cluster: rows are newest first, then by kind and name
            widgets = [
                {
                    "apiVersion": f"{GROUP}/v1",
                    "kind": "Widget",
                    "metadata": {"name": widget, "namespace": namespace},
                    "status": {"state": state},
                }
                for widget, state in WIDGETS[name]
            ]
            create_in_one_second(client, widgets)
    path = merged_kubeconfig(
        tmp_path_factory.mktemp("contexts") / "kubeconfig",
        {name: kube.kubeconfig for name, kube in live.items()},
        namespace=namespace,
        dead_port=closed_port(),
    )
    yield Clusters(path, namespace)
    for name, kube in live.items():
        kube.delete(f"/apis/run.ai/v1alpha1/kartas/{KARTAS[name]['metadata']['name']}")
        kube.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD['metadata']['name']}")
        kube.delete(f"/api/v1/namespaces/{namespace}")


@pytest.fixture
def get(kli: Callable[..., Result], clusters: Clusters) -> Callable[..., Result]:
    def run(*args: str) -> Result:
        return kli("get", *args, "--kubeconfig", str(clusters.kubeconfig))

    return run


def _ages(text: str) -> str:
    """The AGE column's cells as ``<age>`` (the header gives its place)."""
    lines = text.splitlines()
    header = lines[0]
    begin = header.index("AGE")
    following = re.search(r"\S", header[begin + 3 :])
    end = begin + 3 + following.start() if following else None
    out = [header]
    for line in lines[1:]:
        rest = line[end:] if end is not None else ""
        out.append((line[:begin] + "<age>".ljust((end or begin + 5) - begin) + rest).rstrip())
    return "\n".join(out) + "\n"


def _warnings(err: str) -> list[str]:
    """Our stderr lines (other tests' leftover Kartas may add warnings of their own)."""
    return [line for line in err.splitlines() if line.startswith(("error:", 'warning: context "dead"'))]


DEAD = re.compile(r'^warning: context "dead": cannot reach https://127\.0\.0\.1:\d+: .*Connection refused$')


def test_two_live_clusters_and_a_dead_one(get: Callable[..., Result]) -> None:
    result = get("widgets", "--context", "east", "--context", "west", "--context", "dead", "-o", "wide")
    assert result.code == 0, result.err
    assert _ages(result.out) == (
        "CLUSTER   NAME    PHASE       GPU   COMPONENTS   AGE   GANG     ORIGIN\n"
        "east      alpha   Running     0     <none>       <age> <none>   cluster\n"
        "east      beta    Failed      0     <none>       <age> <none>   cluster\n"
        "east      both    Undefined   0     <none>       <age> <none>   cluster\n"
        "west      both    Completed   0     <none>       <age> <none>   cluster\n"
        "west      gamma   Running     0     <none>       <age> <none>   cluster\n"
    )
    (dead,) = _warnings(result.err)
    assert DEAD.match(dead), dead


def test_json_has_the_cluster_of_every_item_and_the_state_of_every_context(
    get: Callable[..., Result], clusters: Clusters
) -> None:
    result = get("widgets", "--all-contexts", "-o", "json", "--sort-by", ".name")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    # each cluster's rows resolved through that cluster's own Karta
    assert [
        (i["cluster"], i["name"], i["namespace"], i["phases"], i["definition"]) for i in data["items"]
    ] == [
        ("east", "alpha", clusters.namespace, ["Running"], "east-widgets"),
        ("east", "beta", clusters.namespace, ["Failed"], "east-widgets"),
        ("east", "both", clusters.namespace, ["Undefined"], "east-widgets"),
        ("west", "both", clusters.namespace, ["Completed"], "west-widgets"),
        ("west", "gamma", clusters.namespace, ["Running"], "west-widgets"),
    ]
    assert list(data["items"][0])[:2] == ["cluster", "name"]
    assert data["count"] == 5
    dead, east, west = data["clusters"]  # --all-contexts: sorted by name
    assert (east["name"], east["count"], west["name"], west["count"]) == ("east", 3, "west", 2)
    assert east["server"].startswith("https://127.0.0.1:") and "error" not in east
    assert dead["name"] == "dead" and "Connection refused" in dead["error"] and "count" not in dead
    (warning,) = _warnings(result.err)
    assert DEAD.match(warning)


def test_yaml_and_the_kubectl_printers(get: Callable[..., Result], clusters: Clusters) -> None:
    both = ("--context", "west", "--context", "east")  # the rows follow the contexts' order
    data = yaml.safe_load(get("widgets", *both, "-o", "yaml").out)
    assert [(i["cluster"], i["name"]) for i in data["items"]] == [
        ("west", "both"),
        ("west", "gamma"),
        ("east", "alpha"),
        ("east", "beta"),
        ("east", "both"),
    ]
    names = get("widgets", *both, "-o", "name", "--sort-by", ".name")
    assert names.out.splitlines() == [
        f"widget.{GROUP}/alpha",
        f"widget.{GROUP}/beta",
        f"widget.{GROUP}/both",
        f"widget.{GROUP}/both",
        f"widget.{GROUP}/gamma",
    ]
    columns = get("widgets", *both, "-o", "custom-columns=CLUSTER:.cluster,NAME:.name", "--no-headers")
    assert columns.out.split() == [
        "west",
        "both",
        "west",
        "gamma",
        "east",
        "alpha",
        "east",
        "beta",
        "east",
        "both",
    ]
    plain = get("widgets", *both, "--no-headers", "--phase", "Running")
    assert [line.split()[:3] for line in plain.out.splitlines()] == [
        ["west", "gamma", "Running"],
        ["east", "alpha", "Running"],
    ]
    assert plain.err == "" or not _warnings(plain.err)


def test_all_namespaces(get: Callable[..., Result], clusters: Clusters) -> None:
    result = get("widgets", "--context", "east", "--context", "west", "-A")
    assert result.code == 0, result.err
    header, *rows = result.out.splitlines()
    assert header.split()[:3] == ["CLUSTER", "NAMESPACE", "NAME"]
    ours = [row.split()[:3] for row in rows if row.split()[1] == clusters.namespace]
    assert ours == [
        ["east", clusters.namespace, "alpha"],
        ["east", clusters.namespace, "beta"],
        ["east", clusters.namespace, "both"],
        ["west", clusters.namespace, "both"],
        ["west", clusters.namespace, "gamma"],
    ]


def test_named_workloads_across_clusters(get: Callable[..., Result], clusters: Clusters) -> None:
    found = get("widgets", "gamma", "both", "--context", "east", "--context", "west", "-o", "json")
    assert found.code == 0, found.err  # gamma is only in west: not an error
    assert [(i["cluster"], i["name"]) for i in json.loads(found.out)["items"]] == [
        ("east", "both"),
        ("west", "gamma"),
        ("west", "both"),
    ]
    missing = get(
        "widgets", "alpha", "nowhere", "--context", "east", "--context", "west", "--context", "dead"
    )
    assert missing.code == 3
    assert [line.split()[:2] for line in missing.out.splitlines()[1:]] == [["east", "alpha"]]
    assert missing.err.splitlines()[-1].startswith(f"hint: 'kli get widgets.{GROUP} -n {clusters.namespace}'")
    assert missing.err.splitlines()[-2] == (
        f'error: Widget "nowhere" not found in namespace "{clusters.namespace}" '
        "(in none of the clusters listed: east, west)"
    )


def test_a_type_no_cluster_covers(get: Callable[..., Result]) -> None:
    """ConfigMaps have no definition in either cluster: each says so, and kli exits 4 (the code
    both failed with, as one cluster would)."""
    result = get("configmaps", "--context", "east", "--context", "west")
    assert result.code == 4, result.err
    lines = result.err.splitlines()
    assert 'warning: context "east": no Karta definition covers ConfigMap (v1)' in lines
    assert 'warning: context "west": no Karta definition covers ConfigMap (v1)' in lines
    assert lines[-2] == "error: no cluster could be listed (2 contexts failed: see the warnings)"


def test_every_cluster_dead_exits_1(kli: Callable[..., Result], clusters: Clusters, tmp_path: Path) -> None:
    data = yaml.safe_load(clusters.kubeconfig.read_text())
    data["contexts"].append({"name": "also-dead", "context": {"cluster": "dead", "user": "dead"}})
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(data))
    result = kli("get", "widgets", "--kubeconfig", str(path), "--context", "dead", "--context", "also-dead")
    assert result.code == 1
    assert result.out == ""
    lines = result.err.splitlines()
    assert DEAD.match(lines[0])
    assert lines[1].startswith('warning: context "also-dead": cannot reach')
    assert lines[2] == "error: no cluster could be listed (2 contexts failed: see the warnings)"


@pytest.fixture
def karta_reader(cluster: KubeHTTP) -> Iterator[str]:
    """A user of east who may read the Kartas (so Widgets are covered) but not list Widgets."""
    user = f"reader-{uuid.uuid4().hex[:6]}"
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": user},
        "rules": [{"apiGroups": ["run.ai"], "resources": ["kartas"], "verbs": ["get", "list"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": user},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": user},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    assert cluster.post(f"{rbac}/clusterroles", role).status == 201
    assert cluster.post(f"{rbac}/clusterrolebindings", binding).status == 201
    review = access_review(user, verb="list", group="run.ai", resource="kartas")
    wait_allowed(lambda body: ok(cluster.post(REVIEWS, body)), review)
    yield user
    cluster.delete(f"{rbac}/clusterrolebindings/{user}")
    cluster.delete(f"{rbac}/clusterroles/{user}")


def test_forbidden_rejected_and_silent_clusters_are_warnings(
    kli: Callable[..., Result], clusters: Clusters, karta_reader: str, tmp_path: Path
) -> None:
    """Beside east: east as a user who may not list Widgets (403), west with a token it rejects
    (401), and a server that accepts connections and never answers (bounded by
    --request-timeout)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    data = yaml.safe_load(clusters.kubeconfig.read_text())
    east_user = next(u for u in data["users"] if u["name"] == "east")["user"]
    data["users"] += [
        {"name": "nobody", "user": {**east_user, "as": karta_reader}},
        {"name": "bad-token", "user": {"token": "not-a-token"}},
    ]
    data["clusters"].append(
        {"name": "silent", "cluster": {"server": f"http://127.0.0.1:{silent.getsockname()[1]}"}}
    )
    ns = clusters.namespace
    data["contexts"] += [
        {"name": "east-nobody", "context": {"cluster": "east", "user": "nobody", "namespace": ns}},
        {"name": "west-bad-token", "context": {"cluster": "west", "user": "bad-token", "namespace": ns}},
        {"name": "silent", "context": {"cluster": "silent", "user": "dead", "namespace": ns}},
    ]
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(data))
    contexts = ("east", "east-nobody", "west-bad-token", "silent")
    started = time.monotonic()
    try:
        result = kli(
            "get",
            "widgets",
            "--kubeconfig",
            str(path),
            *(arg for name in contexts for arg in ("--context", name)),
            "--request-timeout",
            "2s",
        )
    finally:
        silent.close()
    assert time.monotonic() - started < 30
    assert result.code == 0, result.err
    assert [line.split()[:2] for line in result.out.splitlines()] == [
        ["CLUSTER", "NAME"],
        ["east", "alpha"],
        ["east", "beta"],
        ["east", "both"],
    ]
    lines = result.err.splitlines()
    forbidden = [line for line in lines if line.startswith('warning: context "east-nobody": ')]
    assert forbidden[-1].startswith(
        f'warning: context "east-nobody": listing widgets.multi.karta.test: user "{karta_reader}" '
        "(impersonated) is not allowed to do this (403 Forbidden)"
    ), forbidden
    (rejected,) = [line for line in lines if line.startswith('warning: context "west-bad-token": ')]
    assert "the cluster rejected the credentials of the bearer token" in rejected
    assert "(401 Unauthorized)" in rejected
    (timed_out,) = [line for line in lines if line.startswith('warning: context "silent": ')]
    assert timed_out.startswith('warning: context "silent": cannot reach http://127.0.0.1:')
    assert timed_out.endswith("timed out")
    assert not any(line.startswith("error:") for line in lines)


def test_nothing_found_says_in_how_many_clusters(get: Callable[..., Result], clusters: Clusters) -> None:
    both = ("--context", "east", "--context", "west", "--context", "dead", "--phase", "Suspended")
    none = get("widgets", *both)
    assert (none.code, none.out) == (0, "")
    assert none.err.splitlines()[0] == "No workloads found in 2 clusters (each context's namespace)."
    other = get("widgets", *both, "-n", "default")
    assert other.err.splitlines()[0] == "No workloads found in namespace default of 2 clusters."
    everywhere = get("widgets", *both, "-A", "-o", "json")
    assert json.loads(everywhere.out)["items"] == []
