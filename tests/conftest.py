"""Suite-wide settings: under CI, property tests are derandomised so that a run is reproducible;
generated code never falls back silently (``KARTA_CODEGEN`` gets ``strict``, see karta._codegen,
before anything imports karta; subprocesses inherit it)."""

from __future__ import annotations

import os

os.environ["KARTA_CODEGEN"] = ",".join(w for w in (os.environ.get("KARTA_CODEGEN", ""), "strict") if w)

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
