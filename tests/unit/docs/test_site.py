"""The documentation site builds with no warning, its generated pages are current, and what the
README and the pages promise holds.

``mkdocs build --strict`` fails on any warning: a broken link to a page or an anchor, a page left
out of the nav, a missing snippet (mkdocs.yml's ``validation`` settings). External links are not
fetched: every one is listed in ``docs/external-links.txt``, so a new one is a reviewed change."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from karta.docs import pages

sys.path.insert(0, str(Path(__file__).parent))
from blocks import DOCS, REPO

README = REPO / "README.md"
LINKS = DOCS / "external-links.txt"
_EXTERNAL = re.compile(r"\]\((https?://[^)\s]+)\)|<(https?://[^>\s]+)>")


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    assert config["strict"] is True
    assert config["validation"]["links"]["anchors"] == "warn"  # strict: a warning fails the build
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (tmp_path / "site" / "tasks" / "gang-schedule" / "index.html").is_file()


def test_the_generated_reference_pages_are_current() -> None:
    for path, text in pages().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run `python -m karta.docs`"


def test_the_reference_does_not_depend_on_which_context_asked_for_help_first() -> None:
    """click caches a command's help option with the names of the first context that asks (CI
    found the page saying ``--help`` where ``kli`` takes ``-h, --help``, after other tests had
    built contexts of their own): the page is the same after such a context."""
    import click

    from karta.cli.main import cli

    before = pages()
    ctx = click.Context(cli, info_name="kli")  # default help names: --help only
    for name in cli.list_commands(ctx):
        sub = cli.get_command(ctx, name)
        assert sub is not None
        sub.get_help_option(click.Context(sub, info_name=name))
    cli.get_help_option(ctx)
    assert pages() == before
    assert "| `--help` |" not in next(text for path, text in before.items() if path.name == "kli.md")


def test_every_kli_command_and_controller_flag_is_on_the_reference_pages() -> None:
    from karta.cli.commands import COMMANDS
    from karta.controller.options import parser

    kli, controller = (text for text in pages().values())
    for name in COMMANDS:
        assert f"## `kli {name}`" in kli, name
    for action in parser()._actions:
        if action.help == argparse.SUPPRESS:  # internal (the admission child's --role)
            continue
        for flag in action.option_strings:
            assert f"`{flag}" in controller or f", {flag}" in controller, flag


def test_the_readme_is_short_and_points_at_the_docs() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    assert text.splitlines()[2].strip().startswith("./scripts/demo.sh")
    assert text.splitlines()[3].strip().startswith("./scripts/test.sh")
    assert "mkdocs serve" in text
    for target in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (REPO / target).is_file(), target


def test_external_links_are_listed_not_fetched() -> None:
    found = set()
    for page in [README, REPO / "CONTRIBUTING.md", *DOCS.rglob("*.md")]:
        for match in _EXTERNAL.finditer(page.read_text(encoding="utf-8")):
            found.add(match[1] or match[2])
    listed = {line for line in LINKS.read_text().splitlines() if line and not line.startswith("#")}
    assert found == listed, f"add to or remove from {LINKS.name}: {sorted(found ^ listed)}"
    assert all(url.startswith("https://") for url in listed)


def test_the_finetune_example_files_are_the_tasks_blocks() -> None:
    """docs/tasks/new-crd.md shows the files the gang-scheduling task applies: they are the same."""
    text = (DOCS / "tasks" / "new-crd.md").read_text()
    shown = {}
    for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
        body = textwrap.dedent(block)
        shown[body.splitlines()[0].split()[1]] = body
    assert set(shown) >= {"finetune.yaml", "acme-ai-finetune-v1.yaml"}
    for name, body in shown.items():
        assert (REPO / "examples" / "finetune" / name).read_text() == body, name
