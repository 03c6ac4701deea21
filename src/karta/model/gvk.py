"""Group, version and kind as one value: :class:`GVK` and :class:`GroupKind`.

Every layer names Kubernetes types by (group, version, kind): a definition's root kind, a served
resource, a workload's ``apiVersion``/``kind``. These named tuples replace the raw ``(g, v, k)``
tuples that used to be indexed by position; being tuples, they still compare equal to them and
unpack as before. Spellings, one each:

- ``str(gvk)``: ``group/version, Kind=kind`` (the API machinery's, used in messages);
- :attr:`GVK.api_version`: ``group/version`` (``version`` alone for the core group);
- :attr:`GVK.token`: ``Kind.version.group`` (``Kind.version`` for the core group), how ``kli``
  spells a root kind in tables and ambiguity messages.

Also Kubernetes' version priority (:func:`version_key`: GA > beta > alpha, then the numbers), by
which a kind served at several versions is read at its most stable one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["GVK", "GroupKind", "most_stable", "split_api_version", "version_key"]

_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_key(version: str) -> tuple[int, int, int, str]:
    """Kubernetes version priority as a sort key (larger = more stable/newer): GA > beta > alpha,
    then the higher major, then the higher minor; anything else sorts lowest, by name."""
    m = _VERSION.match(version)
    if m is None:
        return (-1, 0, 0, version)
    stage = {None: 3, "beta": 2, "alpha": 1}[m.group(2)]
    return (stage, int(m.group(1)), int(m.group(3) or 0), "")


def most_stable(versions: Iterable[str]) -> str | None:
    """The version of highest priority (:func:`version_key`), or None for none."""
    return max(versions, key=version_key, default=None)


def split_api_version(api_version: str) -> tuple[str, str]:
    """``(group, version)`` of an ``apiVersion`` (``v1`` is the core group: ``("", "v1")``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


class GroupKind(NamedTuple):
    """A kind at any version (what ``kli get --all-types`` lists once)."""

    group: str
    kind: str


class GVK(NamedTuple):
    """A group, version and kind (``group`` is ``""`` for the core group)."""

    group: str
    version: str
    kind: str

    @classmethod
    def of(cls, api_version: str, kind: str) -> GVK:
        """The GVK of an object's ``apiVersion`` and ``kind``."""
        group, version = split_api_version(api_version)
        return cls(group, version, kind)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_kind(self) -> GroupKind:
        return GroupKind(self.group, self.kind)

    @property
    def token(self) -> str:
        """``Kind.version.group`` (``Kind.version`` for the core group)."""
        return f"{self.kind}.{self.version}.{self.group}" if self.group else f"{self.kind}.{self.version}"

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Kind={self.kind}"
