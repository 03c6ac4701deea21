"""Starting and stopping a workload for Kueue (docs/kueue.md 3.4): the workload object with an
admission written into its pod templates through the definition's write-back paths and resumed
(Kueue's RunWithPodSetsInfo), and the reverse, suspended with the templates as the Workload holds
them (Suspend + RestorePodSetsInfo). Every function returns a new object; the factory given is
never changed.

Per component style (docs/spec/format.md#write-back):

- ``podTemplateSpecPath``: labels and annotations into the template's metadata, the node selector
  and tolerations into its spec, written with update_pod_template_spec;
- ``podSpecPath``: the node selector and tolerations into the spec (update_pod_spec); labels and
  annotations through ``metadataPath`` (update_pod_metadata) when there is one; without it
  Kueue's own pod labels are left out and any other label or annotation is refused;
- fragmented: the node selector as ``In`` expressions added to every required node selector term
  of ``nodeAffinity`` (one term when there is none), labels and annotations through their paths
  (update_fragmented_pod_spec, other fields untouched); tolerations are refused (no such field).
  A stop writes the node affinity, labels and annotations of the Workload's template back; where
  the template had none the injected value is removed at the path's locations (an extension: the
  format's write-back leaves empty values alone, 9.3).

What a start replaces is saved on the workload object (annotation ``run.ai/karta-kueue-restore``,
an extension: Kueue restores from the Workload's PodSets only, and has nothing to restore from once
the Workload is gone); a stop restores from it and removes it, else from the Workload.

A key the template already sets to another value is a conflict, reported as Kueue reports it
(``invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for key=..., value1=<the
template's>, value2=<the admission's>``); writing the same admission twice changes nothing, so a
controller restarted between the write and its confirmation can write again.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from karta.errors import KueueError
from karta.extract import ComponentFactory
from karta.extract.fragments import FIELDS
from karta.extract.suspend import apply_actions
from karta.jq.evaluator import setpath
from karta.kueue.admission import PodSetInfo, merge_info, restore_infos
from karta.kueue.names import CLUSTER_QUEUE_LABEL, LOCAL_QUEUE_LABEL, PODSET_LABEL, RESTORE_ANNOTATION
from karta.kueue.workload import pod_set_members

__all__ = ["is_suspended", "saved_templates", "start", "stop", "suspend"]

_KUEUE_POD_LABELS = frozenset({PODSET_LABEL, LOCAL_QUEUE_LABEL, CLUSTER_QUEUE_LABEL})
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def _fresh(factory: ComponentFactory, obj: Any | None = None) -> ComponentFactory:
    source = factory.obj if obj is None else obj
    return ComponentFactory(factory.karta, copy.deepcopy(source), evaluator=factory.evaluator)


def _actions(factory: ComponentFactory, which: str) -> Any:
    definition = factory.karta.root.suspend_definition
    actions = () if definition is None else getattr(definition, which)
    if not actions:
        raise KueueError(
            f"the root component {factory.karta.root.name} has no suspendDefinition."
            f"{'suspendActions' if which == 'suspend_actions' else 'resumeActions'}"
        )
    label = "suspendActions" if which == "suspend_actions" else "resumeActions"
    return apply_actions(actions, copy.deepcopy(factory.obj), evaluator=factory.evaluator, label=label)


def suspend(factory: ComponentFactory) -> Any:
    """The workload with the root component's suspend actions applied (what the webhook admits)."""
    return _actions(factory, "suspend_actions")


def is_suspended(factory: ComponentFactory) -> bool:
    """Whether the suspend actions would change nothing (Kueue's IsSuspended)."""
    return bool(suspend(factory) == factory.obj)


def _by_component(
    members: Mapping[str, Sequence[tuple[str, str]]], infos: Sequence[PodSetInfo]
) -> dict[str, dict[str, PodSetInfo]]:
    """component → instance id → the info of the PodSet standing for it."""
    out: dict[str, dict[str, PodSetInfo]] = {}
    for info in infos:
        if info.name not in members:
            raise KueueError(f"PodSet {info.name} is not one of the Workload's ({', '.join(members)})")
        for component, instance in members[info.name]:
            out.setdefault(component, {}).setdefault(instance, info)
    return out


