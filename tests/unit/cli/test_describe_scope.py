"""``kli describe`` (live) and the web view's workload page say whether karta-controller manages
a workload's gangs (issue 22 item 1): ``gangScope`` in the report
(:func:`karta.report.gang_scope_report`, over :func:`karta.gang.scope.scope_report`) and the
``Gang scope:`` line, from the labels of the workload and of its namespace as read live."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from karta.cli.views.describe import render_table
from karta.definitions import DefinitionStore
from karta.gang import SCOPE_LABEL, gang_format
from karta.report import ScopeInput, describe_file, describe_live

GPU = ("nvidia.com/gpu",)
NOW = dt.datetime(2025, 1, 1, 12, 12, tzinfo=dt.UTC)
L = SCOPE_LABEL


@pytest.fixture(scope="module")
def store() -> DefinitionStore:
    return DefinitionStore.offline(user_directory=None, include_catalog=True)


def job(labels: dict[str, str] | None = None, namespace: str = "team") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "train", "namespace": namespace, "uid": "u-1"}
    if labels is not None:
        meta["labels"] = labels
    meta["creationTimestamp"] = "2025-01-01T12:00:00Z"
    template = {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {"parallelism": 2, "completions": 2, "template": template},
    }


def deployment() -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "main", "image": "nginx"}]}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "team", "uid": "u-2"},
        "spec": {"replicas": 1, "template": template},
    }


def described(
    store: DefinitionStore, obj: dict[str, Any], scope: ScopeInput | None
) -> tuple[dict[str, Any], str]:
    (chosen, *_) = store.resolve(obj["apiVersion"], obj["kind"])
    out = describe_live(chosen, obj, [], [], events_read=True, warnings=[], gpu_resources=GPU, scope=scope)
    view: dict[str, Any] = dict(out.report)
    return view, render_table(out.report, out.built.rows, now=NOW)


def scope_line(text: str) -> str:
    (line,) = [x for x in text.splitlines() if x.startswith("Gang scope:")]
    return line


def test_outside_when_the_namespace_is_not_opted_in_and_the_mode_is_known(store: DefinitionStore) -> None:
    view, text = described(store, job({L: "enabled"}), ScopeInput({}, mode="opt-in"))
    assert view["gangScope"]["inScope"] is False
    assert view["gangScope"]["mode"] == "opt-in"
    assert scope_line(text) == (
        f"Gang scope: outside (namespace team is not labelled {L}=enabled or opt-in and the scope is "
        f"opt-in (the workload's {L}=enabled needs it))"
    )
    assert text.index("Gang:") < text.index("Gang scope:") < text.index("Resources:")


def test_in_when_the_namespace_is_enabled(store: DefinitionStore) -> None:
    view, text = described(store, job(), ScopeInput({L: "enabled"}))
    assert view["gangScope"] == {"inScope": True, "reason": f"namespace team is labelled {L}=enabled"}
    assert scope_line(text) == f"Gang scope: in (namespace team is labelled {L}=enabled)"


def test_the_workload_opts_out(store: DefinitionStore) -> None:
    view, text = described(store, job({L: "disabled"}), ScopeInput({L: "enabled"}))
    assert view["gangScope"] == {"inScope": False, "reason": f"the workload is labelled {L}=disabled"}
    assert scope_line(text).startswith("Gang scope: outside (")


def test_kli_without_the_mode_says_what_each_mode_decides(store: DefinitionStore) -> None:
    view, text = described(store, job(), ScopeInput({}))
    assert view["gangScope"]["inScope"] is None
    assert "mode" not in view["gangScope"]
    line = scope_line(text)
    assert line.startswith("Gang scope: undecided (with --gang-scope opt-in: outside the scope (")
    assert "with --gang-scope all: in the scope (" in line


def test_excluded_namespaces_of_the_controller(store: DefinitionStore) -> None:
    view, _ = described(store, job(), ScopeInput({L: "enabled"}, mode="all", excluded=("team",)))
    assert view["gangScope"] == {
        "mode": "all",
        "inScope": False,
        "reason": "namespace team is never gang-scheduled by karta",
    }
    view, _ = described(store, job(namespace="kube-system"), ScopeInput({L: "enabled"}))
    assert view["gangScope"]["inScope"] is False


def test_labels_that_cannot_be_read(store: DefinitionStore) -> None:
    unread = "cannot get namespaces/team (forbidden)"
    view, text = described(store, job(), ScopeInput(None, unread=unread))
    assert view["gangScope"] == {
        "inScope": None,
        "reason": f"the labels of namespace team are not known: {unread}",
    }
    assert scope_line(text) == f"Gang scope: undecided (the labels of namespace team are not known: {unread})"


@pytest.mark.parametrize("labels", [{L: ["enabled"]}, {L: {"x": 1}}, {L: 7}, {"other": "enabled"}])
def test_hostile_labels_read_as_no_label(store: DefinitionStore, labels: dict[str, Any]) -> None:
    view, _ = described(store, job(labels), ScopeInput(labels, mode="opt-in"))  # type: ignore[arg-type]
    assert view["gangScope"]["inScope"] is False


def test_nothing_without_gang_instructions_without_scope_or_from_a_file(store: DefinitionStore) -> None:
    view, text = described(store, deployment(), ScopeInput({L: "enabled"}))
    (chosen, *_) = store.resolve("apps/v1", "Deployment")
    assert gang_format(chosen.karta) is None  # the catalog's Deployment has no gang instructions
    assert "gangScope" not in view
    assert "Gang scope:" not in text
    view, text = described(store, job(), None)
    assert "gangScope" not in view
    assert "Gang scope:" not in text
    (chosen, *_) = store.resolve("batch/v1", "Job")
    assert "gangScope" not in describe_file(chosen, job(), gpu_resources=GPU).report
