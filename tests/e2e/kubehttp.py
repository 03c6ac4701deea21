"""Plain-HTTPS access to a test cluster for the e2e tests (standard library only).

Owns: reading a kubeconfig's current context (server, CA, client certificate or token), one
kubeconfig merging several clusters' under new context names (:func:`merged_kubeconfig`), a small
JSON request helper, waiting for a CRD to be established, and the bounded waits and answer checks
the e2e tests share (:func:`wait`, :func:`ok`). The real cluster I/O layer
(``karta.kube``) comes later; these tests must not depend on it.
"""

from __future__ import annotations

import base64
import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# libyaml when PyYAML has it: the corpus CRDs are large (the pure-Python loader takes seconds).
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Response:
    status: int
    body: Any  # decoded JSON, or the raw text when the answer is not JSON

    def json(self) -> dict[str, Any]:
        assert isinstance(self.body, dict), f"HTTP {self.status}: {self.body!r}"
        return self.body


@dataclass
class KubeHTTP:
    """A cluster reached with the admin credentials of one kubeconfig."""

    server: str
    kubeconfig: Path
    ssl_context: ssl.SSLContext
    headers: dict[str, str] = field(default_factory=dict)
    # The version the cluster must report, or None for a cluster we did not start.
    expected_version: str | None = None

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
        timeout: float = 30.0,
        raw: bytes | None = None,
    ) -> Response:
        url = self.server.rstrip("/") + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", **self.headers}
        if data is not None:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.ssl_context, timeout=timeout) as resp:
                return Response(resp.status, _decode(resp.read()))
        except urllib.error.HTTPError as exc:
            return Response(exc.code, _decode(exc.read()))

    def get(self, path: str, **kw: Any) -> Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any, **kw: Any) -> Response:
        return self.request("POST", path, body=body, **kw)

    def post_text(self, path: str, text: str, **kw: Any) -> Response:
        """POST a JSON document given as text (one Python's own JSON writer could not produce)."""
        return self.request("POST", path, raw=text.encode(), **kw)

    def delete(self, path: str, **kw: Any) -> Response:
        return self.request("DELETE", path, **kw)

    def ensure_crd(self, crd: dict[str, Any], *, timeout: float = 60.0) -> None:
        """Create ``crd`` (or accept an existing one) and wait for ``Established``."""
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        created = self.post(base, crd)
        name = crd["metadata"]["name"]
        assert created.status in (201, 409), f"CRD {name}: HTTP {created.status} {created.body}"
        deadline = time.monotonic() + timeout
        while True:
            got = self.get(f"{base}/{name}").json()
            conditions = (got.get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return
            assert time.monotonic() < deadline, f"CRD not established: {conditions}"
            time.sleep(0.1)


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested beyond Python's recursion limit
        return raw.decode(errors="replace")


def _material(entry: dict[str, Any], key: str, *, base_dir: Path, scratch: Path) -> Path | None:
    """The file behind ``key-data`` (written to ``scratch``) or ``key`` of a kubeconfig entry."""
    if entry.get(f"{key}-data"):
        out = scratch / key
        out.write_bytes(base64.b64decode(entry[f"{key}-data"]))
        out.chmod(0o600)
        return out
    if entry.get(key):
        path = Path(entry[key])
        return path if path.is_absolute() else base_dir / path
    return None


def from_kubeconfig(path: Path, *, scratch: Path, expected_version: str | None = None) -> KubeHTTP:
    """A client for the current context of ``path`` (cert, token or token-file auth)."""
    config = yaml.load(path.read_text(), Loader=_Loader)
    context_name = config["current-context"]
    context = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    user: dict[str, Any] = next(
        (u["user"] for u in config.get("users", []) if u["name"] == context.get("user")), {}
    )
    base_dir = path.resolve().parent
    scratch.mkdir(parents=True, exist_ok=True)

    ca = _material(cluster, "certificate-authority", base_dir=base_dir, scratch=scratch)
    ctx = ssl.create_default_context(cafile=str(ca) if ca else None)
    if cluster.get("insecure-skip-tls-verify"):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    cert = _material(user, "client-certificate", base_dir=base_dir, scratch=scratch)
    key = _material(user, "client-key", base_dir=base_dir, scratch=scratch)
    if cert and key:
        ctx.load_cert_chain(str(cert), str(key))
    headers: dict[str, str] = {}
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = Path(user["tokenFile"]).read_text().strip()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return KubeHTTP(
        server=cluster["server"],
        kubeconfig=path,
        ssl_context=ctx,
        headers=headers,
        expected_version=expected_version,
    )


def load_manifests(path: Path) -> list[dict[str, Any]]:
    """Every non-empty YAML document of ``path``."""
    return [doc for doc in yaml.load_all(path.read_text(), Loader=_Loader) if doc]


def ok(answer: Response, *codes: int) -> dict[str, Any]:
    """The answer's JSON object, asserting its status is one of ``codes`` (default 200 or 201)."""
    assert answer.status in (codes or (200, 201)), answer.body
    return answer.body if isinstance(answer.body, dict) else {}


def controller_ref(owner: dict[str, Any]) -> dict[str, Any]:
    """The ``controller: true`` owner reference to ``owner`` (a stored object), as controllers set it."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def wait(what: str, probe: Callable[[], Any], timeout: float = 90.0, interval: float = 0.2) -> Any:
    """Poll ``probe`` until it returns something truthy (a bounded wait, not a timing)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(interval)


def access_review(
    user: str,
    *,
    verb: str,
    resource: str,
    group: str = "",
    namespace: str = "",
    groups: tuple[str, ...] = ("system:authenticated",),
) -> dict[str, Any]:
    """A SubjectAccessReview: may ``user`` (a member of ``groups``) ``verb`` ``resource`` (in
    ``namespace``, or anywhere)?"""
    attributes = {"verb": verb, "group": group, "resource": resource}
    if namespace:
        attributes["namespace"] = namespace
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": list(groups), "resourceAttributes": attributes},
    }


