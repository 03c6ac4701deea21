"""karta: one engine for every Kubernetes AI workload type, driven by declarative Karta definitions.

The public library API (the layers below ``karta.kube``) is re-exported here; ``__all__`` is pinned by
a test. Import cost matters (``kli --help``), so nothing heavy is imported by the CLI at start-up;
the CLI imports submodules lazily instead of this package's re-exports.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
