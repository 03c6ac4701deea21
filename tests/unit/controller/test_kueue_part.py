"""The Kueue part of karta-controller (``--kueue``): the suspend webhook's answers and rules, the
registration entry, the flags and the RBAC (docs/kueue.md section 9). The loop itself runs against
the real Kueue in tests/e2e/controller/test_kueue_controller.py."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import catalog_definitions
from karta.controller.options import Options, parse, to_argv
from karta.controller.parts.kueue.webhook import (
    KUEUE_MANAGED,
    PATH,
    WEBHOOK_NAME,
    KueueSuspend,
    managed,
    managed_condition,
    manages,
    suspend_patch,
    webhook_rules,
)
from karta.controller.rbac import controller_rbac
from karta.controller.registration import webhook_configurations
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.quarantine import Quarantine
from karta.definitions import DefinitionStore
from karta.model import load_karta
from karta.model.gvk import GVK

ROOT = Path(__file__).resolve().parents[3]
STORE = DefinitionStore.load(user_directory=ROOT / "tests" / "no-such-dir")
KARTAS = [d.karta for d in STORE.visible()]


def _job(labels: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    worker = {"replicas": 2, "template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "j", "namespace": "ns", "labels": labels or {}, **meta},
        "spec": {"pytorchReplicaSpecs": {"Worker": worker}},
    }


def _request(
    obj: Any, *, kind: tuple[str, str, str] = ("kubeflow.org", "v1", "PyTorchJob"), op: str = "CREATE"
) -> dict[str, Any]:
    group, version, k = kind
    return {
        "uid": "u",
        "operation": op,
        "kind": {"group": group, "version": version, "kind": k},
        "object": obj,
    }


def _apply(obj: dict[str, Any], patch: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for op in patch:
        assert op["op"] in ("add", "replace") and op["path"].count("/") == 1
        out[op["path"][1:]] = op["value"]
    return out


def test_a_queued_pytorchjob_is_suspended_at_creation() -> None:
    webhook = KueueSuspend(lambda: STORE, native=("batch/job",))
    obj = _job({"kueue.x-k8s.io/queue-name": "team"})
    answer = webhook(_request(obj))
    assert answer.allowed and answer.patch
    assert _apply(obj, answer.patch)["spec"]["runPolicy"]["suspend"] is True


@pytest.mark.parametrize(
    "request_",
    [
        _request(_job()),  # no queue label
        _request(_job({"kueue.x-k8s.io/queue-name": "team"}), op="UPDATE"),
        _request(
            _job(
                {"kueue.x-k8s.io/queue-name": "team"},
                ownerReferences=[
                    {"apiVersion": "v1", "kind": "X", "name": "o", "uid": "1", "controller": True}
                ],
            )
        ),  # not top-level
        _request(
            _job({"kueue.x-k8s.io/queue-name": "team"}), kind=("apps", "v1", "Deployment")
        ),  # ineligible
        _request(_job({"kueue.x-k8s.io/queue-name": "team"}), kind=("batch", "v1", "Job")),  # Kueue's own
        _request("not an object"),
        {"operation": "CREATE", "kind": "PyTorchJob", "object": {"metadata": 5}},
    ],
)
def test_everything_else_is_allowed_unchanged(request_: dict[str, Any]) -> None:
    answer = KueueSuspend(lambda: STORE, native=("batch/job",))(request_)
    assert answer.allowed and not answer.patch


def test_suspend_patch_adds_or_replaces_top_level_fields() -> None:
    assert suspend_patch({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4}) == [
        {"op": "replace", "path": "/b", "value": 3},
        {"op": "add", "path": "/c", "value": 4},
    ]


def test_managed_kinds_are_kueues_external_frameworks() -> None:
    by_kind = {d.karta.root_gvk.kind: d for d in STORE.visible() if d.karta.root_gvk is not None}
    assert managed(by_kind["PyTorchJob"], ("batch/job",))
    assert managed(by_kind["JobSet"], ("batch/job",))
    assert not managed(by_kind["Job"], ("batch/job",))  # left to Kueue's own integration
    assert managed(by_kind["Job"])
    assert not managed(by_kind["Deployment"])  # no suspend actions
    assert not managed(by_kind["TrainJob"])  # its pod template is the runtime's (a referenced object)
    made_up = load_karta(
        yaml.safe_load((ROOT / "tests/definitions/example-com-trainingrun-v1.yaml").read_text())
    )
    assert manages(made_up.karta)


def test_webhook_rules_and_registration() -> None:
    rules = webhook_rules(KARTAS, native=("batch/job",))
    resources = {(r["apiGroups"][0], r["resources"][0]) for r in rules}
    assert ("kubeflow.org", "pytorchjobs") in resources and ("jobset.x-k8s.io", "jobsets") in resources
    assert ("batch", "jobs") not in resources and ("apps", "deployments") not in resources
    assert all(r["operations"] == ["CREATE"] for r in rules)
    served = webhook_rules(KARTAS, plural=lambda gvk: "pytorchjobs" if gvk.kind == "PyTorchJob" else None)
    assert [r["resources"] for r in served] == [["pytorchjobs"]]

    mutating, _ = webhook_configurations(Options(kueue=True), namespace="ns", kueue_rules=rules)
    entry = next(w for w in mutating["webhooks"] if w["name"] == WEBHOOK_NAME)
    assert entry["clientConfig"]["service"]["path"] == PATH
    assert entry["failurePolicy"] == "Fail" and entry["rules"] == rules
    assert entry["objectSelector"] == {
        "matchExpressions": [{"key": "kueue.x-k8s.io/queue-name", "operator": "Exists"}]
    }
    scoped, _ = webhook_configurations(
        Options(kueue=True, namespaces=("b", "a")), namespace="ns", kueue_rules=rules
    )
    (entry,) = [w for w in scoped["webhooks"] if w["name"] == WEBHOOK_NAME]
    assert entry["namespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["a", "b"]}]
    }  # only where the reconciler looks
    without, _ = webhook_configurations(Options(), namespace="ns", kueue_rules=rules)
    assert all(w["name"] != WEBHOOK_NAME for w in without["webhooks"])


def test_flags_round_trip() -> None:
    options, _ = parse(["--kueue", "--kueue-native=batch/job"])
    assert options.kueue and options.kueue_native == ("batch/job",)
    assert parse(to_argv(options))[0] == options
    assert parse([])[0].kueue is False


def test_unknown_native_framework_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(["--kueue-native=batch/nope"])
    assert exit_.value.code == 2
    assert "--kueue-native: unknown Kueue v0.17.0 framework batch/nope" in capsys.readouterr().err


def _allows(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules)


def test_rbac_of_kueue() -> None:
    kartas = catalog_definitions()
    without = controller_rbac(Options(), kartas).cluster_rules
    assert not _allows(without, "kueue.x-k8s.io", "workloads", "create")
    rules = controller_rbac(Options(kueue=True, kueue_native=("batch/job",)), kartas).cluster_rules
    for group, resource, verb in [
        ("kubeflow.org", "pytorchjobs", "update"),
        ("kubeflow.org", "pytorchjobs/finalizers", "update"),
        ("kueue.x-k8s.io", "workloads", "create"),
        ("kueue.x-k8s.io", "workloads", "delete"),
        ("kueue.x-k8s.io", "workloads/status", "patch"),
        ("kueue.x-k8s.io", "resourceflavors", "list"),
        ("kueue.x-k8s.io", "workloadpriorityclasses", "get"),
        ("scheduling.k8s.io", "priorityclasses", "get"),
        ("", "pods", "list"),
    ]:
        assert _allows(rules, group, resource, verb), (group, resource, verb)
    assert not _allows(rules, "batch", "jobs", "update")  # Kueue's own
    assert not _allows(rules, "apps", "deployments", "update")


def test_the_kueue_managed_condition_of_a_karta() -> None:
    by_kind = {d.karta.root_gvk.kind: d.karta for d in STORE.visible() if d.karta.root_gvk is not None}
    yes = managed_condition(by_kind["PyTorchJob"])
    assert yes is not None and (yes["status"], yes["reason"]) == ("True", "Managed")
    native = managed_condition(by_kind["Job"], ("batch/job",))
    assert native is not None and (native["status"], native["reason"]) == ("False", "KeptWithKueue")
    deployment = managed_condition(by_kind["Deployment"])
    assert deployment is not None and (deployment["status"], deployment["reason"]) == ("False", "NotEligible")
    assert "suspend" in deployment["message"]
    trainjob = managed_condition(by_kind["TrainJob"])
    assert trainjob is not None and trainjob["reason"] == "NotEligible"
    assert "reads a referenced object" in trainjob["message"]
    assert all(c["type"] == KUEUE_MANAGED for c in (yes, native, deployment, trainjob))


# ----------------------------------------------------------------------------- hostile definitions

SPIN_PATH = "until(false; .) | .spec.runPolicy.suspend"  # a path expression that never ends


def _cluster_pytorch(**action: str) -> DefinitionStore:
    """The catalog's PyTorchJob definition as a cluster Karta (untrusted, budgets on) whose
    suspend action is ``action`` (path and value)."""
    doc = yaml.safe_load((ROOT / "src/karta/catalog/data/kubeflow-org-pytorchjob-v1.yaml").read_text())
    doc["metadata"] = {"name": "my-pytorch", "uid": "k-uid", "generation": 1}
    root = doc["spec"]["structureDefinition"]["rootComponent"]
    suspend = {"path": ".spec.runPolicy.suspend", "value": "true", **action}
    root["suspendDefinition"]["suspendActions"] = [suspend]
    return STORE.with_cluster([load_karta(doc).karta])


def test_a_workload_that_cannot_be_suspended_is_denied_never_let_run_outside_its_quota() -> None:
    webhook = KueueSuspend(lambda: _cluster_pytorch(value="not json"))
    answer = webhook(_request(_job({"kueue.x-k8s.io/queue-name": "team"})))
    assert not answer.allowed and not answer.patch
    assert "PyTorchJob ns/j" in answer.message and "my-pytorch" in answer.message
    assert "suspendActions" in answer.message
    assert "without the kueue.x-k8s.io/queue-name label" in answer.message


def test_budget_breaches_quarantine_the_definition_and_its_workloads_are_denied_unevaluated() -> None:
    store = _cluster_pytorch(path=SPIN_PATH)
    metrics = Metrics()
    quarantine = Quarantine(breaches=2, window=600.0, metrics=metrics)
    webhook = KueueSuspend(lambda: store, quarantine=quarantine)
    request = _request(_job({"kueue.x-k8s.io/queue-name": "team"}))
    for _ in range(2):
        answer = webhook(request)
        assert not answer.allowed and "time budget" in answer.message
    (entry,) = quarantine.quarantined()
    assert entry.definition == "my-pytorch"
    answer = webhook(request)
    assert not answer.allowed and "is quarantined" in answer.message and "Degraded" in answer.message
    breaches = {"definition": "my-pytorch", "budget": "time"}
    # not evaluated: no third breach
    assert metrics.registry.get_sample_value("karta_definition_budget_breaches_total", breaches) == 2
    # an unlabelled one is not karta's to suspend: allowed, not evaluated
    assert webhook(_request(_job())).allowed


def test_a_job_nested_too_deeply_is_denied_without_blaming_its_definition() -> None:
    """An object nested beyond any real one (a kind whose schema keeps unknown fields): denied with
    the reason, never a RecursionError, and no budget breach is counted against the definition (a
    user's hostile object must not quarantine it for everyone)."""
    job = _job({"kueue.x-k8s.io/queue-name": "team"})
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["x"] = {}
        node = node["x"]
    job["spec"]["extra"] = deep
    quarantine = Quarantine(breaches=1, window=600.0, metrics=Metrics())
    store = _cluster_pytorch()
    answer = KueueSuspend(lambda: store, quarantine=quarantine)(_request(job))
    assert not answer.allowed and not answer.patch
    assert "nested too deeply" in answer.message and "PyTorchJob ns/j" in answer.message
    assert not quarantine.holds(store.resolution(GVK("kubeflow.org", "v1", "PyTorchJob")).used)
