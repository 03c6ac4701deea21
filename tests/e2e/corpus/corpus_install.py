"""Installing the corpus on an API server: its CRDs, then every workload document as a real object.

Owns :func:`install_corpus`. It creates every CRD of ``crds/`` (waiting for ``Established``), then
for each workload file a fresh namespace, and creates the file's documents in order with
``fieldValidation=Strict`` (a document naming an object the file already created updates it, as
``kubectl apply`` would). A ``status:`` section is written through the ``status`` subresource where
the CRD has one. Every object is read back right away. The alternate MPIJob CRD (same name as the
mpi-operator one) replaces it afterwards for the files that need it. Nothing is skipped: every
document gets an :class:`Outcome`, whether the server took it or not.
"""

from __future__ import annotations

import copy
import hashlib
import re
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..kubehttp import KubeHTTP, Response
from .corpus_files import CorpusCRD, Document, corpus_crds, workload_documents

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@dataclass(frozen=True)
class Resource:
    prefix: str  # /api/v1 or /apis/<group>/<version>
    plural: str
    namespaced: bool
    status_subresource: bool


@dataclass
class Outcome:
    """What the server did with one document."""

    doc: Document
    status: int  # HTTP status of the create/update; 0 when the server has no such resource
    message: str = ""
    path: str | None = None  # the object's URL path once created
    submitted: Any = None
    stored: Any = None  # the object read back right after creation (and status update)
    status_update: int | None = None  # HTTP status of the /status write, when there was one
    lenient: str | None = None  # refused for unknown fields: "created" or "refused" with fieldValidation=Warn

    @property
    def accepted(self) -> bool:
        return self.status in (200, 201) and self.status_update in (None, 200)


@dataclass
class CorpusRun:
    crds: dict[str, str] = field(default_factory=dict)  # CRD file -> "Established" or the error
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def by_ref(self) -> dict[str, Outcome]:
        return {o.doc.ref: o for o in self.outcomes}


def message_of(resp: Response) -> str:
    body = resp.body
    if isinstance(body, dict):
        causes = body.get("details", {}).get("causes", [])
        parts = [str(body.get("message", ""))]
        parts += [f"{c.get('field', '')}: {c.get('message', '')}" for c in causes]
        return "\n".join(parts)
    return str(body).strip()


# --- CRDs -------------------------------------------------------------------------------------------


def _wait_established(cluster: KubeHTTP, names: list[str], *, timeout: float = 120.0) -> dict[str, str]:
    pending = set(names)
    result: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for name in sorted(pending):
            got = cluster.get(f"{CRDS}/{name}").json()
            conditions = {c["type"]: c for c in (got.get("status") or {}).get("conditions") or []}
            if conditions.get("Established", {}).get("status") == "True":
                result[name] = "Established"
                pending.discard(name)
        if pending:
            time.sleep(0.2)
    for name in pending:
        result[name] = "not Established in time"
    return result


def _install_crds(cluster: KubeHTTP, crds: list[CorpusCRD]) -> dict[str, str]:
    result: dict[str, str] = {}
    posted: dict[str, str] = {}
    for crd in crds:
        resp = cluster.post(CRDS, crd.body, timeout=120.0)
        if resp.status in (201, 409):
            posted[crd.name] = crd.file
        else:
            result[crd.file] = f"HTTP {resp.status}: {message_of(resp)}"
    for name, state in _wait_established(cluster, list(posted)).items():
        result[posted[name]] = state
    return result


def _replace_crd(cluster: KubeHTTP, crd: CorpusCRD, *, timeout: float = 120.0) -> dict[str, str]:
    """Delete the CRD of the same name (and with it its objects), then install ``crd``."""
    cluster.delete(f"{CRDS}/{crd.name}")
    deadline = time.monotonic() + timeout
    while cluster.get(f"{CRDS}/{crd.name}").status != 404:
        if time.monotonic() > deadline:
            return {crd.file: "the CRD it replaces was not deleted in time"}
        time.sleep(0.2)
    return _install_crds(cluster, [crd])


# --- resources ----------------------------------------------------------------------------------------


def _prefix(api_version: str) -> str:
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


