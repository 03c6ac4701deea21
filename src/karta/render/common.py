"""What every scheduler renderer shares (docs/spec/gang-backends.md#naming and #object-rules): the result
record, the workload's identity as top owner, object and DNS-label names, the metadata our objects carry
(managed-by and Karta index labels, ``run.ai/karta-name``, the owner reference), pod → gang and
pod → sub-group lookups, and per-pod patches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karta._records import record
from karta.errors import GangError
from karta.gang import Gang, GangPlan, is_dns1123_label, is_dns1123_subdomain, shorten_name
from karta.gang.naming import DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX
from karta.model.types import Karta

__all__ = [
    "MANAGED_BY",
    "PodPatch",
    "Rendering",
    "TopOwner",
    "check_group_name",
    "dns_label",
    "gang_object_name",
    "group_metadata",
    "member_pods",
    "missing_uid_warning",
    "object_name",
    "one_gang_for",
    "pod_patches",
    "sub_group_of",
    "top_owner",
]

MANAGED_BY = {"app.kubernetes.io/managed-by": "karta"}


@record(slots=True)
class PodPatch:
    """The binding metadata for one pod, as a merge patch ``{metadata: {labels, annotations}, spec}``,
    and the pod's namespace ("" when the pod has none).

    The whole patch is what a pod needs at creation (pod admission, 1.1). Of an existing pod only
    the metadata can change: the API server refuses updates of ``spec.schedulerName``,
    ``spec.schedulingGroup`` and ``spec.workloadRef`` (docs/spec/gang-backends.md#workload-api-v1beta1:
    immutable), so :meth:`existing_pod_patch` leaves the spec out and :meth:`creation_only` says what it
    left out.
    """

    pod: str
    patch: dict[str, Any]
    namespace: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "patch": self.patch}

    def existing_pod_patch(self) -> dict[str, Any]:
        """The merge patch an existing pod accepts: ``{metadata: {labels, annotations}}`` (``{}``
        when the binding is spec fields only, as for the Workload API)."""
        metadata = self.patch.get("metadata")
        return {"metadata": dict(metadata)} if metadata else {}

    def creation_only(self, pod: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The spec fields of the binding that only a pod's creation can set, without those ``pod``
        (the existing pod, when given) already has with the same value."""
        spec = self.patch.get("spec")
        if not isinstance(spec, Mapping):
            return {}
        current = pod.get("spec") if pod is not None else None
        current = current if isinstance(current, Mapping) else {}
        return {key: value for key, value in spec.items() if current.get(key) != value}


@record(slots=True)
class Rendering:
    """The objects to apply (in order), the per-pod patches, a patch of the workload object (KAI
    mode B), and warnings about what the backend cannot express."""

    objects: tuple[dict[str, Any], ...] = ()
    pod_patches: tuple[PodPatch, ...] = ()
    owner_patch: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()


@record(slots=True)
class TopOwner:
    """The workload object as the top owner of everything we render."""

    api_version: str
    kind: str
    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]

    @property
    def group(self) -> str:
        group, _, _version = self.api_version.rpartition("/")
        return group

    def owner_reference(self) -> dict[str, str]:
        return {"apiVersion": self.api_version, "kind": self.kind, "name": self.name, "uid": self.uid}


def _string_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def top_owner(workload: Mapping[str, Any]) -> TopOwner:
    """The identity of the workload object. An object with more than one owner reference is an error
    (docs/spec/gang-backends.md#edge-cases); ``metadata.name`` is required."""
    metadata = workload.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name = str(metadata.get("name") or "")
    if not name:
        raise GangError("the workload has no metadata.name; scheduler objects are named after it")
    owners = metadata.get("ownerReferences")
    if isinstance(owners, list) and len(owners) > 1:
        raise GangError(
            f"workload {name} has {len(owners)} owner references; the top-owner walk needs at most one"
        )
    return TopOwner(
        api_version=str(workload.get("apiVersion") or ""),
        kind=str(workload.get("kind") or ""),
        name=name,
        namespace=str(metadata.get("namespace") or ""),
        uid=str(metadata.get("uid") or ""),
        labels=_string_map(metadata.get("labels")),
        annotations=_string_map(metadata.get("annotations")),
    )


_SUBDOMAIN_RULE = 'a DNS-1123 subdomain (lower-case alphanumerics, "-" or ".", alphanumeric at both ends)'
_LABEL_RULE = (
    f'a DNS-1123 label (at most {DNS1123_LABEL_MAX} lower-case alphanumerics or "-", '
    "alphanumeric at both ends)"
)


def object_name(name: str, *, what: str = "object name", label_value: bool = False) -> str:
    """``name`` as an object name (1.3): a DNS-1123 subdomain, shortened to 253 characters with the
    hash rule, or to 63 when the name is also written as a label value (a subdomain of at most 63
    characters is a valid label value). Dots are allowed, as the API server allows them in object
    names and label values; invalid characters are an error, never rewritten."""
    short = shorten_name(name, DNS1123_LABEL_MAX if label_value else DNS1123_SUBDOMAIN_MAX)
    if not is_dns1123_subdomain(short):
        raise GangError(f'{what} "{name}" is not {_SUBDOMAIN_RULE}')
    return short


