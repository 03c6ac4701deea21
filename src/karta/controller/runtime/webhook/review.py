"""AdmissionReview (``admission.k8s.io/v1``): reading a request, writing a response.

A handler takes the review's ``request`` and returns an :class:`Answer`: allowed or denied (with
a message and an HTTP-like code), optionally a JSON patch (RFC 6902) for mutating webhooks, and
warnings the API server passes to the client (``kubectl`` prints them).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Answer", "Handler", "allow", "deny", "json_pointer", "response"]


@dataclass(frozen=True)
class Answer:
    allowed: bool
    message: str = ""
    code: int = 200
    patch: Sequence[Mapping[str, Any]] = ()
    warnings: Sequence[str] = field(default_factory=tuple)
    outcome: str = ""  # for the metrics: allowed, patched, denied (derived when empty)


Handler = Callable[[Mapping[str, Any]], Answer]


def allow(patch: Sequence[Mapping[str, Any]] = (), *, warnings: Sequence[str] = ()) -> Answer:
    return Answer(True, patch=tuple(patch), warnings=tuple(warnings))


def deny(message: str, *, code: int = 403) -> Answer:
    return Answer(False, message=message, code=code)


def json_pointer(*parts: str) -> str:
    """A JSON pointer (RFC 6901) to ``parts``: ``~`` and ``/`` escaped."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def response(review: Mapping[str, Any], answer: Answer) -> dict[str, Any]:
    """The AdmissionReview that answers ``review`` (same apiVersion, the request's uid)."""
    request = review.get("request") or {}
    uid = request.get("uid", "") if isinstance(request, Mapping) else ""
    api_version = review.get("apiVersion")  # echoed only when it is a string: the review is untrusted
    out: dict[str, Any] = {"uid": uid if isinstance(uid, str) else "", "allowed": answer.allowed}
    if not answer.allowed:
        out["status"] = {
            "code": answer.code,
            "message": answer.message,
            "reason": "Forbidden" if answer.code == 403 else "Invalid",
        }
    if answer.patch:
        out["patchType"] = "JSONPatch"
        out["patch"] = base64.b64encode(json.dumps(list(answer.patch)).encode()).decode()
    if answer.warnings:
        out["warnings"] = [w[:512] for w in answer.warnings][:16]
    return {
        "apiVersion": api_version if isinstance(api_version, str) and api_version else "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": out,
    }