class _Resolver:
    """Maps (apiVersion, kind) to its REST resource: corpus CRDs first, then server discovery."""

    def __init__(self, cluster: KubeHTTP) -> None:
        self.cluster = cluster
        self.crds: list[CorpusCRD] = []
        self._discovery: dict[str, list[dict[str, Any]] | str] = {}

    def resolve(self, api_version: str, kind: str) -> Resource | str:
        """The resource, or why there is none."""
        for crd in self.crds:
            if crd.serves(api_version, kind):
                version = api_version.rpartition("/")[2]
                [entry] = [v for v in crd.body["spec"]["versions"] if v["name"] == version]
                return Resource(
                    prefix=_prefix(api_version),
                    plural=crd.body["spec"]["names"]["plural"],
                    namespaced=crd.body["spec"]["scope"] == "Namespaced",
                    status_subresource="status" in entry.get("subresources", {}),
                )
        resources = self._discover(api_version)
        if isinstance(resources, str):
            return f"no resource for kind {kind} in {api_version}: {resources}"
        for r in resources:
            if r["kind"] == kind and "/" not in r["name"]:
                names = {x["name"] for x in resources}
                return Resource(
                    _prefix(api_version), r["name"], r["namespaced"], f"{r['name']}/status" in names
                )
        return f"no resource for kind {kind} in {api_version}"

    def _discover(self, api_version: str) -> list[dict[str, Any]] | str:
        if api_version not in self._discovery:
            resp = self.cluster.get(_prefix(api_version))
            if resp.status == 200:
                self._discovery[api_version] = resp.json()["resources"]
            else:
                self._discovery[api_version] = f"not served (discovery: HTTP {resp.status})"
        return self._discovery[api_version]


# --- documents ----------------------------------------------------------------------------------------


