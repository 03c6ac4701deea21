"""The documented way (docs/getting-started/test-cluster.md) to install the Karta CRD into a cluster:
``python -m karta.crd -`` prints the manifest (the same as ``src/karta/crd/kartas.run.ai.yaml``), and
applying it server-side, as ``kubectl apply --server-side -f -`` does, gives an Established CRD that
serves Kartas (also when it is installed already: applying again changes nothing)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

import karta
from karta.crd import CRD_FILE, CRD_NAME

from ..kubehttp import KubeHTTP
from .conftest import CRDS


def test_the_printed_manifest_applies_and_serves_kartas(cluster: KubeHTTP) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(karta.__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "karta.crd", "-"]
    printed = subprocess.run(command, capture_output=True, text=True, env=env, check=True, timeout=60).stdout
    assert printed == CRD_FILE.read_text(encoding="utf-8")
    crd = yaml.safe_load(printed)
    for _ in range(2):  # installing, then applying again over the installed CRD
        answer = cluster.request(
            "PATCH",
            f"{CRDS}/{CRD_NAME}",
            body=crd,
            content_type="application/apply-patch+yaml",
            params={"fieldManager": "kubectl", "force": "true", "fieldValidation": "Strict"},
        )
        assert answer.status in (200, 201), answer.body
    deadline = time.monotonic() + 60
    while True:
        conditions = cluster.get(f"{CRDS}/{CRD_NAME}").json().get("status", {}).get("conditions") or []
        if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
            break
        assert time.monotonic() < deadline, conditions
        time.sleep(0.2)
    while cluster.get("/apis/run.ai/v1alpha1/kartas").status != 200:
        assert time.monotonic() < deadline, "kartas not served"
        time.sleep(0.2)
