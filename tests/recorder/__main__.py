"""``python -m tests.recorder --operator kube|training|kuberay [--kind K] [--flow F] [--out DIR]
[--check]``: record flows against ``$KUBECONFIG`` (``hack/record.sh`` starts the cluster first).
``--check`` writes nothing and compares each flow with its stored fixtures (exit 1 on drift)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from karta.kube import ConfigOverrides, KubeClient

from . import registry
from .fixtures import RECORDED
from .record import compare, run_flow, selected, stored, write_flow


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.recorder", description=__doc__)
    parser.add_argument("--operator", required=True, choices=sorted(registry.OPERATORS))
    parser.add_argument("--kind")
    parser.add_argument("--flow")
    parser.add_argument("--out", type=Path, default=RECORDED)
    parser.add_argument("--kubeconfig")
    parser.add_argument("--quiet", type=float, default=3.0, help="seconds without change that settle a state")
    parser.add_argument("--check", action="store_true", help="compare with the fixtures; write nothing")
    ns = parser.parse_args(argv)
    client = KubeClient.from_config(ConfigOverrides(kubeconfig=ns.kubeconfig))
    failed = 0
    with client:
        for kind, flow in list(selected(ns.operator, ns.kind, ns.flow)):
            started = time.monotonic()
            try:
                fixtures = run_flow(client, ns.operator, kind, flow, quiet=ns.quiet)
            except Exception as exc:  # one broken flow does not stop the others
                failed += 1
                print(f"{kind}/{flow}: FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            took = time.monotonic() - started
            states = ", ".join(
                f"{f['label']}={f['judged']['status']}/{f['reading']['status']['primary']}" for f in fixtures
            )
            if ns.check:
                problems = compare(fixtures, stored(ns.operator, kind, flow, ns.out))
                failed += bool(problems)
                print(f"{kind}/{flow} ({took:.0f}s): {'DRIFT' if problems else 'same'}: {states}")
                for problem in problems:
                    print(f"  {problem}")
            else:
                write_flow(fixtures, ns.out)
                print(f"{kind}/{flow} ({took:.0f}s): {states}  [judged/karta]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
