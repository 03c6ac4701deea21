"""``karta.kube.fetch_references`` / ``resolve_live`` (extension E3, live ``kli`` and the web
view): a GET per lookup, one bounded LIST per list, a 404 a note (null), a 403 ``forbidden`` and
any other failure ``error``: nothing is silently null."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from karta import kube
from karta.errors import ApiError, ReferenceLimitError, UnknownResourceTypeError
from karta.jq import Evaluator
from karta.kube.client import KubeClient, ObjectList
from karta.kube.resources import ResourceType
from karta.model import load_karta
from karta.references import ReferenceLimits

HERE = Path(__file__).resolve().parents[1] / "cli" / "references"
TEMPLATES = ResourceType("example.com", "v1", "RunTemplate", "runtemplates")
CONFIGMAPS = ResourceType("", "v1", "ConfigMap", "configmaps")
REFS = list(yaml.safe_load_all((HERE / "refs.yaml").read_text()))
WORKLOAD = yaml.safe_load((HERE / "workload.yaml").read_text())
loaded = load_karta(yaml.safe_load((HERE / "definition.yaml").read_text()), strict=True)
assert loaded.karta is not None
KARTA = loaded.karta


class _Discovery:
    served = (TEMPLATES, CONFIGMAPS)

    def for_gvk(self, group: str, version: str, kind: str) -> ResourceType:
        for r in self.served:
            if r.gvk == (group, version, kind):
                return r
        raise UnknownResourceTypeError(f"the server doesn't serve kind {kind} in {group}/{version}")


class _Client:
    def __init__(self, *, get_error: ApiError | None = None, list_error: ApiError | None = None) -> None:
        self.discovery = _Discovery()
        self.get_error = get_error
        self.list_error = list_error
        self.calls: list[tuple[str, str, Any]] = []

    def get(self, rtype: ResourceType, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append(("get", rtype.kind, (namespace, name)))
        if self.get_error is not None:
            raise self.get_error
        for o in REFS:
            if (
                o["kind"] == rtype.kind
                and o["metadata"]["name"] == name
                and o["metadata"]["namespace"] == namespace
            ):
                return dict(o)
        raise ApiError("not found", status=404)

    def iter_pages(self, rtype: ResourceType, **how: Any) -> Iterator[ObjectList]:
        self.calls.append(("list", rtype.kind, how))
        if self.list_error is not None:
            raise self.list_error
        items = [
            o for o in REFS if o["kind"] == rtype.kind and o["metadata"]["namespace"] == how["namespace"]
        ]
        yield ObjectList(items[: how["chunk_size"]], "1")


def _resolve(client: _Client, obj: dict[str, Any] = WORKLOAD, **kw: Any) -> Any:
    return kube.resolve_live(cast(KubeClient, client), KARTA, obj, Evaluator(), **kw)


def test_a_get_per_lookup_and_one_bounded_list_per_list() -> None:
    client = _Client()
    resolution = _resolve(client)
    assert not resolution.problems
    assert resolution.bindings["runtime"]["spec"]["nodes"] == 3
    assert [c["metadata"]["name"] for c in resolution.bindings["configs"]] == ["c1"]
    assert client.calls[0] == ("get", "RunTemplate", ("team", "big"))
    kind, how = client.calls[1][1], client.calls[1][2]
    assert kind == "ConfigMap"
    assert how["label_selector"] == "example.com/run=run1,tier=trainer"
    assert how["chunk_size"] == 1001 and how["namespace"] == "team"


def test_missing_is_null_with_a_note() -> None:
    obj = {**WORKLOAD, "spec": {"templateRef": {"name": "gone"}}}
    resolution = _resolve(_Client(), obj)
    assert resolution.bindings["runtime"] is None
    assert [p.kind for p in resolution.problems] == ["note"]
    assert "RunTemplate/gone not found in namespace team" in resolution.problems[0].message


def test_forbidden_is_reported_naming_the_reference_and_kind() -> None:
    denied = ApiError('runtemplates.example.com "big" is forbidden: User "u" cannot get', status=403)
    resolution = _resolve(_Client(get_error=denied))
    assert resolution.bindings["runtime"] is None
    [problem] = resolution.errors
    assert problem.kind == "forbidden"
    assert problem.message.startswith(
        "reference 'runtime' (RunTemplate example.com/v1): reading is forbidden"
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            ApiError("etcd is down", status=500),
            "reading ConfigMap (example.com/run=run1,tier=trainer): etcd is down",
        ),
    ],
)
def test_other_failures_are_errors(error: ApiError, expected: str) -> None:
    resolution = _resolve(_Client(list_error=error))
    assert resolution.bindings["configs"] == []
    assert [p.kind for p in resolution.errors] == ["error"]
    assert expected in resolution.errors[0].message


def test_a_kind_not_served_is_an_error() -> None:
    client = _Client()
    client.discovery.served = (CONFIGMAPS,)
    resolution = _resolve(client)
    assert [(p.reference, p.kind) for p in resolution.errors] == [("runtime", "error")]
    assert "doesn't serve kind RunTemplate" in resolution.errors[0].message


def test_a_list_over_the_limit_reads_one_page_and_raises() -> None:
    many = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}", "namespace": "team"}}
        for i in range(5)
    ]
    client = _Client()
    REFS.extend(many)
    try:
        with pytest.raises(ReferenceLimitError, match="matches 3 objects; at most 2"):
            _resolve(client, limits=ReferenceLimits(list_objects=2))
    finally:
        del REFS[-5:]
    assert [c[2]["chunk_size"] for c in client.calls if c[0] == "list"] == [3]


def test_no_references_no_read() -> None:
    client = _Client()
    plain = load_karta(
        {
            "apiVersion": "run.ai/v1alpha1",
            "kind": "Karta",
            "metadata": {"name": "plain"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "r",
                        "kind": {"group": "example.com", "version": "v1", "kind": "TrainRun"},
                    }
                }
            },
        },
        strict=True,
    ).karta
    assert plain is not None
    resolution = kube.resolve_live(cast(KubeClient, client), plain, WORKLOAD, Evaluator())
    assert resolution.bindings == {} and client.calls == []


def test_a_run_reads_each_referenced_object_once() -> None:
    """``kli get -A``: many workloads naming the same runtime read it once (``memo``), each
    binding under its own reference's name."""
    client = _Client()
    memo: dict[Any, Any] = {}
    for _ in range(3):
        resolution = _resolve(client, memo=memo)
        assert resolution.bindings["runtime"]["spec"]["nodes"] == 3
    assert [c[0] for c in client.calls] == ["get", "list"]
