"""The Karta admission webhooks (docs/spec/format.md#admission, #webhooks): their answers to well-formed and
hostile requests, directly and through the HTTPS webhook server."""

from __future__ import annotations

import base64
import copy
import datetime
import http.client
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from karta.catalog import CATALOG_DATA_DIR
from karta.controller.parts.kartas.operator import validation_text
from karta.controller.parts.kartas.webhooks import (
    IMMUTABLE_MESSAGE,
    MUTATE_PATH,
    VALIDATE_PATH,
    KartaWebhooks,
    duplicate_message,
    label_message,
)
from karta.controller.runtime.metrics import Metrics
from karta.controller.runtime.webhook.review import Answer, response
from karta.controller.runtime.webhook.server import CertFiles, WebhookServer
from karta.model import GVK

LABELS = {"run.ai/karta-group": "batch", "run.ai/karta-version": "v1", "run.ai/karta-kind": "Job"}


def _karta(name: str = "jobs", *, labels: dict[str, str] | None = None, **kind: str) -> dict[str, Any]:
    doc = copy.deepcopy(yaml.safe_load((CATALOG_DATA_DIR / "batch-job-v1.yaml").read_text()))
    doc["metadata"] = {"name": name, **({"labels": labels} if labels is not None else {})}
    if kind:
        doc["spec"]["structureDefinition"]["rootComponent"]["kind"] = kind
    return dict(doc)


def _create(obj: Any) -> dict[str, Any]:
    return {"uid": "u1", "operation": "CREATE", "object": obj}


def _update(obj: Any, old: Any) -> dict[str, Any]:
    return {"uid": "u2", "operation": "UPDATE", "object": obj, "oldObject": old}


def _apply(obj: dict[str, Any], answer: Answer) -> dict[str, Any]:
    """A minimal RFC 6902 ``add`` applier: enough for the patches the mutating webhook writes."""
    out = copy.deepcopy(obj)
    for op in answer.patch:
        assert op["op"] == "add"
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        node = out
        for part in parts[:-1]:
            node = node[part]
        node[parts[-1]] = op["value"]
    return out


@pytest.fixture
def existing() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def hooks(existing: list[dict[str, Any]]) -> KartaWebhooks:
    return KartaWebhooks(lambda: existing)


# ----------------------------------------------------------------------------------- mutating


def test_create_stamps_the_labels_when_there_are_none(hooks: KartaWebhooks) -> None:
    obj = _karta()
    answer = hooks.mutate(_create(obj))
    assert answer.allowed
    assert answer.patch == ({"op": "add", "path": "/metadata/labels", "value": LABELS},)
    assert _apply(obj, answer)["metadata"]["labels"] == LABELS


def test_create_stamps_each_label_with_escaped_keys_beside_the_users_own(hooks: KartaWebhooks) -> None:
    obj = _karta(labels={"team": "a", "run.ai/karta-kind": "Wrong"})
    answer = hooks.mutate(_create(obj))
    assert answer.allowed
    paths = sorted(op["path"] for op in answer.patch)
    assert paths == [
        "/metadata/labels/run.ai~1karta-group",
        "/metadata/labels/run.ai~1karta-kind",
        "/metadata/labels/run.ai~1karta-version",
    ]
    assert _apply(obj, answer)["metadata"]["labels"] == {"team": "a", **LABELS}


def test_create_with_the_labels_right_needs_no_patch(hooks: KartaWebhooks) -> None:
    answer = hooks.mutate(_create(_karta(labels=dict(LABELS))))
    assert answer.allowed and not answer.patch


def test_the_core_group_label_is_the_empty_string(hooks: KartaWebhooks) -> None:
    answer = hooks.mutate(_create(_karta(group="", version="v1", kind="Pod")))
    assert answer.patch[0]["value"]["run.ai/karta-group"] == ""


def test_mutating_other_operations_and_kindless_roots_is_a_no_op(hooks: KartaWebhooks) -> None:
    assert hooks.mutate(_update(_karta(), _karta())) == Answer(True)
    obj = _karta()
    del obj["spec"]["structureDefinition"]["rootComponent"]["kind"]
    assert hooks.mutate(_create(obj)) == Answer(True)


# --------------------------------------------------------------------------------- validating


def test_a_valid_create_is_allowed(hooks: KartaWebhooks) -> None:
    assert hooks.validate(_create(_karta())).allowed


