"""What ``kli --help`` and ``kli validate`` import: the start-up budget (150 ms each, see bench/run.py)
depends on keeping the engines, the YAML writer and heavy libraries off these paths.

No timings here (those belong in bench/): only which modules end up loaded.
"""

from __future__ import annotations

import json
import os
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


WORKLOAD = EXAMPLE.parents[1] / "workloads" / "pytorchjob-train-7.yaml"
PODS = EXAMPLE.parents[1] / "pods" / "pytorchjob-train-7-pods.yaml"

# what an offline command on one object of a built-in kind must not load (issue 12, item 7): libjq
# and the sandbox (no catalog expression needs them here), the validator (built-ins are known
# valid), the whole catalog; without a kubeconfig, neither the kubeconfig reader nor the cluster
# client (karta.kube.sources decides that it is offline); hashlib (OpenSSL: only for a name too
# long to keep) and shutil (with its compression modules: only the terminal's width was wanted)
NEVER_FOR_ONE_OBJECT = {
    "jq",
    "karta.jq._libjq",
    "karta.jq.sandbox",
    "subprocess",
    "karta.model.validate",
    "karta.model.dump",
    "karta.kube.config",
    "karta.kube.kartas",
    "karta.kube.client",
    "ssl",
    "hashlib",
    "shutil",
    # click's suggestions for an unknown long option, which -f is not (karta.cli.main._Parser)
    "difflib",
    "importlib.util",  # the code cache's interpreter tag reads the magic number without it
}

# the code generators: a definition's status and extraction code is generated on its first use when
# the definition cache can keep it (karta._codegen.due_for_cache), so a second run reads it; a jq
# expression's from its second use (karta._codegen.due): inspect, describe and gang evaluate each
# once (verify's checks evaluate some again: it generates)
GENERATORS = {"karta.jq.codegen", "karta.extract.compiled", "karta.status.generated"}

# what a command that reads a YAML object and prints text never needs (issue 23): orjson (it imports
# dataclasses and inspect: JSON input and output import it where they are read or written) and
# the writers (write-back, suspend and resume: imported by the factory's methods that write)
NEVER_FOR_READING = {"orjson", "karta.extract.writeback", "karta.extract.suspend"}

