"""Rewrite citations of the specifications that lived outside the repository (``karta-format.md
17.5``, ``gang-backends.md section 4``, ``../shared/docs/…``) into citations of docs/spec by anchor
(``docs/spec/format.md#workload-tree``, ``docs/spec/gang-backends.md#volcano``).

For a branch written before docs/spec existed: ``python hack/recite_spec.py FILE...`` rewrites the
files in place and names each one it changed; tests/unit/test_spec_citations.py then checks the
result. The old documents kept their section numbers in docs/spec/format.md (§1–§19; §20, the
conformance cases, is ``#conformance``); docs/spec/gang-backends.md renumbered some subsections,
so a step number after a gang-backend citation may need a look. Line lengths are left to ruff.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

FORMAT = {
    "0": "reading",
    "0.1": "the-original",
    "0.2": "conventions",
    "0.3": "consumers",
    "1": "crd",
    "2": "fields",
    "2.1": "field-tree",
    "2.2": "field-meaning",
    "2.3": "defaults",
    "2.4": "minimal-example",
    "2.5": "full-example",
    "3": "expressions",
    "3.1": "expression-inputs",
    "3.2": "jq-dialect",
    "3.3": "evaluation-results",
    "3.4": "limits",
    "3.5": "compilation",
    "3.6": "literal-paths",
    "4": "typed-results",
    "5": "components",
    "5.1": "component-tree",
    "5.2": "instances",
    "5.3": "pairing",
    "6": "pod-specs",
    "6.1": "pod-spec-styles",
    "6.2": "fragmented",
    "6.3": "extracted-instance",
    "7": "scale",
    "8": "status",
    "8.1": "status-vocabulary",
    "8.2": "status-steps",
    "8.3": "matchers",
    "8.4": "by-expression",
    "8.5": "status-edge-cases",
    "8.6": "primary-status",
    "9": "write-back",
    "9.1": "assign",
    "9.2": "update-operations",
    "9.3": "fragmented-write-back",
    "9.4": "result-object",
    "9.5": "assignable-paths",
    "10": "suspend",
    "11": "pod-side",
    "11.1": "component-type-selector",
    "11.2": "single-value",
    "11.3": "match-labels",
    "11.4": "pod-instance",
    "11.5": "finding-pods",
    "12": "gangs",
    "12.1": "gang-formats",
    "12.2": "alpha-gangs",
    "12.3": "current-gangs",
    "12.4": "structure-summary",
    "12.5": "pod-membership",
    "12.6": "subtree-scale",
    "13": "kai",
    "13.1": "kai-when",
    "13.2": "kai-lookup",
    "13.3": "kai-current",
    "13.4": "kai-alpha",
    "14": "validation",
    "14.1": "validator",
    "14.2": "expression-safety",
    "14.3": "crd-rules",
    "14.4": "admission",
    "15": "operator",
    "15.1": "operator-conditions",
    "15.2": "index-labels",
    "15.3": "webhooks",
    "15.4": "operator-flags",
    "16": "library-operations",
    "17": "kli",
    "17.1": "kli-connection",
    "17.2": "kli-exit-codes",
    "17.3": "definition-sources",
    "17.4": "kli-get",
    "17.5": "workload-tree",
    "17.6": "kli-describe",
    "17.7": "kli-definitions",
    "17.8": "kli-validate",
    "18": "catalog",
    "19": "fixes",
    "20": "conformance",
}
GANG = {
    "1": "common",
    "1.1": "modes",
    "1.2": "gang-plan",
    "1.3": "naming",
    "1.4": "desired",
    "1.5": "object-rules",
    "1.6": "running-example",
    "2": "kai",
    "2.1": "kai-identity",
    "2.2": "kai-spec",
    "2.3": "kai-spec",
    "2.4": "kai-spec",
    "2.5": "kai-spec",
    "2.6": "kai-defaults",
    "2.7": "kai-binding",
    "2.8": "kai-rendering",
    "2.9": "kai-example",
    "3": "workload-api",
    "3.1": "workload-api-versions",
    "3.2": "workload-api-v1alpha1",
    "3.3": "workload-api-v1beta1",
    "3.4": "workload-api-v1beta1",
    "3.5": "workload-api-rendering",
    "3.6": "workload-api-example",
    "4": "volcano",
    "4.1": "volcano-spec",
    "4.2": "volcano-spec",
    "4.3": "volcano-binding",
    "4.4": "volcano-rendering",
    "4.5": "volcano-example",
    "5": "coscheduling",
    "5.1": "coscheduling-spec",
    "5.2": "coscheduling-spec",
    "5.3": "coscheduling-binding",
    "5.4": "coscheduling-rendering",
    "5.5": "coscheduling-example",
    "6": "kueue",
    "6.1": "kueue-why",
    "6.2": "kueue-workload",
    "6.3": "kueue-workload",
    "6.4": "kueue-workload",
    "6.5": "kueue-rendering",
    "6.6": "kueue-example",
    "7": "summary",
    "8": "summary",
    "8.1": "edge-cases",
}
_NUM = r"\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?"
_SEP = r"(?:, and |, | and |/| / )"
_CITATION = re.compile(
    r"(?P<q>``|`)?(?:\.\./shared/)?(?:docs/)?(?P<doc>karta-format|gang-backends)\.md(?P=q)?"
    r"(?:(?P<lead> (?:sections? |§ ?)?| §)(?P<nums>" + _NUM + r"(?:" + _SEP + _NUM + r")*)(?![\d.]\d))?"
)


def anchor(doc: str, number: str) -> str:
    """The anchor of an old section number (a range counts as its first section)."""
    table = FORMAT if doc == "karta-format" else GANG
    first = number.split("-")[0]
    found = table.get(first) or table.get(first.split(".")[0])
    if found is None or (doc == "karta-format" and first.startswith("20")):
        found = table.get("20") if doc == "karta-format" else None
    if found is None:
        raise SystemExit(f"no section {number} in {doc}.md")
    return found


def _rewrite(match: re.Match[str]) -> str:
    doc = match["doc"]
    quote = match["q"] or ""
    path = "docs/spec/format.md" if doc == "karta-format" else "docs/spec/gang-backends.md"
    if not match["nums"]:
        return f"{quote}{path}{quote}"
    parts = re.split(f"({_SEP})", match["nums"])
    out: list[str] = []
    for i in range(0, len(parts), 2):
        name = "#" + anchor(doc, parts[i])
        if name in out:
            continue
        if out:
            out.append(parts[i - 1])
        out.append(name)
    return f"{quote}{path}{''.join(out)}{quote}"


def rewrite(text: str) -> str:
    """``text`` with every old citation replaced."""
    return _CITATION.sub(_rewrite, text)


def main(argv: list[str]) -> int:
    for name in argv:
        path = Path(name)
        text = path.read_text()
        new = rewrite(text)
        if new != text:
            path.write_text(new)
            print(f"rewrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
