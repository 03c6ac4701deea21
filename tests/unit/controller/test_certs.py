"""karta.controller.parts.certs: names, generation, the renewal plan (pure parts; the Secret, the
caBundle and the files against a real API server are in tests/e2e/controller/test_certs.py)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

from cryptography import x509

from karta.controller.parts.certs import (
    DAY,
    KeyPair,
    SecretState,
    Validity,
    due,
    new_ca,
    new_leaf,
    plan,
    serving_hosts,
    write_atomically,
)
from karta.controller.runtime.webhook.server import CertFiles

NOW = dt.datetime(2026, 12, 2, 1, 0, tzinfo=dt.UTC)
HOSTS = serving_hosts("karta-operator-webhook", "karta-system", "https://127.0.0.1:9443")


def _sans(pair: KeyPair) -> list[object]:
    ext = pair.certificate().extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return [n.value for n in ext]


def test_serving_hosts_are_the_service_names_and_the_url_host() -> None:
    assert serving_hosts("svc", "ns") == ["svc.ns.svc", "svc.ns.svc.cluster.local"]
    assert HOSTS == [
        "karta-operator-webhook.karta-system.svc",
        "karta-operator-webhook.karta-system.svc.cluster.local",
        "127.0.0.1",
    ]
    assert serving_hosts("svc", "ns", "https://webhook.dev.example:8443/base")[-1] == "webhook.dev.example"


def test_leaf_has_dns_and_ip_sans_and_chains_to_the_ca(tmp_path: Path) -> None:
    ca = new_ca(now=NOW)
    leaf = new_leaf(ca, HOSTS, now=NOW)
    assert _sans(leaf) == [HOSTS[0], HOSTS[1], ipaddress.ip_address("127.0.0.1")]
    cert = leaf.certificate()
    assert cert.issuer == ca.certificate().subject
    assert (
        x509.BasicConstraints(ca=False, path_length=None)
        == cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    )
    cert.verify_directly_issued_by(ca.certificate())
    # The pair loads as a server context, as CertFiles will load it.
    (tmp_path / "tls.crt").write_bytes(leaf.cert)
    (tmp_path / "tls.key").write_bytes(leaf.key)
    ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")


def test_leaf_never_outlives_its_ca() -> None:
    ca = new_ca(now=NOW, validity=10 * DAY)
    leaf = new_leaf(ca, HOSTS, now=NOW, validity=365 * DAY)
    assert leaf.certificate().not_valid_after_utc == ca.certificate().not_valid_after_utc


def test_due_when_less_than_a_third_is_left() -> None:
    leaf = new_leaf(new_ca(now=NOW), HOSTS, now=NOW, validity=300 * DAY).certificate()
    assert not due(leaf, now=NOW)
    assert not due(leaf, now=NOW + dt.timedelta(days=199))
    assert due(leaf, now=NOW + dt.timedelta(days=201))


def _state(validity: Validity | None = None) -> SecretState:
    step = plan(None, HOSTS, now=NOW, validity=validity or Validity())
    assert step is not None and step[1] == "created"
    return step[0]


def test_nothing_due_on_a_fresh_secret_and_the_secret_round_trips() -> None:
    state = _state()
    secret = state.secret("cert", "ns")
    assert secret["type"] == "kubernetes.io/tls"
    assert set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt", "ca.key"}
    back = SecretState.from_secret(secret)
    assert back == state
    assert plan(back, HOSTS, now=NOW + dt.timedelta(days=30), validity=Validity()) is None


def test_unusable_secret_reads_as_none() -> None:
    assert SecretState.from_secret({"data": {"tls.crt": "eA=="}}) is None
    assert SecretState.from_secret({}) is None


def test_expiring_leaf_is_renewed_with_the_same_ca() -> None:
    state = _state()
    step = plan(state, HOSTS, now=NOW + dt.timedelta(days=250), validity=Validity())
    assert step is not None and step[1] == "expiring"
    new = step[0]
    assert new.ca == state.ca and new.bundle == state.bundle
    assert new.leaf.certificate().serial_number != state.leaf.certificate().serial_number


def test_changed_names_reissue_the_leaf() -> None:
    step = plan(_state(), HOSTS[:2], now=NOW, validity=Validity())
    assert step is not None and step[1] == "names-changed"
    assert len(_sans(step[0].leaf)) == 2


def test_ca_rotation_trusts_both_cas_before_the_new_one_signs() -> None:
    validity = Validity(ca=90 * DAY, leaf=60 * DAY, ca_overlap=600)
    state = _state(validity)
    # Keep the leaf fresh so that only the CA is due.
    later = NOW + dt.timedelta(days=61)
    state = SecretState(state.ca, state.bundle, new_leaf(state.ca, HOSTS, now=later, validity=60 * DAY))
    step = plan(state, HOSTS, now=later, validity=validity)
    assert step is not None and step[1] == "ca-rotation-started"
    started = step[0]
    bundle = x509.load_pem_x509_certificates(started.bundle)
    assert [c.subject for c in bundle] == [started.ca.certificate().subject, state.ca.certificate().subject]
    assert started.leaf == state.leaf  # still the old CA's leaf: the API server must see the bundle first
    assert started.ca_rotated_at == later
    assert SecretState.from_secret(started.secret("s", "ns")) == started
    assert plan(started, HOSTS, now=later + dt.timedelta(seconds=60), validity=validity) is None
    step = plan(started, HOSTS, now=later + dt.timedelta(seconds=601), validity=validity)
    assert step is not None and step[1] == "signed-by-previous-ca"
    finished = step[0]
    assert finished.leaf.certificate().issuer == started.ca.certificate().subject
    assert finished.ca_rotated_at is None
    assert len(x509.load_pem_x509_certificates(finished.bundle)) == 2  # the old CA until it expires
    # Once the old CA has expired, it leaves the bundle.
    step = plan(finished, HOSTS, now=NOW + dt.timedelta(days=91), validity=validity)
    assert step is not None and step[1] == "expired-ca-dropped"
    assert len(x509.load_pem_x509_certificates(step[0].bundle)) == 1


def test_write_atomically_replaces_in_one_rename(tmp_path: Path) -> None:
    target = tmp_path / "tls.key"
    target.write_bytes(b"old")
    before = target.stat().st_ino
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_ino != before
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["tls.key"]


def test_cert_files_keep_the_previous_context_while_the_pair_does_not_match(tmp_path: Path) -> None:
    ca = new_ca(now=NOW)
    first, second = new_leaf(ca, HOSTS, now=NOW), new_leaf(ca, HOSTS, now=NOW)
    files = CertFiles(tmp_path)
    write_atomically(files.key, first.key)
    write_atomically(files.cert, first.cert)
    context = files.context()
    write_atomically(files.key, second.key)  # the key is renamed first, the certificate not yet
    assert files.context() is context
    write_atomically(files.cert, second.cert)
    assert files.context() is not context


def test_a_secret_left_to_expire_is_replaced_at_once() -> None:
    validity = Validity(ca=30 * DAY, leaf=30 * DAY, ca_overlap=600)
    state = _state(validity)
    step = plan(state, HOSTS, now=NOW + dt.timedelta(days=40), validity=validity)
    assert step is not None and step[1] == "ca-replaced"
    new = step[0]
    assert new.ca_rotated_at is None
    assert new.leaf.certificate().issuer == new.ca.certificate().subject
    assert len(x509.load_pem_x509_certificates(new.bundle)) == 1  # the expired CA is not kept


def test_an_expired_leaf_during_the_overlap_is_signed_by_the_new_ca_at_once() -> None:
    validity = Validity(ca=90 * DAY, leaf=60 * DAY, ca_overlap=60 * DAY)
    state = _state(validity)
    day50 = NOW + dt.timedelta(days=50)
    state = SecretState(state.ca, state.bundle, new_leaf(state.ca, HOSTS, now=day50, validity=60 * DAY))
    later = NOW + dt.timedelta(days=61)
    step = plan(state, HOSTS, now=later, validity=validity)
    assert step is not None and step[1] == "ca-rotation-started"
    pending = step[0]
    assert plan(pending, HOSTS, now=later + dt.timedelta(days=1), validity=validity) is None
    # The old leaf ends with its CA on day 90, long before the overlap would: replaced at once.
    step = plan(pending, HOSTS, now=NOW + dt.timedelta(days=90, seconds=1), validity=validity)
    assert step is not None and step[1].startswith("untrusted")
    assert step[0].leaf.certificate().issuer == pending.ca.certificate().subject
    assert step[0].ca_rotated_at is None
