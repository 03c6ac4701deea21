"""Gangs replayed along each operator's scale flows (tests/catalog/gang_lifecycle/README.md): for every
step, the gangs the catalog definition plans for the object and the pods the operator has created by
then (labelled as the operator labels them), with their minimums and members, the diagnostics, and
the Volcano PodGroups rendered from the same plan (one per gang, each pod bound to its own)."""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from catalog_view import CORPUS, documents, evaluator, workload_file
from test_lifecycle import _definitions, _unknown, merge

from karta.extract import ComponentFactory
from karta.gang import compute_gang_plan
from karta.render import render

GANG_LIFECYCLE = Path(__file__).parent / "gang_lifecycle"
MIN_FLOWS = 3

# The definitions whose gangs follow one replica or instance (karta extension E1) or whose single
# gang was kept on purpose (their headers say why): each has a file here.
COVERED = frozenset(
    {
        "leaderworkerset-x-k8s-io-leaderworkerset-v1",
        "jobset-x-k8s-io-jobset-v1alpha2",
        "grove-io-podcliqueset-v1alpha1",
        "nvidia-com-dynamographdeployment-v1alpha1",
        "nvidia-com-dynamographdeployment-v1beta1",
        "ray-io-raycluster-v1",
        "ray-io-rayjob-v1",
        "ray-io-rayservice-v1",
    }
)

_FILE_KEYS = {"definition", "sources", "object", "object_from", "flows"}
_FLOW_KEYS = {"flow", "steps"}
_STEP_KEYS = {"step", "spec", "metadata", "pods", "expect", "diagnostics"}
_POD_KEYS = {"name", "labels", "annotations", "each"}

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


@dataclass(frozen=True)
class GangStep:
    file: str
    flow: str
    step: str
    obj: dict[str, Any]
    pods: tuple[dict[str, Any], ...]
    gangs: tuple[tuple[str, int, Any], ...]
    diagnostics: dict[str, int]

    @property
    def id(self) -> str:
        return f"{self.file}::{self.flow}::{self.step}"


