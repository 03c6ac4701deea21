"""Running the pinned Helm (hack/helm/build.sh) on the chart, and reading what it renders.

Owns: :class:`Helm` (the ``helm`` command with its own empty config, cache and data directories,
so nothing of the developer's Helm setup is read, and no repository or registry is reached), the
value sets of the tests (``values/``), splitting rendered manifests into objects, and the
controller's :class:`~karta.controller.options.Options` parsed from the rendered Deployment's
arguments, with the controller's own parser.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from karta.controller.options import Options, parse

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "charts" / "karta"
VALUES = Path(__file__).resolve().parent / "values"
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_GOLDEN = bool(os.environ.get("KARTA_UPDATE_GOLDEN"))

# The value sets of the golden and comparison tests: the defaults and three others.
VALUE_SETS: dict[str, tuple[str, ...]] = {
    "default": (),
    "mode-b-cert-manager": ("-f", str(VALUES / "mode-b-cert-manager.yaml")),
    "kai-single": ("-f", str(VALUES / "kai-single.yaml")),
    "ui": ("-f", str(VALUES / "ui.yaml")),
}


def _built(tool: str) -> Path:
    """The pinned ``tool`` binary, built or reused (the last line hack/TOOL/build.sh prints)."""
    out = subprocess.run(
        ["bash", str(REPO / "hack" / tool / "build.sh")], check=True, capture_output=True, text=True
    ).stdout
    return Path(out.strip().splitlines()[-1]) / tool


def build_helm() -> Path:
    """The pinned helm binary (hack/helm)."""
    return _built("helm")


def build_kubectl() -> Path:
    """The pinned kubectl binary (hack/kubectl: the cluster's release; a new machine has none)."""
    return _built("kubectl")


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Helm:
    binary: Path
    home: Path
    kubeconfig: Path | None = None

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HELM_", "KUBE"))}
        for name in ("config", "cache", "data"):
            (self.home / name).mkdir(parents=True, exist_ok=True)
        env.update(
            HELM_CONFIG_HOME=str(self.home / "config"),
            HELM_CACHE_HOME=str(self.home / "cache"),
            HELM_DATA_HOME=str(self.home / "data"),
            KUBECONFIG=str(self.kubeconfig or self.home / "no-kubeconfig"),
        )
        return env

    def run(self, *args: str, check: bool = True, timeout: float = 120.0) -> Result:
        done = subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, env=self.env(), timeout=timeout
        )
        result = Result(done.returncode, done.stdout, done.stderr)
        if check:
            assert result.code == 0, f"helm {' '.join(args)}: exit {result.code}\n{result.err}\n{result.out}"
        return result

    def template(
        self, *args: str, release: str = "karta", namespace: str = "karta-system"
    ) -> list[dict[str, Any]]:
        out = self.run("template", release, str(CHART), "--namespace", namespace, *args).out
        return documents(out)


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == kind]


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = by_kind(objects, kind)
    return found


def controller_options(objects: list[dict[str, Any]]) -> Options:
    """What ``karta-controller`` makes of the rendered Deployment's arguments (its own parser: an
    argument it does not know fails here as it would in the pod)."""
    deployment = one(objects, "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["karta-controller"]
    options, version = parse(list(container["args"]))
    assert not version
    return options


def copy_chart(destination: Path) -> Path:
    """A copy of the chart to change (an upgrade's next version)."""
    target = destination / "karta"
    shutil.copytree(CHART, target)
    return target
