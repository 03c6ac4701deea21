"""The web view's workload row (issue 14): one top-level workload of any covered type as the JSON
the list shows, and the list query (filters, sort, page) the API and the page share.

A row is ``{id, cluster, uid, kind, apiVersion, group, name, namespace, status, phases,
definition, components, pods: {ready, total, desired}, gpus, gang, queue, ai, createdAt, error?}``:

- ``status`` is the primary status (docs/spec/format.md#primary-status) and ``phases`` the matched set;
- ``pods`` counts the live pods placed on the workload's tree (``desired`` from its scales);
- ``gpus`` the GPUs requested by every desired pod (the request arithmetic of 17.5);
- ``gang`` is None when the definition has no gang instructions, else ``{gangs, minMember,
  scheduled, groupObjects, minimumMet, text}``: the plan's gangs and their effective minimums
  summed (a gang with sub-groups: the sub-groups' minimums), the pods bound to a node, the
  scheduler group objects owned by the workload seen in the cluster, whether the bound pods reach
  every gang's and sub-group's minimum, and the text ``kli get -o wide`` and ``kli describe``
  print (``0/12 bound, min 12 not met (master 0/1, worker 0/11)``; :mod:`karta.report.gang_state`);
- ``queue`` is None unless Kueue manages the workload (its queue label, or a Kueue Workload it
  controls), else ``kli describe``'s queue dict (:func:`karta.report.queue_detail`: queue,
  Workload, state, ClusterQueue, why it waits) plus ``text``, ``kli get``'s QUEUE cell
  (``team:Admitted``; ``team:?`` when its Workloads cannot be read);
- ``ai`` whether it is an AI workload, what the page lists by default (issue 28): its kind is in the
  AI part of the catalog (:func:`karta.catalog.is_ai_kind`), it requests GPUs, or it is a gang (its
  gangs' minimum is more than one pod); a Deployment, Job or bare Pod asking for nothing of that
  is a general-purpose workload, listed behind the page's toggle;
- ``error`` says why the definition could not read the object (the row then has what metadata
  gives);
- ``cells`` the list's texts for the columns that would not fit as data (issue 28): ``components``
  ``{text, title}`` (the names, or their count when they are long; each with its replicas in the
  title) and ``gang`` ``{text, title, tone, meter}`` (``2/2 bound``, ``0/5 bound · not met``, ``no
  gang``, ``unknown``; the whole sentence, the gangs and the scheduler group objects in the title;
  ``tone`` good, bad (pods not all bound), warn (no pod yet) or muted; ``meter`` whether a bar of
  the bound pods against the minimum is drawn) (:func:`components_cell`, :func:`gang_cell`). The
  page lays them out and never composes them.

The row is read by :func:`karta.report.summarize`, as ``kli get``'s is. Pure: objects, pods and
definitions in, dicts out. :func:`select_rows` filters, sorts and pages
rows for :class:`RowQuery`, whose :meth:`RowQuery.parse` reads (and bounds) URL parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karta.catalog import is_ai_kind
from karta.definitions import StoredDefinition
from karta.errors import KartaError
from karta.jq import Evaluator
from karta.report import GangState, created_at, parse_time, queue_cell, summarize

__all__ = [
    "MAX_PAGE",
    "MAX_TEXT",
    "SORT_KEYS",
    "QueryError",
    "RowQuery",
    "components_cell",
    "gang_cell",
    "is_ai_row",
    "row_id",
    "select_rows",
    "workload_row",
]

MAX_PAGE = 1000  # rows per page of /api/workloads
MAX_TEXT = 200  # characters of a filter value
COMPONENT_NAMES = 18  # characters of component names the list shows; past it, their count
SORT_KEYS = ("name", "namespace", "kind", "status", "pods", "gpus", "age", "gang", "queue")


class QueryError(ValueError):
    """A list query parameter that cannot be used (the message names it)."""


def row_id(cluster: str, uid: str) -> str:
    """The row's key: the cluster's name and the object's UID."""
    return f"{cluster}/{uid}"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def is_ai_row(row: Mapping[str, Any]) -> bool:
    """Whether a row (:func:`workload_row`'s keys) is an AI workload: an AI kind of the catalog,
    GPUs requested, or a gang of more than one pod."""
    gang = row.get("gang")
    return (
        is_ai_kind(str(row.get("group") or ""), str(row.get("kind") or ""))
        or bool(row.get("gpus"))
        or (isinstance(gang, Mapping) and int(gang.get("minMember") or 0) > 1)
    )


