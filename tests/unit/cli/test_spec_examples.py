"""The worked examples of docs/spec/gang-backends.md are what ``kli gang`` prints: each YAML block
after a ``<!-- kli gang: ARGS -->`` marker equals the output for the running example with ARGS, the
running example shown is the repository's example workload, and the definition of
docs/spec/format.md#full-example is the example definition the renderers read."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.render.backends import BACKENDS

DOCS = Path(__file__).resolve().parents[3] / "docs" / "spec"
BASE = [
    "gang",
    "-f",
    "workloads/pytorchjob-train-7.yaml",
    "--definition",
    "definitions/kubeflow-org-pytorchjob-v1.yaml",
]
_MARKED = re.compile(r"<!-- kli gang: (?P<args>[^>]*?) -->\n```yaml\n(?P<body>.*?)```", re.DOTALL)
_BLOCK = re.compile(r"```yaml\n(?P<body>.*?)```", re.DOTALL)


def _section(page: str, anchor: str) -> str:
    text = (DOCS / page).read_text()
    start = text.index(f"{{#{anchor}}}")
    end = text.find("\n## ", start)
    return text[start : end if end >= 0 else len(text)]


def _argv(examples: Path) -> list[str]:
    return [str(examples / a) if a.endswith(".yaml") else a for a in BASE]


def _examples() -> list[tuple[str, str]]:
    text = (DOCS / "gang-backends.md").read_text()
    return [(m["args"], m["body"]) for m in _MARKED.finditer(text)]


def test_every_backend_has_a_checked_example() -> None:
    backends = {args.split()[1] for args, _ in _examples()}
    # coscheduling's one-line example is prose, checked by test_coscheduling_example
    assert backends | {"coscheduling"} == set(BACKENDS)


@pytest.mark.parametrize(("args", "body"), _examples(), ids=lambda v: v if v.startswith("--") else "")
def test_example_is_kli_gang_output(kli: Callable[..., Any], examples: Path, args: str, body: str) -> None:
    result = kli(*_argv(examples), *args.split())
    assert result.code == 0, result.err
    assert list(yaml.safe_load_all(result.out)) == list(yaml.safe_load_all(body))


def test_coscheduling_example(kli: Callable[..., Any], examples: Path) -> None:
    result = kli(*_argv(examples), "--backend", "coscheduling")
    (group,) = yaml.safe_load_all(result.out)
    prose = _section("gang-backends.md", "coscheduling-example")
    assert group["metadata"]["name"] == "train-7-job" and "`train-7-job`" in prose
    assert group["spec"] == {"minMember": 5} and "`spec: {minMember: 5}`" in prose
    assert "coscheduling has no sub-groups: the per-component minimums are dropped" in result.err
    assert "coscheduling has no sub-groups: the per-component minimums are dropped" in prose


def test_running_example_is_the_example_workload(examples: Path) -> None:
    (shown,) = _BLOCK.findall(_section("gang-backends.md", "running-example"))
    assert yaml.safe_load(shown) == yaml.safe_load(
        (examples / "workloads/pytorchjob-train-7.yaml").read_text()
    )


def test_format_full_example_is_the_example_definition(examples: Path) -> None:
    (shown,) = _BLOCK.findall(_section("format.md", "full-example"))
    definition = yaml.safe_load((examples / "definitions/kubeflow-org-pytorchjob-v1.yaml").read_text())
    assert yaml.safe_load(shown) == definition
