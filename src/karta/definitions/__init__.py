"""Where definitions come from (R13, section 17.3): the built-in catalog, the user's definitions
directory and, when the caller supplies them, the cluster's Karta objects.

Precedence per root GVK: cluster over user directory over built-in. Collisions are warnings and
make the GVK ambiguous; definitions without a usable root GVK are "unmapped" and listed last.
Lookups by name (cluster origin preferred), by exact GVK, by group and kind at any version, and by
kind (case-insensitive); resolution by one rule (:meth:`DefinitionStore.definition_for`) for every
consumer. Cluster access itself lives elsewhere (``karta.kube``): this package only merges.
"""

from __future__ import annotations

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
from karta.definitions.visibility import INDEX_LABELS, expected_labels, kai_visibility_warnings

__all__ = [
    "CATALOG",
    "CLUSTER",
    "INDEX_LABELS",
    "ORIGINS",
    "USER",
    "DefinitionStore",
    "StoredDefinition",
    "ambiguity",
    "default_user_directory",
    "expected_labels",
    "kai_visibility_warnings",
]
