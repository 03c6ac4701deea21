"""The conformance cases themselves: well-formed, uniquely named, and covering every row of
docs/spec/format.md#conformance (and the 12.6 table) plus every library-observable [fix] R1-R11, R17."""

from __future__ import annotations

import re
from collections import Counter

from tests.conformance._cases import KINDS, all_cases

# One id per row of each section-20 table / bullet (rows with two calls are split into -a/-b).
SECTION_20_IDS = (
    # 20.1
    *(f"J{i}" for i in (1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15)),
    "J3-a", "J3-b", "J13-a", "J13-b",
    # 20.2
    "C1-instance-ids", "C1-pod-specs", "C1-metadata", "C1-scales", "C1-tree", "C1-root-status",
    "C1-empty-instance-id", "C1-duplicate-instance-id",
    # 20.3
    "C2-instance-ids", "C2-three-fragmented-specs", "C2-cache-no-annotations", "C2-api-main-container",
    "C2-worker-gpu", "C2-scales",
    # 20.4
    *(f"C3-{i:02d}" for i in range(1, 13)), "C3-11-lint", "C3-12-lint",
    # 20.5
    *(f"C4-{i:02d}" for i in range(1, 10)), "C4-09-strict",
    # 20.6
    *(f"C5-{i:02d}" for i in range(1, 5)),
    # 20.7
    "C6-01-round-trip", "C6-02-r6-partial-labels", "C6-03-metadata-read-modify-write",
    "C6-04-whole-object-replacement",
    # 20.8 and the 12.6 table (14 rows)
    "C7-01-root", "C7-02-worker", "C7-02-master", "C7-03-root-without-scale", "C7-04-leaf-min",
    "C7-05-leaf-min-zero", "C7-06-leaf-neither-set", "C7-07-multi-instance-all", "C7-08-instance-indexer",
    "C7-08-instance-processor", "C7-09-map-all", "C7-09-map-indexer", "C7-09-map-processor",
    "C7-10-unknown-instance", "C7-11-count-two-children", "C7-12-cluster", "C7-12-job-group",
    "C7-12-worker", "C7-13-count-multi-instance", "C7-14-empty-instance-id",
    # 20.9
    "C8-worker-v1-falls-back", "C8-worker-v2-versioned", "C8-tier-gpu", "C8-tier-cpu", "C8-tier-tpu-none",
    "C8-tier-tpu-gang-plan",
    # 20.10
    "C9-pod-a", "C9-pod-b", "C9-gang-plan",
    # 20.11
    *(f"C10-frame-{i}" for i in range(1, 6)),
    # 20.12
    "C11-01-replica-selector-offline", "C11-02-replica-split", "C11-03-bare-job", "C11-04-master-worker",
    "C11-05-root-without-kind",
    # 20.13
    "C12-01-duplicate-names-stop", "C12-02-ownership-cycle", "C12-03-multiple-pod-spec-definitions",
    "C12-04-del", "C12-05-del-nested-in-parentheses", "C12-06-recursive-descent",
    "C12-07-recursive-descent-in-array", "C12-08-modifying-operator",
    "C12-09-instance-id-path-without-selector", "C12-10-core-service-root", "C12-11-core-pod-root-valid",
    "C12-12-ghost-member", "C12-13-ghost-sub-group", "C12-14-value-without-key-path",
    "C12-15-invalid-label-key", "C12-16-unknown-field",
    # 20.14 (row 12 has two halves)
    "P01-type-equal", "P02-type-not-equal", "P03-type-exists", "P04-type-missing", "P05-type-quotes-escaped",
    "P06-type-parse-error", "P07-instance-id-empty", "P08-instance-id-two-results", "P09-replica-key-number",
    "P10-filter-string-fails", "P11-filter-null-errors", "P12-match-labels", "P12-match-labels-and",
    "P13-no-instance-selector", "P14-instance-not-found",
    # 20.15
    "S1-suspend", "S2-resume", "S3-invalid-json-value", "S3-invalid-json-value-lint",
    "S4-no-suspend-definition",
    # 20.16
    "K1-pod-group", "K2-sub-groups", "K3-worker-pod-lands-in-worker", "K4-without-sub-groups",
    "K5-elastic-worker-minimum",
)  # fmt: skip

FIXES = ("R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R17")


def test_case_ids_are_unique() -> None:
    counts = Counter(case.id for case in all_cases())
    assert [i for i, n in counts.items() if n > 1] == []


def test_every_case_has_a_known_kind_and_a_reference() -> None:
    bad = [(c.id, c.kind) for c in all_cases() if c.kind not in KINDS or not c.ref.strip()]
    assert bad == []


def test_every_kind_has_cases() -> None:
    kinds = {case.kind for case in all_cases()}
    assert sorted(set(KINDS) - kinds) == []


def test_every_section_20_row_is_a_case() -> None:
    ids = {case.id for case in all_cases()}
    assert sorted(set(SECTION_20_IDS) - ids) == []


def test_every_fix_has_a_case_in_fixes_yaml() -> None:
    refs = " ".join(case.ref for case in all_cases() if case.file == "fixes.yaml")
    missing = [r for r in FIXES if not re.search(rf"\b{r}\b", refs)]
    assert missing == []