def dns_label(name: str, *, what: str) -> str:
    """A DNS label (≤ 63 characters, shortened with the hash rule of 1.3): what the API requires of
    sub-group, PodSet and pod-group template names, which are no object names (no dots)."""
    short = shorten_name(name, DNS1123_LABEL_MAX)
    if not is_dns1123_label(short):
        raise GangError(f'{what} "{name}" is not {_LABEL_RULE}')
    return short


def check_group_name(name: str, *, label_value: bool = False) -> str:
    """A group object name chosen by the user (``kli gang --name``): a DNS-1123 subdomain of at most
    253 characters, or 63 when it is also a label value; never shortened, GangError otherwise."""
    limit = DNS1123_LABEL_MAX if label_value else DNS1123_SUBDOMAIN_MAX
    if len(name) > limit:
        why = " (it is also written as a pod label value)" if label_value else ""
        raise GangError(f'group name "{name}" has {len(name)} characters; at most {limit}{why}')
    if not is_dns1123_subdomain(name):
        raise GangError(f'group name "{name}" is not {_SUBDOMAIN_RULE}')
    return name


def gang_object_name(
    owner: TopOwner, gang: Gang, *, label_value: bool = False, given: str | None = None
) -> str:
    """``<workloadName>-<gang name>[-<key1>-<key2>…]`` (1.3, every backend but KAI), or the name the
    caller ``given`` (checked by :func:`check_group_name`)."""
    if given is not None:
        return check_group_name(given, label_value=label_value)
    return object_name(
        f"{owner.name}-{gang.qualified_name}", what="group object name", label_value=label_value
    )


def one_gang_for(plan: GangPlan, given: str | None) -> None:
    """A given group name names one group object: GangError when the plan has several gangs."""
    if given is not None and len(plan.gangs) > 1:
        names = ", ".join(g.qualified_name for g in plan.gangs)
        raise GangError(
            f'group name "{given}" names one group object, and this workload has {len(plan.gangs)} '
            f"gangs ({names}); leave the name out to get one object per gang"
        )


def group_metadata(
    owner: TopOwner,
    name: str,
    karta: Karta,
    *,
    managed: bool = True,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``metadata`` of one group object (1.5): name, the workload's namespace, ``labels`` and
    ``annotations`` with our labels and the ``run.ai/karta-name`` annotation on top (``managed``),
    and the owner reference when the workload has a UID."""
    metadata: dict[str, Any] = {"name": name}
    if owner.namespace:
        metadata["namespace"] = owner.namespace
    all_labels = dict(labels or {})
    all_annotations = dict(annotations or {})
    if managed:
        all_labels.update(MANAGED_BY)
        gvk = karta.root_gvk
        if gvk is not None:
            all_labels.update(
                {
                    "run.ai/karta-group": gvk.group,
                    "run.ai/karta-version": gvk.version,
                    "run.ai/karta-kind": gvk.kind,
                }
            )
        all_annotations["run.ai/karta-name"] = karta.name
    if all_labels:
        metadata["labels"] = all_labels
    if all_annotations:
        metadata["annotations"] = all_annotations
    if owner.uid:
        metadata["ownerReferences"] = [owner.owner_reference()]
    return metadata


def has_topology(plan: GangPlan) -> bool:
    """Whether any gang or sub-group of the plan carries a topology constraint."""
    return any(
        g.topology is not None or any(s.topology is not None for s in g.sub_groups) for g in plan.gangs
    )


def missing_uid_warning(owner: TopOwner) -> str:
    return (
        f"{owner.kind} {owner.name} has no metadata.uid: ownerReferences are omitted, so the group "
        "objects will not be garbage-collected with the workload (render the object as read from "
        "the cluster to get them)"
    )


def member_pods(plan: GangPlan) -> dict[str, Gang]:
    """Pod name → the first gang listing it."""
    out: dict[str, Gang] = {}
    for gang in plan.gangs:
        for pod in gang.members:
            out.setdefault(pod, gang)
    return out


def sub_group_of(gang: Gang, pod: str) -> str | None:
    """The first sub-group of ``gang`` listing ``pod``."""
    for sub in gang.sub_groups:
        if pod in sub.members:
            return sub.name
    return None


def pod_patches(
    pods: Sequence[Mapping[str, Any]],
    binding: Mapping[str, tuple[dict[str, str], dict[str, str], dict[str, Any]]],
) -> tuple[PodPatch, ...]:
    """Patches in pod order: ``binding`` maps a pod name to (labels, annotations, spec fields)."""
    out: list[PodPatch] = []
    seen: set[str] = set()
    for pod in pods:
        metadata = pod.get("metadata")
        name = str(metadata.get("name") or "") if isinstance(metadata, Mapping) else ""
        if name in seen or name not in binding:
            continue
        seen.add(name)
        labels, annotations, spec = binding[name]
        patch: dict[str, Any] = {}
        meta: dict[str, Any] = {}
        if annotations:
            meta["annotations"] = dict(annotations)
        if labels:
            meta["labels"] = dict(labels)
        if meta:
            patch["metadata"] = meta
        if spec:
            patch["spec"] = dict(spec)
        namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
        out.append(PodPatch(pod=name, patch=patch, namespace=str(namespace or "")))
    return tuple(out)
