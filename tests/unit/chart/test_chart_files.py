"""The chart's generated parts (``python -m karta.chart``) are current, and its values are all
described: the schema, values.yaml and the documentation's table (docs/reference/chart-values.md) agree."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from karta.catalog import catalog_definitions
from karta.chart import CHART_DIR, CRD_PATH, RBAC_PATH, TABLE_BEGIN, VALUES_PAGE, values_rows
from karta.chart.__main__ import generated, main
from karta.controller.options import BACKENDS
from karta.controller.rbac import workload_rules
from karta.crd import CRD_FILE
from karta.rbac import crd_plurals

REPO = Path(__file__).resolve().parents[3]
CORPUS_CRDS = REPO.parent / "shared" / "corpus" / "crds"


def _values() -> dict[str, Any]:
    data = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    assert isinstance(data, dict)
    return data


def _schema() -> dict[str, Any]:
    data = json.loads((CHART_DIR / "values.schema.json").read_text())
    assert isinstance(data, dict)
    return data


def test_the_generated_files_are_current() -> None:
    for path, text in generated(CHART_DIR).items():
        assert path.read_text() == text, f"{path} is stale: run `python -m karta.chart`"
    assert main(["--check"]) == 0


def test_the_charts_crd_is_the_packaged_one() -> None:
    assert (CHART_DIR / CRD_PATH).read_text() == CRD_FILE.read_text()


def test_check_names_a_stale_file_and_a_run_rewrites_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "charts" / "karta"
    shutil.copytree(CHART_DIR, chart)
    (tmp_path / VALUES_PAGE).parent.mkdir(parents=True)
    shutil.copy(REPO / VALUES_PAGE, tmp_path / VALUES_PAGE)
    (chart / RBAC_PATH).write_text("backends: {}\n")
    assert main(["--check", "--chart-dir", str(chart)]) == 1
    assert f"{chart / RBAC_PATH} is stale" in capsys.readouterr().err
    assert main(["--chart-dir", str(chart)]) == 0
    assert main(["--check", "--chart-dir", str(chart)]) == 0
    assert (chart / RBAC_PATH).read_text() == (CHART_DIR / RBAC_PATH).read_text()


def test_no_chart_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check", "--chart-dir", str(tmp_path)]) == 2
    assert "no chart at" in capsys.readouterr().err


def test_a_values_page_without_markers_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chart = tmp_path / "charts" / "karta"
    shutil.copytree(CHART_DIR, chart)
    (tmp_path / VALUES_PAGE).parent.mkdir(parents=True)
    (tmp_path / VALUES_PAGE).write_text("# no table here\n")
    assert main(["--check", "--chart-dir", str(chart)]) == 2
    assert "no chart-values markers" in capsys.readouterr().err


def test_guessed_plurals_are_the_corpus_crds_plurals() -> None:
    """The catalog ships no CRDs, so the generated rules guess plurals; with the real CRDs of the
    shared corpus the rules come out the same."""
    assert CORPUS_CRDS.is_dir(), f"the shared corpus is expected at {CORPUS_CRDS}"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the corpus CRDs are large
    documents = [
        doc for path in sorted(CORPUS_CRDS.glob("*.yaml")) for doc in yaml.load_all(path.read_text(), loader)
    ]
    plurals = crd_plurals(documents)
    assert len(plurals) > 20
    kartas = catalog_definitions()
    for backend in BACKENDS[1:]:
        assert (
            workload_rules(kartas, backend=backend, plurals=plurals)[0]
            == workload_rules(kartas, backend=backend)[0]
        )


def test_the_schema_knows_the_controllers_backends() -> None:
    assert tuple(_schema()["properties"]["backend"]["enum"]) == BACKENDS


def test_every_schema_object_refuses_unknown_keys() -> None:
    def walk(node: dict[str, Any], path: str) -> None:
        if "properties" in node:
            assert node.get("additionalProperties") is False, f"{path or '.'} accepts unknown keys"
            for key, sub in node["properties"].items():
                walk(sub, f"{path}.{key}")

    walk(_schema(), "")


def _leaves(values: Any, prefix: str = "") -> list[str]:
    if isinstance(values, dict) and values:
        return [leaf for key, sub in values.items() for leaf in _leaves(sub, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


def test_every_value_has_exactly_one_row_and_the_docs_show_them() -> None:
    rows = values_rows(_values(), _schema())
    keys = [key for key, *_ in rows]
    for leaf in _leaves(_values()):
        owners = [k for k in keys if leaf == k or leaf.startswith(k + ".")]
        assert len(owners) == 1, (
            f"values.yaml {leaf}: described by {owners or 'no row'} in values.schema.json"
        )
    readme = (REPO / VALUES_PAGE).read_text()
    assert TABLE_BEGIN in readme
    for key, _kind, default, description in rows:
        assert f"| `{key}` |" in readme and description.replace("|", "\\|") in readme, key
        assert default


def test_the_charts_app_version_is_the_package_version() -> None:
    chart = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert chart["appVersion"] == project["version"]