def _expand(entry: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """One pod, or one per combination of the inclusive ``each`` ranges (``{g: [0, 2]}``), with
    ``{g}`` in the name and the label and annotation values replaced."""
    _unknown(entry, _POD_KEYS, where)
    ranges = entry.get("each") or {}
    names = list(ranges)
    spans = [range(int(lo), int(hi) + 1) for lo, hi in (ranges[n] for n in names)]
    pods = []
    for values in itertools.product(*spans) if names else [()]:
        env = dict(zip(names, values, strict=True))
        metadata: dict[str, Any] = {"name": str(entry["name"]).format(**env), "namespace": "ns"}
        for field in ("labels", "annotations"):
            if entry.get(field):
                metadata[field] = {k: str(v).format(**env) for k, v in entry[field].items()}
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": []}})
    return pods


def _object(doc: dict[str, Any], where: str) -> dict[str, Any]:
    assert ("object" in doc) != ("object_from" in doc), f"{where}: exactly one of object, object_from"
    if "object" in doc:
        return copy.deepcopy(doc["object"])
    path, _, index = str(doc["object_from"]).partition("#")
    return copy.deepcopy(documents(workload_file(path))[int(index or 0)])


def load_gang_steps(path: Path) -> list[GangStep]:
    doc = yaml.safe_load(path.read_text())
    where = path.name
    _unknown(doc, _FILE_KEYS, where)
    assert doc.get("definition") == path.stem, f"{where}: definition must be {path.stem!r}"
    assert doc.get("sources"), f"{where}: sources (where the labels and flows were read) are required"
    base = _object(doc, where)
    base.setdefault("metadata", {}).update(namespace="ns", uid="6a1d0000-0000-4000-8000-000000000022")
    steps: list[GangStep] = []
    for flow in doc["flows"]:
        _unknown(flow, _FLOW_KEYS, f"{where}: flow {flow.get('flow')!r}")
        obj = copy.deepcopy(base)
        pods: list[dict[str, Any]] = []
        for raw in flow["steps"]:
            here = f"{where}: {flow['flow']} / {raw.get('step')}"
            _unknown(raw, _STEP_KEYS, here)
            assert "expect" in raw, f"{here}: expect (the gangs) is required"
            obj = merge(obj, {"spec": raw["spec"]}) if "spec" in raw else obj
            obj = merge(obj, {"metadata": raw["metadata"]}) if "metadata" in raw else obj
            if "pods" in raw:  # the pods that exist now; otherwise the previous step's
                pods = [pod for entry in raw["pods"] or [] for pod in _expand(entry, here)]
            gangs = tuple((str(g[0]), int(g[1]), g[2]) for g in raw["expect"] or [])
            steps.append(
                GangStep(
                    path.stem,
                    str(flow["flow"]),
                    str(raw["step"]),
                    copy.deepcopy(obj),
                    tuple(copy.deepcopy(pods)),
                    gangs,
                    dict(raw.get("diagnostics") or {}),
                )
            )
    return steps


def gang_files() -> list[Path]:
    return sorted(GANG_LIFECYCLE.glob("*.yaml"))


STEPS = [step for path in gang_files() for step in load_gang_steps(path)] if CORPUS.is_dir() else []


@needs_corpus
@pytest.mark.parametrize("step", STEPS, ids=[s.id for s in STEPS])
def test_gang_step(step: GangStep) -> None:
    karta = _definitions()[step.file]
    factory = ComponentFactory(karta, step.obj, evaluator=evaluator())
    plan = compute_gang_plan(factory, step.pods, evaluator=evaluator())
    got = [(g.qualified_name, g.min_member, g.members) for g in plan.gangs]
    assert [(n, m, len(p)) for n, m, p in got] == [
        (n, m, w if isinstance(w, int) else len(w)) for n, m, w in step.gangs
    ], f"{step.id}: gangs (name, minimum, members)"
    for (name, _, members), (_, _, want) in zip(got, step.gangs, strict=True):
        if not isinstance(want, int):
            assert list(members) == list(want), f"{step.id}: members of {name}"
    seen = {text: sum(text in d.message for d in plan.diagnostics) for text in step.diagnostics}
    assert seen == step.diagnostics, f"{step.id}: diagnostics {[d.message for d in plan.diagnostics]}"
    assert len(plan.diagnostics) == sum(step.diagnostics.values()), f"{step.id}: unexpected diagnostics"
    _check_volcano(step, factory, plan)


def _check_volcano(step: GangStep, factory: ComponentFactory, plan: Any) -> None:
    """One PodGroup per gang, minMember the gang's minimum; every member bound to its own gang's."""
    workload = step.obj["metadata"]["name"]
    rendering = render("volcano", factory, pods=step.pods, plan=plan)
    groups = [(o["metadata"]["name"], o["spec"]["minMember"]) for o in rendering.objects]
    assert groups == [(f"{workload}-{g.qualified_name}", g.min_member) for g in plan.gangs], step.id
    bound = {p.pod: repr(p.patch) for p in rendering.pod_patches}
    for gang in plan.gangs:
        for member in gang.members:
            assert f"{workload}-{gang.qualified_name}'" in bound[member], f"{step.id}: {member}"


def test_every_covered_definition_has_its_gang_lifecycle() -> None:
    files = {p.stem for p in gang_files()}
    assert files == COVERED
    assert files <= set(_definitions())


@pytest.mark.parametrize("path", gang_files(), ids=lambda p: p.stem)
def test_each_gang_lifecycle_has_enough_flows(path: Path) -> None:
    flows = yaml.safe_load(path.read_text())["flows"]
    assert len(flows) >= MIN_FLOWS, f"{path.name}: {len(flows)} flows, at least {MIN_FLOWS}"
