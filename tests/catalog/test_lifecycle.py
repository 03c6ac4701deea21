"""Status mappings replayed along each operator's state machine (tests/catalog/lifecycle/README.md):
for every step of every flow, the root component's primary status and matched set."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from catalog_view import bound_evaluator, documents, gpus_per_pod, workload_file

from karta.catalog import catalog_definitions
from karta.extract import ComponentFactory
from karta.model import Karta

LIFECYCLE = Path(__file__).parent / "lifecycle"
MIN_FLOWS = 6

# Catalog definitions without a lifecycle file yet (issue 11 in progress). The list only shrinks:
# a definition listed here that has a file is an error.
PENDING: frozenset[str] = frozenset()

_FILE_KEYS = {"definition", "sources", "object", "flows"}
_FLOW_KEYS = {"flow", "steps", "references"}
_STEP_KEYS = {
    "step",
    "status",
    "status_from",
    "spec",
    "metadata",
    "expect",
    "components",
    "stale",
    "references",
    "pods",
}
_EXPECT_KEYS = {"primary", "matched"}
_POD_KEYS = {"desired", "gpusPerPod", "images"}


@dataclass(frozen=True)
class Step:
    file: str
    flow: str
    step: str
    obj: dict[str, Any]
    expect: dict[str, Any]
    components: dict[str, dict[str, Any]]
    refs: tuple[dict[str, Any], ...] = ()
    pods: dict[str, dict[str, Any]] | None = None

    @property
    def id(self) -> str:
        return f"{self.file}::{self.flow}::{self.step}"


def merge(base: Any, patch: Any) -> Any:
    """Deep merge: maps merge, ``None`` deletes a key, everything else replaces."""
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge(out.get(key), value)
    return out


def _expectation(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):
        return {"primary": value, "matched": [value]}
    if not isinstance(value, dict) or set(value) - _EXPECT_KEYS or "primary" not in value:
        raise AssertionError(f"{where}: expect must be a status or {{primary, matched}}, got {value!r}")
    return {"primary": value["primary"], "matched": list(value.get("matched") or [value["primary"]])}


def _corpus_status(ref: str, where: str) -> Any:
    path, _, index = ref.partition("#")
    docs = documents(workload_file(path))
    doc = docs[int(index or 0)]
    if "status" not in doc:
        raise AssertionError(f"{where}: {ref} has no status")
    return doc["status"]


def _references(value: Any, where: str) -> tuple[dict[str, Any], ...]:
    """The objects a flow's workload references (extension E3): each an object, or
    ``<project>/<file>.yaml[#<document index>]`` of the corpus (a framework's real runtime)."""
    assert isinstance(value, list), f"{where}: references must be a list"
    out: list[dict[str, Any]] = []
    for item in value:
        if isinstance(item, str):
            path, _, index = item.partition("#")
            out.append(documents(workload_file(path))[int(index or 0)])
        else:
            assert isinstance(item, dict), f"{where}: a reference is an object or a corpus file"
            out.append(item)
    return tuple(copy.deepcopy(out))


def _pods(value: Any, where: str) -> dict[str, dict[str, Any]]:
    assert isinstance(value, dict), f"{where}: pods must map a component to its expectation"
    for name, expected in value.items():
        _unknown(expected, _POD_KEYS, f"{where} (pods of {name})")
    return value


def _unknown(mapping: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = set(mapping) - allowed
    if extra:
        raise AssertionError(f"{where}: unknown keys {sorted(extra)} (allowed: {sorted(allowed)})")


def load_steps(path: Path) -> list[Step]:
    doc = yaml.safe_load(path.read_text())
    where = path.name
    _unknown(doc, _FILE_KEYS, where)
    assert doc.get("definition") == path.stem, f"{where}: definition must be {path.stem!r}"
    assert doc.get("sources"), f"{where}: sources (where the state machine was read) are required"
    steps: list[Step] = []
    for flow in doc["flows"]:
        _unknown(flow, _FLOW_KEYS, f"{where}: flow {flow.get('flow')!r}")
        obj = copy.deepcopy(doc["object"])
        refs = _references(flow.get("references", []), f"{where}: flow {flow.get('flow')!r}")
        for raw in flow["steps"]:
            here = f"{where}: {flow['flow']} / {raw.get('step')}"
            _unknown(raw, _STEP_KEYS, here)
            assert ("status" in raw) != ("status_from" in raw), f"{here}: exactly one of status, status_from"
            obj = merge(obj, {"spec": raw["spec"]}) if "spec" in raw else obj
            obj = merge(obj, {"metadata": raw["metadata"]}) if "metadata" in raw else obj
            refs = _references(raw["references"], here) if "references" in raw else refs
            snapshot = copy.deepcopy(obj)
            status = raw["status"] if "status" in raw else _corpus_status(raw["status_from"], here)
            if status is None:
                snapshot.pop("status", None)
            else:
                snapshot["status"] = copy.deepcopy(status)
            expect = _expectation(raw.get("expect"), here)
            if "stale" in raw:
                expect["stale"] = bool(raw["stale"])
            components = {
                name: _expectation(value, f"{here} ({name})")
                for name, value in (raw.get("components") or {}).items()
            }
            pods = _pods(raw["pods"], here) if "pods" in raw else None
            steps.append(
                Step(path.stem, str(flow["flow"]), str(raw["step"]), snapshot, expect, components, refs, pods)
            )
    return steps


def lifecycle_files() -> list[Path]:
    return sorted(LIFECYCLE.glob("*.yaml"))


def _definitions() -> dict[str, Karta]:
    return {d.metadata.name: d for d in catalog_definitions()}


STEPS = [step for path in lifecycle_files() for step in load_steps(path)]


def _factory(karta: Karta, step: Step) -> ComponentFactory:
    """The step's object with the definition's references bound to the flow's objects."""
    bound, _ = bound_evaluator(karta, step.obj, list(step.refs))
    return ComponentFactory(karta, step.obj, evaluator=bound)


def _observed(karta: Karta, step: Step, component: str | None = None) -> dict[str, Any]:
    factory = _factory(karta, step)
    target = factory.root() if component is None else factory.component(component)
    status = target.status(strict=True)
    assert status is not None, "the component has no status definition"
    return {"primary": str(status.primary), "matched": [str(s) for s in status.matched]}


@pytest.mark.parametrize("step", STEPS, ids=[s.id for s in STEPS])
def test_lifecycle_step(step: Step) -> None:
    karta = _definitions()[step.file]
    got = _observed(karta, step)
    want = {k: v for k, v in step.expect.items() if k in _EXPECT_KEYS}
    assert got == want, f"{step.id}: status {step.obj.get('status')!r}"
    if "stale" in step.expect:
        status = _factory(karta, step).root().status(strict=True)
        assert status is not None and status.stale is step.expect["stale"], f"{step.id}: stale"
    for name, expected in step.components.items():
        assert _observed(karta, step, name) == expected, f"{step.id}: component {name}"
    for name, expected in (step.pods or {}).items():
        assert _pod_view(_factory(karta, step), name, expected) == expected, f"{step.id}: pods of {name}"


def _pod_view(factory: ComponentFactory, name: str, expected: dict[str, Any]) -> dict[str, Any]:
    """What ``pods`` checks of one component with a single instance: its desired pods, GPUs per
    pod and container images (a fragmented spec's ``containers``, then its ``container``)."""
    component = factory.component(name)
    (instance,) = component.instance_ids()
    scales = component.scales()
    scale = scales.get(instance) if scales is not None else None
    images: list[Any] = []
    fragments = component.fragmented_pod_specs()
    if fragments is not None:
        fragment = fragments.get(instance) or {}
        single = [fragment["container"]] if fragment.get("container") else []
        images = [c.get("image") for c in [*(fragment.get("containers") or []), *single]]
    else:
        template = (component.pod_template_specs() or {}).get(instance) or {}
        images = [c.get("image") for c in (template.get("spec") or {}).get("containers") or []]
    view = {
        "desired": (scale.replicas if scale is not None and scale.replicas is not None else 1),
        "gpusPerPod": gpus_per_pod(component).get(instance, 0),
        "images": images,
    }
    return {k: v for k, v in view.items() if k in expected}


def test_every_definition_has_its_lifecycle_or_is_pending() -> None:
    names = set(_definitions())
    files = {p.stem for p in lifecycle_files()}
    assert files <= names, f"lifecycle files for no catalog definition: {sorted(files - names)}"
    assert not files & PENDING, (
        f"listed as pending but covered (remove from PENDING): {sorted(files & PENDING)}"
    )
    assert names - files <= PENDING, f"no lifecycle file: {sorted(names - files - PENDING)}"


@pytest.mark.parametrize("path", lifecycle_files(), ids=lambda p: p.stem)
def test_each_lifecycle_has_enough_flows(path: Path) -> None:
    flows = yaml.safe_load(path.read_text())["flows"]
    assert len(flows) >= MIN_FLOWS, f"{path.name}: {len(flows)} flows, at least {MIN_FLOWS}"


# "Not decided yet" (README, "Statuses"): no status, or an empty one, is Initializing. The
# exceptions read a suspension asked for in the spec as Suspended before any status: CronJob, whose
# suspension is a spec flag its controller never acknowledges in status, and RayCluster, whose
# operator confirms it unconditionally on its first reconcile (KubeRay v1.5.0 calculateStatus: a
# cluster created suspended has no pod to delete, state suspended is the first thing written), and
# ScheduledSparkApplication, whose operator returns at once on spec.suspend and never writes it.
SPEC_SUSPENDED_FROM_SPEC_ALONE = frozenset(
    {"batch-cronjob-v1", "ray-io-raycluster-v1", "sparkoperator-k8s-io-scheduledsparkapplication-v1beta2"}
)


@pytest.mark.parametrize("path", lifecycle_files(), ids=lambda p: p.stem)
def test_each_lifecycle_starts_undecided_as_initializing(path: Path) -> None:
    undecided = {"null": 0, "{}": 0}
    for step in load_steps(path):
        if "status" in step.obj and step.obj["status"] != {}:
            continue
        undecided["{}" if "status" in step.obj else "null"] += 1
        allowed = [{"primary": "Initializing", "matched": ["Initializing"]}]
        spec = step.obj.get("spec")
        if (
            step.file in SPEC_SUSPENDED_FROM_SPEC_ALONE
            and isinstance(spec, dict)
            and spec.get("suspend") is True
        ):
            allowed.append({"primary": "Suspended", "matched": ["Suspended"]})
        want = {k: v for k, v in step.expect.items() if k in _EXPECT_KEYS}
        assert want in allowed, f"{step.id}: an undecided status expects {want}, allowed {allowed}"
    missing = [kind for kind, count in undecided.items() if not count]
    assert not missing, f"{path.name}: no step with status: {' and '.join(missing)} (both are required)"
