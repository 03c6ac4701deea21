"""The webhook server's TLS: self-managed (``--webhook-cert-mode auto``) or mounted (``manual``).

``auto`` (:class:`CertManager`): a CA and a serving certificate (EC P-256) live in one Secret,
``--webhook-cert-secret`` in ``--webhook-namespace`` (type ``kubernetes.io/tls``: ``tls.crt``,
``tls.key``, plus ``ca.crt``, the CA bundle the API server must trust, and ``ca.key``, so that any
replica can sign the next serving certificate). Every replica runs the same loop: read the Secret
(create it when absent; on 409 AlreadyExists another replica won, and its Secret is read), renew
what is due (an update with the Secret's resourceVersion, so concurrent replicas never both
rotate: the loser reads the winner's), patch ``caBundle`` into every webhook of the two webhook
configurations that exist, and only then write ``tls.crt``/``tls.key`` into the certificate
directory (temporary file + rename; :class:`~karta.controller.runtime.webhook.server.CertFiles` reloads
them per connection). Requests are never dropped by a rotation:

* a serving-certificate rotation keeps the CA, so the API server trusts the new leaf at once;
* a CA rotation happens in two steps: the new CA joins the bundle (old and new CA are both
  trusted) while the old leaf is still served; only ``ca_overlap`` seconds later (the time the
  API server needs to see the new bundle) is a leaf signed by the new CA. The old CA leaves the
  bundle when it expires.

What is due (:func:`due`): a certificate with less than a third of its validity left (cert-manager's
default ``renewBefore``), a serving certificate whose names differ from the wanted ones
(:func:`serving_hosts`), or that is not signed by the current CA once the overlap has passed.

``manual`` (:class:`MountedCerts`): the files are mounted (cert-manager, a Secret volume); they are
only read, and a change is logged (the server reloads them per connection anyway).
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from karta.controller.runtime.logs import logger
from karta.controller.runtime.webhook.server import CertFiles
from karta.errors import ApiError, ClusterError
from karta.kube.client import KubeClient
from karta.rbac import rule

__all__ = [
    "CA_VALIDITY",
    "LEAF_VALIDITY",
    "CertManager",
    "KeyPair",
    "MountedCerts",
    "SecretState",
    "cert_rules",
    "due",
    "new_ca",
    "new_leaf",
    "plan",
    "serving_hosts",
]

_LOG = logger("certs")
DAY: float = 86400.0
CA_VALIDITY: float = 10 * 365 * DAY
LEAF_VALIDITY: float = 365 * DAY
_BACKDATE = dt.timedelta(minutes=5)  # tolerate an API server whose clock is a little behind
PENDING = "karta.run.ai/ca-rotated-at"  # Secret annotation: a new CA joined the bundle then


def serving_hosts(service: str, namespace: str, url: str | None = None) -> list[str]:
    """The names the serving certificate is for: the Service's two DNS names and the host of
    ``--webhook-url`` when given (an IP address becomes an IP SAN)."""
    hosts = [f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local"]
    if url:
        host = urlsplit(url).hostname
        if host and host not in hosts:
            hosts.append(host)
    return hosts


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, PEM."""

    cert: bytes
    key: bytes

    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def new_ca(*, now: dt.datetime, validity: float = CA_VALIDITY, name: str = "karta-webhook-ca") -> KeyPair:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name}@{int(now.timestamp())}")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + dt.timedelta(seconds=validity))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def new_leaf(
    ca: KeyPair, hosts: Sequence[str], *, now: dt.datetime, validity: float = LEAF_VALIDITY
) -> KeyPair:
    """A serving certificate for ``hosts`` signed by ``ca`` (never valid past the CA)."""
    ca_cert = ca.certificate()
    ca_key = serialization.load_pem_private_key(ca.key, password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    not_after = min(now + dt.timedelta(seconds=validity), ca_cert.not_valid_after_utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName([_san(h) for h in hosts]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _lifetime(cert: x509.Certificate) -> tuple[dt.datetime, dt.datetime]:
    # The validity we meant: not_before was backdated by _BACKDATE.
    return cert.not_valid_before_utc + _BACKDATE, cert.not_valid_after_utc


def due(cert: x509.Certificate, *, now: dt.datetime) -> bool:
    """Whether ``cert`` should be renewed: less than a third of its validity left."""
    start, end = _lifetime(cert)
    return (end - now) < (end - start) / 3


def _hosts_of(cert: x509.Certificate) -> list[str]:
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [str(n.value) for n in sans]


def _split_pem(bundle: bytes) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(bundle) if bundle.strip() else []
    except ValueError:
        return []


def _pem(certs: Sequence[x509.Certificate]) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


@dataclass(frozen=True)
class SecretState:
    """What the Secret holds: the current CA (with key), the bundle, the serving pair, and when
    a new CA joined the bundle (None when no CA rotation is pending)."""

    ca: KeyPair
    bundle: bytes
    leaf: KeyPair
    ca_rotated_at: dt.datetime | None = None

    @classmethod
    def from_secret(cls, secret: dict[str, Any]) -> SecretState | None:
        data = secret.get("data") or {}
        try:
            values = {k: base64.b64decode(data[k]) for k in ("ca.crt", "ca.key", "tls.crt", "tls.key")}
            ca_cert = x509.load_pem_x509_certificates(values["ca.crt"])[0]
            x509.load_pem_x509_certificate(values["tls.crt"])
        except (KeyError, ValueError, TypeError):
            return None
        bundle = values["ca.crt"]
        # The current CA is the one whose key is stored; the bundle lists it first.
        ca = KeyPair(ca_cert.public_bytes(serialization.Encoding.PEM), values["ca.key"])
        stamp = ((secret.get("metadata") or {}).get("annotations") or {}).get(PENDING)
        rotated = None
        if stamp:
            try:
                rotated = dt.datetime.fromisoformat(stamp)
            except ValueError:
                rotated = None
        return cls(ca, bundle, KeyPair(values["tls.crt"], values["tls.key"]), rotated)

    def secret(self, name: str, namespace: str) -> dict[str, Any]:
        def b64(v: bytes) -> str:
            return base64.b64encode(v).decode()

        meta: dict[str, Any] = {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "karta-controller"},
            "annotations": {PENDING: self.ca_rotated_at.isoformat()} if self.ca_rotated_at else {},
        }
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": meta,
            "type": "kubernetes.io/tls",
            "data": {
                "tls.crt": b64(self.leaf.cert),
                "tls.key": b64(self.leaf.key),
                "ca.crt": b64(self.bundle),
                "ca.key": b64(self.ca.key),
            },
        }


@dataclass(frozen=True)
class Validity:
    ca: float = CA_VALIDITY
    leaf: float = LEAF_VALIDITY
    ca_overlap: float = 300.0  # seconds the new CA is in the bundle before a leaf uses it


def plan(
    state: SecretState | None, hosts: Sequence[str], *, now: dt.datetime, validity: Validity
) -> tuple[SecretState, str] | None:
    """The Secret's next state and why, or None when nothing is due (pure but for key generation)."""
    if state is None:
        ca = new_ca(now=now, validity=validity.ca)
        return SecretState(ca, ca.cert, new_leaf(ca, hosts, now=now, validity=validity.leaf)), "created"
    ca_cert = state.ca.certificate()
    live = [c for c in _split_pem(state.bundle) if c.not_valid_after_utc > now]
    leaf_cert = state.leaf.certificate()
    # A leaf that no trusted CA vouches for any more (expired, its CA expired or gone: a
    # controller that was down for long) protects nothing by waiting: replaced at once.
    broken = leaf_cert.not_valid_after_utc <= now or leaf_cert.issuer not in {c.subject for c in live}
    if due(ca_cert, now=now) and state.ca_rotated_at is None:
        ca = new_ca(now=now, validity=validity.ca)
        bundle = _pem([ca.certificate(), *live])
        if broken:
            return SecretState(
                ca, bundle, new_leaf(ca, hosts, now=now, validity=validity.leaf)
            ), "ca-replaced"
        return SecretState(ca, bundle, state.leaf, now), "ca-rotation-started"
    overlap_over = (
        broken
        or state.ca_rotated_at is None
        or (now - state.ca_rotated_at).total_seconds() >= validity.ca_overlap
    )
    reasons = []
    if leaf_cert.issuer != ca_cert.subject and overlap_over:
        reasons.append("signed-by-previous-ca")
    if due(leaf_cert, now=now) and not broken:
        reasons.append("expiring")  # during the overlap it waits for the new CA (still valid)
    if sorted(_hosts_of(leaf_cert)) != sorted(_san_text(h) for h in hosts):
        reasons.append("names-changed")
    if broken:
        reasons.insert(0, "untrusted")
    if reasons and (overlap_over or leaf_cert.issuer == ca_cert.subject):
        leaf = new_leaf(state.ca, hosts, now=now, validity=validity.leaf)
        pending = None if overlap_over else state.ca_rotated_at
        return SecretState(state.ca, _pem(live) or state.ca.cert, leaf, pending), ",".join(reasons)
    if overlap_over and state.ca_rotated_at is not None:
        return SecretState(state.ca, _pem(live), state.leaf, None), "ca-rotation-finished"
    if len(live) != len(_split_pem(state.bundle)):
        return SecretState(state.ca, _pem(live), state.leaf, state.ca_rotated_at), "expired-ca-dropped"
    return None


def _san_text(host: str) -> str:
    value = _san(host).value
    return str(value)


def write_atomically(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` in one rename (readers see the old or the new file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def patch_ca_bundle(client: KubeClient, kind: str, name: str, bundle: bytes) -> bool | None:
    """Set ``caBundle`` on every webhook of one configuration: True when patched, False when
    already current, None when the configuration does not exist (yet)."""
    path = f"/apis/admissionregistration.k8s.io/v1/{kind}/{name}"
    try:
        config = client.request_json("GET", path)
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise
    value = base64.b64encode(bundle).decode()
    ops: list[dict[str, Any]] = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": config["metadata"]["resourceVersion"]}
    ]
    for i, webhook in enumerate(config.get("webhooks") or []):
        if (webhook.get("clientConfig") or {}).get("caBundle") != value:
            ops.append({"op": "add", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": value})
    if len(ops) == 1:
        return False
    client.request_json(
        "PATCH", path, params={"fieldManager": "karta"}, body=ops, content_type="application/json-patch+json"
    )
    return True


class CertManager:
    """The ``auto`` mode's part: keeps the Secret, the webhook configurations' ``caBundle`` and
    the certificate files current (every replica runs it; see the module docstring)."""

    name = "webhook-certs"

    def __init__(
        self,
        client: KubeClient,
        files: CertFiles,
        *,
        namespace: str | None,
        secret: str,
        hosts: Sequence[str] | Callable[[str], Sequence[str]],
        webhook_configurations: Sequence[tuple[str, str]] = (),
        validity: Validity | None = None,
        interval: float = 30.0,
        clock: Callable[[], dt.datetime] | None = None,
    ) -> None:
        self.client = client
        self.files = files
        self._namespace = namespace  # None: the client's namespace, read when first needed
        self.secret_name = secret
        self._hosts = hosts  # or a function of the namespace
        # (resource, name): ("mutatingwebhookconfigurations", "karta-operator-mutating"), ...
        self.webhook_configurations = list(webhook_configurations)
        self.validity = validity or Validity()
        self.interval = interval
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self.ready = threading.Event()
        self.bundle: bytes | None = None
        self._written: tuple[bytes, bytes] | None = None

    @property
    def namespace(self) -> str:
        if self._namespace is None:
            self._namespace = self.client.namespace
        return self._namespace

    @property
    def hosts(self) -> list[str]:
        hosts = self._hosts
        return list(hosts(self.namespace) if callable(hosts) else hosts)

    # -- one round -------------------------------------------------------------------------------
    def _secret_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/secrets/{self.secret_name}"

    def _read(self) -> dict[str, Any] | None:
        try:
            return dict(self.client.request_json("GET", self._secret_path()))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def _store(self, current: dict[str, Any] | None, state: SecretState) -> dict[str, Any] | None:
        """Create or update the Secret; None when another replica wrote first (409)."""
        body = state.secret(self.secret_name, self.namespace)
        try:
            if current is None:
                return dict(
                    self.client.request_json(
                        "POST", f"/api/v1/namespaces/{self.namespace}/secrets", body=body
                    )
                )
            meta = current.get("metadata") or {}
            body["metadata"] = {
                **meta,
                "annotations": {
                    **{k: v for k, v in (meta.get("annotations") or {}).items() if k != PENDING},
                    **body["metadata"]["annotations"],
                },
            }
            body["metadata"].pop("managedFields", None)
            body["type"] = current.get("type") or body["type"]  # a Secret's type is immutable
            return dict(self.client.request_json("PUT", self._secret_path(), body=body))
        except ApiError as exc:
            if exc.status == 409:
                _LOG.info("another replica wrote the certificate Secret first; using it")
                return None
            raise

    def sync(self) -> bool:
        """One round: Secret, caBundle, files. True when every webhook configuration was found."""
        for _attempt in range(5):
            current = self._read()
            state = SecretState.from_secret(current) if current is not None else None
            if current is not None and state is None:
                _LOG.warning(
                    "the certificate Secret is unusable; replacing it", extra={"secret": self.secret_name}
                )
            step = plan(state, self.hosts, now=self.clock(), validity=self.validity)
            if step is None:
                break
            stored = self._store(current, step[0])
            if stored is None:
                continue
            _LOG.info("webhook certificate updated", extra={"reason": step[1], "secret": self.secret_name})
            state = step[0]
            break
        else:
            raise ClusterError("the certificate Secret kept changing under us (5 conflicts)")
        assert state is not None
        self.bundle = state.bundle
        found = self._patch_bundles(state.bundle)
        self._write_files(state.leaf)
        self.ready.set()
        return found

    def _patch_bundles(self, bundle: bytes) -> bool:
        found = True
        # Checked every round, not only after a change: a chart upgrade re-applying the
        # configurations without caBundle must not leave them untrusted.
        for kind, name in self.webhook_configurations:
            try:
                result = patch_ca_bundle(self.client, kind, name, bundle)
            except ApiError as exc:
                if exc.status not in (409, 422):  # a concurrent change: the next round retries
                    raise
                found = False
                continue
            if result is None:
                found = False
                continue
            if result:
                _LOG.info("caBundle patched", extra={"configuration": name})
        return found

    def _write_files(self, leaf: KeyPair) -> None:
        if self._written == (leaf.cert, leaf.key) and self.files.available():
            return
        self.files.cert.parent.mkdir(parents=True, exist_ok=True)
        # The key first: CertFiles keeps its previous context while the pair does not match.
        write_atomically(self.files.key, leaf.key)
        write_atomically(self.files.cert, leaf.cert, 0o644)
        self._written = (leaf.cert, leaf.key)
        _LOG.info("serving certificate written", extra={"dir": str(self.files.cert.parent)})

    # -- the part ----------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        failures = 0
        while not stop.is_set():
            try:
                complete = self.sync()
                failures = 0
                wait = self.interval if complete else min(self.interval, 5.0)
            except ClusterError as exc:
                failures += 1
                wait = min(self.interval, 0.5 * 2 ** min(failures, 6))
                _LOG.warning("cannot sync the webhook certificate; retrying", extra={"error": str(exc)})
            stop.wait(wait)


class MountedCerts:
    """The ``manual`` mode's part: watches the mounted files, logs when they change."""

    name = "webhook-certs"

    def __init__(self, files: CertFiles, *, interval: float = 5.0) -> None:
        self.files = files
        self.interval = interval
        self.ready = threading.Event()

    def _stamp(self) -> tuple[int, int, int, int] | None:
        try:
            c, k = os.stat(self.files.cert), os.stat(self.files.key)
        except OSError:
            return None
        return c.st_mtime_ns, k.st_mtime_ns, c.st_ino, k.st_ino

    def run(self, stop: threading.Event) -> None:
        seen = self._stamp()
        if seen is None:
            _LOG.warning("no serving certificate mounted yet", extra={"dir": str(self.files.cert.parent)})
        while True:
            now = self._stamp()
            if now is not None:
                if seen is not None and now != seen:
                    _LOG.info("mounted serving certificate changed", extra={"cert": str(self.files.cert)})
                self.ready.set()
            seen = now if now is not None else seen
            if stop.wait(self.interval):
                return


def wait_until(check: Callable[[], bool], stop: threading.Event, *, poll: float = 0.1) -> bool:
    """Wait for ``check`` (True) or ``stop`` (False)."""
    while not check():
        if stop.wait(poll):
            return False
    return True


def cert_rules(
    *, secret: str, configurations: Sequence[tuple[str, str]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The RBAC rules of :class:`CertManager` (``--webhook-cert-mode auto``): the cluster rules
    (get and patch each webhook configuration by name, for its ``caBundle``; ``configurations``:
    ``(resource, name)`` pairs) and the rules in its namespace (create the certificate Secret
    ``secret``, then get and update it by name)."""
    cluster = [
        rule("admissionregistration.k8s.io", [resource], ["get", "patch"], [name])
        for resource, name in configurations
    ]
    namespaced = [rule("", ["secrets"], ["create"]), rule("", ["secrets"], ["get", "update"], [secret])]
    return cluster, namespaced
