"""What ``kli --help`` and ``kli validate`` import: the start-up budget (150 ms each, see bench/run.py)
depends on keeping the engines, the YAML writer and heavy libraries off these paths.

No timings here (those belong in bench/): only which modules end up loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "definitions" / "kubeflow-org-pytorchjob-v1.yaml"

_PROBE = """
import contextlib, io, json, sys
from karta.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main({argv!r})
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}))
"""


def _loaded(argv: list[str]) -> tuple[int, set[str]]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)], capture_output=True, text=True, check=True
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["code"], set(result["modules"])


NEVER_AT_START = {
    "pydantic",
    "rich",
    "jq",
    "karta.jq.evaluator",
    "karta.jq.fastpath",
    "karta.jq.operations",  # the builtin table names the value functions, so that they stay unloaded
    "karta.jq.codegen",
    "karta.jq._libjq",
    "karta.jq.sandbox",
    "karta.model.dump",
    "karta.extract",
    "karta.gang",
    "karta.catalog",
}


@pytest.mark.parametrize("argv", [["--help"], []])  # a bare kli prints the help too
def test_help_loads_neither_the_library_nor_yaml(argv: list[str]) -> None:
    code, modules = _loaded(argv)
    assert code == 0
    assert not modules & (NEVER_AT_START | {"yaml", "karta.model", "karta.jq"})


@pytest.mark.skipif(not EXAMPLE.exists(), reason="example definition missing")
def test_validate_loads_only_the_loader_validator_and_jq_front_end() -> None:
    code, modules = _loaded(["validate", str(EXAMPLE)])
    assert code == 0
    assert {"karta.model.load", "karta.model.validate", "karta.jq.parser", "karta.jq.safety"} <= modules
    assert not modules & NEVER_AT_START


# what a command's --help (and every shell completion, which builds the command) must not load:
# the engines, the model's types, the cluster client; the CLI reaches the library through its lazy
# packages, which cost nothing until a name is used
NEVER_FOR_HELP = (NEVER_AT_START - {"karta.extract", "karta.gang"}) | {
    "karta.extract.factory",
    "karta.gang.plan",
    "karta.model.types",
    "karta.model.load",
    "karta.kube.client",
    "karta.definitions.store",
    "karta.report.rows",
    "ssl",
    "yaml",
}


@pytest.mark.parametrize("command", ["gang", "rbac"])
def test_backend_choices_load_the_registry_alone(command: str) -> None:
    code, modules = _loaded([command, "--help"])
    assert code == 0
    assert "karta.render.backends" in modules
    assert not modules & (NEVER_FOR_HELP | {"karta.render.dispatch", "karta.render.kai"})


@pytest.mark.parametrize(
    "command",
    [
        "completion",
        "definitions",
        "describe",
        "gang",
        "get",
        "inspect",
        "rbac",
        "scaffold",
        "validate",
        "verify",
        "version",
    ],
)
def test_a_commands_help_loads_none_of_the_library(command: str) -> None:
    code, modules = _loaded([command, "--help"])
    assert code == 0
    assert not modules & NEVER_FOR_HELP, sorted(modules & NEVER_FOR_HELP)
