"""Per-object cost of a definition WITH references (extension E3) against the same definition
without, run on demand (never in the test suite): ``.venv/bin/python bench/references.py
[--rounds 7] [--min-time 0.3] [--json]``.

The definitions: a tiny one (a root with a scale and a status, one child whose instances, pod
templates and scales come from the referenced object ``$rt``), and the catalog's TrainJob with its
ClusterTrainingRuntime from ``../shared/corpus`` (when present). "Without references" is the same
definition with each expression ``E`` written ``.spec.rt as $rt | E`` and the referenced object
copied into the workload at ``.spec.rt``: the same jq work, the value read from the object instead
of bound.

Per object, what ``bench/catalog.py``'s ``full`` mode does (every component's extracted instances,
the root status, the gang plan), with one evaluator made per object as the consumers make it:

* ``plain``: the definition without references (the baseline of the target);
* ``refs``: the definition with references, ``BoundEvaluator`` over a trusted decoded evaluator:
  the generated whole-component functions taking the references as parameters (this change);
* ``refs+resolve``: ``refs`` plus resolving the references of the object (``plan_references``,
  ``resolve_offline`` over the one referenced object, ``bind_references``'s limits): what
  ``kli --ref`` and the controller pay per object besides fetching;
* ``refs general``: the previous approach, measured in the same run: the bound evaluator's base
  may not run generated whole-component code, so every expression is rewritten and evaluated
  through the evaluator (its per-expression fast path).

Every figure is the median over ``--rounds`` rounds of the steady per-object CPU time of this
process in µs (less sensitive to other processes than the wall time; after a warm-up, each round
runs each variant for at least ``--min-time`` CPU seconds, the variants alternating); the ratios
are to ``plain``; the target is ``refs`` ≤ 1.3 × ``plain`` (``--target``).
``KARTA_CODEGEN`` is ``on`` (as users run it) whatever the caller's environment says.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["KARTA_CODEGEN"] = "on"

import yaml

ROOT = Path(__file__).resolve().parents[1]
TRAINER = ROOT.parent / "shared" / "corpus" / "workloads" / "kubeflow-trainer-v2"

TINY = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: tiny-references}
spec:
  structureDefinition:
    references:
    - name: rt
      gvk: {group: example.com, version: v1, kind: Runtime}
      lookup: {nameExpression: .spec.runtime}
    rootComponent:
      name: job
      kind: {group: example.com, version: v1, kind: Job}
      statusDefinition:
        phaseDefinition: {path: '.status.phase // $rt.status.defaultPhase'}
        statusMappings:
          running: [{byPhase: Running}]
          failed:
          - byExpression:
              expression: '$rt.spec.strict == true and .status.failed > 0'
              expectedResult: "true"
      scaleDefinition: {replicasPath: '.spec.replicas // $rt.spec.replicas'}
    childComponents:
    - name: worker
      ownerRef: job
      instanceIdPath: '$rt.spec.roles[].name'
      specDefinition: {podTemplateSpecPath: '$rt.spec.roles[] | .template'}
      scaleDefinition: {replicasPath: '$rt.spec.roles[] | .replicas // 1'}
  optimizationInstructions:
    gangScheduling:
      podGroup: {name: job}
"""

TINY_OBJ: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Job",
    "metadata": {"name": "j", "namespace": "ns"},
    "spec": {"runtime": "rt"},
    "status": {"phase": "Running", "failed": 0},
}
TINY_RUNTIME: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Runtime",
    "metadata": {"name": "rt", "namespace": "ns"},
    "spec": {
        "replicas": 1,
        "strict": True,
        "roles": [
            {
                "name": "node",
                "replicas": 4,
                "template": {
                    "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
                },
            },
        ],
    },
    "status": {"defaultPhase": "Pending"},
}