_ONE_OBJECT_PROBE = """
import contextlib, io, json, os, sys
os.environ["KUBECONFIG"] = os.devnull + "-none"  # offline
os.environ["KARTA_DEFINITIONS"] = {empty!r}
os.environ.pop("KARTA_CODEGEN", None)  # kli as users run it, not the test suite's eager mode
from karta.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main({argv!r})
from karta import catalog
reader = sys.modules["yaml.reader"].Reader if "yaml.reader" in sys.modules else None
print(json.dumps({{"code": code, "modules": sorted(sys.modules),
    "files": catalog._indexed.cache_info().currsize, "all": catalog._catalog.cache_info().currsize,
    "non_printable": None if reader is None else type(reader.NON_PRINTABLE).__name__}}))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "-f", str(WORKLOAD)],
        ["inspect", "-f", str(WORKLOAD), "--pods", str(PODS)],
        ["describe", "-f", str(WORKLOAD)],
        ["describe", "-f", str(WORKLOAD), "--pods", str(PODS)],
        ["gang", "--backend", "kai", "-f", str(WORKLOAD)],
        ["verify", "--definition", "kubeflow-org-pytorchjob-v1", "--workload", str(WORKLOAD)],
    ],
    ids=["inspect", "inspect-pods", "describe", "describe-pods", "gang", "verify"],
)
def test_a_command_on_one_object_reads_one_definition(argv: list[str], tmp_path: Path) -> None:
    """The second run of a command on one object (the first generated the definition's status and
    extraction code, and with pods the functions of its pod-side expressions, into the definition
    cache, karta._codegen.due_for_cache) reads one catalog file and runs the cached code: no
    generator, no validator, no cluster client; and (but verify, whose checks evaluate more) no
    jq front end or compiler either (describe with pods is the live describe's pod placement)."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    script = _ONE_OBJECT_PROBE.format(argv=argv, empty=str(tmp_path))
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
        ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["code"] == 0
    assert (result["files"], result["all"]) == (1, 0)  # one catalog file read, never all of them
    assert result["non_printable"] == "_LazyPattern"  # PyYAML's unused pattern stays uncompiled
    never = NEVER_FOR_ONE_OBJECT | (
        GENERATORS | NEVER_FOR_READING | COMPILER if argv[0] != "verify" else set()
    )
    if argv[0] == "gang":  # the builtin table is for cached code naming a builtin (a status function)
        never |= {"karta.jq.builtin_table"}
    assert not set(result["modules"]) & never, sorted(set(result["modules"]) & never)


def test_listing_the_catalog_reads_no_definition_file(tmp_path: Path) -> None:
    script = _ONE_OBJECT_PROBE.format(argv=["definitions"], empty=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert (result["code"], result["files"], result["all"]) == (0, 0, 0)


def test_listing_the_catalog_loads_no_base64(tmp_path: Path) -> None:
    # base64 is for a client certificate's name (karta.cli.cluster), which offline commands never read
    script = _ONE_OBJECT_PROBE.format(argv=["definitions"], empty=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert "karta.cli.cluster" in result["modules"]
    assert not {"base64", "difflib", "yaml"} & set(result["modules"])


# the jq front end and compiler: what running an expression by the closures needs, and generated
# code read from the definition cache does not (karta.jq.evaluator and karta.jq.fastpath import
# them on the first expression the cache does not serve)
COMPILER = {
    "karta.jq.parser",
    "karta.jq.lexer",
    "karta.jq.scope_check",
    "karta.jq.safety",
    "karta.jq.fastpath.driver",
    "karta.jq.fastpath.calls",
    "karta.jq.fastpath.operators",
}


def test_a_command_served_by_the_definition_cache_compiles_no_expression(tmp_path: Path) -> None:
    """Once a process has generated the definition's code (two objects: the second use generates
    and writes the definition cache), a command on one object runs that code from the cache and
    imports neither the jq parser nor the fast path's compiler."""
    two = tmp_path / "two.yaml"
    text = WORKLOAD.read_text(encoding="utf-8")
    two.write_text(text + "\n---\n" + text.replace("name: train-7", "name: train-8"), encoding="utf-8")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    for argv, check in ((["inspect", "-f", str(two)], False), (["inspect", "-f", str(WORKLOAD)], True)):
        script = _ONE_OBJECT_PROBE.format(argv=argv, empty=str(tmp_path))
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
        )
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert result["code"] == 0
        if check:
            assert not set(result["modules"]) & (COMPILER | GENERATORS), sorted(
                set(result["modules"]) & (COMPILER | GENERATORS)
            )


@pytest.mark.parametrize("argv", [["definitions"], ["definitions", "kubeflow-org-pytorchjob-v1"]])
def test_listing_definitions_loads_no_quantity_arithmetic(argv: list[str], tmp_path: Path) -> None:
    # kli's configuration names the GPU resources (karta.extract.types); counting them
    # (karta.extract.requests, with fractions and decimal) is for the commands that count requests
    script = _ONE_OBJECT_PROBE.format(argv=argv, empty=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["code"] == 0
    assert not {"karta.extract.requests", "fractions", "decimal"} & set(result["modules"])


def test_without_the_definition_cache_one_object_generates_nothing(tmp_path: Path) -> None:
    """With the cache off (``KARTA_CODEGEN=nocache``) nothing generated would outlive the process:
    a command on one object runs the general code and loads no generator (karta._codegen.due)."""
    script = _ONE_OBJECT_PROBE.format(argv=["inspect", "-f", str(WORKLOAD)], empty=str(tmp_path)).replace(
        'os.environ.pop("KARTA_CODEGEN", None)', 'os.environ["KARTA_CODEGEN"] = "nocache"'
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["code"] == 0
    assert not set(result["modules"]) & GENERATORS, sorted(set(result["modules"]) & GENERATORS)


def test_a_first_run_stores_what_a_second_run_reads(tmp_path: Path) -> None:
    """One object, a cold writable cache: the first run generates the definition's code and keeps
    it (status and extraction entries appear); the second loads no generator."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    script = _ONE_OBJECT_PROBE.format(argv=["inspect", "-f", str(WORKLOAD)], empty=str(tmp_path))
    first = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    assert set(json.loads(first.stdout.strip().splitlines()[-1])["modules"]) & GENERATORS
    entries = [p for p in cache.rglob("*") if p.is_file()]
    assert entries, "the first run stored nothing"
    second = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    result = json.loads(second.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    assert not set(result["modules"]) & GENERATORS, sorted(set(result["modules"]) & GENERATORS)
