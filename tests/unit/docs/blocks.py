"""The command examples of the documentation site (docs/ and README.md), as the tests read them.

A command example is a fenced block of language ``console`` (commands after ``$ ``, the rest is
their output), or ``sh``/``bash`` (every line a command). A block whose commands need something a
unit test does not have carries a visible title that says so, which the site shows above it:

    ```console title="needs a cluster"

Those are the :data:`MARKERS`; every other block runs offline in ``tests/unit/docs/test_examples.py``.
``text``, ``yaml``, ``json`` and other blocks are not commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DOCS = REPO / "docs"

# What a block may need instead of running offline; the site shows the title on the block.
MARKERS = ("needs a cluster", "needs root", "installs packages", "runs for minutes")

_FENCE = re.compile(r'^```(?P<lang>[a-z]*)(?:\s+title="(?P<title>[^"]*)")?\s*$')
SHELL = ("console", "sh", "bash")


@dataclass
class Command:
    line: str  # continuation lines joined
    output: list[str] = field(default_factory=list)  # shown below it (console blocks)


@dataclass
class Block:
    page: Path
    lineno: int
    lang: str
    title: str
    commands: list[Command]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.lineno}"


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def _commands(lang: str, body: list[str]) -> list[Command]:
    commands: list[Command] = []
    pending = ""
    for raw in body:
        line = raw.rstrip()
        if pending:
            pending += " " + line.strip()
            if not pending.endswith("\\"):
                commands.append(Command(pending.replace("\\ ", "")))
                pending = ""
            else:
                pending = pending[:-1].rstrip()
            continue
        if lang == "console":
            if line.startswith("$ "):
                text = line[2:]
            else:
                if commands and line.strip():
                    commands[-1].output.append(line)
                continue
        else:
            text = line
            if not text.strip() or text.lstrip().startswith("#"):
                continue
        if text.endswith("\\"):
            pending = text[:-1].rstrip()
        else:
            commands.append(Command(text))
    return commands


def blocks(page: Path) -> list[Block]:
    found = []
    lines = page.read_text(encoding="utf-8").splitlines()
    start: tuple[int, str, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        if start is None:
            match = _FENCE.match(line.lstrip())
            if match:
                start = (number, match["lang"], match["title"] or "")
                indent = len(line) - len(line.lstrip())
                body = []
            continue
        if line.strip() == "```":
            lineno, lang, title = start
            if lang in SHELL:
                found.append(Block(page, lineno, lang, title, _commands(lang, body)))
            start = None
            continue
        body.append(line[indent:] if line[:indent].strip() == "" else line)
    return found


def every_block() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]
