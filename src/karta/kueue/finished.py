"""The Workload's ``Finished`` condition from the workload's status (docs/kueue.md 3.5; Kueue's
GenericJob.Finished and workload.SetFinishedCondition): the root component's normalised status
Completed gives reason ``Succeeded``, Failed gives ``Failed``; the message is the status
condition's message when the definition reads conditions and one matched, else a sentence naming
the status. Anything else: not finished (None)."""

from __future__ import annotations

from typing import Any

from karta.extract import ComponentFactory
from karta.kueue.names import FINISHED, FINISHED_FAILED, FINISHED_SUCCEEDED
from karta.model.types import ResourceStatus

__all__ = ["finished_condition"]

_MAX_MESSAGE = 32768  # metav1.Condition message limit (Kueue truncates to it)


def finished_condition(
    factory: ComponentFactory, *, observed_generation: int | None = None
) -> dict[str, Any] | None:
    """The ``Finished`` condition to set on the Workload (without ``lastTransitionTime``, which the
    caller stamps), or None while the workload is not Completed or Failed."""
    status = factory.root().status()
    if status is None:
        return None
    if status.primary == ResourceStatus.COMPLETED:
        reason = FINISHED_SUCCEEDED
    elif status.primary == ResourceStatus.FAILED:
        reason = FINISHED_FAILED
    else:
        return None
    message = ""
    for read in status.conditions:  # the last true condition with a message: the latest verdict
        if read.message and read.status == "True":
            message = read.message
    if not message:
        message = f"the workload is {status.primary.value}"
    condition: dict[str, Any] = {
        "type": FINISHED,
        "status": "True",
        "reason": reason,
        "message": message[:_MAX_MESSAGE],
    }
    if observed_generation is not None:
        condition["observedGeneration"] = observed_generation
    return condition
