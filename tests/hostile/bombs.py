"""Hand-made hostile inputs, one family per class of issue 9: definitions whose expressions fan out,
double, allocate, loop, read the environment, nest or chain too deeply, do huge arithmetic; objects
nested too deeply, with huge numbers or terminal escape sequences. Each family yields
``(name, definition, object)``; :func:`cases_for` turns one into ``kli`` command lines."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import yaml

from tests.hostile.harness import CANARY_NAME, Case

GROUP = "hostile.karta.test"
KIND = {"group": GROUP, "version": "v1", "kind": "Bomb"}
ESC = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]0;owned\x07\x9b31m"  # OSC 52 clipboard, CSI clear, title, C1 CSI

OBJECT: dict[str, Any] = {
    "apiVersion": f"{GROUP}/v1",
    "kind": "Bomb",
    "metadata": {"name": "b", "namespace": "ns", "uid": "0000-bomb"},
    "spec": {
        "replicas": 2,
        "a": list(range(10)),
        "s": "xxxxxxxxxx",
        "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
    },
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "reason": "R"}]},
}


def definition(
    name: str = "bomb",
    *,
    template: str = ".spec.template",
    replicas: str = ".spec.replicas",
    phase: str = ".status.phase",
    matchers: list[str] | None = None,
    instance_id: str | None = None,
) -> dict[str, Any]:
    root: dict[str, Any] = {
        "name": "bomb",
        "kind": KIND,
        "specDefinition": {"podTemplateSpecPath": template},
        "scaleDefinition": {"replicasPath": replicas},
        "statusDefinition": {
            "phaseDefinition": {"path": phase},
            "statusMappings": {
                "running": [
                    {"byExpression": {"expression": m, "expectedResult": "true"}}
                    for m in (matchers or ['.status.phase == "Running"'])
                ]
            },
        },
    }
    if instance_id is not None:
        root["instanceIdPath"] = instance_id
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {"rootComponent": root},
            "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "bomb"}}},
        },
    }


def _chain(n: int, body: str, sep: str = " | ") -> str:
    return sep.join([body] * n)


def expression_bombs() -> Iterator[tuple[str, str]]:
    """(name, a byExpression matcher) for the expression classes of issue 9."""
    yield "fanout-as", "[" + " | ".join(f".spec.a[] as ${c}" for c in "abcdefghi") + " | 1] | length > 0"
    defs = "def f0: .; " + " ".join(f"def f{i}: f{i - 1} | f{i - 1};" for i in range(1, 31))
    yield "fanout-defs", defs + " f30 | true"
    yield "double-plus-string", ".spec.s | " + _chain(40, ". + .") + " | length > 0"
    yield "double-array", ".spec.a | " + _chain(40, "[.[], .[]]") + " | length > 0"
    yield "double-tojson", ".spec | " + _chain(40, "tojson") + " | length > 0"
    yield "shared-subtree-tojson", ". | " + _chain(60, "[., .]") + " | tojson | length > 0"
    yield "setpath-huge", "null | setpath([100000000]; 1) | length > 0"
    yield "repeat-input-string", ".spec.s * 1e7 | length > 0"
    yield "repeat-literal", '"x" * 1e9 | length > 0'
    yield "range-huge", "[range(1e12)] | length > 0"
    yield "limit-repeat", "[limit(1e9; repeat(1))] | length > 0"
    yield "until-forever", "until(false; .) | true"
    yield "huge-float-mod", "(1e308 * 10) % 3 == 0"
    yield "huge-int-product", "(9999999999999999999999 * 9999999999999999999999) | tostring | length > 0"
    yield "pow-huge", "pow(10; 400) | tostring | length > 0"
    yield "env-canary", f'($ENV.{CANARY_NAME} // "") + (env.{CANARY_NAME} // "") | length > 0'
    yield "chain-plus-500", "(" + " + ".join(["1"] * 500) + ") > 0"
    yield "chain-and-500", " and ".join([".spec.replicas > 0"] * 500)
    yield "chain-comma-500", "[" + ", ".join(["1"] * 500) + "] | length > 0"
    yield "chain-try-500", ".spec" + "?" * 500 + " | true"
    yield "nested-alt-100", "(" * 100 + ".x" + " // .y)" * 100 + " | true"
    yield "nested-if-100", "if true then " * 100 + "true" + " else false end" * 100
    yield "megabyte-expression", '"' + "a" * (1 << 20) + '" | length > 0'


def cases_for(
    name: str,
    karta: dict[str, Any],
    obj: dict[str, Any] | str,
    *,
    seconds: float = 30.0,
    backends: tuple[str, ...] = ("kai", "workload-api", "volcano", "coscheduling", "kueue"),
) -> list[Case]:
    """``kli`` command lines for one hostile definition and object (validate, inspect, describe -f,
    gang -f for ``backends``, verify) and the library's evaluations of it."""
    text = obj if isinstance(obj, str) else json.dumps(obj)
    files = {"def.yaml": yaml.safe_dump(karta, sort_keys=False), "obj.json": text}
    defs_dir = {"defs/bomb.yaml": files["def.yaml"]}
    env = {CANARY_NAME: "canary-3f1b0e9c-do-not-leak", "KARTA_DEFINITIONS": "{tmp}/defs"}
    out = [
        Case(f"{name}/validate", ["validate", "def.yaml"], files=files, seconds=seconds),
        Case(
            f"{name}/inspect",
            ["inspect", "-f", "obj.json", "--definition", "def.yaml", "-o", "json"],
            files=files,
            seconds=seconds,
        ),
        Case(
            f"{name}/inspect-table",
            ["inspect", "-f", "obj.json", "--definition", "def.yaml"],
            files=files,
            seconds=seconds,
        ),
        Case(
            f"{name}/describe-f",
            ["describe", "-f", "obj.json"],
            files={**files, **defs_dir},
            env=env,
            seconds=seconds,
        ),
        Case(
            f"{name}/verify",
            ["verify", "--definition", "def.yaml", "--workload", "obj.json"],
            files=files,
            seconds=seconds,
        ),
    ]
    out += [
        Case(f"{name}/definitions", ["definitions"], files={**files, **defs_dir}, env=env, seconds=seconds),
        Case(
            f"{name}/definitions-name",
            ["definitions", str(karta["metadata"]["name"]), "-o", "yaml"],
            files={**files, **defs_dir},
            env=env,
            seconds=seconds,
        ),
        Case(f"{name}/rbac", ["rbac", "def.yaml"], files=files, seconds=seconds),
    ]
    for backend in backends:
        out.append(
            Case(
                f"{name}/gang-{backend}",
                ["gang", "-f", "obj.json", "--definition", "def.yaml", "--backend", backend],
                files=files,
                seconds=seconds,
            )
        )
    out.append(
        Case(
            f"{name}/library",
            call={
                "module": "tests.hostile.library_calls",
                "function": "everything",
                "args": {"definition": files["def.yaml"], "obj": files["obj.json"]},
            },
            seconds=seconds,
        )
    )
    for case in out:
        case.env = {**env, **case.env}
    return out


def deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"x": value}
    return value


def deep_text(depth: int) -> str:
    """The JSON text of :func:`deep` (built as text: Python's own JSON writer recurses)."""
    return '{"x":' * depth + "1" + "}" * depth


def with_spec_field(field: str, value_text: str, base: dict[str, Any] | None = None) -> str:
    """The JSON text of ``base`` (default :data:`OBJECT`) with ``spec[field]`` = the JSON text given."""
    obj = copy.deepcopy(base or OBJECT)
    obj["spec"][field] = "@@FIELD@@"
    return json.dumps(obj).replace('"@@FIELD@@"', value_text)


def hostile_objects() -> Iterator[tuple[str, str]]:
    """(name, JSON text) for the hostile-object classes: deep nesting, huge numbers, escapes."""
    for depth in (300, 5000):
        yield f"nested-{depth}", with_spec_field("deep", deep_text(depth))
    for label, number in (
        ("int-2e64", str(2**64)),
        ("int-2e200", str(2**200)),
        ("int-5000-digits", "9" * 5000),
    ):
        obj = copy.deepcopy(OBJECT)
        obj["spec"]["replicas"] = "@@FIELD@@"
        yield label, with_spec_field("big", number, obj).replace('"@@FIELD@@"', number)
    obj = copy.deepcopy(OBJECT)
    obj["metadata"]["name"] = f"b{ESC}"
    obj["status"]["phase"] = f"Running{ESC}"
    obj["status"]["conditions"][0]["reason"] = f"R{ESC}"
    obj["status"]["conditions"][0]["message"] = f"m{ESC}"
    obj["spec"]["template"]["spec"]["containers"][0]["name"] = f"c{ESC}"
    yield "escapes", json.dumps(obj)


def component_chain(n: int) -> dict[str, Any]:
    """A definition whose root owns one child, which owns one child, … ``n`` deep."""
    karta = definition(f"chain-{n}")
    children = []
    for i in range(n):
        children.append(
            {
                "name": f"c{i}",
                "ownerRef": "bomb" if i == 0 else f"c{i - 1}",
                "kind": {"group": GROUP, "version": "v1", "kind": f"C{i}"},
                "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                "scaleDefinition": {"replicasPath": ".spec.replicas"},
            }
        )
    karta["spec"]["structureDefinition"]["childComponents"] = children
    return karta