def test_an_invalid_create_is_denied_with_the_validator_text(hooks: KartaWebhooks) -> None:
    obj = _karta()
    obj["spec"]["structureDefinition"]["rootComponent"]["ownerRef"] = "x"
    obj["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {"replicasPath": "[..]"}
    answer = hooks.validate(_create(obj))
    assert not answer.allowed
    assert answer.message == validation_text(obj)[0]
    assert "root component cannot have owner ref" in answer.message.split("\n")


def test_a_second_karta_for_the_same_gvk_is_denied(
    hooks: KartaWebhooks, existing: list[dict[str, Any]]
) -> None:
    existing.extend(
        [_karta("zz-later"), _karta("first"), _karta("other", group="batch", version="v2", kind="Job")]
    )
    answer = hooks.validate(_create(_karta("second")))
    assert not answer.allowed
    assert answer.message == duplicate_message(GVK("batch", "v1", "Job"), "first")
    assert answer.message == (
        'a Karta for group "batch" version "v1" kind "Job" already exists ("first"); '
        "only one Karta per group/version/kind is allowed"
    )
    # the same group and kind at another version is allowed
    assert hooks.validate(_create(_karta("v3", group="batch", version="v3", kind="Job"))).allowed


def test_claims_being_deleted_or_by_the_same_name_do_not_count(
    hooks: KartaWebhooks, existing: list[dict[str, Any]]
) -> None:
    deleting = _karta("going")
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    existing.extend([deleting, _karta("jobs"), "garbage", {"metadata": None}])  # type: ignore[list-item]
    assert hooks.validate(_create(_karta("jobs"))).allowed


def test_the_root_gvk_is_immutable(hooks: KartaWebhooks) -> None:
    old = _karta(labels=dict(LABELS))
    new = _karta(labels=dict(LABELS), group="batch", version="v1", kind="CronJob")
    answer = hooks.validate(_update(new, old))
    assert (answer.allowed, answer.message) == (False, IMMUTABLE_MESSAGE)
    assert answer.message == "the root component GVK is immutable and cannot be changed after creation"


def test_the_labels_are_managed(hooks: KartaWebhooks) -> None:
    old = _karta(labels=dict(LABELS))
    edited = _karta(labels={**LABELS, "run.ai/karta-kind": "Other"})
    answer = hooks.validate(_update(edited, old))
    assert not answer.allowed
    assert answer.message == label_message("run.ai/karta-kind", "Job")
    assert answer.message == (
        'label "run.ai/karta-kind" is managed by the operator and must equal "Job"; '
        "it cannot be edited or removed"
    )
    removed = _karta(labels={"run.ai/karta-kind": "Job"})
    answer = hooks.validate(_update(removed, old))
    assert answer.message.split("\n") == [
        label_message("run.ai/karta-group", "batch"),
        label_message("run.ai/karta-version", "v1"),
    ]
    assert hooks.validate(_update(_karta(labels={**LABELS, "mine": "x"}), old)).allowed


def test_an_update_of_an_object_being_deleted_is_allowed(hooks: KartaWebhooks) -> None:
    new = _karta()
    new["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert hooks.validate(_update(new, _karta(labels=dict(LABELS)))).allowed


def test_other_operations_are_allowed(hooks: KartaWebhooks) -> None:
    assert hooks.validate({"operation": "DELETE", "oldObject": _karta()}).allowed
    assert hooks.validate({"operation": "CONNECT"}).allowed


@pytest.mark.parametrize(
    "request_",
    [
        {},
        {"operation": 7, "object": {}},
        {"operation": "CREATE"},
        {"operation": "CREATE", "object": None},
        {"operation": "CREATE", "object": []},
        {"operation": "CREATE", "object": "Karta"},
        {"operation": "CREATE", "object": {"metadata": "x"}},
        {"operation": "CREATE", "object": {"metadata": {"labels": ["a"]}}},
        {"operation": "UPDATE", "object": {}},
        {"operation": "UPDATE", "object": {}, "oldObject": 5},
    ],
)
def test_malformed_requests_are_a_clean_400(hooks: KartaWebhooks, request_: dict[str, Any]) -> None:
    for handler in (hooks.validate, hooks.mutate):
        answer = handler(request_)
        if handler == hooks.mutate and request_.get("operation") == "UPDATE":
            assert answer.allowed  # the mutating webhook only acts on create
            continue
        assert not answer.allowed and answer.code == 400 and answer.message


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"spec": None},
        {
            "spec": {
                "structureDefinition": {"rootComponent": {"kind": {"group": [], "version": {}, "kind": 1}}}
            }
        },
        {"apiVersion": 5, "kind": None, "metadata": {"name": 3}, "spec": "x"},
        {
            "metadata": {"name": "x" * 100_000},
            "spec": {"structureDefinition": {"rootComponent": {"name": "\x00" * 1000}}},
        },
    ],
)
def test_hostile_objects_are_denied_not_crashed(hooks: KartaWebhooks, obj: dict[str, Any]) -> None:
    answer = hooks.validate(_create(obj))
    assert not answer.allowed and answer.message
    assert hooks.mutate(_create(obj)).allowed
    assert not hooks.validate(_update(obj, obj)).allowed


