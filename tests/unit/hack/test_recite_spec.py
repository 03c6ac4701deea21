"""hack/recite_spec.py: old citations of the outside specifications become docs/spec anchors, and
every anchor its tables name is one the pages declare."""

from __future__ import annotations

import re
from pathlib import Path

from tests.e2e.conftest import hack_module

SPEC = Path(__file__).resolve().parents[3] / "docs" / "spec"


def test_tables_name_declared_anchors() -> None:
    recite = hack_module("recite_spec.py")
    for page, table in (("format", recite.FORMAT), ("gang-backends", recite.GANG)):
        declared = set(re.findall(r"\{#([a-z0-9-]+)\}", (SPEC / f"{page}.md").read_text()))
        assert set(table.values()) <= declared, page


def test_rewrites() -> None:
    rewrite = hack_module("recite_spec.py").rewrite
    cases = {
        "(karta-format.md 17.5 step 8)": "(docs/spec/format.md#workload-tree step 8)",
        "(karta-format.md sections 1, 2.1 and 14.3)": "(docs/spec/format.md#crd, #field-tree and #crd-rules)",
        "karta-format.md section 20.8 -- C7": "docs/spec/format.md#conformance -- C7",
        "(gang-backends.md section 4)": "(docs/spec/gang-backends.md#volcano)",
        "(gang-backends.md 2.2, 2.3)": "(docs/spec/gang-backends.md#kai-spec)",
        "``../shared/docs/karta-format.md``": "``docs/spec/format.md``",
        "(karta-format.md 3.2, R11)": "(docs/spec/format.md#jq-dialect, R11)",
    }
    for old, new in cases.items():
        assert rewrite(old) == new
