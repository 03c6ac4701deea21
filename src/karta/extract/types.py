"""Result records of extraction, shared by extraction, pod matching, trees and gang plans."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Scale:
    """Desired / minimum / maximum replicas of one instance; ``None`` = absent (section 7)."""

    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None

    def to_dict(self) -> dict[str, int | None]:
        return {"replicas": self.replicas, "minReplicas": self.min_replicas, "maxReplicas": self.max_replicas}


@dataclass(frozen=True, slots=True)
class ExtractedInstance:
    """Everything extracted for one instance (section 6.3); parts without a definition are None."""

    instance_id: str
    pod_template_spec: dict[str, Any] | None = None
    pod_spec: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    fragmented_pod_spec: dict[str, Any] | None = None
    scale: Scale | None = None


_new = object.__new__
_set_instance_fields = tuple(
    getattr(ExtractedInstance, name).__set__
    for name in ("instance_id", "pod_template_spec", "pod_spec", "metadata", "fragmented_pod_spec", "scale")
)


def new_extracted_instance(
    instance_id: str,
    pod_template_spec: dict[str, Any] | None,
    pod_spec: dict[str, Any] | None,
    metadata: dict[str, Any] | None,
    fragmented_pod_spec: dict[str, Any] | None,
    scale: Scale | None,
) -> ExtractedInstance:
    """``ExtractedInstance(...)`` for the extraction hot path.

    Sets the slots through their descriptors: the same object as the frozen dataclass's own
    ``__init__`` builds, in about half the time (it calls ``object.__setattr__`` per field).
    """
    s0, s1, s2, s3, s4, s5 = _set_instance_fields
    record: ExtractedInstance = _new(ExtractedInstance)
    s0(record, instance_id)
    s1(record, pod_template_spec)
    s2(record, pod_spec)
    s3(record, metadata)
    s4(record, fragmented_pod_spec)
    s5(record, scale)
    return record
