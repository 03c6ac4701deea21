"""Fake Nodes that belong to one test, on the control planes with a real kube-scheduler.

Owns: the rule that keeps the session's tests off each other's Nodes. A test's Nodes carry its
labels (the ``selector`` its pods' ``nodeSelector`` names) and a ``NoSchedule`` taint derived from
them; only the pods :func:`pin`-ned to the same selector tolerate it. Without the taint, pods that
another test left Pending (a Job still retrying, a gang still waiting) are bound to a new Node the
moment it is Ready and take the capacity the test counted on.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from typing import Any

from karta.kube import ConfigOverrides, KubeClient

from .conftest import hack_module
from .kubehttp import KubeHTTP

TAINT_KEY = "karta.test/dedicated"


def _value(selector: Mapping[str, str]) -> str:
    text = ",".join(f"{key}={selector[key]}" for key in sorted(selector))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def taint(selector: Mapping[str, str]) -> dict[str, str]:
    return {"key": TAINT_KEY, "value": _value(selector), "effect": "NoSchedule"}


def toleration(selector: Mapping[str, str]) -> dict[str, str]:
    return {"key": TAINT_KEY, "operator": "Equal", "value": _value(selector), "effect": "NoSchedule"}


def dedicated_node(
    kube: KubeHTTP,
    name: str,
    *,
    selector: Mapping[str, str],
    gpus: int,
    cpu: str = "64",
    memory: str = "512Gi",
    labels: Mapping[str, str] | None = None,
    kwok: bool = False,
) -> None:
    """Fake Node ``name`` (hack/fake_nodes.py): Ready, labelled with ``selector`` (and ``labels``),
    tainted for the pods pinned to ``selector`` only; ``kwok``: its pods run (kwok_cluster)."""
    with KubeClient.from_config(ConfigOverrides(kubeconfig=str(kube.kubeconfig))) as client:
        hack_module("fake_nodes.py").ensure_fake_node(
            client,
            name,
            gpus=gpus,
            cpu=cpu,
            memory=memory,
            labels={**selector, **(labels or {})},
            taints=[taint(selector)],
            kwok=kwok,
        )


def pin(pod_spec: Mapping[str, Any], selector: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``pod_spec`` that selects the Nodes of ``selector`` and tolerates their taint."""
    spec = copy.deepcopy(dict(pod_spec))
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **selector}
    spec["tolerations"] = [*(spec.get("tolerations") or []), toleration(selector)]
    return spec
