"""Fake GPU Nodes for a cluster without kubelets (the test control plane of ``hack/cluster``).

A Node here is only an object: this writes it, then its status through the ``status``
subresource as a kubelet would (capacity and allocatable with ``nvidia.com/gpu``, cpu, memory and
pods, and a ``Ready`` condition), so that kube-scheduler binds pods to it (``spec.nodeName``) and
``kli describe`` counts its GPUs. Nothing runs on it. The control plane of ``hack/cluster`` disables
the admission plugin that would taint a new Node not-ready and the node-lifecycle controller that
would taint it unreachable, so the Nodes stay schedulable.

Run it with the project's virtualenv (it talks to the cluster through ``karta.kube``, with
kubectl's kubeconfig rules)::

    .venv/bin/python hack/fake_nodes.py --count 2 --gpus 8
    .venv/bin/python hack/fake_nodes.py --count 4 --gpus 8 --cpu 64 --memory 512Gi --prefix dgx \\
        --label nvidia.com/gpu.product=H100 --taint nvidia.com/gpu=present:NoSchedule
    .venv/bin/python hack/fake_nodes.py --count 2 --delete

With ``--kwok`` a Node also carries the annotation ``kwok.x-k8s.io/node: fake``: the kwok of
``hack/cluster/up.sh --kwok`` then plays its kubelet, and the pods bound to it run (Running and
Ready, then Succeeded or Failed on demand: the Stages of ``hack/kwok/stages.yaml``). Without it the
pods bound to a Node stay Pending, as before.

Re-running it updates the Nodes in place (labels merged, status replaced). The e2e tests create
their Nodes with :func:`ensure_fake_nodes` (``tests/e2e/test_fake_nodes.py`` runs this script).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from karta.errors import ApiError, ClusterError
from karta.kube import ConfigOverrides, KubeClient

__all__ = ["ensure_fake_node", "ensure_fake_nodes", "fake_node_status", "main", "node_names"]

GPU = "nvidia.com/gpu"
KWOK_ANNOTATION = {"kwok.x-k8s.io/node": "fake"}  # the selector kwok runs with (hack/cluster)


def node_names(prefix: str, count: int) -> list[str]:
    """``<prefix>-0`` ... ``<prefix>-<count-1>``."""
    return [f"{prefix}-{index}" for index in range(count)]


def fake_node_status(*, gpus: int, cpu: str = "64", memory: str = "512Gi", pods: int = 110) -> dict[str, Any]:
    """The status a kubelet would report: the same capacity and allocatable (``nvidia.com/gpu``
    only when ``gpus`` > 0), and ``Ready=True``."""
    capacity = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    if gpus > 0:
        capacity[GPU] = str(gpus)
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "fake node (no kubelet)"}
    return {"capacity": capacity, "allocatable": dict(capacity), "conditions": [ready]}


def ensure_fake_node(
    client: KubeClient,
    name: str,
    *,
    gpus: int,
    cpu: str = "64",
    memory: str = "512Gi",
    pods: int = 110,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    kwok: bool = False,
) -> dict[str, Any]:
    """Create Node ``name`` (or merge ``labels`` into the existing one and replace its taints),
    then patch its status subresource; returns the Node as stored. A taint (``{"key", "value",
    "effect"}``) keeps every pod that does not tolerate it off the Node: the tests taint their
    Nodes so that pods other tests left behind are not scheduled onto them. ``kwok``: annotated
    for kwok, which then runs the pods bound to it (on an existing Node too)."""
    metadata: dict[str, Any] = {"name": name, "labels": dict(labels or {})}
    if kwok:
        metadata["annotations"] = dict(KWOK_ANNOTATION)
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": metadata}
    if taints:
        node["spec"] = {"taints": [dict(taint) for taint in taints]}
    try:
        client.create(node)
    except ApiError as exc:
        if exc.status != 409:
            raise
        patch: dict[str, Any] = {"metadata": {"labels": dict(labels)}} if labels else {}
        if kwok:
            patch.setdefault("metadata", {})["annotations"] = dict(KWOK_ANNOTATION)
        if taints:
            patch["spec"] = {"taints": [dict(taint) for taint in taints]}
        if patch:
            client.patch("nodes", name, patch)
    status = fake_node_status(gpus=gpus, cpu=cpu, memory=memory, pods=pods)
    return client.patch("nodes", name, {"status": status}, subresource="status")


def ensure_fake_nodes(
    client: KubeClient,
    *,
    count: int,
    gpus: int,
    prefix: str = "fake-gpu-node",
    cpu: str = "64",
    memory: str = "512Gi",
    pods: int = 110,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    kwok: bool = False,
) -> list[str]:
    """``count`` fake Nodes named ``<prefix>-<i>``; returns their names."""
    names = node_names(prefix, count)
    for name in names:
        ensure_fake_node(
            client,
            name,
            gpus=gpus,
            cpu=cpu,
            memory=memory,
            pods=pods,
            labels=labels,
            taints=taints,
            kwok=kwok,
        )
    return names


EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--label {text!r}: expected KEY=VALUE")
    return key, value


def _taint(text: str) -> dict[str, str]:
    pair, sep, effect = text.rpartition(":")
    key, _, value = pair.partition("=")
    if not sep or not key or effect not in EFFECTS:
        raise argparse.ArgumentTypeError(
            f"--taint {text!r}: expected KEY[=VALUE]:EFFECT, EFFECT one of {', '.join(EFFECTS)}"
        )
    return {"key": key, "value": value, "effect": effect} if value else {"key": key, "effect": effect}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=1, help="how many Nodes (default 1)")
    parser.add_argument("--gpus", type=int, default=8, help="nvidia.com/gpu per Node (default 8; 0: none)")
    parser.add_argument("--cpu", default="64", help="cpu per Node (default 64)")
    parser.add_argument("--memory", default="512Gi", help="memory per Node (default 512Gi)")
    parser.add_argument("--pods", type=int, default=110, help="pods per Node (default 110)")
    parser.add_argument("--prefix", default="fake-gpu-node", help="Nodes are <prefix>-0, <prefix>-1, ...")
    parser.add_argument("--label", type=_label, action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--taint", type=_taint, action="append", default=[], metavar="KEY[=VALUE]:EFFECT")
    parser.add_argument("--kwok", action="store_true", help="annotate them for kwok: their pods run")
    parser.add_argument("--delete", action="store_true", help="delete the Nodes <prefix>-0 ... instead")
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context")
    args = parser.parse_args(argv)
    if args.count < 1 or args.gpus < 0 or args.pods < 1:
        parser.error("--count and --pods must be at least 1, --gpus at least 0")
    try:
        client = KubeClient.from_config(ConfigOverrides(kubeconfig=args.kubeconfig, context=args.context))
    except ClusterError as exc:
        print(f"fake_nodes: {exc}", file=sys.stderr)
        return 1
    with client:
        try:
            if args.delete:
                for name in node_names(args.prefix, args.count):
                    try:
                        client.delete("nodes", name)
                    except ApiError as exc:
                        if exc.status != 404:
                            raise
                    print(f"node/{name} deleted")
                return 0
            names = ensure_fake_nodes(
                client,
                count=args.count,
                gpus=args.gpus,
                prefix=args.prefix,
                cpu=args.cpu,
                memory=args.memory,
                pods=args.pods,
                labels=dict(args.label),
                taints=args.taint,
                kwok=args.kwok,
            )
        except ClusterError as exc:
            print(f"fake_nodes: {exc}", file=sys.stderr)
            return 1
    for name in names:
        print(f"node/{name} ready: {args.gpus} x {GPU}, cpu {args.cpu}, memory {args.memory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
