"""Library entry points the hostile suite calls in its child (through the API, not the CLI): the
same evaluation every consumer does for an untrusted definition. Each returns a short text; a
:class:`~karta.errors.KartaError` is a clean outcome (its class name is returned), anything else
escapes and fails the case."""

from __future__ import annotations

from typing import Any

import yaml

from karta import report
from karta.definitions import StoredDefinition
from karta.errors import KartaError
from karta.extract import ComponentFactory, build_tree
from karta.gang import compute_gang_plan
from karta.jq import Evaluator
from karta.model import load_karta, validate_or_raise
from karta.model.documents import read_documents
from karta.render import render
from karta.render.backends import BACKENDS


def _outcome(step: str, fn: Any) -> str:
    try:
        fn()
    except KartaError as exc:
        return f"{step}: {type(exc).__name__}"
    return f"{step}: ok"


def everything(definition: str, obj: str) -> str:
    """Validate, then every consumer's evaluation of ``obj`` with an untrusted evaluator."""
    loaded = load_karta(yaml.safe_load(definition), strict=False)
    karta = loaded.karta
    if karta is None:
        return "not loaded"
    try:
        validate_or_raise(karta)
    except KartaError as exc:
        return f"invalid: {type(exc).__name__}"
    try:
        (document,) = read_documents(obj, source="obj.json")
    except KartaError as exc:  # the library's one reader refuses what it cannot hold
        return f"read: {type(exc).__name__}"
    workload = document.value
    stored = StoredDefinition(karta=karta, origin="cluster", source="cluster", trusted=False)
    results = [
        _outcome(
            "inspect", lambda: report.inspect_report(karta, workload, evaluator=Evaluator(trusted=False))
        ),
        _outcome(
            "summary", lambda: report.Summarizer(gpu_resources=["nvidia.com/gpu"]).summary(workload, stored)
        ),
        _outcome("tree", lambda: build_tree(ComponentFactory(karta, workload, evaluator=Evaluator()))),
        _outcome("plan", lambda: compute_gang_plan(ComponentFactory(karta, workload, evaluator=Evaluator()))),
    ]
    for backend in BACKENDS:
        results.append(
            _outcome(
                backend, lambda b=backend: render(b, ComponentFactory(karta, workload, evaluator=Evaluator()))
            )
        )
    return ", ".join(results)
