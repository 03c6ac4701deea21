"""The Karta operator and the Karta admission webhooks against the real API server (15.1-15.3, 14.4).

One controller runs in this process for the module (``build`` + ``manager.start``, webhooks on a
free port with a certificate of a CA made here). The webhook configurations intercept only the
Kartas labelled with this module's selector, so nothing else in the session depends on them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karta.controller.main import Controller
from karta.controller.parts.kartas.operator import crd_not_found_message, validation_text
from karta.controller.parts.kartas.webhooks import IMMUTABLE_MESSAGE, duplicate_message, label_message
from karta.model import GVK

from ..kubehttp import KubeHTTP
from .certs_support import write_test_certificates
from .operator_support import (
    CRDS,
    KARTAS,
    condition,
    events_for,
    eventually,
    get_karta,
    install_karta_crd,
    karta_body,
    manual_webhooks,
    start_controller,
    wait_condition,
    wait_webhooks_active,
    webhook_configurations,
    widget_crd,
)

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
GROUP = "operator.karta.test"


@pytest.fixture(scope="module")
def tag() -> str:
    return uuid.uuid4().hex[:6]


@pytest.fixture(scope="module")
def controller(cluster: KubeHTTP, tmp_path_factory: pytest.TempPathFactory, tag: str) -> Iterator[Controller]:
    install_karta_crd(cluster)
    certs: Path = tmp_path_factory.mktemp("webhook-certs")
    ca = write_test_certificates(certs)
    with start_controller(cluster, **manual_webhooks(certs)) as running:
        assert running.webhooks is not None
        mutating, validating = webhook_configurations(
            name=f"karta-e2e-{tag}", port=running.webhooks.bound_port, ca=ca, selector={"karta-e2e": tag}
        )
        for path, body in ((MUTATING, mutating), (VALIDATING, validating)):
            created = cluster.post(path, body)
            assert created.status == 201, created.body
        try:
            yield running
        finally:
            cluster.delete(f"{MUTATING}/{mutating['metadata']['name']}")
            cluster.delete(f"{VALIDATING}/{validating['metadata']['name']}")


@pytest.fixture(scope="module")
def names(cluster: KubeHTTP, tag: str) -> Iterator[list[str]]:
    created: list[str] = []
    yield created
    for name in created:
        cluster.delete(f"{KARTAS}/{name}")


def _create(cluster: KubeHTTP, names: list[str], body: dict[str, Any]) -> dict[str, Any]:
    names.append(body["metadata"]["name"])
    created = cluster.post(KARTAS, body)
    assert created.status == 201, created.body
    return created.json()


def _denial(response: Any) -> str:
    assert response.status in (400, 403, 422), response.body
    return str(response.json()["message"])


# ----------------------------------------------------------------------------------- operator


def test_a_valid_karta_of_a_builtin_kind_is_ready(
    cluster: KubeHTTP, controller: Controller, names: list[str], tag: str
) -> None:
    name = f"op-valid-{tag}"
    # core/v1 Pod: a built-in kind, found through discovery
    body = karta_body(name, group="", version="v1", kind="Pod")
    body["spec"]["structureDefinition"]["rootComponent"]["name"] = "pod"
    body["spec"]["structureDefinition"]["rootComponent"]["specDefinition"] = {"podTemplateSpecPath": "."}
    created = _create(cluster, names, body)
    obj = wait_condition(cluster, name, "Ready", "True", "Ready")
    validated, crd = condition(obj, "Validated"), condition(obj, "CRDExists")
    assert validated is not None and (validated["status"], validated["reason"]) == (
        "True",
        "ValidationSucceeded",
    )
    assert crd is not None and (crd["status"], crd["reason"]) == ("True", "CRDFound")
    for c in obj["status"]["conditions"]:
        assert c["observedGeneration"] == created["metadata"]["generation"]
        assert c["lastTransitionTime"]
    assert obj["metadata"]["labels"] == {
        "run.ai/karta-group": "",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Pod",
    }
    assert not events_for(cluster, name, "ValidationFailed")
    assert not events_for(cluster, name, "CRDNotFound")
    gauge = controller.metrics.registry.get_sample_value(
        "karta_definitions", {"condition": "Ready", "status": "True"}
    )
    assert gauge is not None and gauge >= 1


def test_an_invalid_karta_fails_validation_with_the_validator_text_and_an_event(
    cluster: KubeHTTP, controller: Controller, names: list[str], tag: str
) -> None:
    name = f"op-invalid-{tag}"
    body = karta_body(name, group="batch", version="v1", kind="Job")
    body["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {
        "replicasPath": "[..] | length"
    }
    _create(cluster, names, body)
    obj = wait_condition(cluster, name, "Validated", "False", "ValidationFailed")
    expected, _ = validation_text(obj)
    assert "recursive descent operator '..' is not allowed" in expected
    validated = condition(obj, "Validated")
    assert validated is not None and validated["message"] == expected
    crd = condition(obj, "CRDExists")
    assert crd is not None and (crd["status"], crd["reason"]) == ("True", "CRDFound")
    ready = condition(obj, "Ready")
    assert ready == {
        **ready,
        "status": "False",
        "reason": "NotReady",
        "message": "Validated and CRDExists must both be True",
    }
    event = eventually(lambda: events_for(cluster, name, "ValidationFailed"), what="ValidationFailed event")[
        0
    ]
    assert event["type"] == "Warning"
    assert event["message"] == expected[:1024]
    assert event["involvedObject"]["kind"] == "Karta"
    assert obj["metadata"]["labels"]["run.ai/karta-kind"] == "Job"


def test_crd_exists_follows_the_crd(
    cluster: KubeHTTP, controller: Controller, names: list[str], tag: str
) -> None:
    kind = f"Gadget{tag}"
    name = f"op-nocrd-{tag}"
    gvk = GVK(GROUP, "v1", kind)
    _create(cluster, names, karta_body(name, group=GROUP, version="v1", kind=kind))
    obj = wait_condition(cluster, name, "CRDExists", "False", "CRDNotFound")
    crd = condition(obj, "CRDExists")
    assert crd is not None and crd["message"] == crd_not_found_message(gvk)
    assert crd["message"] == f"CRD for {GROUP}/{kind} not found or does not serve version v1"
    ready = condition(obj, "Ready")
    assert ready is not None and ready["status"] == "False"
    validated = condition(obj, "Validated")
    assert validated is not None and validated["status"] == "True"
    event = eventually(lambda: events_for(cluster, name, "CRDNotFound"), what="CRDNotFound event")[0]
    assert (event["type"], event["message"]) == ("Warning", crd["message"])
    assert obj["metadata"]["labels"] == {
        "run.ai/karta-group": GROUP,
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": kind,
    }

    # The CRD appears (serving v2 only): still not found for v1.
    definition = widget_crd(GROUP, kind, versions=("v2",))
    crd_path = f"{CRDS}/{definition['metadata']['name']}"
    cluster.ensure_crd(definition)
    try:
        # then serves v1 as well: found
        current = cluster.get(crd_path).json()
        current["spec"]["versions"].append({**current["spec"]["versions"][0], "name": "v1", "storage": False})
        replaced = cluster.request("PUT", crd_path, body=current)
        assert replaced.status == 200, replaced.body
        found = wait_condition(cluster, name, "CRDExists", "True", "CRDFound")
        assert condition(found, "Ready") is not None
        wait_condition(cluster, name, "Ready", "True", "Ready")
        after = condition(get_karta(cluster, name), "Validated")
        assert after is not None and after["lastTransitionTime"] == validated["lastTransitionTime"]
    finally:
        cluster.delete(crd_path)
    # The CRD is deleted: not found again.
    gone = wait_condition(cluster, name, "CRDExists", "False", "CRDNotFound")
    assert condition(gone, "Ready") is not None
    wait_condition(cluster, name, "Ready", "False", "NotReady")


def test_a_root_without_kind_keeps_the_default_crd_condition(
    cluster: KubeHTTP, controller: Controller, names: list[str], tag: str
) -> None:
    name = f"op-nokind-{tag}"
    body = karta_body(name, group="", version="", kind="")
    del body["spec"]["structureDefinition"]["rootComponent"]["kind"]
    _create(cluster, names, body)
    obj = wait_condition(cluster, name, "CRDExists", "False", "Pending")
    crd = condition(obj, "CRDExists")
    assert crd is not None and crd["message"] == "Condition has not been evaluated yet"
    assert "run.ai/karta-kind" not in (obj["metadata"].get("labels") or {})


# ----------------------------------------------------------------------------------- webhooks


def _wait_webhooks_active(cluster: KubeHTTP, tag: str) -> None:
    wait_webhooks_active(
        cluster, name=f"wh-probe-{tag}", group=GROUP, kind=f"Probe{tag}", labels={"karta-e2e": tag}
    )


def test_the_mutating_webhook_stamps_the_labels_and_the_validator_rejects_invalid_kartas(
    cluster: KubeHTTP, controller: Controller, names: list[str], tag: str
) -> None:
    _wait_webhooks_active(cluster, tag)
    name = f"wh-stamped-{tag}"
    kind = f"Stamp{tag}"
    created = _create(
        cluster, names, karta_body(name, group=GROUP, version="v1", kind=kind, labels={"karta-e2e": tag})
    )
    # the answer to the create: labelled before the operator could have seen it
    assert created["metadata"]["labels"] == {
        "karta-e2e": tag,
        "run.ai/karta-group": GROUP,
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": kind,
    }
    invalid = karta_body(
        f"wh-invalid-{tag}", group=GROUP, version="v1", kind=f"Bad{tag}", labels={"karta-e2e": tag}
    )
    invalid["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {"replicasPath": "[..]"}
    expected, _ = validation_text(invalid)
    assert expected
    assert expected in _denial(cluster.post(KARTAS, invalid))


def test_the_validating_webhook_rejects_a_second_karta_for_the_same_gvk(
    cluster: KubeHTTP, controller: Controller, names: list[str], tag: str
) -> None:
    _wait_webhooks_active(cluster, tag)
    kind = f"Dup{tag}"
    first = f"wh-dup-a-{tag}"
    _create(
        cluster, names, karta_body(first, group=GROUP, version="v1", kind=kind, labels={"karta-e2e": tag})
    )
    eventually(lambda: controller.definitions.informer.get(first), what="the first Karta in the cache")
    second = karta_body(f"wh-dup-b-{tag}", group=GROUP, version="v1", kind=kind, labels={"karta-e2e": tag})
    message = _denial(cluster.post(KARTAS, second))
    assert message.endswith(duplicate_message(GVK(GROUP, "v1", kind), first))
    assert message.endswith(
        f'a Karta for group "{GROUP}" version "v1" kind "{kind}" already exists ("{first}"); '
        "only one Karta per group/version/kind is allowed"
    )
    # the same group and kind at another version is allowed
    _create(
        cluster,
        names,
        karta_body(f"wh-dup-c-{tag}", group=GROUP, version="v2", kind=kind, labels={"karta-e2e": tag}),
    )


def test_the_validating_webhook_keeps_the_root_gvk_and_the_labels(
    cluster: KubeHTTP, controller: Controller, names: list[str], tag: str
) -> None:
    _wait_webhooks_active(cluster, tag)
    name = f"wh-update-{tag}"
    kind = f"Upd{tag}"
    _create(cluster, names, karta_body(name, group=GROUP, version="v1", kind=kind, labels={"karta-e2e": tag}))
    path = f"{KARTAS}/{name}"
    merge = "application/merge-patch+json"

    change_kind = {"spec": {"structureDefinition": {"rootComponent": {"kind": {"kind": f"Other{tag}"}}}}}
    message = _denial(cluster.request("PATCH", path, body=change_kind, content_type=merge))
    assert message.endswith(IMMUTABLE_MESSAGE)
    assert message.endswith("the root component GVK is immutable and cannot be changed after creation")

    edit = {"metadata": {"labels": {"run.ai/karta-kind": "Something"}}}
    message = _denial(cluster.request("PATCH", path, body=edit, content_type=merge))
    assert message.endswith(label_message("run.ai/karta-kind", kind))
    assert message.endswith(
        f'label "run.ai/karta-kind" is managed by the operator and must equal "{kind}"; '
        "it cannot be edited or removed"
    )
    remove = {"metadata": {"labels": {"run.ai/karta-group": None}}}
    message = _denial(cluster.request("PATCH", path, body=remove, content_type=merge))
    assert message.endswith(label_message("run.ai/karta-group", GROUP))

    # an ordinary edit passes
    other = {"metadata": {"annotations": {"note": "fine"}}}
    assert cluster.request("PATCH", path, body=other, content_type=merge).status == 200
