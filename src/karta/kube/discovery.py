"""API discovery: which resources the server serves, and kubectl-style type tokens mapped to them.

Owns :class:`Discovery`. It reads aggregated discovery (``apidiscovery.k8s.io/v2``: two requests,
``/api`` and ``/apis``) and falls back to the legacy per-group-version documents on servers that
do not offer it. The result is cached on the object (one per client) and fetched again, at most
every :data:`REFRESH_INTERVAL` seconds, when a lookup misses (a CRD may have been installed since).

Token rules (as kubectl): the lower-cased token is matched against plural names, then singular
names, then short names, then kinds; ``name.group`` and ``name.version.group`` narrow the group
and version. Among several groups the server's priority order wins (core first, then the order
of ``/apis``); within a group the preferred (first-listed) version. Subresources are not types.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from karta.errors import ApiError, UnknownResourceTypeError
from karta.kube.resources import ResourceType

AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)
REFRESH_INTERVAL = 2.0
_VERSION = re.compile(r"v\d+(?:(?:alpha|beta)\d+)?")

# fetch(path, accept) -> (content type, decoded JSON); raises ApiError on error statuses.
Fetch = Callable[[str, str], tuple[str, Any]]


class Discovery:
    """The served resources of one cluster, in priority order."""

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch
        self._lock = threading.Lock()
        self._resources: list[ResourceType] | None = None
        self._loaded_at = 0.0

    # -- loading ------------------------------------------------------------------------------
    def resources(self) -> list[ResourceType]:
        """Every served (group, version, resource), core group first, preferred versions first."""
        with self._lock:
            if self._resources is None:
                self._resources = self._load()
                self._loaded_at = time.monotonic()
            return self._resources

    def invalidate(self) -> None:
        with self._lock:
            self._resources = None

    def _refresh_after_miss(self) -> bool:
        """Fetch again if the cache is older than REFRESH_INTERVAL; True if it was refetched."""
        with self._lock:
            if self._resources is not None and time.monotonic() - self._loaded_at < REFRESH_INTERVAL:
                return False
            self._resources = None
        self.resources()
        return True

    def _load(self) -> list[ResourceType]:
        out: list[ResourceType] = []
        for root in ("/api", "/apis"):
            content_type, doc = self._fetch(root, AGGREGATED_ACCEPT)
            if "as=APIGroupDiscoveryList" in content_type or doc.get("kind") == "APIGroupDiscoveryList":
                out.extend(_from_aggregated(doc))
            else:
                out.extend(self._legacy(root, doc))
        return out

    def _legacy(self, root: str, doc: dict[str, Any]) -> list[ResourceType]:
        out: list[ResourceType] = []
        if root == "/api":
            for version in doc.get("versions") or []:
                _, resources = self._fetch(f"/api/{version}", "application/json")
                out.extend(_from_resource_list("", str(version), resources))
            return out
        for group in doc.get("groups") or []:
            name = str(group.get("name", ""))
            preferred = (group.get("preferredVersion") or {}).get("version")
            versions = [str(v["version"]) for v in group.get("versions") or []]
            versions.sort(key=lambda v: v != preferred)  # stable: preferred first, then server order
            for version in versions:
                try:
                    _, resources = self._fetch(f"/apis/{name}/{version}", "application/json")
                except ApiError as exc:
                    if exc.status in (404, 503):  # an aggregated API that is down: skip it, as kubectl
                        continue
                    raise
                out.extend(_from_resource_list(name, version, resources))
        return out

    # -- lookups ------------------------------------------------------------------------------
    def candidates(self, token: str) -> list[ResourceType]:
        """Every match of a kubectl type token, best first (one per group)."""
        return _match(self.resources(), token)

    def resolve(self, token: str) -> ResourceType:
        """The best match of ``token``; error ``the server doesn't have a resource type "<t>"``."""
        found = self.candidates(token)
        if not found and self._refresh_after_miss():
            found = self.candidates(token)
        if not found:
            raise UnknownResourceTypeError(f'the server doesn\'t have a resource type "{token}"')
        return found[0]

    def find(self, group: str, version: str, kind: str) -> ResourceType | None:
        """The resource serving exactly this GVK, or None (no refetch)."""
        for r in self.resources():
            if r.gvk == (group, version, kind):
                return r
        return None

    def for_gvk(self, group: str, version: str, kind: str) -> ResourceType:
        found = self.find(group, version, kind)
        if found is None and self._refresh_after_miss():
            found = self.find(group, version, kind)
        if found is None:
            gv = f"{group}/{version}" if group else version
            raise UnknownResourceTypeError(f"the server doesn't serve kind {kind} in {gv}")
        return found

    def for_api_version(self, api_version: str, kind: str) -> ResourceType:
        group, _, version = api_version.rpartition("/")
        return self.for_gvk(group, version, kind)

    def preferred(self, group: str, kind: str) -> ResourceType | None:
        """The preferred served version of a group/kind (17.4 ``--all-types``), or None."""
        for r in self.resources():
            if r.group == group and r.kind == kind:
                return r
        return None

    def serves(self, group: str, version: str, kind: str) -> bool:
        """True if the GVK is served with list and watch (the operator's ``CRDExists``, 15.1)."""
        found = self.find(group, version, kind)
        return found is not None and found.supports("list", "watch")