def wait_allowed(
    submit: Callable[[dict[str, Any]], dict[str, Any]], review: dict[str, Any], *, timeout: float = 30.0
) -> None:
    """Poll until ``review`` (see :func:`access_review`) is allowed. The RBAC authorizer reads
    roles and bindings from an informer cache: one just created can be ignored for a moment, and
    a test run in that moment would see 403s it did not ask for. ``submit`` posts the review to
    ``/apis/authorization.k8s.io/v1/subjectaccessreviews`` and returns the answer."""
    user, asked = review["spec"]["user"], review["spec"]["resourceAttributes"]
    wait(
        f"RBAC to let {user} {asked['verb']} {asked['resource']}",
        lambda: bool((submit(review).get("status") or {}).get("allowed")),
        timeout=timeout,
    )


REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


def merged_kubeconfig(path: Path, sources: dict[str, Path], *, namespace: str, dead_port: int) -> Path:
    """One kubeconfig at ``path`` with a context, cluster and user per ``sources`` entry (the
    current context of each file, renamed to the key) and a context ``dead`` (cluster and user
    ``dead`` too) whose server is ``https://127.0.0.1:<dead_port>``; every context in
    ``namespace``, ``current-context`` the first source."""
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "current-context": next(iter(sources))}
    doc["clusters"] = [{"name": "dead", "cluster": {"server": f"https://127.0.0.1:{dead_port}"}}]
    doc["users"] = [{"name": "dead", "user": {"token": "nobody"}}]
    doc["contexts"] = [
        {"name": "dead", "context": {"cluster": "dead", "user": "dead", "namespace": namespace}}
    ]
    for name, source in sources.items():
        data = yaml.load(source.read_text(), Loader=_Loader)
        current = next(c for c in data["contexts"] if c["name"] == data["current-context"])["context"]
        cluster = next(c for c in data["clusters"] if c["name"] == current["cluster"])["cluster"]
        user = next(u for u in data["users"] if u["name"] == current["user"])["user"]
        doc["clusters"].append({"name": name, "cluster": cluster})
        doc["users"].append({"name": name, "user": user})
        context = {"cluster": name, "user": name, "namespace": namespace}
        doc["contexts"].append({"name": name, "context": context})
    path.write_text(yaml.safe_dump(doc))
    return path


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
