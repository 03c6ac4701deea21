"""Type tokens → resources without a cluster: aggregated and legacy discovery documents."""

from __future__ import annotations

from typing import Any

import pytest

from karta.errors import ApiError, UnknownResourceTypeError
from karta.kube import Discovery, ResourceType
from karta.kube.discovery import AGGREGATED_ACCEPT

AGG = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _res(
    plural: str, kind: str, *, group: str, version: str, namespaced: bool = True, short: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {
        "resource": plural,
        "responseKind": {"group": group, "version": version, "kind": kind},
        "scope": "Namespaced" if namespaced else "Cluster",
        "singularResource": kind.lower(),
        "shortNames": list(short),
        "verbs": ["get", "list", "watch", "create"],
        "subresources": [{"subresource": "status"}],
    }


def _group(name: str, versions: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "versions": [{"version": v, "resources": rs} for v, rs in versions.items()],
    }


CORE = {
    "kind": "APIGroupDiscoveryList",
    "items": [
        _group(
            "",
            {
                "v1": [
                    _res("pods", "Pod", group="", version="v1", short=("po",)),
                    _res("configmaps", "ConfigMap", group="", version="v1", short=("cm",)),
                    _res("namespaces", "Namespace", group="", version="v1", namespaced=False, short=("ns",)),
                    _res("events", "Event", group="", version="v1", short=("ev",)),
                ]
            },
        )
    ],
}
APIS = {
    "kind": "APIGroupDiscoveryList",
    "items": [
        _group(
            "apps", {"v1": [_res("deployments", "Deployment", group="apps", version="v1", short=("deploy",))]}
        ),
        _group(
            "events.k8s.io",
            {"v1": [_res("events", "Event", group="events.k8s.io", version="v1", short=("ev",))]},
        ),
        _group(
            "example.com",
            {
                "v2": [_res("widgets", "Widget", group="example.com", version="v2", short=("wd",))],
                "v1": [_res("widgets", "Widget", group="example.com", version="v1", short=("wd",))],
            },
        ),
        _group("other.io", {"v1": [_res("widgets", "Widget", group="other.io", version="v1")]}),
        _group(
            "run.ai",
            {
                "v1alpha1": [
                    _res(
                        "kartas",
                        "Karta",
                        group="run.ai",
                        version="v1alpha1",
                        namespaced=False,
                        short=("krt",),
                    )
                ]
            },
        ),
    ],
}


class FakeFetch:
    def __init__(self, docs: dict[str, tuple[str, Any]]) -> None:
        self.docs = docs
        self.calls: list[tuple[str, str]] = []

    def __call__(self, path: str, accept: str) -> tuple[str, Any]:
        self.calls.append((path, accept))
        if path not in self.docs:
            raise ApiError("not found", status=404, reason="NotFound")
        return self.docs[path]


@pytest.fixture
def discovery() -> Discovery:
    return Discovery(FakeFetch({"/api": (AGG, CORE), "/apis": (AGG, APIS)}))


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("pods", ("", "v1", "Pod")),
        ("pod", ("", "v1", "Pod")),
        ("po", ("", "v1", "Pod")),
        ("POD", ("", "v1", "Pod")),
        ("Pod", ("", "v1", "Pod")),
        ("deploy", ("apps", "v1", "Deployment")),
        ("deployments.apps", ("apps", "v1", "Deployment")),
        ("deployment.apps", ("apps", "v1", "Deployment")),
        ("Deployment.apps", ("apps", "v1", "Deployment")),
        ("deployments.v1.apps", ("apps", "v1", "Deployment")),
        ("events", ("", "v1", "Event")),  # core group first
        ("events.events.k8s.io", ("events.k8s.io", "v1", "Event")),
        ("widgets", ("example.com", "v2", "Widget")),  # first group in server order, preferred version
        ("wd", ("example.com", "v2", "Widget")),
        ("widgets.example.com", ("example.com", "v2", "Widget")),
        ("widgets.v1.example.com", ("example.com", "v1", "Widget")),
        ("widget.other.io", ("other.io", "v1", "Widget")),
        ("Widget.v1.other.io", ("other.io", "v1", "Widget")),
        ("krt", ("run.ai", "v1alpha1", "Karta")),
        ("kartas.run.ai", ("run.ai", "v1alpha1", "Karta")),
        ("karta.v1alpha1.run.ai", ("run.ai", "v1alpha1", "Karta")),
    ],
)
def test_tokens(discovery: Discovery, token: str, expected: tuple[str, str, str]) -> None:
    assert discovery.resolve(token).gvk == expected