def _string_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _set_or_drop(container: dict[str, Any], key: str, value: Any) -> None:
    if value:
        container[key] = value
    else:
        container.pop(key, None)


def _where(component: str, instance: str) -> str:
    return f"component {component}" + (f" instance {instance}" if instance else "")


def _merge(
    where: str,
    metadata: dict[str, Any] | None,
    spec: dict[str, Any] | None,
    info: PodSetInfo,
) -> None:
    """Kueue's podset.Merge on a template's metadata and spec (either may be absent), in place."""
    labels = _string_map(metadata.get("labels")) if metadata is not None else {}
    annotations = _string_map(metadata.get("annotations")) if metadata is not None else {}
    node_selector = _string_map(spec.get("nodeSelector")) if spec is not None else {}
    raw = spec.get("tolerations") if spec is not None else None
    tolerations = [t for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []
    incoming = info
    if metadata is None:
        extra = sorted(k for k in info.labels if k not in _KUEUE_POD_LABELS) + sorted(info.annotations)
        if extra:
            raise KueueError(
                f"{where}: the admission of PodSet {info.name} sets pod labels or annotations "
                f"({', '.join(extra)}) and the component has no metadataPath"
            )
        incoming = PodSetInfo(info.name, info.count, {}, {}, info.node_selector, info.tolerations)
    conflict = merge_info(labels, annotations, node_selector, tolerations, incoming)
    if conflict is not None:
        raise KueueError(f"{where}: {conflict}")
    if metadata is not None:
        _set_or_drop(metadata, "labels", labels)
        _set_or_drop(metadata, "annotations", annotations)
    if spec is not None:
        _set_or_drop(spec, "nodeSelector", node_selector)
        _set_or_drop(spec, "tolerations", tolerations)


def _restore(metadata: dict[str, Any] | None, spec: dict[str, Any] | None, info: PodSetInfo) -> None:
    """Kueue's podset.RestorePodSpec, in place."""
    if metadata is not None:
        _set_or_drop(metadata, "labels", dict(info.labels))
        _set_or_drop(metadata, "annotations", dict(info.annotations))
    if spec is not None:
        _set_or_drop(spec, "nodeSelector", dict(info.node_selector))
        _set_or_drop(spec, "tolerations", [copy.deepcopy(t) for t in info.tolerations])


def _with_node_selector(where: str, affinity: Any, info: PodSetInfo) -> dict[str, Any] | None:
    """``affinity`` (a NodeAffinity) with every node-selector key as an ``In`` expression in each
    required term; a term already requiring the key to be among other values is a conflict."""
    result = copy.deepcopy(dict(affinity)) if isinstance(affinity, Mapping) else {}
    if not info.node_selector:
        return result or None
    required = result.get(_REQUIRED)
    required = dict(required) if isinstance(required, Mapping) else {}
    terms = required.get("nodeSelectorTerms")
    terms = [dict(t) for t in terms if isinstance(t, Mapping)] if isinstance(terms, list) and terms else [{}]
    for term in terms:
        expressions = term.get("matchExpressions")
        expressions = list(expressions) if isinstance(expressions, list) else []
        for key in sorted(info.node_selector):
            value = info.node_selector[key]
            wanted = {"key": key, "operator": "In", "values": [value]}
            if wanted in expressions:
                continue
            for expression in expressions:
                if (
                    isinstance(expression, Mapping)
                    and expression.get("key") == key
                    and expression.get("operator") == "In"
                    and value not in (expression.get("values") or [])
                ):
                    existing = ",".join(str(v) for v in expression.get("values") or [])
                    raise KueueError(
                        f"{where}: invalid admission check PodSetUpdate: conflict for nodeSelector: "
                        f"conflict for key={key}, value1={existing}, value2={value}"
                    )
            expressions.append(wanted)
        term["matchExpressions"] = expressions
    required["nodeSelectorTerms"] = terms
    result[_REQUIRED] = required
    return result


def _fragment_path(factory: ComponentFactory, component: str, key: str) -> str | None:
    spec = factory.karta.components
    for definition in spec:
        if definition.name == component and definition.spec_definition is not None:
            fragments = definition.spec_definition.fragmented_pod_spec_definition
            if fragments is not None:
                field = next(f for f in FIELDS if f.key == key)
                return field.path(fragments)
    return None


def _present(comp: Any) -> set[str]:
    """The instance ids whose pod template, pod spec or fragmented record the object has (a
    component whose path selects nothing has the one instance "" with nothing in it)."""
    for values in (comp.pod_template_specs(), comp.pod_specs(), comp.fragmented_pod_specs()):
        if values is not None:
            return {i for i, v in values.items() if v}
    return set()


def _write_component(
    factory: ComponentFactory, component: str, infos: Mapping[str, PodSetInfo], *, restoring: bool
) -> list[tuple[str, str, str]]:
    """Write (or restore) the infos into one component's instances; the fragment fields to remove
    afterwards as (fragment key, path, instance id)."""
    comp = factory.component(component)
    ids = comp.instance_ids()
    missing = sorted(set(infos) - set(ids))
    if missing and not restoring:
        raise KueueError(
            f"component {component} has no instance {', '.join(repr(m) for m in missing)} any more: "
            "the Workload does not describe the workload"
        )
    present = _present(comp)
    infos = {i: info for i, info in infos.items() if i in present}
    if not infos:  # nothing there to write into: writing would create the structure
        return []
    templates = comp.pod_template_specs()
    if templates is not None:
        values = {i: copy.deepcopy(t) for i, t in templates.items()}
        for instance, info in infos.items():
            if instance not in values:
                continue
            template = values[instance]
            metadata = template.setdefault("metadata", {})
            spec = template.setdefault("spec", {})
            if restoring:
                _restore(metadata, spec, info)
            else:
                _merge(_where(component, instance), metadata, spec, info)
            if not metadata:
                template.pop("metadata")
        comp.update_pod_template_spec(values)
        return []
    specs = comp.pod_specs()
    if specs is not None:
        pod_metadata = comp.pod_metadata()
        spec_values = {i: copy.deepcopy(s) for i, s in specs.items()}
        meta_values = None if pod_metadata is None else {i: copy.deepcopy(m) for i, m in pod_metadata.items()}
        for instance, info in infos.items():
            if instance not in spec_values:
                continue
            metadata = None if meta_values is None else meta_values.setdefault(instance, {})
            if restoring:
                _restore(metadata, spec_values[instance], info)
            else:
                _merge(_where(component, instance), metadata, spec_values[instance], info)
        comp.update_pod_spec(spec_values)
        if meta_values is not None:
            comp.update_pod_metadata(meta_values)
        return []
    records = comp.fragmented_pod_specs()
    if records is None:
        return []
    writes: dict[str, dict[str, Any]] = {i: {} for i in ids}
    removals: list[tuple[str, str, str]] = []
    labels_path = _fragment_path(factory, component, "labels")
    annotations_path = _fragment_path(factory, component, "annotations")
    affinity_path = _fragment_path(factory, component, "nodeAffinity")
    for instance, info in infos.items():
        if instance not in records:
            continue
        record = records[instance]
        where = _where(component, instance)
        if restoring:
            wanted: dict[str, Any] = {
                "labels": dict(info.labels),
                "annotations": dict(info.annotations),
                "nodeAffinity": copy.deepcopy(info.node_affinity) or {},
            }
        else:
            if info.tolerations:
                raise KueueError(
                    f"{where}: the admission of PodSet {info.name} brings tolerations, and a "
                    "fragmented pod spec has no tolerations field"
                )
            labels = _string_map(record.get("labels"))
            annotations = _string_map(record.get("annotations"))
            incoming = info
            if labels_path is None or annotations_path is None:
                extra = [k for k in info.labels if k not in _KUEUE_POD_LABELS] if labels_path is None else []
                extra += sorted(info.annotations) if annotations_path is None else []
                if extra:
                    raise KueueError(
                        f"{where}: the admission of PodSet {info.name} sets pod labels or annotations "
                        f"({', '.join(sorted(extra))}) the fragmented pod spec has no path for"
                    )
                incoming = PodSetInfo(
                    info.name,
                    info.count,
                    {} if labels_path is None else info.labels,
                    {} if annotations_path is None else info.annotations,
                    {},
                )
            conflict = merge_info(labels, annotations, {}, [], incoming)
            if conflict is not None:
                raise KueueError(f"{where}: {conflict}")
            wanted = {
                "labels": labels,
                "annotations": annotations,
                "nodeAffinity": _with_node_selector(where, record.get("nodeAffinity"), info) or {},
            }
        for key, path in (
            ("labels", labels_path),
            ("annotations", annotations_path),
            ("nodeAffinity", affinity_path),
        ):
            if path is None:
                continue
            if wanted[key]:
                writes[instance][key] = wanted[key]
            elif record.get(key):
                removals.append((key, path, instance))
    if any(writes.values()):
        comp.update_fragmented_pod_spec(writes)
    return removals


def _remove(factory: ComponentFactory, component: str, removals: Sequence[tuple[str, str, str]]) -> Any:
    """The factory's object without the values at the removals' locations (the key dropped from its
    object), for the instances named."""
    obj = copy.deepcopy(factory.obj)
    comp = factory.component(component)
    ids = comp.instance_ids()
    for _key, path, instance in removals:
        with factory.session():
            locations = factory.evaluator.paths(path, obj)
        if comp.is_multi_instance:
            if len(locations) != len(ids):
                raise KueueError(
                    f"component {component}: '{path}' selects {len(locations)} locations for "
                    f"{len(ids)} instances"
                )
            chosen = [locations[ids.index(instance)]]
        else:
            chosen = list(locations)
        for location in chosen:
            if not location:
                continue
            parent: Any = obj
            for step in location[:-1]:
                parent = parent[step]
            last = location[-1]
            if isinstance(parent, dict) and isinstance(last, str):
                parent.pop(last, None)
            else:
                obj = setpath(obj, location, None)
    return obj


def _write(
    factory: ComponentFactory, by_component: Mapping[str, Mapping[str, PodSetInfo]], *, restoring: bool
) -> ComponentFactory:
    for definition in factory.karta.components:
        if definition.name not in by_component:
            continue
        removals = _write_component(
            factory, definition.name, by_component[definition.name], restoring=restoring
        )
        if removals:
            factory = _fresh(factory, _remove(factory, definition.name, removals))
    return factory


def _capture(
    factory: ComponentFactory, by_component: Mapping[str, Mapping[str, PodSetInfo]]
) -> dict[str, Any]:
    """component → instance id → the values an admission changes, as they are now."""
    out: dict[str, Any] = {}
    for component, infos in by_component.items():
        comp = factory.component(component)
        present = _present(comp)
        templates, specs, records = comp.pod_template_specs(), comp.pod_specs(), comp.fragmented_pod_specs()
        pod_metadata = comp.pod_metadata() if specs is not None else None
        for instance in infos:
            if instance not in present:
                continue
            if templates is not None:
                metadata, spec = (
                    templates[instance].get("metadata") or {},
                    templates[instance].get("spec") or {},
                )
            elif specs is not None:
                metadata, spec = (pod_metadata or {}).get(instance) or {}, specs[instance] or {}
            else:
                record = (records or {}).get(instance) or {}
                metadata = {"labels": record.get("labels"), "annotations": record.get("annotations")}
                spec = {"affinity": {"nodeAffinity": record.get("nodeAffinity")}}
            saved = {
                "labels": metadata.get("labels"),
                "annotations": metadata.get("annotations"),
                "nodeSelector": spec.get("nodeSelector"),
                "tolerations": spec.get("tolerations"),
                "nodeAffinity": (spec.get("affinity") or {}).get("nodeAffinity"),
            }
            out.setdefault(component, {})[instance] = {k: copy.deepcopy(v) for k, v in saved.items() if v}
    return out


def _annotations(obj: Any) -> dict[str, Any] | None:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return annotations if isinstance(annotations, dict) else None


def saved_templates(obj: Any) -> dict[str, dict[str, PodSetInfo]] | None:
    """What :func:`start` saved in the workload's ``run.ai/karta-kueue-restore`` annotation, as
    component → instance id → the values to restore; None without (or with a malformed) one."""
    raw = (_annotations(obj) or {}).get(RESTORE_ANNOTATION)
    try:
        saved = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    templates = saved.get("templates") if isinstance(saved, dict) else None
    if not isinstance(templates, dict):
        return None
    out: dict[str, dict[str, PodSetInfo]] = {}
    for component, instances in templates.items():
        if not isinstance(instances, dict):
            return None
        for instance, values in instances.items():
            if not isinstance(values, dict):
                return None
            tolerations = values.get("tolerations")
            affinity = values.get("nodeAffinity")
            out.setdefault(str(component), {})[str(instance)] = PodSetInfo(
                name="",
                count=0,
                labels=_string_map(values.get("labels")),
                annotations=_string_map(values.get("annotations")),
                node_selector=_string_map(values.get("nodeSelector")),
                tolerations=tuple(t for t in tolerations if isinstance(t, dict))
                if isinstance(tolerations, list)
                else (),
                node_affinity=affinity if isinstance(affinity, dict) else None,
            )
    return out


def start(factory: ComponentFactory, workload: Mapping[str, Any], infos: Sequence[PodSetInfo]) -> Any:
    """The workload with the admission ``infos`` (:func:`karta.kueue.admission.admission_infos` of
    the admitted ``workload``) written into the pod templates of each PodSet's component instances,
    the values it replaced saved in the ``run.ai/karta-kueue-restore`` annotation (kept when
    already there: a second start does not save what the first wrote), and the root component's
    resume actions applied (Kueue's RunWithPodSetsInfo).

    KueueError: a conflict, a PodSet or instance the workload no longer has, a partial admission,
    a value the component's write-back paths cannot carry; WriteBackError from the paths."""
    members = pod_set_members(workload)
    spec = workload.get("spec")
    pod_sets = spec.get("podSets") if isinstance(spec, Mapping) else None
    counts = {p.get("name"): p.get("count") for p in pod_sets or [] if isinstance(p, Mapping)}
    for info in infos:
        count = counts.get(info.name)
        if isinstance(count, int) and info.count < count:
            raise KueueError(
                f"PodSet {info.name} is admitted with {info.count} of its {count} pods: karta has no "
                "write-back path for replicas, so it cannot run a partial admission"
            )
    by_component = _by_component(members, infos)
    saved = None if saved_templates(factory.obj) is not None else _capture(factory, by_component)
    written = _write(_fresh(factory), by_component, restoring=False)
    obj = _actions(written, "resume_actions")
    if saved is not None:
        metadata = obj.setdefault("metadata", {})
        annotations = metadata.get("annotations")
        if not isinstance(annotations, dict):
            annotations = metadata["annotations"] = {}
        name = (
            workload.get("metadata", {}).get("name")
            if isinstance(workload.get("metadata"), Mapping)
            else None
        )
        annotations[RESTORE_ANNOTATION] = json.dumps(
            {"workload": name or "", "templates": saved}, sort_keys=True, separators=(",", ":")
        )
    return obj


def stop(factory: ComponentFactory, workload: Mapping[str, Any] | None) -> Any:
    """The workload suspended (the root component's suspend actions) with its pod templates as they
    were before :func:`start` (Kueue's Suspend + RestorePodSetsInfo): from the
    ``run.ai/karta-kueue-restore`` annotation, which is then removed, else from the templates of
    ``workload``'s PodSets; with neither (the Workload deleted and gone) only suspended, as Kueue
    does ("Missing Workload; unable to restore pod templates"). Instances the workload no longer
    has are skipped."""
    suspended = _fresh(factory, suspend(factory))
    by_component = saved_templates(factory.obj)
    if by_component is None:
        if workload is None:
            return suspended.obj
        by_component = _by_component(pod_set_members(workload), restore_infos(workload))
    obj = _write(suspended, by_component, restoring=True).obj
    annotations = _annotations(obj)
    if annotations is not None and RESTORE_ANNOTATION in annotations:
        del annotations[RESTORE_ANNOTATION]
        if not annotations:
            del obj["metadata"]["annotations"]
    return obj
