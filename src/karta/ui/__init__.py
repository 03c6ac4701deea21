"""karta.ui: the read-only web view of every workload of every covered type (issue 14), served by
``kli ui`` (the user's kubeconfig identity, on loopback) and ``karta-controller --ui`` (the
controller's ServiceAccount). docs/ui.md says what it shows and who can reach it.

- :mod:`.rows`: the workload row (the JSON the list shows) and the list query (filters, sort, page);
- :mod:`.store`: :class:`RowStore`, every cluster's rows and the bounded change log live pages follow;
- :mod:`.source`: :class:`ClusterSource`, one cluster's watches (workloads, pods, group objects)
  turned into rows; several clusters are several sources over one store;
- :mod:`.detail`: the workload page (tree, pending reasons, Events, gang renderings, definition);
- :mod:`.server`: :class:`UiServer`, the HTTP server (page, JSON API, server-sent events);
- ``static/``: the page, hand-written HTML, CSS and JavaScript (no external assets).

Names are resolved lazily (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "RowQuery": "karta.ui.rows",
    "QueryError": "karta.ui.rows",
    "select_rows": "karta.ui.rows",
    "workload_row": "karta.ui.rows",
    "RowStore": "karta.ui.store",
    "Changes": "karta.ui.store",
    "ClusterSource": "karta.ui.source",
    "workload_detail": "karta.ui.detail",
    "UiServer": "karta.ui.server",
}

__all__ = [
    "Changes",
    "ClusterSource",
    "QueryError",
    "RowQuery",
    "RowStore",
    "UiServer",
    "select_rows",
    "workload_detail",
    "workload_row",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.ui.detail import workload_detail
    from karta.ui.rows import QueryError, RowQuery, select_rows, workload_row
    from karta.ui.server import UiServer
    from karta.ui.source import ClusterSource
    from karta.ui.store import Changes, RowStore
