"""The catalog's index by root GVK (``_index.py``): generated from the YAML files, checked by
``python -m karta.catalog --check`` (so a stale index fails here), and what lets a command on one
object read one definition file instead of the whole catalog (issue 12, item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

import karta.catalog as catalog
from karta.catalog.__main__ import main
from karta.definitions import CATALOG, DefinitionStore
from karta.errors import DefinitionError
from karta.model import GVK


def test_the_committed_index_is_current() -> None:
    assert main(["--check"]) == 0, "run `python -m karta.catalog` and commit src/karta/catalog/_index.py"


def test_check_fails_on_a_stale_index_and_the_generator_fixes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "_index.py"
    monkeypatch.setattr(catalog, "INDEX_FILE", target)
    monkeypatch.setattr("karta.catalog.__main__.INDEX_FILE", target)
    readme = tmp_path / "README.md"
    readme.write_text(catalog.KINDS_PAGE.read_text())
    monkeypatch.setattr("karta.catalog.__main__.KINDS_PAGE", readme)
    summary = tmp_path / "README-summary.md"
    summary.write_text(catalog.README_FILE.read_text())
    monkeypatch.setattr("karta.catalog.__main__.README_FILE", summary)
    target.write_text(catalog.INDEX_FILE.name)  # anything else
    assert main(["--check"]) == 1
    assert main([]) == 0
    assert main(["--check"]) == 0
    assert target.read_text() == catalog.render_index()
    assert main(["--bogus"]) == 2


def test_the_readme_table_of_kinds_is_current_and_one_row_per_kind() -> None:
    text = catalog.KINDS_PAGE.read_text()
    block = text.split(catalog.KINDS_BEGIN + "\n", 1)[1].split(catalog.KINDS_END, 1)[0]
    assert block == catalog.render_kinds_table()
    kartas = catalog.catalog_definitions()
    kinds = {(k.root_gvk.group or "core", k.root_gvk.kind) for k in kartas if k.root_gvk}
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    assert sorted(row.split("`")[1] for row in rows) == sorted(f"{g}/{k}" for g, k in kinds)
    assert f"{len(kartas)} definitions of {len(kinds)} workload kinds" in block
    # Read from the definitions: versions, the status fields, the gang.
    (mpijob,) = [row for row in rows if row.startswith("| `kubeflow.org/MPIJob`")]
    assert "| v1, v2beta1 |" in mpijob and mpijob.endswith("| yes |")
    (nodeset,) = [row for row in rows if row.startswith("| `slinky.slurm.net/NodeSet`")]
    assert "`availableReplicas`" in nodeset and "`slurmDown`" in nodeset and nodeset.endswith("| no |")


def test_the_readme_names_every_kind_by_project() -> None:
    """The README's short table (issue 27: every kind has its entry there; the full table is too
    long for a five-minute README, issue 28): one row per project, every catalog kind once."""
    text = catalog.README_FILE.read_text()
    block = text.split(catalog.SUMMARY_BEGIN + "\n", 1)[1].split(catalog.SUMMARY_END, 1)[0]
    assert block == catalog.render_kinds_summary()
    named = [kind for row in block.splitlines()[2:] for kind in row.split("|")[2].split("`")[1::2]]
    kinds = sorted({k.root_gvk.kind for k in catalog.catalog_definitions() if k.root_gvk})
    assert sorted(set(named)) == kinds  # Model and Job are two projects' kinds each
    assert len(named) == len(
        {(k.root_gvk.group, k.root_gvk.kind) for k in catalog.catalog_definitions() if k.root_gvk}
    )
    (training,) = [row for row in block.splitlines() if row.startswith("| Kubeflow Training Operator |")]
    assert "`PyTorchJob` *(gang)*" in training
    (katib,) = [row for row in block.splitlines() if row.startswith("| Kubeflow Katib |")]
    assert "`Experiment`," in katib and "`Trial` *(gang)*" in katib  # the Experiment's Trials own gangs


def test_check_fails_on_a_stale_readme_table_and_the_generator_fixes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = tmp_path / "README.md"
    monkeypatch.setattr("karta.catalog.__main__.KINDS_PAGE", readme)
    summary = tmp_path / "README-summary.md"  # the README's own block, current
    summary.write_text(catalog.README_FILE.read_text())
    monkeypatch.setattr("karta.catalog.__main__.README_FILE", summary)
    readme.write_text(f"# title\n\n{catalog.KINDS_BEGIN}\nold rows\n{catalog.KINDS_END}\n\nthe rest\n")
    assert main(["--check"]) == 1
    assert main([]) == 0
    assert main(["--check"]) == 0
    expected = (
        f"# title\n\n{catalog.KINDS_BEGIN}\n{catalog.render_kinds_table()}{catalog.KINDS_END}\n\nthe rest\n"
    )
    assert readme.read_text() == expected
    readme.write_text("no markers\n")  # one clear message, the file left alone
    assert main([]) == 1 and readme.read_text() == "no markers\n"


def test_a_kind_without_its_readme_words_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from karta.catalog._kinds import KINDS

    monkeypatch.delitem(KINDS, ("slinky.slurm.net", "NodeSet"))
    with pytest.raises(DefinitionError, match=r"no entry for slinky\.slurm\.net/NodeSet"):
        catalog.render_kinds_table()
    monkeypatch.setitem(KINDS, ("slinky.slurm.net", "NodeSet"), ("Slinky", "nodes"))
    monkeypatch.setitem(KINDS, ("example.com", "Gone"), ("Example", "a kind no definition has"))
    with pytest.raises(DefinitionError, match=r"an entry for no catalog kind: example\.com/Gone"):
        catalog.render_kinds_table()
    assert main(["--check"]) == 1


def test_index_matches_the_files() -> None:
    entries = catalog.catalog_index()
    kartas = catalog.catalog_definitions()
    assert [e.slug for e in entries] == [k.name for k in kartas]
    assert [e.gvk for e in entries] == [k.root_gvk.gvk for k in kartas if k.root_gvk]
    assert [e.components for e in entries] == [tuple(c.name for c in k.components) for k in kartas]
    assert all(e.path.is_file() for e in entries)


def test_resolving_one_kind_reads_one_file(tmp_path: Path) -> None:
    catalog._indexed.cache_clear()
    catalog._catalog.cache_clear()
    store = DefinitionStore.offline(user_directory=tmp_path)
    listed = store.listing()  # the table's cells come from the index
    assert len(listed) == len(catalog.catalog_index())
    assert all(e.definition.kind_token and e.definition.component_names for e in listed)
    assert catalog._indexed.cache_info().currsize == 0
    chosen = store.definition_for(GVK("kubeflow.org", "v1", "PyTorchJob"))
    assert chosen.origin == CATALOG and chosen.trusted
    assert chosen.karta.name == chosen.name == "kubeflow-org-pytorchjob-v1"
    assert chosen.karta is chosen.karta  # read once per store entry
    assert catalog._indexed.cache_info().currsize == 1
    assert catalog._catalog.cache_info().currsize == 0  # the whole catalog was never read


def test_a_lazy_entry_equals_the_file_it_names(tmp_path: Path) -> None:
    store = DefinitionStore.offline(user_directory=tmp_path)
    (job,) = store.by_gvk("batch", "v1", "Job")
    assert job.karta == catalog.catalog_by_gvk("batch", "v1", "Job")
    assert job.kind_token == "Job.v1.batch"
    assert job.component_names == tuple(c.name for c in job.karta.components)


def test_a_stale_entry_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = catalog.CatalogEntry("batch-job-v1", GVK("batch", "v2", "Job"), ("job",))
    monkeypatch.setattr(catalog, "_shipped_index", lambda: (entry,))
    catalog._indexed.cache_clear()
    with pytest.raises(DefinitionError, match="index is stale"):
        catalog.catalog_by_gvk("batch", "v2", "Job")
    missing = catalog.CatalogEntry("batch-nothing-v1", GVK("batch", "v1", "Nothing"), ("x",))
    monkeypatch.setattr(catalog, "_shipped_index", lambda: (missing,))
    with pytest.raises(DefinitionError, match="missing"):
        catalog.catalog_definition("batch-nothing-v1")
    assert catalog.catalog_definition("no-such-slug") is None


def test_built_ins_are_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/catalog validates every file with zero findings: the copies handed out are known valid."""
    from karta.model import validity as validate_module

    def never(karta: object) -> list[object]:
        raise AssertionError("the validator ran on a built-in")

    monkeypatch.setattr(validate_module._findings, "_build", never)
    karta = catalog.catalog_by_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert validate_module.validate_or_raise(karta) == []
    assert all(validate_module.validate_or_raise(k) == [] for k in catalog.catalog_definitions())
    copy = karta.model_copy(deep=True) if karta is not None else None
    with pytest.raises(AssertionError, match="validator ran"):  # another object: validated as usual
        validate_module.validate_or_raise(copy)


def test_every_general_purpose_kind_names_a_catalog_definition() -> None:
    """The web view's AI/general split (issue 28 item 3) names kinds the catalog has: a typo or a
    renamed kind would silently put a general-purpose kind in the AI list."""
    kinds = {(entry.gvk.group, entry.gvk.kind) for entry in catalog.catalog_index()}
    assert kinds >= catalog.GENERAL_PURPOSE_KINDS, catalog.GENERAL_PURPOSE_KINDS - kinds
    assert not catalog.is_ai_kind("apps", "Deployment") and not catalog.is_ai_kind("", "Pod")
    assert catalog.is_ai_kind("kubeflow.org", "PyTorchJob") and catalog.is_ai_kind("example.com", "Mine")