def workload_row(
    obj: Mapping[str, Any],
    definition: StoredDefinition,
    *,
    cluster: str,
    pods: Sequence[Mapping[str, Any]],
    gpu_resources: Sequence[str],
    group_objects: int = 0,
    evaluator: Evaluator | None = None,
    queue: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The row of ``obj`` read through ``definition`` with its live ``pods``
    (:func:`karta.report.summarize`, ``evaluator`` defaulting to the process's for the
    definition); ``group_objects`` counts the scheduler group objects the workload owns; ``queue``:
    its Kueue queue state (a :meth:`karta.report.QueueDetail.to_dict`), None without."""
    meta = _mapping(obj.get("metadata"))
    api_version = str(obj.get("apiVersion") or "")
    uid = str(meta.get("uid") or "")
    row: dict[str, Any] = {
        "id": row_id(cluster, uid),
        "cluster": cluster,
        "uid": uid,
        "kind": str(obj.get("kind") or ""),
        "apiVersion": api_version,
        "group": api_version.rpartition("/")[0],
        "name": str(meta.get("name") or ""),
        "namespace": str(meta.get("namespace") or ""),
        "status": "Undefined",
        "phases": ["Undefined"],
        "definition": definition.name,
        "components": [],
        "pods": {"ready": 0, "total": len(pods), "desired": 0},
        "gpus": 0,
        "gang": None,
        "queue": None if queue is None else {**queue, "text": queue_cell(queue)},
        "ai": False,
        "createdAt": created_at(meta),
    }
    try:
        read = summarize(definition, obj, gpu_resources=gpu_resources, pods=pods, evaluator=evaluator)
    except KartaError as exc:
        row["error"] = f"cannot read it with definition {definition.name}: {exc}"
        row["ai"] = is_ai_row(row)
        row["cells"] = {"components": components_cell([]), "gang": gang_cell(None, error=row["error"])}
        return row
    row["phases"] = read.phases
    row["status"] = read.status
    row["components"] = read.components
    row["gpus"] = read.gpus
    row["pods"] = read.pods
    if read.gang_error is not None:
        row["error"] = read.gang_error
    elif read.gang is not None:
        state = read.gang.to_dict()
        met = state.pop("minimumMet")
        row["gang"] = {**state, "groupObjects": group_objects, "minimumMet": met, "text": read.gang.text()}
    row["ai"] = is_ai_row(row)
    row["cells"] = {
        "components": components_cell(read.components),
        "gang": gang_cell(read.gang, error=read.gang_error, group_objects=group_objects),
    }
    return row


def components_cell(components: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The list's Components cell: ``{text, title}``, the components' names (their count past
    :data:`COMPONENT_NAMES` characters), each with its replicas in the title
    (``master: 1 replica, worker: 3 replicas``)."""
    names = [str(c.get("name") or "") for c in components]
    text = ", ".join(names)
    if len(names) > 1 and len(text) > COMPONENT_NAMES:
        text = f"{len(names)} components"

    def replicas(component: Mapping[str, Any]) -> str:
        count = component.get("replicas")
        return f"{count} replica{'' if count == 1 else 's'}"

    title = ", ".join(f"{name}: {replicas(c)}" for name, c in zip(names, components, strict=True))
    return {"text": text, "title": title}


def gang_cell(gang: GangState | None, *, error: str | None = None, group_objects: int = 0) -> dict[str, Any]:
    """The list's Gang cell for a workload's gang state (None: no gang instructions, or unknown
    when ``error`` says why): ``{text, title, tone, meter}`` (the module docstring). The short
    text counts the pods bound against the minimum, as the workload page's gang picture does; the
    title is ``kli describe``'s sentence, the number of gangs and the scheduler group objects."""
    if error is not None:
        return {"text": "unknown", "title": f"gang state unknown: {error}", "tone": "muted", "meter": False}
    if gang is None:
        title = "no gang: its definition has no gang instructions"
        return {"text": "no gang", "title": title, "tone": "muted", "meter": False}
    counted = f"{gang.bound}/{gang.minimum} bound"
    if gang.met:
        text, tone = counted, "good"
    else:
        text, tone = f"{counted} · not met", "bad" if gang.pods else "warn"
    groups = f"{group_objects or 'no'} scheduler group object{'' if group_objects == 1 else 's'}"
    gangs = f"{gang.gangs} gang{'' if gang.gangs == 1 else 's'}"
    pods = "" if gang.pods else "; no pod created yet"
    title = f"{gang.text()}; {gangs}; {groups} in the cluster{pods}"
    return {"text": text, "title": title, "tone": tone, "meter": gang.minimum > 0}


# ------------------------------------------------------------------------------ the list query


@dataclass(frozen=True)
class RowQuery:
    """Filters (every one must hold), the sort and the page of a list request."""

    namespace: str = ""
    kind: str = ""
    status: str = ""
    text: str = ""
    scope: str = "all"
    gpu: str = ""
    gang: str = ""
    sort: str = "age"
    descending: bool = False
    offset: int = 0
    limit: int = 200

    @classmethod
    def parse(cls, params: Mapping[str, Sequence[str]]) -> RowQuery:
        """From URL query parameters (``namespace``, ``kind``, ``status``, ``q``, ``scope``
        all|ai, ``gpu`` yes|no, ``gang`` yes|met|unmet|no, ``sort``, ``order`` asc|desc,
        ``offset``, ``limit`` ≤ :data:`MAX_PAGE`); QueryError names a bad one."""

        def one(name: str, default: str = "") -> str:
            values = params.get(name) or ()
            value = values[-1] if values else default
            if len(value) > MAX_TEXT:
                raise QueryError(f"{name}: at most {MAX_TEXT} characters")
            return value

        def number(name: str, default: int, high: int) -> int:
            text = one(name, str(default))
            if not text.isdigit():
                raise QueryError(f"{name}: expected a whole number from 0 to {high}, not {text[:40]!r}")
            value = int(text)
            if value > high:
                raise QueryError(f"{name}: at most {high}")
            return value

        sort = one("sort", "age")
        if sort not in SORT_KEYS:
            raise QueryError(f"sort: one of {', '.join(SORT_KEYS)}, not {sort[:40]!r}")
        choices = {
            "scope": ("all", "ai"),
            "gpu": ("", "yes", "no"),
            "gang": ("", "yes", "met", "unmet", "no"),
        }
        chosen = {name: one(name, allowed[0]) for name, allowed in choices.items()}
        for name, value in chosen.items():
            if value not in choices[name]:
                shown = ", ".join(v for v in choices[name] if v)
                raise QueryError(f"{name}: one of {shown}, not {value[:40]!r}")
        order = one("order", "asc")
        if order not in ("asc", "desc"):
            raise QueryError(f"order: asc or desc, not {order[:40]!r}")
        return cls(
            namespace=one("namespace"),
            kind=one("kind"),
            status=one("status"),
            text=one("q").strip().lower(),
            scope=chosen["scope"],
            gpu=chosen["gpu"],
            gang=chosen["gang"],
            sort=sort,
            descending=order == "desc",
            offset=number("offset", 0, 10**9),
            limit=number("limit", 200, MAX_PAGE),
        )

    def matches(self, row: Mapping[str, Any]) -> bool:
        if self.namespace and row.get("namespace") != self.namespace:
            return False
        if self.kind and row.get("kind") != self.kind:
            return False
        if self.status and self.status not in (row.get("phases") or ()):
            return False
        if self.scope == "ai" and not row.get("ai"):
            return False
        if self.gpu and bool(row.get("gpus")) != (self.gpu == "yes"):
            return False
        if self.gang and not _gang_matches(self.gang, row.get("gang")):
            return False
        if self.text:
            hay = " ".join(
                str(row.get(k) or "") for k in ("name", "namespace", "kind", "status", "definition")
            ).lower()
            if self.text.lower() not in hay:
                return False
        return True


def _gang_matches(wanted: str, gang: Any) -> bool:
    if wanted == "no":
        return gang is None
    if not isinstance(gang, Mapping):
        return False
    return wanted == "yes" or bool(gang.get("minimumMet")) == (wanted == "met")


def _sort_key(sort: str) -> Callable[[Mapping[str, Any]], Any]:
    if sort == "pods":
        return lambda r: (r["pods"]["ready"], r["pods"]["total"])
    if sort == "gpus":
        return lambda r: r.get("gpus") or 0
    if sort == "age":  # ascending age: the newest first
        return lambda r: -_epoch(r.get("createdAt"))
    if sort == "queue":
        return lambda r: str((r.get("queue") or {}).get("text") or "")
    if sort == "gang":
        return lambda r: (r["gang"] is not None, bool(r["gang"] and r["gang"]["minimumMet"]))
    return lambda r: str(r.get(sort) or "")


def _epoch(value: Any) -> float:
    moment = parse_time(value)
    return moment.timestamp() if moment is not None else float("-inf")


def select_rows(rows: Iterable[Mapping[str, Any]], query: RowQuery) -> tuple[list[Mapping[str, Any]], int]:
    """``(page, total)``: the rows matching ``query``, sorted (ties by namespace, name, id), the
    page from ``offset``; ``total`` counts every match."""
    matched = [r for r in rows if query.matches(r)]
    matched.sort(key=lambda r: (str(r.get("namespace")), str(r.get("name")), str(r.get("id"))))
    matched.sort(key=_sort_key(query.sort), reverse=query.descending)
    return matched[query.offset : query.offset + query.limit], len(matched)
