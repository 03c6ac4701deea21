"""The Kueue queues as the web view's queue page shows them: per ClusterQueue, the admitted,
reserving and pending workload counts Kueue writes in its status, and the quota used against the
nominal quota per flavor and resource; each LocalQueue with its ClusterQueue. Pure: the
ClusterQueue and LocalQueue objects :func:`karta.kube.kueue_queues` read in, dicts out.

Facts, all Kueue v0.17.0's own (``apis/kueue/v1beta2``): the nominal quota is
``spec.resourceGroups[].flavors[].resources[].nominalQuota``; the quota in use by admitted
Workloads is ``status.flavorsUsage[].resources[].total`` (``borrowed`` the part above the nominal
quota, from the cohort), the quota reserved (admitted or waiting for admission checks)
``status.flavorsReservation``; the counts are ``status.admittedWorkloads``,
``reservingWorkloads`` and ``pendingWorkloads``. Quantities are parsed with
:func:`karta.extract.requests.parse_quantity`; one that is not a quantity is shown as given, with
no bar (``fraction`` None), never as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from karta.errors import QuantityError
from karta.extract.requests import parse_quantity

__all__ = ["queue_rows"]


def queue_rows(
    cluster_queues: Sequence[Mapping[str, Any]], local_queues: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One dict per ClusterQueue, by name: ``{name, admitted, reserving, pending, resources:
    [{flavor, resource, nominal, used, reserved, borrowed, fraction}], localQueues:
    [{namespace, name, admitted, reserving, pending}]}``; ``fraction`` is used / nominal (None
    without a positive nominal quota or with an unreadable quantity); LocalQueues naming a
    ClusterQueue that is not listed get a row of their own with ``missing`` True."""
    locals_of: dict[str, list[dict[str, Any]]] = {}
    for lq in local_queues:
        if not isinstance(lq, Mapping):
            continue
        meta, spec, status = _field(lq, "metadata"), _field(lq, "spec"), _field(lq, "status")
        locals_of.setdefault(_text(spec.get("clusterQueue")), []).append(
            {
                "namespace": _text(meta.get("namespace")),
                "name": _text(meta.get("name")),
                **_counts(status),
            }
        )
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for cq in cluster_queues:
        if not isinstance(cq, Mapping):
            continue
        name = _text(_field(cq, "metadata").get("name"))
        seen.add(name)
        status = _field(cq, "status")
        rows.append(
            {
                "name": name,
                "missing": False,
                **_counts(status),
                "resources": _resources(_field(cq, "spec"), status),
                "localQueues": _sorted(locals_of.get(name, [])),
            }
        )
    for name, lqs in locals_of.items():
        if name not in seen:
            rows.append(
                {
                    "name": name,
                    "missing": True,
                    "admitted": None,
                    "reserving": None,
                    "pending": None,
                    "resources": [],
                    "localQueues": _sorted(lqs),
                }
            )
    return sorted(rows, key=lambda r: (r["missing"], r["name"]))


def _counts(status: Mapping[str, Any]) -> dict[str, int | None]:
    return {
        key: value if isinstance(value, int) and not isinstance(value, bool) else None
        for key, value in (
            ("admitted", status.get("admittedWorkloads")),
            ("reserving", status.get("reservingWorkloads")),
            ("pending", status.get("pendingWorkloads")),
        )
    }


def _resources(spec: Mapping[str, Any], status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per (flavor, resource) of the resource groups, in their order: nominal, used, reserved."""
    used = _usage(status.get("flavorsUsage"))
    reserved = _usage(status.get("flavorsReservation"))
    out: list[dict[str, Any]] = []
    for group in _list(spec.get("resourceGroups")):
        for flavor in _list(_mapping(group).get("flavors")):
            flavor_name = _text(_mapping(flavor).get("name"))
            for resource in _list(_mapping(flavor).get("resources")):
                resource_name = _text(_mapping(resource).get("name"))
                key = (flavor_name, resource_name)
                nominal = _mapping(resource).get("nominalQuota")
                in_use = used.get(key, {}).get("total")
                out.append(
                    {
                        "flavor": flavor_name,
                        "resource": resource_name,
                        "nominal": _quantity_text(nominal),
                        "used": _quantity_text(in_use),
                        "reserved": _quantity_text(reserved.get(key, {}).get("total")),
                        "borrowed": _quantity_text(used.get(key, {}).get("borrowed")),
                        "fraction": _fraction(in_use, nominal),
                    }
                )
    return out


def _usage(value: Any) -> dict[tuple[str, str], Mapping[str, Any]]:
    out: dict[tuple[str, str], Mapping[str, Any]] = {}
    for flavor in _list(value):
        flavor_name = _text(_mapping(flavor).get("name"))
        for resource in _list(_mapping(flavor).get("resources")):
            out[(flavor_name, _text(_mapping(resource).get("name")))] = _mapping(resource)
    return out


def _quantity_text(value: Any) -> str:
    """The quantity as Kueue wrote it; absent: ``0`` (Kueue omits a zero usage)."""
    return "0" if value is None or value == "" else _text(value)


def _parse(value: Any) -> Fraction | None:
    if value is None or value == "":
        return Fraction(0)
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def _fraction(used: Any, nominal: Any) -> float | None:
    u, n = _parse(used), _parse(nominal)
    if u is None or n is None or n <= 0:
        return None
    return float(u / n)


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["namespace"], r["name"]))


def _field(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return _mapping(obj.get(key))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)
