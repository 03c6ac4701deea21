"""Drift of the recorded flows (tests/recorded): one short flow per operator is recorded again
live, on kwok Nodes with the real controllers (``ecosystem_cluster``), and must give the same
states, the same judged statuses and the same karta readings as its stored fixtures. A failure
means the operator or karta changed: re-record (tests/recorded/README.md) and review the diff."""

from __future__ import annotations

import pytest

from karta.kube import ConfigOverrides, KubeClient

from ..recorder.record import compare, run_flow, stored
from .kubehttp import KubeHTTP


@pytest.mark.parametrize(
    ("operator", "kind", "flow"),
    [("kube", "Job", "completes"), ("training", "PyTorchJob", "succeeds")],
)
def test_flow_recorded_again_matches_its_fixtures(
    ecosystem_cluster: KubeHTTP, operator: str, kind: str, flow: str
) -> None:
    expected = stored(operator, kind, flow)
    assert expected, f"no fixtures for {operator} {kind}/{flow}"
    with KubeClient.from_config(ConfigOverrides(kubeconfig=str(ecosystem_cluster.kubeconfig))) as client:
        recorded = run_flow(client, operator, kind, flow)
    assert compare(recorded, expected) == []
