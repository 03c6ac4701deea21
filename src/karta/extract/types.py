"""Result records of extraction, shared by extraction, pod matching, trees and gang plans."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from karta._records import record

if TYPE_CHECKING:  # the JSON shapes, for type checkers; at run time plain dicts (no typing
    # ForwardRef compile per annotation on every start-up)
    from typing import TypedDict

    class RequestsDict(TypedDict):
        """:class:`karta.extract.requests.Requests` in JSON output."""

        gpus: int
        cpuMillis: int
        memoryBytes: int

    class ScaleDict(TypedDict):
        """A scale in JSON output (None: absent)."""

        replicas: int | None
        minReplicas: int | None
        maxReplicas: int | None
else:
    RequestsDict = dict
    ScaleDict = dict

DEFAULT_GPU_RESOURCES: tuple[str, ...] = ("nvidia.com/gpu",)
"""The extended resources counted as GPUs unless configured otherwise (``kli``'s ``gpuResources``,
the web view, the platform metrics); :mod:`karta.extract.requests` counts them. Kept here, with the
requests' JSON shape, so that reading the setting (``kli``'s configuration) imports neither that
module nor :mod:`fractions` and :mod:`decimal`."""


@record(slots=True)
class Scale:
    """Desired / minimum / maximum replicas of one instance; ``None`` = absent (section 7)."""

    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None

    def to_dict(self) -> ScaleDict:
        return {"replicas": self.replicas, "minReplicas": self.min_replicas, "maxReplicas": self.max_replicas}


@record(slots=True)
class ExtractedInstance:
    """Everything extracted for one instance (section 6.3); parts without a definition are None."""

    instance_id: str
    pod_template_spec: dict[str, Any] | None = None
    pod_spec: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    fragmented_pod_spec: dict[str, Any] | None = None
    scale: Scale | None = None

    def spec_parts(self) -> dict[str, dict[str, Any]]:
        """The parts that were extracted, under their JSON names, in the contract's order
        (``podTemplateSpec``, ``podSpec``, ``metadata``, ``fragmentedPodSpec``)."""
        parts = (
            ("podTemplateSpec", self.pod_template_spec),
            ("podSpec", self.pod_spec),
            ("metadata", self.metadata),
            ("fragmentedPodSpec", self.fragmented_pod_spec),
        )
        return {key: value for key, value in parts if value is not None}


class _InstanceBuilder:
    """Same slots as :class:`ExtractedInstance`, assignable: built here, then relabelled."""

    __slots__ = ExtractedInstance.__slots__  # the same names in the same order

    def __init__(
        self,
        instance_id: str,
        pod_template_spec: dict[str, Any] | None,
        pod_spec: dict[str, Any] | None,
        metadata: dict[str, Any] | None,
        fragmented_pod_spec: dict[str, Any] | None,
        scale: Scale | None,
    ) -> None:
        self.instance_id = instance_id
        self.pod_template_spec = pod_template_spec
        self.pod_spec = pod_spec
        self.metadata = metadata
        self.fragmented_pod_spec = fragmented_pod_spec
        self.scale = scale


def new_extracted_instance(
    instance_id: str,
    pod_template_spec: dict[str, Any] | None,
    pod_spec: dict[str, Any] | None,
    metadata: dict[str, Any] | None,
    fragmented_pod_spec: dict[str, Any] | None,
    scale: Scale | None,
) -> ExtractedInstance:
    """``ExtractedInstance(...)`` for the extraction hot path: the same object, its fields stored
    by plain slot assignments on an object of a layout-identical class, which then takes the
    dataclass as its class (the frozen dataclass's ``__init__`` calls ``object.__setattr__`` per
    field, several times slower). Generated extraction inlines this function."""
    record: Any = _InstanceBuilder(
        instance_id, pod_template_spec, pod_spec, metadata, fragmented_pod_spec, scale
    )
    record.__class__ = ExtractedInstance
    return record  # type: ignore[no-any-return]
