"""The gang-scheduling scope: the whole decision table, the webhook's namespace selector, and the
report kli (which does not know the controller's mode) and the web view show."""

from __future__ import annotations

from typing import Any

import pytest

from karta.gang import SCOPE_LABEL, gang_scope, namespace_selector, scope_report

L = SCOPE_LABEL


def _in(mode: str, ns: str | None, wl: str | None, namespace: str = "team") -> bool:
    return gang_scope(
        mode=mode,
        namespace=namespace,
        namespace_labels={L: ns} if ns is not None else {},
        workload_labels={L: wl} if wl is not None else None,
    ).in_scope


# (namespace label, workload label) -> (opt-in, all)
TABLE = {
    (None, None): (False, True),
    (None, "enabled"): (False, True),
    (None, "disabled"): (False, False),
    ("enabled", None): (True, True),
    ("enabled", "enabled"): (True, True),
    ("enabled", "disabled"): (False, False),
    ("opt-in", None): (False, False),
    ("opt-in", "enabled"): (True, True),
    ("opt-in", "disabled"): (False, False),
    ("disabled", None): (False, False),
    ("disabled", "enabled"): (False, False),
    ("disabled", "disabled"): (False, False),
    ("yes", None): (False, True),  # an unknown namespace value is no label
    ("enabled", "true"): (True, True),  # an unknown workload value is no label
    ("opt-in", "on"): (False, False),
}


@pytest.mark.parametrize(("labels", "expected"), TABLE.items(), ids=[f"ns={n},wl={w}" for n, w in TABLE])
def test_scope_table(labels: tuple[str | None, str | None], expected: tuple[bool, bool]) -> None:
    ns, wl = labels
    assert (_in("opt-in", ns, wl), _in("all", ns, wl)) == expected


@pytest.mark.parametrize("mode", ["opt-in", "all", "bogus"])
def test_never_kube_system_nor_excluded(mode: str) -> None:
    assert not _in(mode, "enabled", "enabled", namespace="kube-system")
    decision = gang_scope(
        mode=mode, namespace="karta", namespace_labels={L: "enabled"}, workload_labels={}, excluded={"karta"}
    )
    assert not decision.in_scope and "never gang-scheduled" in decision.reason


def test_unknown_mode_is_opt_in() -> None:
    assert not _in("bogus", None, None)
    assert _in("bogus", "enabled", None)


def test_reasons_name_the_label() -> None:
    d = gang_scope(mode="opt-in", namespace="t", namespace_labels={}, workload_labels={L: "enabled"})
    assert f"{L}=enabled" in d.reason and "needs it" in d.reason
    d = gang_scope(
        mode="opt-in", namespace="t", namespace_labels={L: "enabled"}, workload_labels={L: "disabled"}
    )
    assert d.reason == f"the workload is labelled {L}=disabled"


def test_hostile_labels() -> None:
    hostile: tuple[object, ...] = (None, [], "x", {L: 3}, {L: None})
    for labels in hostile:
        d = gang_scope(mode="all", namespace="t", namespace_labels=labels, workload_labels=labels)  # type: ignore[arg-type]
        assert d.in_scope


def test_selector_follows_the_namespace_scope() -> None:
    assert namespace_selector("opt-in", excluded=["karta"]) == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["karta", "kube-system"]},
            {"key": L, "operator": "In", "values": ["enabled", "opt-in"]},
        ]
    }
    assert namespace_selector("all")["matchExpressions"] == [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]},
        {"key": L, "operator": "NotIn", "values": ["disabled"]},
    ]


def _selected(selector: dict[str, Any], namespace: str, labels: dict[str, str]) -> bool:
    labels = {**labels, "kubernetes.io/metadata.name": namespace}
    for e in selector["matchExpressions"]:
        present = e["key"] in labels and labels[e["key"]] in e["values"]
        if present != (e["operator"] == "In"):
            return False
    return True


@pytest.mark.parametrize("mode", ["opt-in", "all"])
@pytest.mark.parametrize("ns", [None, "enabled", "opt-in", "disabled", "other"])
def test_selector_reaches_every_namespace_where_a_workload_can_be_in_scope(mode: str, ns: str | None) -> None:
    """No workload in scope whose pods the webhook is not called for, and no namespace called for
    where nothing can be in scope."""
    labels = {L: ns} if ns is not None else {}
    can = any(_in(mode, ns, wl) for wl in (None, "enabled", "disabled"))
    assert _selected(namespace_selector(mode), "team", labels) == can


def test_report_without_mode_says_what_the_labels_say() -> None:
    assert scope_report(mode=None, namespace="t", namespace_labels={L: "enabled"}, workload_labels={}) == {
        "inScope": True,
        "reason": f"namespace t is labelled {L}=enabled",
    }
    split = scope_report(mode=None, namespace="t", namespace_labels={}, workload_labels={})
    assert split["inScope"] is None
    assert "with --gang-scope opt-in: outside the scope" in split["reason"]
    assert "with --gang-scope all: in the scope" in split["reason"]
    known = scope_report(mode="all", namespace="t", namespace_labels={}, workload_labels={})
    assert known == {
        "mode": "all",
        "inScope": True,
        "reason": "the scope is all and namespace t does not opt out",
    }