def test_the_response_carries_the_uid_and_the_patch(hooks: KartaWebhooks) -> None:
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": _create(_karta())}
    out = response(review, hooks.mutate(review["request"]))["response"]
    assert out["uid"] == "u1" and out["allowed"] and out["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(out["patch"]))[0]["value"] == LABELS


# ------------------------------------------------------------------------- through the server


def _certificates(directory: Path) -> bytes:
    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    (directory / "tls.crt").write_bytes(pem)
    (directory / "tls.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return pem


@pytest.fixture
def server(tmp_path: Path, hooks: KartaWebhooks) -> Iterator[tuple[WebhookServer, ssl.SSLContext]]:
    pem = _certificates(tmp_path)
    server = WebhookServer(CertFiles(tmp_path), host="127.0.0.1", port=0, metrics=Metrics())
    hooks.register(server)
    stop = threading.Event()
    server.start()
    thread = threading.Thread(target=server.run, args=(stop,), daemon=True)
    thread.start()
    context = ssl.create_default_context(cadata=pem.decode())
    yield server, context
    stop.set()
    thread.join(10)


def _post(server: tuple[WebhookServer, ssl.SSLContext], path: str, body: bytes) -> tuple[int, Any]:
    webhooks, context = server
    conn = http.client.HTTPSConnection("127.0.0.1", webhooks.bound_port, context=context, timeout=10)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_the_server_routes_both_webhooks(server: tuple[WebhookServer, ssl.SSLContext]) -> None:
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": _create(_karta())}
    status, out = _post(server, MUTATE_PATH, json.dumps(review).encode())
    assert status == 200 and out["response"]["allowed"] and out["response"]["patchType"] == "JSONPatch"
    bad = copy.deepcopy(review)
    bad["request"]["object"]["spec"]["structureDefinition"]["rootComponent"]["ownerRef"] = "x"
    status, out = _post(server, VALIDATE_PATH, json.dumps(bad).encode())
    assert status == 200 and not out["response"]["allowed"]
    assert "root component cannot have owner ref" in out["response"]["status"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"request": 5}',
        b'{"request": {"operation": "CREATE"}}',
        b'{"request": {"operation": "CREATE", "object": {"spec": {"structureDefinition": 1}}}}',
        b"{" * 100_000,
        b"[" * 100_000 + b"]" * 100_000,
        b'{"request": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        json.dumps({"request": {"operation": "UPDATE", "object": {}, "oldObject": []}}).encode(),
        b'{"apiVersion": [[[1]]], "request": {"uid": '
        + b"[" * 900
        + b"]" * 900
        + b', "operation": "CREATE"}}',
    ],
)
def test_malformed_reviews_through_the_server_are_a_clean_answer(
    server: tuple[WebhookServer, ssl.SSLContext], body: bytes
) -> None:
    for path in (MUTATE_PATH, VALIDATE_PATH):
        status, out = _post(server, path, body)
        assert status in (200, 400), out
        if status == 200:
            assert out["kind"] == "AdmissionReview" and "allowed" in out["response"]
        assert "Traceback" not in json.dumps(out)


def test_an_admission_review_with_9007199254740993_reaches_the_handler_as_the_double(
    server: tuple[WebhookServer, ssl.SSLContext],
) -> None:
    # Issue 24, item 4: the server converts where it decodes the body (one scan of its bytes), so
    # the handlers' evaluators (karta.definitions.POOL, ``decoded``) read the object as it is.
    from karta.definitions import evaluator_for

    seen: list[Mapping[str, Any]] = []

    def probe(request: Mapping[str, Any]) -> Answer:
        seen.append(request)
        return Answer(allowed=True)

    server[0].register("/probe", "probe", probe)
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "12345678901234567890"}}
    review = {
        "request": {"uid": "u", "operation": "CREATE", "object": {**obj, "spec": {"n": 9007199254740993}}}
    }
    status, out = _post(server, "/probe", json.dumps(review).encode())
    assert status == 200 and out["response"]["allowed"]
    (request,) = seen
    assert request["object"]["spec"] == {"n": 2**53} and request["object"]["metadata"] == obj["metadata"]
    evaluator = evaluator_for(trusted=False)
    assert evaluator.decoded and evaluator.evaluate(".spec.n == 9007199254740992", request["object"]) == [
        True
    ]
