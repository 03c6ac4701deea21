"""Loading the conformance cases (``cases/*.yaml``) and the helpers the runners share.

A case file has ``fixtures`` (named values, one namespace across all files) and ``cases`` (each
with ``id``, ``kind``, ``ref`` and kind-specific fields). Anywhere in a case or fixture, a mapping
``{$fixture: <name>, $patch: [...]}`` stands for a deep copy of that fixture with the patch applied;
a patch entry is ``{path: [...], value: <v>}`` (set, creating mappings) or
``{path: [...], delete: true}``.

Matching helpers: :func:`assert_json_equal` (exact, numbers by value, booleans distinct),
:func:`assert_subset` (recursive subset; lists element-wise with equal length; the sentinel
``"<absent>"`` means the key is missing or empty) and :func:`expect_error` (expected errors are
substrings, with an optional ``karta.errors`` class name).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

CASES_DIR = Path(__file__).parent / "cases"

KINDS = (
    "expression",
    "assign",
    "assign_zip",
    "extract",
    "status",
    "scale",
    "writeback",
    "validate",
    "pod_query",
    "gang_scale",
    "effective_member",
    "tree",
    "suspend",
    "gang_plan",
)

ABSENT = "<absent>"
_EMPTY: tuple[Any, ...] = (None, "", {}, [])


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    ref: str
    file: str
    data: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.data


# --- loading ---------------------------------------------------------------------------------------


def _apply_patch(value: Any, patch: Sequence[Mapping[str, Any]]) -> Any:
    for entry in patch:
        path = list(entry["path"])
        target = value
        for step in path[:-1]:
            target = target.setdefault(step, {}) if isinstance(target, dict) else target[step]
        last = path[-1]
        if entry.get("delete"):
            if isinstance(target, dict):
                target.pop(last, None)
            else:
                del target[last]
        elif isinstance(target, list) and last == len(target):
            target.append(copy.deepcopy(entry["value"]))
        else:
            target[last] = copy.deepcopy(entry["value"])
    return value


def _resolve(value: Any, fixtures: Mapping[str, Any], stack: tuple[str, ...] = ()) -> Any:
    if isinstance(value, dict):
        if "$fixture" in value:
            name = value["$fixture"]
            if name in stack:
                raise ValueError(f"fixture cycle: {' -> '.join((*stack, name))}")
            if name not in fixtures:
                raise KeyError(f"unknown fixture {name!r}")
            base = _resolve(copy.deepcopy(fixtures[name]), fixtures, (*stack, name))
            patch = _resolve(value.get("$patch", []), fixtures, stack)
            return _apply_patch(base, patch)
        return {k: _resolve(v, fixtures, stack) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, fixtures, stack) for v in value]
    return value


@cache
def all_cases() -> tuple[Case, ...]:
    """Every case of every file, fixtures resolved, in file order."""
    raw: list[tuple[str, dict[str, Any]]] = []
    fixtures: dict[str, Any] = {}
    for path in sorted(CASES_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for name, value in (doc.get("fixtures") or {}).items():
            if name in fixtures:
                raise ValueError(f"fixture {name!r} defined twice ({path.name})")
            fixtures[name] = value
        raw.extend((path.name, case) for case in doc.get("cases") or [])
    cases = []
    for file, case in raw:
        data = _resolve(case, fixtures)
        cases.append(
            Case(id=data["id"], kind=data["kind"], ref=str(data.get("ref", "")), file=file, data=data)
        )
    return tuple(cases)


def params(kind: str) -> list[Any]:
    """pytest parameters (one per case of ``kind``) whose ids are the case ids."""
    return [pytest.param(case, id=case.id) for case in all_cases() if case.kind == kind]


# --- building library inputs -----------------------------------------------------------------------

STATUS_ROOT_KIND = {"group": "example.dev", "version": "v1", "kind": "Workload"}


def wrap_definition(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A full Karta mapping: spec parts (``structureDefinition`` ...) are wrapped as ``spec``."""
    if "spec" in data or "apiVersion" in data:
        return copy.deepcopy(dict(data))
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": f"conformance-{slug}"},
        "spec": copy.deepcopy(dict(data)),
    }


def definition_mapping(case: Case) -> dict[str, Any]:
    """The case's definition as a full Karta mapping (``definition`` or ``status_definition``)."""
    if "definition" in case:
        return wrap_definition(case["definition"], case.id)
    if "status_definition" in case:
        root = {"name": "workload", "kind": STATUS_ROOT_KIND, "statusDefinition": case["status_definition"]}
        return wrap_definition({"structureDefinition": {"rootComponent": root}}, case.id)
    raise KeyError(f"case {case.id} has no definition")


def karta_of(case: Case) -> Any:
    """The case's Karta, through the library loader (R1 defaults apply)."""
    from karta.model import karta_from_dict, load_karta

    if "definition_text" in case:
        result = load_karta(case["definition_text"], source_name=f"{case.id}.yaml")
        assert result.karta is not None, [f.message for f in result.findings]
        return result.karta
    return karta_from_dict(definition_mapping(case))


@cache
def _evaluator(settings: tuple[tuple[str, Any], ...]) -> Any:
    from karta.jq import Evaluator

    return Evaluator(**dict(settings))


def evaluator(case: Case) -> Any:
    """One shared Evaluator per distinct ``evaluator`` settings of a case."""
    settings = case.get("evaluator") or {}
    return _evaluator(tuple(sorted(settings.items())))


