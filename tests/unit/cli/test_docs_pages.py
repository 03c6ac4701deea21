"""The documentation's tutorial works as written: the YAML blocks of "Write a definition for a new
CRD" (docs/tasks/new-crd.md) validate and inspect as it says; and the catalog's numbers, where the
README, the demo and the catalog page state them, are the catalog's."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
TUTORIAL = REPO / "docs" / "tasks" / "new-crd.md"
CATALOG_PAGE = REPO / "docs" / "reference" / "catalog.md"


def test_tutorial_definition_and_workload(kli, tmp_path: Path) -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", TUTORIAL.read_text(), re.S)
    files = {}
    for block in blocks:
        text = textwrap.dedent(block)
        name = text.splitlines()[0].split()[1]  # "# <file name> — ..."
        (tmp_path / name).write_text(text)
        files[name] = tmp_path / name
    definition, workload = files["acme-ai-finetune-v1.yaml"], files["finetune.yaml"]

    r = kli("validate", str(definition))
    assert r.code == 0, r.out + r.err
    assert r.out.startswith("OK: acme-ai-finetune-v1 is a valid Karta definition")

    r = kli("inspect", "-f", str(workload), "--definition", str(definition), "-o", "json")
    assert r.code == 0, r.err
    view = json.loads(r.out)
    assert view["status"]["primary"] == "Running"
    scales = {c["name"]: c["instances"][0]["scale"]["replicas"] for c in view["components"]}
    assert scales == {"finetune": None, "coordinator": 1, "trainer": 4}
    (gang,) = view["gang"]["gangs"]
    assert gang["name"] == "ft"
    assert [(s["name"], s["minMember"]) for s in gang["subGroups"]] == [("coordinator", 1), ("trainer", 4)]


def test_the_catalog_numbers_are_the_catalogs() -> None:
    """What the README, the demo script and the catalog page say of the catalog: N definitions of K
    workload kinds (a kind is a group and kind; a kind may have a definition per version), counted
    here."""
    from karta.catalog import catalog_definitions

    definitions = catalog_definitions()
    kinds = {(d.root_gvk.group, d.root_gvk.kind) for d in definitions if d.root_gvk is not None}
    demo = README.parent / "scripts" / "demo.sh"
    for path in (
        README,
        demo,
        CATALOG_PAGE,
    ):  # "1 of 4 definitions" (an example's count) is not a catalog count
        text = " ".join(path.read_text().split())
        assert f"{len(definitions)} definitions of {len(kinds)} workload kinds" in text, path
        counts = {int(n) for n in re.findall(r"(?<!\d of )\b(\d+) definitions", text)}
        assert counts == {len(definitions)}, path
        assert {int(n) for n in re.findall(r"(\d+) workload kinds", text)} == {len(kinds)}, path
