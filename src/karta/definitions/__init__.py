"""Where definitions come from (R13, section 17.3): the built-in catalog, the user's definitions
directory and, when the caller supplies them, the cluster's Karta objects.

Precedence per root GVK: cluster over user directory over built-in, valid over invalid (an invalid
definition is never used, the next valid one is); several valid cluster Kartas for one GVK are
ranked (Ready, then the oldest, then by name) and the others ignored, several valid user
definitions collide (a warning; the GVK is ambiguous). Definitions without a usable root GVK are
"unmapped" and listed last. :meth:`DefinitionStore.listing` gives every definition with its
status (ok, invalid, ignored, overridden, ambiguous). Lookups by name (every definition, the one
in use first), by exact GVK, by group and kind at any version, and by kind (case-insensitive);
resolution by one rule (:meth:`DefinitionStore.definition_for`) for every consumer. Also the
index labels of Karta objects and the built-in catalog as the Karta objects karta applies
(``objects``). Cluster access itself lives elsewhere (``karta.kube``): this package only merges.

Names are resolved lazily (PEP 562), so that ``kli`` commands can import the package at no cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karta._lazy import lazy_dir, lazy_getattr

_EXPORTS: dict[str, str] = {
    "CATALOG": "karta.definitions.store",
    "describe_definition": "karta.definitions.store",
    "Resolution": "karta.definitions.store",
    "Listing": "karta.definitions.store",
    "OVERRIDDEN": "karta.definitions.store",
    "OK": "karta.definitions.store",
    "INVALID": "karta.definitions.store",
    "IGNORED": "karta.definitions.store",
    "AMBIGUOUS": "karta.definitions.store",
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
    "EvaluatorPool": "karta.definitions.evaluators",
    "evaluator_for": "karta.definitions.evaluators",
    "MANAGED_BY": "karta.definitions.objects",
    "MANAGED_BY_VALUE": "karta.definitions.objects",
    "catalog_objects": "karta.definitions.objects",
}

__all__ = [
    "AMBIGUOUS",
    "CATALOG",
    "CLUSTER",
    "IGNORED",
    "INDEX_LABELS",
    "INVALID",
    "MANAGED_BY",
    "MANAGED_BY_VALUE",
    "OK",
    "ORIGINS",
    "OVERRIDDEN",
    "USER",
    "DefinitionStore",
    "EvaluatorPool",
    "Listing",
    "Resolution",
    "StoredDefinition",
    "ambiguity",
    "catalog_objects",
    "default_user_directory",
    "describe_definition",
    "evaluator_for",
    "expected_labels",
    "index_labels",
    "kai_visibility_warnings",
    "root_gvk",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = lazy_dir(_EXPORTS, globals())

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from karta.definitions.evaluators import EvaluatorPool, evaluator_for
    from karta.definitions.objects import MANAGED_BY, MANAGED_BY_VALUE, catalog_objects
    from karta.definitions.store import (
        AMBIGUOUS,
        CATALOG,
        CLUSTER,
        IGNORED,
        INVALID,
        OK,
        ORIGINS,
        OVERRIDDEN,
        USER,
        DefinitionStore,
        Listing,
        Resolution,
        StoredDefinition,
        ambiguity,
        default_user_directory,
        describe_definition,
    )
    from karta.definitions.visibility import (
        INDEX_LABELS,
        expected_labels,
        index_labels,
        kai_visibility_warnings,
        root_gvk,
    )