def _expressions(node: Any, rewrite: Callable[[str], str]) -> Any:
    """The definition document with every expression (a value under a key ending in ``Path`` or
    named ``path`` or ``expression``) rewritten."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if isinstance(value, str) and (key.endswith("Path") or key in ("path", "expression")):
                out[key] = rewrite(value)
            else:
                out[key] = _expressions(value, rewrite)
        return out
    if isinstance(node, list):
        return [_expressions(item, rewrite) for item in node]
    return node


def _without_references(document: dict[str, Any]) -> dict[str, Any]:
    """The same definition reading ``$rt`` from the object (``.spec.rt``) instead of a reference."""
    document = copy.deepcopy(document)
    structure = document["spec"]["structureDefinition"]
    names = [r["name"] for r in structure.pop("references")]
    assert len(names) <= 2
    head = " | ".join(f".spec.{n} as ${n}" for n in names)
    document["spec"]["structureDefinition"] = _expressions(structure, lambda e: f"{head} | ({e}\n)")
    document["metadata"]["name"] += "-inline"
    return document


class Case:
    def __init__(self, label: str, document: dict[str, Any], obj: dict[str, Any], refs: list[dict[str, Any]]):
        from karta.jq import Evaluator
        from karta.model import load_karta
        from karta.references import resolve

        self.label = label
        self.karta = load_karta(document).karta
        self.plain_karta = load_karta(_without_references(document)).karta
        self.obj = obj
        self.refs = refs
        resolution = resolve(self.karta, obj, Evaluator(trusted=True), refs)
        self.bindings = resolution.bindings
        self.plain_obj = copy.deepcopy(obj)
        self.plain_obj["spec"] = {**self.plain_obj.get("spec", {}), **copy.deepcopy(self.bindings)}


def _cases() -> list[Case]:
    cases = [Case("tiny", yaml.safe_load(TINY), TINY_OBJ, [TINY_RUNTIME])]
    if TRAINER.is_dir():
        data = ROOT / "src" / "karta" / "catalog" / "data" / "trainer-kubeflow-org-trainjob-v1alpha1.yaml"
        job = _one("trainjob-multi-node.yaml", "TrainJob")
        runtime = _one("clustertrainingruntime-torch-distributed.yaml", "ClusterTrainingRuntime")
        cases.append(Case("TrainJob", yaml.safe_load(data.read_text()), job, [runtime]))
    return cases


def _one(name: str, kind: str) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all((TRAINER / name).read_text()) if d and d["kind"] == kind]
    return dict(doc)


def _variants(case: Case) -> dict[str, Callable[[], Any]]:
    from karta.extract import ComponentFactory
    from karta.gang import compute_gang_plan
    from karta.jq import Evaluator
    from karta.jq.bound import BoundEvaluator
    from karta.references import bind_references, plan_references, resolve_offline

    base = Evaluator(trusted=True, decoded=True)

    class General(Evaluator):
        @property
        def inlinable(self) -> bool:
            return False

    general = General(trusted=True, decoded=True)

    def full(karta: Any, obj: Any, evaluator: Any) -> Any:
        factory = ComponentFactory(karta, obj, evaluator=evaluator)
        components = {c.name: factory.component(c.name).extracted_instances() for c in karta.components}
        status = factory.root().status()
        return components, status, compute_gang_plan(factory, (), evaluator=evaluator)

    karta, plain_karta, obj, plain_obj, bindings = (
        case.karta,
        case.plain_karta,
        case.obj,
        case.plain_obj,
        case.bindings,
    )

    def plain() -> Any:
        return full(plain_karta, plain_obj, base)

    def refs() -> Any:
        return full(karta, obj, BoundEvaluator(base, bindings))

    def refs_resolve() -> Any:
        fetched = resolve_offline(plan_references(karta, obj, base), case.refs)
        return full(karta, obj, bind_references(fetched).evaluator(base))

    def refs_general() -> Any:
        return full(karta, obj, BoundEvaluator(general, bindings))

    return {"plain": plain, "refs": refs, "refs+resolve": refs_resolve, "refs general": refs_general}


def _per_object_us(fn: Callable[[], Any], min_time: float) -> float:
    count, start = 0, time.process_time()
    while True:
        for _ in range(50):
            fn()
        count += 50
        elapsed = time.process_time() - start
        if elapsed >= min_time:
            return elapsed / count * 1e6


def _check(case: Case, variants: dict[str, Callable[[], Any]]) -> None:
    """Every variant gives the same extraction (instances, status, gang plan)."""

    def shown(result: Any) -> str:
        components, status, plan = result
        return repr(({k: sorted(v) for k, v in components.items()}, status.to_dict(), plan.to_dict()))

    want = shown(variants["refs general"]())
    for name, fn in variants.items():
        if name != "plain":
            assert shown(fn()) == want, f"{case.label}: {name} differs from the general path"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.3)
    parser.add_argument("--target", type=float, default=1.3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    ok = True
    for case in _cases():
        variants = _variants(case)
        _check(case, variants)
        for fn in variants.values():  # warm-up: generate every function
            _per_object_us(fn, 0.05)
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for round_ in range(args.rounds):
            names = list(variants) if round_ % 2 == 0 else list(reversed(variants))
            for name in names:
                samples[name].append(_per_object_us(variants[name], args.min_time))
        medians = {name: statistics.median(values) for name, values in samples.items()}
        report[case.label] = medians
        plain = medians["plain"]
        print(f"{case.label}: per object (µs, median of {args.rounds}), ratio to plain")
        for name, value in medians.items():
            print(f"  {name:<14} {value:8.1f} µs  {value / plain:5.2f}x")
        ok = ok and medians["refs"] <= args.target * plain
    print(
        f"target: refs <= {args.target}x plain: {'met' if ok else 'NOT met'}; load {os.getloadavg()[0]:.2f}"
    )
    if args.json:
        print(json.dumps(report, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
