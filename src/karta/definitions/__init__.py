"""Where definitions come from (R13, section 17.3): the built-in catalog, the user's definitions
directory and, when the caller supplies them, the cluster's Karta objects.

Precedence per root GVK: cluster over user directory over built-in. Collisions are warnings and
make the GVK ambiguous; definitions without a usable root GVK are "unmapped" and listed last.
Lookups by name (cluster origin preferred), by exact GVK, by group and kind at any version, and by
kind (case-insensitive); resolution by one rule (:meth:`DefinitionStore.definition_for`) for every
consumer. Also the index labels of Karta objects and the built-in catalog as the Karta objects
karta applies (``objects``). Cluster access itself lives elsewhere (``karta.kube``): this package
only merges.

Names are resolved lazily (PEP 562), so that ``kli`` commands can import the package at no cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "CATALOG": "karta.definitions.store",
    "CLUSTER": "karta.definitions.store",
    "ORIGINS": "karta.definitions.store",
    "USER": "karta.definitions.store",
    "DefinitionStore": "karta.definitions.store",
    "StoredDefinition": "karta.definitions.store",
    "ambiguity": "karta.definitions.store",
    "default_user_directory": "karta.definitions.store",
    "INDEX_LABELS": "karta.definitions.visibility",
    "expected_labels": "karta.definitions.visibility",
    "index_labels": "karta.definitions.visibility",
    "kai_visibility_warnings": "karta.definitions.visibility",
    "root_gvk": "karta.definitions.visibility",
    "MANAGED_BY": "karta.definitions.objects",
    "MANAGED_BY_VALUE": "karta.definitions.objects",
    "catalog_objects": "karta.definitions.objects",
}

__all__ = [
    "CATALOG",
    "CLUSTER",
    "INDEX_LABELS",
    "MANAGED_BY",
    "MANAGED_BY_VALUE",
    "ORIGINS",
    "USER",
    "DefinitionStore",
    "StoredDefinition",
    "ambiguity",
    "catalog_objects",
    "default_user_directory",
    "expected_labels",
    "index_labels",
    "kai_visibility_warnings",
    "root_gvk",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.definitions.objects import MANAGED_BY, MANAGED_BY_VALUE, catalog_objects
    from karta.definitions.store import (
        CATALOG,
        CLUSTER,
        ORIGINS,
        USER,
        DefinitionStore,
        StoredDefinition,
        ambiguity,
        default_user_directory,
    )
    from karta.definitions.visibility import (
        INDEX_LABELS,
        expected_labels,
        index_labels,
        kai_visibility_warnings,
        root_gvk,
    )
