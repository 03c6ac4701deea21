"""Where definitions come from, offline: the built-in catalog and the user's definitions directory.

Precedence per root GVK: user directory over built-in (the cluster, above both, is added by
``karta.kube``). Lookups by exact GVK first, then by group and kind at any version.
"""

from __future__ import annotations

from karta.definitions.store import DefinitionStore, StoredDefinition, default_user_directory

__all__ = ["DefinitionStore", "StoredDefinition", "default_user_directory"]
