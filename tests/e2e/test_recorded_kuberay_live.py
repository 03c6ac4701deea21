"""Drift of the KubeRay recordings (issue 24 item 3): one short recorded flow, a RayJob whose Ray job
runs and succeeds, re-recorded live against KubeRay v1.5.0 on kwok with the Ray dashboard stand-in
(hack/raydash), must give the stored fixtures' states, judged states and karta's readings
(tests/recorded/kuberay). A change of KubeRay's behaviour, of the stand-in or of karta's reading
shows here before the offline replay hides it."""

from __future__ import annotations

import os

from karta.kube import ConfigOverrides, KubeClient
from tests.recorder.record import compare, run_flow, stored

from .kubehttp import KubeHTTP


def test_rayjob_succeeds_rerecorded_live_matches_the_fixture(ecosystem_cluster: KubeHTTP) -> None:
    assert os.environ.get("KARTA_RAYDASH_URL"), "the ecosystem cluster runs hack/raydash next to KubeRay"
    expected = stored("kuberay", "RayJob", "succeeds")
    assert [f["label"] for f in expected] == ["submitted", "running", "succeeded"]
    with KubeClient.from_config(ConfigOverrides(kubeconfig=str(ecosystem_cluster.kubeconfig))) as client:
        recorded = run_flow(client, "kuberay", "RayJob", "succeeds")
    assert compare(recorded, expected) == []
    assert [f["judged"]["status"] for f in recorded] == ["Initializing", "Running", "Completed"]
