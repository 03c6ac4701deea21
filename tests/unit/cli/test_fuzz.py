"""No input makes kli print a traceback: random and mutated definitions, objects and pods.

Every run must end with a documented exit code, and any stderr line must be `error:`, `hint:` or
`warning:` — never an internal error or a traceback.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DEFINITIONS = [
    yaml.safe_load((EXAMPLES / "definitions" / n).read_text())
    for n in (
        "kubeflow-org-pytorchjob-v1.yaml",
        "example-dev-jobgroup-v1.yaml",
        "example-dev-servicegraph-v1.yaml",
    )
]
OBJECTS = [
    yaml.safe_load((EXAMPLES / "workloads" / n).read_text())
    for n in ("pytorchjob-train-7.yaml", "jobgroup-etl.yaml", "servicegraph-chat.yaml")
]
PODS = [
    list(yaml.safe_load_all((EXAMPLES / "pods" / n).read_text()))
    for n in ("pytorchjob-train-7-pods.yaml", "jobgroup-etl-pods.yaml")
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(
        [
            "",
            "x",
            ".spec",
            ".a // 1",
            "[.[]]",
            "..",
            "del(.a)",
            "1 +",
            ".spec.replicas",
            "def f: f; f",
            "true",
            '"q"',
            "Running",
            "{",
            ".metadata.labels.role",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "name", "path", "kind", "spec"]), inner, max_size=3),
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: Any, data: st.DataObject) -> Any:
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        action = data.draw(st.sampled_from(["delete", "replace", "insert"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = data.draw(values)
        elif isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["extra", "specDefinition", "podSelector", "x"]))] = data.draw(
                values
            )
    return doc


def _check(result: Any) -> None:
    assert result.code in (0, 1, 2, 3, 4), (result.code, result.err)
    assert "Traceback" not in result.err
    assert "internal error" not in result.err, result.err
    for line in result.err.splitlines():
        assert line.startswith(("error: ", "hint: ", "warning: ")), line


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_validate_never_crashes(kli, tmp_path: Path, data: st.DataObject) -> None:
    doc = _mutate(data.draw(st.sampled_from(DEFINITIONS)), data)
    f = tmp_path / "d.yaml"
    f.write_text(yaml.safe_dump(doc))
    _check(kli("validate", str(f)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_inspect_never_crashes(kli, tmp_path: Path, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, 2))
    definition = DEFINITIONS[index]
    if data.draw(st.booleans()):
        definition = _mutate(definition, data)
    obj = _mutate(OBJECTS[index], data)
    d, o, p = tmp_path / "d.yaml", tmp_path / "o.yaml", tmp_path / "p.yaml"
    d.write_text(yaml.safe_dump(definition))
    o.write_text(yaml.safe_dump(obj))
    args = [
        "inspect",
        "-f",
        str(o),
        "--definition",
        str(d),
        "-o",
        data.draw(st.sampled_from(["json", "table"])),
    ]
    if index < 2 and data.draw(st.booleans()):
        pods = [_mutate(pod, data) if data.draw(st.booleans()) else pod for pod in PODS[index]]
        p.write_text(yaml.safe_dump_all(pods))
        args += ["--pods", str(p)]
    _check(kli(*args))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_random_text_never_crashes(kli, tmp_path: Path, text: str) -> None:
    f = tmp_path / "t.yaml"
    f.write_text(text)
    _check(kli("validate", str(f)))
    _check(
        kli(
            "inspect",
            "-f",
            str(f),
            "--definition",
            str(EXAMPLES / "definitions/example-dev-jobgroup-v1.yaml"),
        )
    )
