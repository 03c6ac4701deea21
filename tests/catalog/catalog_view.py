"""Shared helpers of the catalog tests: locating the corpus, reading its documents, resolving them to
built-in definitions and computing the extracted view that the golden files pin.

The view of one workload document: its components (parent, instance ids, scale, desired pods per
instance by the describe rule of section 17.5, GPUs per pod from the pod templates), the total
desired pods (subtree_desired of the root, which multiplies nested scales), total GPUs, the root
status (phase, matched, primary) and the gang plan without pods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from karta.catalog import catalog_by_gvk
from karta.extract import Component, ComponentFactory, Scale
from karta.gang import compute_gang_plan, subtree_desired
from karta.jq import Evaluator
from karta.model import Karta
from karta.references import resolve

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"
WORKLOADS = CORPUS / "workloads"
# What the shared corpus lacks: real CRDs and manifests of the frameworks, vendored with their
# licence and source (tests/corpus/SOURCES.md), in the same layout (``crds/<group>_<plural>.yaml``,
# ``workloads/<project>/<file>.yaml``). A project directory is never also in the shared corpus.
VENDORED = REPO / "tests" / "corpus"
VENDORED_WORKLOADS = VENDORED / "workloads"
GOLDEN = Path(__file__).resolve().parent / "golden"
GPU = "nvidia.com/gpu"

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Kinds that appear in the corpus but are not workloads: configuration, storage, scheduler objects
# and runtime templates (TrainingRuntime/ClusterTrainingRuntime are read through TrainJob; Tekton
# Tasks and Pipelines through the TaskRuns and PipelineRuns that reference them).
NOT_WORKLOADS = frozenset(
    {
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "Service"),
        ("v1", "PersistentVolumeClaim"),
        ("scheduling.run.ai/v2", "Queue"),
        ("scheduling.run.ai/v2alpha2", "PodGroup"),
        ("scheduling.volcano.sh/v1beta1", "PodGroup"),
        ("scheduling.x-k8s.io/v1alpha1", "PodGroup"),
        ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
        ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"),
        ("serving.kserve.io/v1alpha1", "ServingRuntime"),
        ("serving.kserve.io/v1alpha1", "ClusterServingRuntime"),
        ("tekton.dev/v1", "Task"),
        ("tekton.dev/v1", "Pipeline"),
    }
)

_EVALUATOR = Evaluator(trusted=True)


def evaluator() -> Evaluator:
    return _EVALUATOR


def corpus_files() -> list[Path]:
    """``workloads/*/*.yaml`` of the shared corpus, then of the vendored one (status fragments live
    one level deeper and are not included)."""
    return sorted(WORKLOADS.glob("*/*.yaml")) + sorted(VENDORED_WORKLOADS.glob("*/*.yaml"))


def crd_files(pattern: str = "*.yaml") -> list[Path]:
    """The CRD files matching ``pattern`` of the shared corpus, then of the vendored one."""
    return sorted((CORPUS / "crds").glob(pattern)) + sorted((VENDORED / "crds").glob(pattern))


def workload_file(name: str) -> Path:
    """``<project>/<file>.yaml`` (as lifecycle and gang files name them) in the shared corpus, else
    in the vendored one."""
    shared = WORKLOADS / name
    return shared if shared.exists() else VENDORED_WORKLOADS / name


def relative(path: Path) -> Path:
    """A corpus file's name relative to its workloads directory (shared or vendored)."""
    root = VENDORED_WORKLOADS if path.is_relative_to(VENDORED_WORKLOADS) else WORKLOADS
    return path.relative_to(root)


def documents(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as handle:
        return [doc for doc in yaml.load_all(handle, Loader=_Loader) if isinstance(doc, dict)]


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def definition_for(doc: dict[str, Any]) -> Karta | None:
    group, version = split_api_version(str(doc.get("apiVersion", "")))
    return catalog_by_gvk(group, version, str(doc.get("kind", "")))


def workload_documents() -> list[tuple[Path, int, dict[str, Any]]]:
    """Every document of every corpus file that is a workload (not in NOT_WORKLOADS)."""
    out = []
    for path in corpus_files():
        for index, doc in enumerate(documents(path)):
            if (doc.get("apiVersion"), doc.get("kind")) not in NOT_WORKLOADS:
                out.append((path, index, doc))
    return out


def golden_path(path: Path, index: int) -> Path:
    rel = relative(path).with_suffix("")
    return GOLDEN / f"{rel.parent.name}__{rel.name}__{index}.json"


def _quantity(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    return float(text) if text else 0.0


def _container_gpus(container: dict[str, Any]) -> float:
    resources = container.get("resources") or {}
    for part in ("requests", "limits"):
        value = (resources.get(part) or {}).get(GPU)
        if value is not None:
            return _quantity(value)
    return 0.0


def _pod_spec_gpus(spec: dict[str, Any]) -> float:
    """The effective pod GPU request: max(biggest init container, sum of containers)."""
    containers = sum(_container_gpus(c) for c in spec.get("containers") or [])
    inits = [_container_gpus(c) for c in spec.get("initContainers") or []]
    return max([containers, *inits])


def _fragment_gpus(fragment: dict[str, Any]) -> float:
    containers = list(fragment.get("containers") or [])
    if fragment.get("container"):
        containers.append(fragment["container"])
    declared = sum(_container_gpus(c) for c in containers)
    if declared:
        return declared
    return _container_gpus({"resources": fragment.get("resources") or {}})


def gpus_per_pod(component: Component) -> dict[str, float]:
    """GPUs per pod of each instance of a pod-bearing component, from its pod specs."""
    templates = component.pod_template_specs()
    if templates is not None:
        return {key: _pod_spec_gpus((value or {}).get("spec") or {}) for key, value in templates.items()}
    specs = component.pod_specs()
    if specs is not None:
        return {key: _pod_spec_gpus(value or {}) for key, value in specs.items()}
    fragments = component.fragmented_pod_specs()
    if fragments is not None:
        return {key: _fragment_gpus(value or {}) for key, value in fragments.items()}
    return {}


def _desired(scale: Scale | None) -> int:
    """Describe rule (17.5): replicas, else minReplicas, else 1."""
    if scale is not None and scale.replicas is not None:
        return scale.replicas
    if scale is not None and scale.min_replicas is not None:
        return scale.min_replicas
    return 1


def _number(value: float) -> int | float:
    return int(value) if value == int(value) else value


def _object_name(doc: dict[str, Any]) -> str | None:
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict):
        return None
    return metadata.get("name") or metadata.get("generateName")


def bound_evaluator(
    karta: Karta, doc: dict[str, Any], refs: list[dict[str, Any]] | None = None
) -> tuple[Evaluator, dict[str, str | None]]:
    """The evaluator of ``doc`` with the definition's references (extension E3) bound to the
    matching objects of ``refs`` (none given: every reference null / []), and what each bound
    (``Kind/name`` of the object, a list's count, or None); the plain evaluator for a definition
    without references."""
    if not karta.spec.structure_definition.references:
        return _EVALUATOR, {}
    resolution = resolve(karta, doc, _EVALUATOR, refs or [])
    assert not resolution.errors, resolution.errors
    bound: dict[str, str | None] = {}
    for name, value in resolution.bindings.items():
        if isinstance(value, list):
            bound[name] = f"{len(value)} objects"
        elif isinstance(value, dict):
            bound[name] = f"{value.get('kind')}/{(value.get('metadata') or {}).get('name')}"
        else:
            bound[name] = None
    return resolution.evaluator(_EVALUATOR), bound


# Project directories whose referenced objects (a framework's installed runtimes) are vendored in a
# directory of their own, since a vendored project never shadows a shared one.
REFERENCE_DIRECTORIES = {"kserve": ("kserve-runtimes",)}


def reference_documents(path: Path) -> tuple[list[Path], list[dict[str, Any]]]:
    """The objects a workload of ``path`` may reference: the non-workload documents (runtimes,
    configuration) of every file of its project directory (and of the vendored directories
    ``REFERENCE_DIRECTORIES`` names for it), and those files."""
    files, objects = [], []
    extra = [VENDORED_WORKLOADS / d for d in REFERENCE_DIRECTORIES.get(path.parent.name, ())]
    candidates = sorted(path.parent.glob("*.yaml")) + [f for d in extra for f in sorted(d.glob("*.yaml"))]
    for candidate in candidates:
        found = [d for d in documents(candidate) if (d.get("apiVersion"), d.get("kind")) in NOT_WORKLOADS]
        if found:
            files.append(candidate)
            objects.extend(found)
    return files, objects


def golden_view(path: Path, index: int, karta: Karta, doc: dict[str, Any]) -> dict[str, Any]:
    """What a golden file pins: the view of the document alone and, for a definition with
    references, the variant ``withReferences``: the view with the project directory's referenced
    objects (``reference_documents``), keyed by those files and naming what each reference bound."""
    view = {"file": str(relative(path)), "document": index, **extract_view(karta, doc)}
    if karta.spec.structure_definition.references:
        files, objects = reference_documents(path)
        with_refs = extract_view(karta, doc, objects)
        view["withReferences"] = {"files": [str(relative(f)) for f in files], **with_refs}
    return view


def extract_view(
    karta: Karta, doc: dict[str, Any], refs: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The extracted view of one workload document (see the module docstring); the definition's
    references bound to the matching objects of ``refs`` (see ``bound_evaluator``)."""
    bound_eval, bound = bound_evaluator(karta, doc, refs)
    factory = ComponentFactory(karta, doc, evaluator=bound_eval)
    parents = {c.name: c.owner_ref for c in karta.components}
    components: list[dict[str, Any]] = []
    multiplier: dict[str, int] = {}
    total_gpus = 0.0
    for definition in karta.components:
        component = factory.component(definition.name)
        ids = component.instance_ids()
        scales = component.scales()
        gpus = gpus_per_pod(component) if component.is_pod_bearing else {}
        parent = parents[definition.name]
        above = multiplier.get(parent, 1) if parent else 1
        own = sum(_desired(scales.get(i)) for i in ids) if scales is not None else 1
        multiplier[definition.name] = above * (own if scales is not None else 1)
        instances = []
        for instance_id in ids:
            scale = scales.get(instance_id) if scales is not None else None
            entry: dict[str, Any] = {"id": instance_id, "desired": _desired(scale)}
            if scale is not None:
                entry["scale"] = scale.to_dict()
            if component.is_pod_bearing:
                entry["gpusPerPod"] = _number(gpus.get(instance_id, 0.0))
                total_gpus += gpus.get(instance_id, 0.0) * _desired(scale) * above
            instances.append(entry)
        components.append(
            {
                "name": definition.name,
                "parent": parent or None,
                "podBearing": component.is_pod_bearing,
                "instances": instances,
            }
        )
    status = factory.root().status(strict=True)
    view: dict[str, Any] = {
        "apiVersion": doc.get("apiVersion"),
        "kind": doc.get("kind"),
        "name": _object_name(doc),
        "definition": karta.name,
        "components": components,
        "desiredPods": subtree_desired(factory, karta.root.name),
        "gpus": _number(total_gpus),
        "gang": compute_gang_plan(factory, evaluator=bound_eval).to_dict(),
    }
    if bound:
        view["references"] = bound
    if status is not None:
        view["status"] = {
            "phase": status.phase,
            "matched": [str(s) for s in status.matched],
            "primary": str(status.primary),
        }
    return view
