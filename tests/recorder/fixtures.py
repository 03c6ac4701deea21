"""Fixture files: sanitizing a recorded object, karta's reading of it, and where fixtures live.

A fixture is ``tests/recorded/<operator>/<version>/<definition>/<flow>/NN-<label>.json``::

    {"operator", "version", "kind", "definition", "flow", "step", "label",
     "object": the sanitized object,
     "judged": {"status", "why"},          # judges/<operator>.py, from the operator's fields
     "reading": {...}}                     # karta's inspect report (kli inspect -o json)

Sanitizing keeps what status logic reads and drops what changes from run to run:
``managedFields``, ``uid``, ``resourceVersion``, ``selfLink``; every uid the object mentions (its
own, its owners', a Job's ``controller-uid`` labels) becomes ``uid-N``; the namespace the flow ran
in becomes ``recorded`` wherever it appears (Node names carry it too), the value of the Nodes'
taint ``recorded-taint``; every RFC 3339 timestamp is
replaced by ``2026-01-01T00:00:NNZ`` keeping the order of the distinct instants (so "which came
last" and "is it set" still hold).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from karta import report
from karta.catalog import catalog_by_gvk
from karta.definitions import evaluator_for
from karta.model import Karta
from karta.model.gvk import GVK

__all__ = [
    "RECORDED",
    "Fixture",
    "definition_for",
    "fixture_files",
    "load_fixture",
    "reading_of",
    "sanitize",
    "write_fixture",
]

RECORDED = Path(__file__).resolve().parents[1] / "recorded"
NAMESPACE = "recorded"
DROPPED_METADATA = ("managedFields", "uid", "resourceVersion", "selfLink")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_BASE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

Fixture = dict[str, Any]


def _walk_strings(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _walk_strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _walk_strings(item, out)


def _uids(obj: Mapping[str, Any]) -> list[str]:
    meta = obj.get("metadata") or {}
    found = [meta.get("uid")] + [o.get("uid") for o in meta.get("ownerReferences") or []]
    return [u for u in dict.fromkeys(found) if isinstance(u, str) and u]


def _replace(value: Any, swap: Any) -> Any:
    if isinstance(value, str):
        return swap(value)
    if isinstance(value, Mapping):
        return {swap(k): _replace(v, swap) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, swap) for v in value]
    return value


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def sanitize(
    obj: Mapping[str, Any],
    namespace: str,
    uids: dict[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``obj`` without run-specific values (module docstring). ``uids`` maps the uids seen so far
    in the flow to their stand-ins (updated), so one object keeps its ``uid-N`` across steps;
    ``aliases`` are other run-specific strings and their stand-ins (the Nodes' taint value)."""
    uids = {} if uids is None else uids
    for uid in _uids(obj):
        uids.setdefault(uid, f"uid-{len(uids)}")
    strings: set[str] = set()
    _walk_strings(obj, strings)
    instants = sorted({_instant(s) for s in strings if _TIMESTAMP.match(s)})
    rank = {instant: index for index, instant in enumerate(instants)}

    def swap(text: str) -> str:
        if _TIMESTAMP.match(text):
            stamp = _BASE + dt.timedelta(seconds=rank[_instant(text)])
            return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        for uid, stand_in in [*uids.items(), *(aliases or {}).items()]:
            text = text.replace(uid, stand_in)
        return text.replace(namespace, NAMESPACE) if namespace else text

    clean: dict[str, Any] = _replace(obj, swap)
    meta = dict(clean.get("metadata") or {})
    for key in DROPPED_METADATA:
        meta.pop(key, None)
    clean["metadata"] = meta
    return clean


def definition_for(obj: Mapping[str, Any]) -> Karta:
    """The built-in catalog definition of ``obj``'s kind (never a user or cluster one)."""
    gvk = GVK.of(str(obj.get("apiVersion")), str(obj.get("kind")))
    found = catalog_by_gvk(gvk.group, gvk.version, gvk.kind)
    if found is None:
        raise LookupError(f"no catalog definition for {obj.get('apiVersion')} {obj.get('kind')}")
    return found


def reading_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """karta's full reading of ``obj``: the inspect report, as ``kli inspect -o json`` prints it."""
    karta = definition_for(obj)
    view = report.inspect_report(karta, dict(obj), evaluator=evaluator_for(trusted=True))
    loaded: dict[str, Any] = json.loads(json.dumps(view, sort_keys=True))
    return loaded


def fixture_dir(operator: str, version: str, definition: str, flow: str, root: Path = RECORDED) -> Path:
    return root / operator / version / definition / flow


def write_fixture(path: Path, fixture: Fixture) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")


def load_fixture(path: Path) -> Fixture:
    loaded: Fixture = json.loads(path.read_text())
    return loaded


def fixture_files(root: Path = RECORDED) -> list[Path]:
    """Every fixture under ``root``, in path order (operator, version, definition, flow, step)."""
    return sorted(root.glob("*/*/*/*/[0-9][0-9]-*.json"))
