"""Every command example of the site and the README runs as written (blocks.py says what an example
is). Offline ones run here, each in a scratch directory that sees the checkout's files (so
``kli catalog export --dir catalog/`` writes nowhere that matters), with no kubeconfig and an empty
home: a command that needs a cluster must carry the ``needs a cluster`` title instead.

For a ``console`` block the shown output is checked too: every line shown (but an elision, ``…``)
is a line of the real output, whitespace aside, and a command shown with an ``error:`` line must
fail while every other one must succeed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from blocks import MARKERS, REPO, Block, every_block

EXIT = re.compile(r"\(exit code (\d+)\)")
BLOCKS = every_block()
OFFLINE = [b for b in BLOCKS if not b.title]
# The checkout's entries a command may read (the scratch directory links them).
LINKED = ("examples", "src", "tests", "charts", "hack", "scripts", "docs", "bench", ".venv", "pyproject.toml")


def _normal(line: str) -> str:
    return " ".join(line.split())


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    work.mkdir()
    for name in LINKED:
        if (REPO / name).exists():
            (work / name).symlink_to(REPO / name)
    (tmp_path / "shared").symlink_to(REPO.parent / "shared")  # ../shared/corpus, as in the checkout
    (tmp_path / "home").mkdir()
    return work


def _env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECONFIG", "KARTA_"))}
    env["HOME"] = str(scratch.parent / "home")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["KARTA_CODEGEN"] = os.environ.get("KARTA_CODEGEN", "")
    env["NO_COLOR"] = "1"
    return env


def test_every_marked_block_says_a_known_need() -> None:
    unknown = [f"{b.where}: {b.title!r}" for b in BLOCKS if b.title and b.title not in MARKERS]
    assert not unknown, f"titles the tests do not know (one of {MARKERS}): {unknown}"


def test_the_examples_are_found() -> None:
    """The parser sees the blocks (a guard against a regex that finds nothing)."""
    assert len(OFFLINE) >= 15
    assert sum(len(b.commands) for b in BLOCKS) >= 100


@pytest.mark.parametrize("block", OFFLINE, ids=[b.where for b in OFFLINE])
def test_offline_example_runs_as_shown(block: Block, scratch: Path) -> None:
    env = _env(scratch)
    if block.lang != "console":  # a script: its lines run in order, in one shell
        script = "\n".join(c.line for c in block.commands)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{block.where}: {script}\n{done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        return
    for command in block.commands:
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command.line],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        where = f"{block.where}: $ {command.line}\n--- real output:\n{done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr, where
        codes = [int(m[1]) for line in command.output if (m := EXIT.fullmatch(line.strip()))]
        if codes:  # "(exit code N)", as scripts/demo.sh prints it
            assert done.returncode == codes[0], f"exit {done.returncode}; {where}"
        else:
            shown_error = any(line.startswith(("error:", "INVALID")) for line in command.output)
            assert (done.returncode != 0) == shown_error, f"exit {done.returncode}; {where}"
        real = {_normal(line) for line in (done.stdout + done.stderr).splitlines()}
        for line in command.output:
            if "…" in line or line.strip() in ("...", "") or EXIT.fullmatch(line.strip()):
                continue
            assert _normal(line) in real, f"shown but not printed: {line!r}\n{where}"
