"""The Kubernetes API client: get, list with paging, watch, create, server-side apply, patch, delete.

Owns :class:`KubeClient` (one per cluster connection; it holds the transport, credentials and the
cached :class:`~karta.kube.discovery.Discovery`), :class:`ObjectList` and :class:`WatchEvent`.
Types are given as a :class:`ResourceType` or a kubectl-style token (resolved by discovery).
Error answers become :class:`karta.errors.ApiError` carrying the HTTP status and the ``Status``
reason; unreachable servers :class:`karta.errors.ClusterUnreachableError`.

Decoding (:func:`_decode`): orjson, as JSON readers and the API server read numbers (an integer
beyond 64 bits is a double). An answer orjson refuses is read once more by the standard library
only to say what is wrong and where: a number no double can hold (a 5,000-digit integer,
``1e400``), ``NaN`` or ``Infinity`` is a :class:`~karta.errors.ClusterError` naming the object (its
kind, namespace and name) and the field, and so is nesting too deep to read; anything else stays
"an undecodable answer". Never a crash, whatever the server (or a proxy) sends.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson

from karta.errors import ApiError, ClusterError
from karta.jq._values import decoded_input
from karta.kube.auth import Credentials
from karta.kube.config import ClusterConfig, load_config
from karta.kube.discovery import Discovery
from karta.kube.resources import ResourceType
from karta.kube.sources import ConfigOverrides
from karta.kube.transport import HttpResponse, HttpStream, HttpTransport, Transport
from karta.kube.unreadable import decode_items, label_of, split_list

FIELD_MANAGER = "karta"
DEFAULT_CHUNK_SIZE = 500
USER_AGENT = "karta/0.1"
JSON = "application/json"
METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
# Client-side socket slack on top of the server's watch timeout (a dead peer must not hang us).
WATCH_SOCKET_SLACK = 30.0
DEFAULT_WATCH_TIMEOUT = 300


@dataclass
class ObjectList:
    """One listing or one page of it: the items (with ``apiVersion``/``kind`` filled in) and its
    resourceVersion. ``restarted`` marks the page of :meth:`KubeClient.iter_pages` that re-lists
    from scratch after a continue token expired: it holds the complete list, and replaces every
    page received before it."""

    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str = ""
    pages: int = 1
    restarted: bool = False
    unreadable: tuple[str, ...] = ()  # items the client could not decode: ``<Kind ns/name>: <why>``


@dataclass(frozen=True)
class WatchEvent:
    """``ADDED``, ``MODIFIED``, ``DELETED`` or ``BOOKMARK`` (errors are raised, not yielded)."""

    type: str
    object: dict[str, Any]

    @property
    def resource_version(self) -> str:
        return str((self.object.get("metadata") or {}).get("resourceVersion") or "")


@dataclass
class WatchStream:
    """One watch request; iterate for events, :meth:`close` (from any thread) to stop."""

    _stream: HttpStream
    _rtype: ResourceType
    resource_version: str = ""
    _closed: bool = field(default=False, repr=False)

    def __iter__(self) -> Iterator[WatchEvent]:
        try:
            for line in self._stream.lines():
                try:
                    doc = _decode(line, what="watch event")
                except ClusterError as exc:
                    raise UnreadableEventError(f"{exc} (watch event of {_event_label(line)})") from exc
                kind = str(doc.get("type", ""))
                obj = doc.get("object") or {}
                if kind == "ERROR":
                    raise _status_error(obj, default_status=int(obj.get("code") or 500))
                if kind != "BOOKMARK":
                    _fill_type(obj, self._rtype)
                event = WatchEvent(kind, obj)
                if event.resource_version:
                    self.resource_version = event.resource_version
                yield event
        except ClusterError:
            if self._closed:
                return
            raise
        finally:
            self._stream.close()

    def close(self) -> None:
        self._closed = True
        self._stream.close()


class KubeClient:
    """A connection to one API server (thread-safe; share one per process and cluster)."""

    def __init__(self, config: ClusterConfig, *, transport: Transport | None = None) -> None:
        self.config = config
        self.credentials = Credentials(config)
        self.transport: Transport = transport or HttpTransport(config, self.credentials)
        self._discovery: Discovery | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, overrides: ConfigOverrides | None = None) -> KubeClient:
        """A client for kubectl's precedence of kubeconfig, flags and in-cluster config."""
        return cls(load_config(overrides))

    @property
    def namespace(self) -> str:
        """The default namespace (``-n``, else the context's, else ``default``)."""
        return self.config.namespace

    @property
    def discovery(self) -> Discovery:
        with self._lock:
            if self._discovery is None:
                self._discovery = Discovery(self._discovery_fetch)
            return self._discovery

    def fork(self) -> KubeClient:
        """Another client for the same cluster and identity with its own connection pool (a part
        whose latency matters, e.g. an admission webhook, then never waits behind the others'
        requests). An injected transport is shared."""
        transport = None if isinstance(self.transport, HttpTransport) else self.transport
        return KubeClient(self.config, transport=transport)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> KubeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- low level ----------------------------------------------------------------------------
    def _headers(self, accept: str, content_type: str | None = None) -> list[tuple[str, str]]:
        headers = [("Accept", accept), ("User-Agent", USER_AGENT)]
        if content_type:
            headers.append(("Content-Type", content_type))
        headers.extend(self.credentials.headers().items())
        headers.extend(("Impersonate-Group", g) for g in self.credentials.impersonate_groups())
        return headers

    def _after_unauthorized(self) -> bool:
        """Refresh plugin or file credentials after a 401; True if a retry may help."""
        if not self.credentials.can_refresh():
            return False
        self.credentials.invalidate()
        if isinstance(self.transport, HttpTransport):
            self.transport.reset_tls()
        return True

    def raw(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = JSON,
    ) -> HttpResponse:
        """One request; error statuses raise :class:`ApiError`."""
        target = path + ("?" + urlencode(params) if params else "")
        for attempt in range(2):
            resp = self.transport.request(
                method,
                target,
                headers=self._headers(accept, content_type),
                body=body,
                timeout=self.config.timeout,
            )
            if resp.status == 401 and attempt == 0 and self._after_unauthorized():
                continue
            if resp.status >= 400:
                raise _error_from(resp.status, resp.body)
            return resp
        raise AssertionError("unreachable")

    def request_json(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> Any:
        data = None if body is None else orjson.dumps(body)
        resp = self.raw(
            method,
            path,
            params=params,
            body=data,
            content_type=content_type if data is not None else None,
            accept=accept,
        )
        return _decode(resp.body)

    def _discovery_fetch(self, path: str, accept: str) -> tuple[str, Any]:
        resp = self.raw("GET", path, accept=accept)
        return resp.headers.get("content-type", ""), _decode(resp.body)

    def resource(self, what: ResourceType | str) -> ResourceType:
        return what if isinstance(what, ResourceType) else self.discovery.resolve(what)

    def _ns(self, rtype: ResourceType, namespace: str | None) -> str | None:
        if not rtype.namespaced:
            return None
        return namespace or self.namespace

    # -- reads --------------------------------------------------------------------------------
    def get(
        self,
        what: ResourceType | str,
        name: str,
        *,
        namespace: str | None = None,
        metadata_only: bool = False,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        """One object; ``namespace=None`` means the client's default for namespaced types;
        ``resource_version="0"``: from the API server's watch cache (no etcd read)."""
        rtype = self.resource(what)
        obj = self.request_json(
            "GET",
            rtype.object_path(name, self._ns(rtype, namespace)),
            params={"resourceVersion": resource_version} if resource_version is not None else None,
            accept=METADATA_ACCEPT if metadata_only else JSON,
        )
        if not metadata_only:
            _fill_type(obj, rtype)
        return dict(obj)

    def iter_pages(
        self,
        what: ResourceType | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        resource_version: str | None = None,
        metadata_only: bool = False,
        keep_readable: bool = False,
    ) -> Iterator[ObjectList]:
        """Pages of at most ``chunk_size`` items (0 = one unpaged list); ``namespace=None`` lists
        a namespaced type across all namespaces. An item the client cannot decode makes its page
        a :class:`ClusterError` naming it, unless ``keep_readable``: then the page keeps the other
        items and names it in :attr:`ObjectList.unreadable` (the caller says so).

        The one 410 policy of every list (client-go's pager does the same): when a continue token
        expires mid-way (410 Gone after at least one page), the type is listed again, unpaged, and
        that complete list is yielded as one last page with ``restarted=True``; a consumer drops
        what the earlier pages gave it. A 410 on the first page is raised."""
        if chunk_size < 0:
            raise ValueError("chunk_size must be 0 (no paging) or positive")
        rtype = self.resource(what)
        query: dict[str, Any] = dict(
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
            metadata_only=metadata_only,
            keep_readable=keep_readable,
        )
        received = 0
        try:
            for page in self._pages(rtype, chunk_size=chunk_size, **query):
                received += 1
                yield page
        except ApiError as exc:
            if exc.status != 410 or received == 0:
                raise
            full = next(self._pages(rtype, chunk_size=0, **query))
            yield ObjectList(full.items, full.resource_version, restarted=True, unreadable=full.unreadable)

    def _pages(
        self,
        rtype: ResourceType,
        *,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        chunk_size: int,
        resource_version: str | None,
        metadata_only: bool,
        keep_readable: bool,
    ) -> Iterator[ObjectList]:
        path = rtype.collection_path(namespace)
        params: dict[str, str] = {}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        if chunk_size:
            params["limit"] = str(chunk_size)
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        accept = METADATA_LIST_ACCEPT if metadata_only else JSON
        while True:
            resp = self.raw("GET", path, params=params, accept=accept)
            doc, unreadable = _decode_list(resp.body) if keep_readable else (_as_dict(_decode(resp.body)), ())
            meta = doc.get("metadata") or {}
            items = list(doc.get("items") or [])
            if not metadata_only:
                for item in items:
                    _fill_type(item, rtype)
            token = str(meta.get("continue") or "")
            yield ObjectList(items, str(meta.get("resourceVersion") or ""), token, unreadable=unreadable)
            if not token:
                return
            params["continue"] = token
            params.pop("resourceVersion", None)  # not allowed together with continue

    def list(
        self,
        what: ResourceType | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        resource_version: str | None = None,
        metadata_only: bool = False,
        keep_readable: bool = False,
    ) -> ObjectList:
        """Every item, fetched in pages (:meth:`iter_pages`, with its 410 policy: an expired
        continue token means one unpaged list instead). The resourceVersion is the first page's
        (the snapshot all pages belong to)."""
        items: list[dict[str, Any]] = []
        unreadable: list[str] = []
        version = ""
        pages = 0
        for page in self.iter_pages(
            what,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            chunk_size=chunk_size,
            resource_version=resource_version,
            metadata_only=metadata_only,
            keep_readable=keep_readable,
        ):
            if page.restarted:
                items, unreadable, version, pages = [], [], "", 0
            items.extend(page.items)
            unreadable.extend(page.unreadable)
            version = version or page.resource_version
            pages += 1
        return ObjectList(items, version, pages=pages, unreadable=tuple(unreadable))

    def watch(
        self,
        what: ResourceType | str,
        *,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        bookmarks: bool = True,
        timeout_seconds: int | None = DEFAULT_WATCH_TIMEOUT,
        metadata_only: bool = False,
        send_initial_events: bool = False,
    ) -> WatchStream:
        """Start one watch (from ``resource_version`` if given). A too-old resourceVersion raises
        :class:`ApiError` with status 410, at the start or as an ERROR event while iterating.

        ``send_initial_events`` asks for the current state as ADDED events first, closed by a
        BOOKMARK annotated ``k8s.io/initial-events-end`` (a streaming list; needs bookmarks)."""
        rtype = self.resource(what)
        params: dict[str, str] = {"watch": "true"}
        if resource_version:
            params["resourceVersion"] = resource_version
        if bookmarks or send_initial_events:
            params["allowWatchBookmarks"] = "true"
        if send_initial_events:
            params["sendInitialEvents"] = "true"
            params["resourceVersionMatch"] = "NotOlderThan"
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        if timeout_seconds:
            params["timeoutSeconds"] = str(timeout_seconds)
        target = rtype.collection_path(namespace) + "?" + urlencode(params)
        socket_timeout = (timeout_seconds or DEFAULT_WATCH_TIMEOUT) + WATCH_SOCKET_SLACK
        accept = METADATA_ACCEPT if metadata_only else JSON
        for attempt in range(2):
            stream = self.transport.stream(
                "GET", target, headers=self._headers(accept), timeout=socket_timeout
            )
            if stream.status == 200:
                return WatchStream(stream, rtype, resource_version or "")
            body = stream.read_all()
            stream.close()
            if stream.status == 401 and attempt == 0 and self._after_unauthorized():
                continue
            raise _error_from(stream.status, body)
        raise AssertionError("unreachable")

    # -- writes -------------------------------------------------------------------------------
    def create(self, obj: Mapping[str, Any], *, namespace: str | None = None) -> dict[str, Any]:
        rtype = self._type_of(obj)
        ns = self._ns(rtype, namespace or _meta(obj).get("namespace"))
        created = self.request_json("POST", rtype.collection_path(ns), body=obj)
        _fill_type(created, rtype)
        return dict(created)

    def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str = FIELD_MANAGER,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` (its apiVersion, kind, metadata.name and, for namespaced
        types, metadata.namespace or the client's default) as ``field_manager``."""
        rtype = self._type_of(obj)
        name = _meta(obj).get("name")
        if not name:
            raise ClusterError("server-side apply needs metadata.name")
        body = copy.deepcopy(dict(obj))
        body["metadata"] = {k: v for k, v in _meta(obj).items() if k != "managedFields"}
        ns = self._ns(rtype, _meta(obj).get("namespace"))
        if ns:
            body["metadata"]["namespace"] = ns
        params = {"fieldManager": field_manager}
        if force:
            params["force"] = "true"
        if dry_run:
            params["dryRun"] = "All"
        applied = self.request_json(
            "PATCH",
            rtype.object_path(str(name), ns, subresource),
            params=params,
            body=body,
            content_type="application/apply-patch+yaml",
        )
        _fill_type(applied, rtype)
        return dict(applied)

    def patch(
        self,
        what: ResourceType | str,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """A ``merge`` (RFC 7386), ``json`` (RFC 6902) or ``strategic`` merge patch."""
        content_types = {
            "merge": "application/merge-patch+json",
            "json": "application/json-patch+json",
            "strategic": "application/strategic-merge-patch+json",
        }
        if patch_type not in content_types:
            raise ValueError(f"unknown patch type {patch_type!r}")
        rtype = self.resource(what)
        patched = self.request_json(
            "PATCH",
            rtype.object_path(name, self._ns(rtype, namespace), subresource),
            params={"fieldManager": FIELD_MANAGER},
            body=patch,
            content_type=content_types[patch_type],
        )
        _fill_type(patched, rtype)
        return dict(patched)

    def delete(
        self,
        what: ResourceType | str,
        name: str,
        *,
        namespace: str | None = None,
        propagation: str | None = None,
    ) -> None:
        rtype = self.resource(what)
        body = {"propagationPolicy": propagation} if propagation else None
        self.request_json("DELETE", rtype.object_path(name, self._ns(rtype, namespace)), body=body)

    def _type_of(self, obj: Mapping[str, Any]) -> ResourceType:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not api_version or not kind:
            raise ClusterError("the object needs apiVersion and kind")
        return self.discovery.for_api_version(str(api_version), str(kind))


# ------------------------------------------------------------------------------------- helpers


def _meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _fill_type(obj: Any, rtype: ResourceType) -> None:
    if isinstance(obj, dict):
        obj.setdefault("apiVersion", rtype.api_version)
        obj.setdefault("kind", rtype.kind)


class UnreadableEventError(ClusterError):
    """A watch event whose object the client cannot decode: the list-then-watch re-lists, which
    keeps every other object and names this one (:attr:`ObjectList.unreadable`)."""


def _event_label(line: bytes) -> str:
    start = line.find(b'"object"')
    return label_of(line[start:] if start >= 0 else line)


def _decode_list(body: bytes) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A list answer decoded; when orjson refuses it whole, item by item
    (:mod:`karta.kube.unreadable`): the readable items kept, the others named."""
    try:
        doc = _decode(body, what="list")
    except ClusterError:
        split = split_list(body)
        if split is None:
            raise
        rest, raw_items = split
        doc = _decode(rest, what="list")
        good, bad = decode_items(raw_items, _decode, lambda item: _unreadable_reason(item))
        doc["items"] = good
        return doc, tuple(bad)
    return _as_dict(doc), ()


def _as_dict(doc: Any) -> dict[str, Any]:
    return doc if isinstance(doc, dict) else {}


def _unreadable_reason(item: bytes) -> str:
    problem = _number_problem(item)
    if problem is None:
        return "not valid JSON"
    return problem.replace("an answer nested too deeply to read", "nested too deeply to read")


def _decode(body: bytes, *, what: str = "answer") -> Any:
    if not body:
        return {}
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        problem = _number_problem(body)
        if problem is not None:
            raise ClusterError(f"the server sent {problem}") from exc
        raise ClusterError(f"the server sent an undecodable {what}: {body[:200]!r}") from exc
    # Numbers beyond 2**53 become the original's doubles here, once per answer (one byte scan;
    # the evaluators of kli, the web view and the controller are ``decoded`` and do not look again).
    return decoded_input(value, body)


_MAX_INT_DIGITS = 4300  # Python's int-string conversion limit (karta.model.documents agrees)


class _BadNumber:
    """A number of an answer that no double can hold (found by :func:`_number_problem`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def describe(self, label: str, path: str) -> str:
        if self.text in ("NaN", "Infinity", "-Infinity"):
            return f"{label} with {self.text} at {path}, which is not a JSON number"
        shown = self.text if len(self.text) <= 24 else f"{self.text[:12]}... ({len(self.text):,} characters)"
        return f"{label} with the number {shown} at {path}, too large for a double (kli cannot read it)"


def _bad_int(text: str) -> Any:
    return _BadNumber(text) if len(text) > 309 else int(text)  # 309 digits: past a double's range


def _bad_float(text: str) -> Any:
    value = float(text)
    return _BadNumber(text) if value in (float("inf"), float("-inf")) else value


def _number_problem(body: bytes) -> str | None:
    """What makes ``body`` unreadable, when it is a number (or nesting): ``<object> holds <what> at
    <path>``; None when it is anything else (the caller words that)."""
    import json

    try:
        doc = json.loads(body, parse_int=_bad_int, parse_float=_bad_float, parse_constant=_BadNumber)
    except RecursionError:
        return "an answer nested too deeply to read"
    except ValueError:  # not JSON at all (or not UTF-8): not a number problem
        return None
    stack: list[tuple[Any, str, Any]] = [(doc, "", doc)]
    while stack:  # the first bad number, with the object that holds it
        value, path, holder = stack.pop()
        if isinstance(value, _BadNumber):
            return value.describe(_object_label(holder), path or ".")
        if isinstance(value, dict):
            if value is doc and isinstance(value.get("items"), list):  # a list: name the item
                stack.extend((item, "", item) for item in reversed(value["items"]))
                rest = {k: v for k, v in value.items() if k != "items"}
                stack.extend((v, f".{k}", holder) for k, v in reversed(list(rest.items())))
                continue
            if value is doc and isinstance(value.get("object"), dict) and "type" in value:  # an event
                stack.append((value["object"], "", value["object"]))
                continue
            stack.extend((v, f"{path}.{k}", holder) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]", holder) for i, v in reversed(list(enumerate(value))))
    return None


def _object_label(obj: Any) -> str:
    """``Kind namespace/name`` of an object of an answer, as far as it says."""
    if not isinstance(obj, dict):
        return "an answer"
    raw = obj.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if isinstance(p, str) and p)
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "an object"
    return f"{kind} {name}".strip() if name else str(kind)


def _error_from(status: int, body: bytes) -> ApiError:
    try:
        doc = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        doc = {}
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return _status_error(doc, default_status=status)
    text = body.decode(errors="replace").strip()[:300] or f"HTTP {status}"
    return ApiError(text, status=status, reason=_REASONS.get(status, ""))


def _status_error(doc: Mapping[str, Any], *, default_status: int) -> ApiError:
    status = int(doc.get("code") or default_status)
    reason = str(doc.get("reason") or _REASONS.get(status, ""))
    message = str(doc.get("message") or reason or f"HTTP {status}")
    return ApiError(message, status=status, reason=reason)


_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Gone",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