# ------------------------------------------------------------------------------------- parsing


def _from_aggregated(doc: dict[str, Any]) -> Iterable[ResourceType]:
    for group in doc.get("items") or []:
        name = str((group.get("metadata") or {}).get("name", ""))
        for version in group.get("versions") or []:
            v = str(version.get("version", ""))
            for res in version.get("resources") or []:
                kind_ref = res.get("responseKind") or {}
                kind = str(kind_ref.get("kind") or "")
                if not kind:
                    continue
                yield ResourceType(
                    group=name,
                    version=v,
                    kind=kind,
                    plural=str(res.get("resource", "")),
                    singular=str(res.get("singularResource") or kind.lower()),
                    namespaced=res.get("scope") == "Namespaced",
                    short_names=tuple(res.get("shortNames") or ()),
                    verbs=tuple(res.get("verbs") or ()),
                    categories=tuple(res.get("categories") or ()),
                )


def _from_resource_list(group: str, version: str, doc: dict[str, Any]) -> Iterable[ResourceType]:
    for res in doc.get("resources") or []:
        name = str(res.get("name", ""))
        if "/" in name:  # a subresource (pods/log, deployments/scale)
            continue
        kind = str(res.get("kind", ""))
        yield ResourceType(
            group=str(res.get("group") or group),
            version=str(res.get("version") or version),
            kind=kind,
            plural=name,
            singular=str(res.get("singularName") or kind.lower()),
            namespaced=bool(res.get("namespaced", False)),
            short_names=tuple(res.get("shortNames") or ()),
            verbs=tuple(res.get("verbs") or ()),
            categories=tuple(res.get("categories") or ()),
        )


def _match(resources: list[ResourceType], token: str) -> list[ResourceType]:
    t = token.strip().lower()
    if not t:
        return []
    name, dot, rest = t.partition(".")
    if dot:
        version, dot2, group = rest.partition(".")
        if dot2 and _VERSION.fullmatch(version):
            exact = [r for r in resources if r.group == group and r.version == version]
            found = _best(exact, name)
            if found:
                return found
        return _best([r for r in resources if r.group == rest], name)
    return _best(resources, t)


def _best(resources: list[ResourceType], name: str) -> list[ResourceType]:
    """Matches of the lowest tier (plural < singular < short name < kind), one per group."""
    tiers: tuple[Callable[[ResourceType], bool], ...] = (
        lambda r: r.plural == name,
        lambda r: r.singular == name,
        lambda r: name in r.short_names,
        lambda r: r.kind.lower() == name,
    )
    for matches in tiers:
        found = [r for r in resources if matches(r)]
        if found:
            seen: set[tuple[str, str]] = set()
            out: list[ResourceType] = []
            for r in found:  # resources are ordered by preference: keep each group's first
                if (r.group, r.plural) not in seen:
                    seen.add((r.group, r.plural))
                    out.append(r)
            return out
    return []
