"""What the API server serves: one :class:`ResourceType` per (group, version, resource).

Owns the resource record that discovery produces and the URL paths built from it. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from karta.model.gvk import GVK


@dataclass(frozen=True)
class ResourceType:
    """A served resource: GVK, plural/singular/short names, scope and verbs."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str = ""
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return self.gvk.api_version

    @property
    def gvk(self) -> GVK:
        return GVK(self.group, self.version, self.kind)

    @property
    def group_resource(self) -> str:
        """``plural.group`` (``pods`` for the core group), as in RBAC and CRD names."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def token(self) -> str:
        """``Kind.version.group`` (17.4's spelling for ambiguity messages)."""
        return self.gvk.token

    def base_path(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def collection_path(self, namespace: str | None = None) -> str:
        """The list/watch/create URL; ``namespace=None`` on a namespaced type means all namespaces."""
        if self.namespaced and namespace:
            return f"{self.base_path()}/namespaces/{quote(namespace, safe='')}/{self.plural}"
        return f"{self.base_path()}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None, subresource: str | None = None) -> str:
        path = f"{self.collection_path(namespace if self.namespaced else None)}/{quote(name, safe='')}"
        return f"{path}/{subresource}" if subresource else path

    def supports(self, *verbs: str) -> bool:
        return all(v in self.verbs for v in verbs)
