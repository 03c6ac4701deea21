"""Gang object names: KAI's fixed PodGroup names (docs/spec/format.md#kai-current, #kai-alpha) and the naming
rules of docs/spec/gang-backends.md#naming (DNS-1123 checks, shortening long names with a hash suffix).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from karta.errors import GangError

__all__ = [
    "DNS1123_LABEL_MAX",
    "DNS1123_SUBDOMAIN_MAX",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "kai_alpha_pod_group_name",
    "kai_pod_group_name",
    "shorten_name",
]

DNS1123_SUBDOMAIN_MAX = 253
DNS1123_LABEL_MAX = 63

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_RE = re.compile(rf"^{_LABEL}$")
_SUBDOMAIN_RE = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")


def is_dns1123_subdomain(name: str) -> bool:
    """Lower-case alphanumerics, ``-`` and ``.``, at most 253 characters."""
    return len(name) <= DNS1123_SUBDOMAIN_MAX and _SUBDOMAIN_RE.match(name) is not None


def is_dns1123_label(name: str) -> bool:
    """Lower-case alphanumerics and ``-``, at most 63 characters."""
    return len(name) <= DNS1123_LABEL_MAX and _LABEL_RE.match(name) is not None


def kai_pod_group_name(top_owner_uid: str, pod_group_name: str) -> str:
    """KAI's PodGroup name for the current format: ``pg-<topOwnerUID>-<podGroup.name>``."""
    return f"pg-{top_owner_uid}-{pod_group_name}"


def kai_alpha_pod_group_name(top_owner_uid: str, keys: Sequence[str] = ()) -> str:
    """KAI's PodGroup name for the alpha format: ``pg-<uid>`` or ``pg-<uid>-<key1>-<key2>…``.

    With keys the name must be a DNS-1123 subdomain, else GangError
    ``Karta grouping keys [<keys>] produce invalid Kubernetes PodGroup name "<name>"``.
    """
    name = f"pg-{top_owner_uid}"
    if not keys:
        return name
    name = f"{name}-{'-'.join(keys)}"
    if not is_dns1123_subdomain(name):
        raise GangError(
            f'Karta grouping keys [{" ".join(keys)}] produce invalid Kubernetes PodGroup name "{name}"'
        )
    return name


def shorten_name(name: str, limit: int = DNS1123_SUBDOMAIN_MAX) -> str:
    """``name`` if it fits ``limit``; else its first ``limit - 9`` characters, ``-`` and the first
    8 hex digits of its SHA-256 (docs/spec/gang-backends.md#naming). Dots that would end the kept prefix are
    dropped (our rule: ``x.-<hash>`` is no DNS-1123 subdomain, while the full name was one).
    """
    if len(name) <= limit:
        return name
    import hashlib  # only for a long name: its import (OpenSSL) is ~1.5 ms of start-up

    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: limit - 9].rstrip('.')}-{digest}"
