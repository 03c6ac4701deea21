"""The recorder's operator versions are the versions hack/ builds (its fixtures name them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.recorder.registry import OPERATORS

HACK = Path(__file__).resolve().parents[3] / "hack"
PINS = {
    "kube": ("cluster", "k8s.io/kubernetes"),
    "training": ("training-operator", "github.com/kubeflow/training-operator"),
    "kuberay": ("kuberay", "github.com/ray-project/kuberay/ray-operator"),
}


def _pinned(directory: str, module: str) -> str:
    for line in (HACK / directory / "go.mod").read_text().splitlines():
        words = line.split()
        if words[:1] == ["require"]:
            words = words[1:]
        if len(words) >= 2 and words[0] == module:
            return words[1]
    raise AssertionError(f"hack/{directory}/go.mod does not pin {module}")


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_recorded_version_is_the_pinned_one(name: str) -> None:
    assert OPERATORS[name].version == _pinned(*PINS[name])
