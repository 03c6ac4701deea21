"""Suite-wide settings: under CI, property tests are derandomised so that a run is reproducible;
generated code never falls back silently and runs from the first use (``KARTA_CODEGEN`` gets
``strict`` and ``eager``, see karta._codegen, before anything imports karta; subprocesses inherit
it), so that every evaluation in the suite goes through the generated code where there is some."""

from __future__ import annotations

import os

os.environ["KARTA_CODEGEN"] = ",".join(
    w for w in (os.environ.get("KARTA_CODEGEN", ""), "strict", "eager") if w
)

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
