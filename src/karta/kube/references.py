"""A workload's references (extension E3) read through the API: the live consumers' one fetch.

:func:`fetch_references` answers each :class:`~karta.references.ReferenceRequest` with a GET
(lookup) or one bounded LIST by its label selector (list: at most ``limits.list_objects + 1``
items, so a list over the limit is reported by :func:`~karta.references.bind_references` without
reading every object); a 403 is ``forbidden``, any other failure (a kind the server does not
serve, a 5xx, a network error) ``error``, a 404 on a lookup a note: nothing is ever silently null.
:func:`resolve_live` plans, fetches and binds in one call (``kli get|describe|gang TYPE/NAME`` and
the web view); the controller answers the same requests from its shared cache instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from karta.errors import ApiError, ClusterError
from karta.references import (
    DEFAULT_LIMITS,
    Fetched,
    ReferenceLimits,
    ReferenceRequest,
    Resolution,
    bind_references,
    plan_references,
)

if TYPE_CHECKING:
    from karta.jq import Evaluator
    from karta.kube.client import KubeClient
    from karta.model.types import Karta

__all__ = ["fetch_references", "resolve_live"]


def _fetch_one(client: KubeClient, request: ReferenceRequest, limits: ReferenceLimits) -> Fetched:
    if not request.fetches:
        return Fetched(request)
    target = (
        f"{request.kind}/{request.name}"
        if not request.is_list
        else f"{request.kind} ({request.selector or 'every object'})"
    )
    try:
        rtype = client.discovery.for_gvk(request.group, request.version, request.kind)
        namespace = request.namespace if rtype.namespaced else None
        if not request.is_list:
            assert request.name is not None
            try:
                return Fetched(request, (client.get(rtype, request.name, namespace=namespace),))
            except ApiError as exc:
                if exc.status != 404:
                    raise
                where = f" in namespace {namespace}" if namespace else ""
                return Fetched(request, note=f"{target} not found{where}")
        page = next(
            client.iter_pages(
                rtype,
                namespace=namespace,
                label_selector=request.selector or None,
                chunk_size=limits.list_objects + 1,
            )
        )
        return Fetched(request, tuple(page.items[: limits.list_objects + 1]))
    except ApiError as exc:
        if exc.status == 403:
            return Fetched(request, forbidden=str(exc))
        return Fetched(request, error=f"reading {target}: {exc}")
    except ClusterError as exc:  # not served, unreachable, a malformed answer
        return Fetched(request, error=f"reading {target}: {exc}")


def fetch_references(
    client: KubeClient,
    requests: Sequence[ReferenceRequest],
    *,
    limits: ReferenceLimits = DEFAULT_LIMITS,
    memo: dict[ReferenceRequest, Fetched] | None = None,
) -> list[Fetched]:
    """What the API answers for each request, in order (see the module's docstring). ``memo``:
    the answers already read by this run (``kli get -A``: a thousand TrainJobs naming three
    runtimes read three runtimes), keyed by the request but its reference's name."""
    out: list[Fetched] = []
    for request in requests:
        if memo is None:
            out.append(_fetch_one(client, request, limits))
            continue
        key = replace(request, reference="")
        got = memo.get(key)
        if got is None:
            got = memo[key] = _fetch_one(client, key, limits)
        out.append(replace(got, request=request))
    return out


def resolve_live(
    client: KubeClient,
    karta: Karta,
    obj: Mapping[str, Any],
    evaluator: Evaluator,
    *,
    limits: ReferenceLimits = DEFAULT_LIMITS,
    memo: dict[ReferenceRequest, Fetched] | None = None,
) -> Resolution:
    """Plan ``karta``'s references for ``obj``, read them through ``client`` (``memo``: see
    :func:`fetch_references`) and bind them; a definition without references reads nothing (an
    empty :class:`Resolution`). Raises
    :class:`~karta.errors.ReferenceLimitError` / :class:`~karta.errors.JqBudgetError` as
    :func:`~karta.references.bind_references` and :func:`~karta.references.plan_references` do."""
    requests = plan_references(karta, obj, evaluator)
    if not requests:
        return Resolution({})
    return bind_references(fetch_references(client, requests, limits=limits, memo=memo), limits=limits)
