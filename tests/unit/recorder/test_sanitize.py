"""The recorder's sanitizing: run-specific values go, what status logic reads stays."""

from __future__ import annotations

from typing import Any

from tests.recorder.fixtures import sanitize


def test_sanitize_drops_run_values_and_keeps_order() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "j",
            "namespace": "rec-abc123",
            "uid": "1234-5678",
            "resourceVersion": "42",
            "managedFields": [{"manager": "x"}],
            "generation": 2,
            "labels": {"batch.kubernetes.io/controller-uid": "1234-5678"},
        },
        "status": {
            "startTime": "2031-05-05T10:00:09Z",
            "completionTime": "2031-05-05T10:01:00Z",
            "conditions": [{"type": "Complete", "lastTransitionTime": "2031-05-05T10:01:00Z"}],
            "observedGeneration": 2,
        },
        "spec": {"template": {"spec": {"nodeName": "rec-abc123-gpu-0"}}},
    }
    uids: dict[str, str] = {}
    clean = sanitize(obj, "rec-abc123", uids)
    meta = clean["metadata"]
    assert "uid" not in meta and "resourceVersion" not in meta and "managedFields" not in meta
    assert meta["namespace"] == "recorded" and meta["generation"] == 2
    assert meta["labels"] == {"batch.kubernetes.io/controller-uid": "uid-0"}
    assert clean["status"]["startTime"] == "2026-01-01T00:00:00Z"
    assert clean["status"]["completionTime"] == "2026-01-01T00:00:01Z"
    assert clean["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:01Z"
    assert clean["spec"]["template"]["spec"]["nodeName"] == "recorded-gpu-0"
    assert uids == {"1234-5678": "uid-0"}
    assert obj["metadata"]["uid"] == "1234-5678"  # the input is not changed