def _namespace_for(file: str, run: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", file.removesuffix(".yaml").lower()).strip("-")
    digest = hashlib.sha1(file.encode()).hexdigest()[:5]
    return f"c{run}-{slug[:44].rstrip('-')}-{digest}"


def _create_namespace(cluster: KubeHTTP, name: str) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    resp = cluster.post("/api/v1/namespaces", body)
    assert resp.status == 201, f"namespace {name}: HTTP {resp.status} {resp.body}"


def _send(cluster: KubeHTTP, method: str, path: str, body: Any, *, params: dict[str, str]) -> Response:
    # Right after a CRD becomes Established its REST endpoint can take a moment to appear.
    deadline = time.monotonic() + 15.0
    while True:
        resp = cluster.request(method, path, body=body, params=params)
        if resp.status != 404 or method != "POST" or time.monotonic() > deadline:
            return resp
        if isinstance(resp.body, dict) and resp.body.get("reason") == "NotFound" and resp.body.get("details"):
            return resp  # a real "not found" answer about an object, not a missing endpoint
        time.sleep(0.2)


# Set by the server on every object; a `kubectl get -o yaml` dump carries them, a create must not.
SERVER_SET_METADATA = (
    "resourceVersion",
    "uid",
    "selfLink",
    "creationTimestamp",
    "generation",
    "managedFields",
)


def _prepare(doc: Document, resource: Resource, namespace: str) -> tuple[Any, str | None]:
    body = copy.deepcopy(doc.body)
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        return body, None  # sent as it is: the server says what it thinks of it
    for key in SERVER_SET_METADATA:
        meta.pop(key, None)
    if resource.namespaced:
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    name = meta.get("name")
    return body, str(name) if name else None


def _write(
    cluster: KubeHTTP, resource: Resource, body: Any, *, base: str, existing: str | None, validation: str
) -> tuple[Response, Response | None]:
    """Create (or update ``existing``) and write the status; the answers of both writes."""
    params = {"fieldValidation": validation}
    if existing is not None:
        current = cluster.get(existing).json()
        body = {
            **body,
            "metadata": {**body["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]},
        }
        resp = cluster.request("PUT", existing, body=body, params=params)
    else:
        resp = _send(cluster, "POST", base, body, params=params)
    if resp.status not in (200, 201) or "status" not in body or not resource.status_subresource:
        return resp, None
    obj = {**resp.json(), "status": copy.deepcopy(body["status"])}
    path = f"{base}/{obj['metadata']['name']}"
    return resp, cluster.request("PUT", f"{path}/status", body=obj, params=params)


def _apply_document(
    cluster: KubeHTTP, resolver: _Resolver, doc: Document, namespace: str, created: dict[tuple[str, str], str]
) -> Outcome:
    resource = resolver.resolve(doc.api_version, doc.kind)
    if isinstance(resource, str):
        return Outcome(doc, 0, resource)
    body, name = _prepare(doc, resource, namespace)
    base = (
        resource.prefix + (f"/namespaces/{namespace}" if resource.namespaced else "") + f"/{resource.plural}"
    )
    group_kind = doc.api_version.rpartition("/")[0] + "/" + doc.kind
    existing = created.get((group_kind, name)) if name else None

    resp, update = _write(cluster, resource, body, base=base, existing=existing, validation="Strict")
    outcome = Outcome(doc, resp.status, submitted=body, status_update=update.status if update else None)
    if not outcome.accepted:
        failed = resp if resp.status not in (200, 201) else update
        assert failed is not None
        outcome.message = ("status subresource: " if failed is update else "") + message_of(failed)
        if resp.status in (200, 201):
            outcome.path = f"{base}/{resp.json()['metadata']['name']}"
            created[(group_kind, resp.json()["metadata"]["name"])] = outcome.path
        elif "strict decoding error" in outcome.message:
            # Would the default of older clients (unknown fields dropped with a warning) take it?
            lenient, lenient_update = _write(
                cluster, resource, body, base=base, existing=existing, validation="Warn"
            )
            ok = lenient.status in (200, 201) and (lenient_update is None or lenient_update.status == 200)
            outcome.lenient = "created" if ok else "refused"
            if lenient.status in (200, 201):
                outcome.path = f"{base}/{lenient.json()['metadata']['name']}"
                created[(group_kind, lenient.json()["metadata"]["name"])] = outcome.path
        return outcome
    obj = resp.json()
    outcome.path = f"{base}/{obj['metadata']['name']}"
    created[(group_kind, obj["metadata"]["name"])] = outcome.path
    outcome.stored = cluster.get(outcome.path).json()
    return outcome


def _apply_files(
    cluster: KubeHTTP, resolver: _Resolver, docs: list[Document], run: str, out: list[Outcome]
) -> None:
    by_file: dict[str, list[Document]] = defaultdict(list)
    for doc in docs:
        by_file[doc.file].append(doc)
    for file, file_docs in by_file.items():
        namespace = _namespace_for(file, run)
        _create_namespace(cluster, namespace)
        created: dict[tuple[str, str], str] = {}
        out.extend(_apply_document(cluster, resolver, doc, namespace, created) for doc in file_docs)


def install_corpus(cluster: KubeHTTP) -> CorpusRun:
    """Install every corpus CRD and create every workload document; see the module docstring."""
    run = uuid.uuid4().hex[:4]
    result = CorpusRun()
    first, alternates = corpus_crds()
    docs = workload_documents()
    later = {
        d.file
        for d in docs
        if not any(c.serves(d.api_version, d.kind) for c in first)
        and any(c.serves(d.api_version, d.kind) for c in alternates)
    }
    resolver = _Resolver(cluster)

    start = time.monotonic()
    result.crds.update(_install_crds(cluster, first))
    result.seconds["crds"] = time.monotonic() - start

    start = time.monotonic()
    resolver.crds = first
    _apply_files(cluster, resolver, [d for d in docs if d.file not in later], run, result.outcomes)
    result.seconds["objects"] = time.monotonic() - start

    start = time.monotonic()
    for alternate in alternates:
        result.crds.update(_replace_crd(cluster, alternate))
    resolver.crds = [c for c in first if c.name not in {a.name for a in alternates}] + alternates
    _apply_files(cluster, resolver, [d for d in docs if d.file in later], run, result.outcomes)
    result.seconds["alternate CRDs and their objects"] = time.monotonic() - start

    order = {d.ref: i for i, d in enumerate(docs)}
    result.outcomes.sort(key=lambda o: order[o.doc.ref])
    return result