# --- comparing -------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """Library results as plain JSON-like data (``to_dict``, enums, dataclasses, tuples)."""
    if isinstance(value, enum.Enum):
        return value.value
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return plain(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _json_equal(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return bool(actual == expected)
    if isinstance(expected, Mapping):
        return (
            isinstance(actual, Mapping)
            and set(actual) == set(expected)
            and all(_json_equal(actual[k], v) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(_json_equal(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return type(actual) is type(expected) and actual == expected


def assert_json_equal(actual: Any, expected: Any, what: str = "result") -> None:
    """Exact JSON equality (numbers by value, booleans distinct from numbers)."""
    actual = plain(actual)
    assert _json_equal(actual, expected), f"{what}:\n  got:      {actual!r}\n  expected: {expected!r}"


def assert_subset(actual: Any, expected: Any, where: str = "$") -> None:
    """``expected`` is a recursive subset of ``actual`` (see the module docstring)."""
    actual = plain(actual)
    if isinstance(expected, Mapping):
        assert isinstance(actual, Mapping), f"{where}: expected a mapping, got {actual!r}"
        for key, value in expected.items():
            if value == ABSENT:
                assert actual.get(key) in _EMPTY, f"{where}.{key}: expected absent, got {actual.get(key)!r}"
                continue
            assert key in actual, f"{where}: key {key!r} missing in {actual!r}"
            assert_subset(actual[key], value, f"{where}.{key}")
        return
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        assert len(actual) == len(expected), (
            f"{where}: expected {len(expected)} items, got {len(actual)}: {actual!r}"
        )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_subset(a, e, f"{where}[{i}]")
        return
    assert _json_equal(actual, expected), f"{where}: got {actual!r}, expected {expected!r}"


def assert_keys_in_order(actual: Mapping[str, Any] | None, expected: Mapping[str, Any], what: str) -> None:
    """A map result (instance id -> value) has exactly the expected ids, in the expected order."""
    assert actual is not None, f"{what}: got None (definition not found?)"
    assert list(actual) == list(expected), f"{what}: ids {list(actual)!r}, expected {list(expected)!r}"


# --- errors ----------------------------------------------------------------------------------------


def _error_class(name: str | None) -> type[BaseException]:
    import karta.errors

    if name is None:
        return karta.errors.KartaError
    cls = getattr(karta.errors, name)
    assert isinstance(cls, type) and issubclass(cls, BaseException), name
    return cls


def check_error(exc: BaseException, spec: Any) -> None:
    """``spec``: a substring, or ``{type?, contains?: [..], startswith?}``."""
    if isinstance(spec, str):
        spec = {"contains": [spec]}
    spec = spec or {}
    cls = _error_class(spec.get("type"))
    message = str(exc)
    assert isinstance(exc, cls), f"expected {cls.__name__}, got {type(exc).__name__}: {message}"
    for text in spec.get("contains") or []:
        assert text in message, f"error message lacks {text!r}: {message!r}"
    if "startswith" in spec:
        assert message.startswith(spec["startswith"]), (
            f"error does not start with {spec['startswith']!r}: {message!r}"
        )


@contextmanager
def expect_error(spec: Any) -> Iterator[None]:
    """The block must raise an error matching ``spec`` (see :func:`check_error`)."""
    try:
        yield
    except Exception as exc:
        check_error(exc, spec)
        return
    pytest.fail(f"expected an error matching {spec!r}, nothing was raised")


# --- findings and diagnostics ----------------------------------------------------------------------


def finding_matches(finding: Any, spec: Mapping[str, Any]) -> bool:
    """``spec``: ``{contains?, severity?, location?, mentions?: [..]}`` (mentions: case-insensitive,
    message or location)."""
    message = str(getattr(finding, "message", finding))
    location = str(getattr(finding, "location", ""))
    severity = getattr(finding, "severity", None)
    severity = severity.value if isinstance(severity, enum.Enum) else severity
    if "contains" in spec and spec["contains"] not in message:
        return False
    if "severity" in spec and severity != spec["severity"]:
        return False
    if "location" in spec and spec["location"] not in location:
        return False
    haystack = f"{message}\n{location}".lower()
    return all(str(m).lower() in haystack for m in spec.get("mentions") or [])


def describe_findings(findings: Sequence[Any]) -> str:
    if not findings:
        return "  (none)"
    lines = []
    for f in findings:
        severity = getattr(f, "severity", "?")
        severity = severity.value if isinstance(severity, enum.Enum) else severity
        lines.append(f"  [{severity}] {getattr(f, 'message', f)}  @ {getattr(f, 'location', '')}")
    return "\n".join(lines)


def check_findings(findings: Sequence[Any], expect: Mapping[str, Any]) -> None:
    """The checks of the ``validate`` kind (``only``, ``findings``, ``no_errors``, ``absent``)."""
    listing = describe_findings(findings)
    if "only" in expect:
        remaining = list(findings)
        for text in expect["only"]:
            hit = next((f for f in remaining if text in str(getattr(f, "message", f))), None)
            assert hit is not None, f"no finding contains {text!r}; findings:\n{listing}"
            remaining.remove(hit)
        assert not remaining, (
            f"unexpected findings besides {expect['only']!r}:\n{describe_findings(remaining)}"
        )
    for spec in expect.get("findings") or []:
        hits = [f for f in findings if finding_matches(f, spec)]
        if "count" in spec:
            assert len(hits) == spec["count"], (
                f"{len(hits)} findings match {spec!r}, expected {spec['count']}:\n{listing}"
            )
        else:
            assert hits, f"no finding matches {spec!r}; findings:\n{listing}"
    if expect.get("no_errors"):
        errors = [f for f in findings if finding_matches(f, {"severity": "error"})]
        assert not errors, f"unexpected error findings:\n{describe_findings(errors)}"
    for text in expect.get("absent") or []:
        hits = [f for f in findings if text in f"{getattr(f, 'message', f)}\n{getattr(f, 'location', '')}"]
        assert not hits, f"findings contain {text!r}:\n{describe_findings(hits)}"
