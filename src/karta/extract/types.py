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