def test_candidates_one_per_group_in_priority_order(discovery: Discovery) -> None:
    assert [r.group for r in discovery.candidates("widgets")] == ["example.com", "other.io"]
    assert [r.group for r in discovery.candidates("ev")] == ["", "events.k8s.io"]


def test_scope_paths_and_names(discovery: Discovery) -> None:
    ns = discovery.resolve("ns")
    assert not ns.namespaced and ns.collection_path("ignored") == "/api/v1/namespaces"
    pods = discovery.resolve("pods")
    assert pods.collection_path("a b") == "/api/v1/namespaces/a%20b/pods"
    assert pods.collection_path(None) == "/api/v1/pods"
    assert pods.object_path("p", "n", "status") == "/api/v1/namespaces/n/pods/p/status"
    krt = discovery.resolve("krt")
    assert krt.object_path("x", "ignored") == "/apis/run.ai/v1alpha1/kartas/x"
    assert (krt.group_resource, krt.token, krt.api_version) == (
        "kartas.run.ai",
        "Karta.v1alpha1.run.ai",
        "run.ai/v1alpha1",
    )


def test_gvk_lookups(discovery: Discovery) -> None:
    assert discovery.for_api_version("apps/v1", "Deployment").plural == "deployments"
    assert discovery.for_api_version("v1", "ConfigMap").plural == "configmaps"
    preferred = discovery.preferred("example.com", "Widget")
    assert preferred is not None and preferred.version == "v2"
    assert discovery.serves("run.ai", "v1alpha1", "Karta")
    assert not discovery.serves("run.ai", "v1", "Karta")
    with pytest.raises(UnknownResourceTypeError, match=r"doesn't serve kind Karta in run\.ai/v1"):
        discovery.for_gvk("run.ai", "v1", "Karta")


def test_unknown_token(discovery: Discovery) -> None:
    for token in ("gadgets", "pods.nope", "deployments.v2.apps", ""):
        with pytest.raises(UnknownResourceTypeError, match="the server doesn't have a resource type"):
            discovery.resolve(token)


def test_cached_and_refetched_after_a_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    fetch = FakeFetch({"/api": (AGG, CORE), "/apis": (AGG, {"kind": "APIGroupDiscoveryList", "items": []})})
    d = Discovery(fetch)
    d.resolve("pods")
    d.resolve("cm")
    assert [p for p, _ in fetch.calls] == ["/api", "/apis"]
    assert fetch.calls[0][1] == AGGREGATED_ACCEPT
    fetch.docs["/apis"] = (AGG, APIS)  # a CRD got installed
    monkeypatch.setattr("karta.kube.discovery.REFRESH_INTERVAL", 0.0)
    assert d.resolve("krt").kind == "Karta"
    assert len(fetch.calls) == 4


WIDGET = {"name": "widgets", "singularName": "widget", "namespaced": False, "kind": "Widget", "verbs": []}


def test_legacy_discovery() -> None:
    fetch = FakeFetch(
        {
            "/api": ("application/json", {"kind": "APIVersions", "versions": ["v1"]}),
            "/api/v1": ("application/json", {"resources": [
                {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                 "verbs": ["list", "watch"], "shortNames": ["po"]},
                {"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]},
            ]}),
            "/apis": ("application/json", {"kind": "APIGroupList", "groups": [
                {"name": "example.com", "versions": [{"groupVersion": "example.com/v1", "version": "v1"},
                                                     {"groupVersion": "example.com/v2", "version": "v2"}],
                 "preferredVersion": {"groupVersion": "example.com/v2", "version": "v2"}},
                {"name": "metrics.k8s.io", "versions": [{"groupVersion": "metrics.k8s.io/v1beta1",
                                                         "version": "v1beta1"}]},
            ]}),
            "/apis/example.com/v1": ("application/json", {"resources": [WIDGET]}),
            "/apis/example.com/v2": ("application/json", {"resources": [WIDGET]}),
            # metrics.k8s.io/v1beta1 answers 404 (an aggregated API that is down): skipped
        }
    )  # fmt: skip
    d = Discovery(fetch)
    assert d.resolve("po").gvk == ("", "v1", "Pod")
    assert [r.plural for r in d.resources() if r.group == ""] == ["pods"]  # no subresources
    widget = d.resolve("widgets")
    assert (widget.version, widget.namespaced) == ("v2", False)


def test_resource_type_defaults() -> None:
    r = ResourceType(group="", version="v1", kind="Pod", plural="pods", verbs=("list",))
    assert r.supports("list") and not r.supports("list", "watch")
    assert r.group_resource == "pods" and r.token == "Pod.v1"
