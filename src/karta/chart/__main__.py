"""``python -m karta.chart [--check] [--chart-dir DIR]``: write (or verify) the chart's generated files.

Rewrites ``files/kartas.run.ai.yaml``, ``files/rbac.yaml``, the ``backend`` enum of
``values.schema.json`` and the documentation's values table (``docs/reference/chart-values.md``
of the checkout that holds ``charts/``) from the
library; ``--check`` changes nothing and exits 1 naming each
stale file. Exit 2 for a usage error or a chart directory that is not there (an installed package
has no chart: run it from a source checkout).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from karta.chart import (
    CHART_DIR,
    CRD_PATH,
    RBAC_PATH,
    SCHEMA_PATH,
    VALUES_PAGE,
    crd_text,
    rbac_text,
    schema_text,
    update_page,
    values_table,
)


def generated(chart: Path) -> dict[Path, str]:
    """Each generated file of the chart at ``chart`` and its expected text."""
    values = yaml.safe_load((chart / "values.yaml").read_text(encoding="utf-8"))
    schema = schema_text(json.loads((chart / SCHEMA_PATH).read_text(encoding="utf-8")))
    page = chart.parents[1] / VALUES_PAGE
    return {
        chart / CRD_PATH: crd_text(),
        chart / RBAC_PATH: rbac_text(),
        chart / SCHEMA_PATH: schema,
        page: update_page(page.read_text(encoding="utf-8"), values_table(values, json.loads(schema))),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m karta.chart", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    parser.add_argument("--chart-dir", type=Path, default=CHART_DIR, help="the chart (default: %(default)s)")
    args = parser.parse_args(argv)
    chart: Path = args.chart_dir
    if not (chart / "Chart.yaml").is_file():
        print(
            f"error: no chart at {chart} (run from a source checkout, or pass --chart-dir)", file=sys.stderr
        )
        return 2
    try:
        files = generated(chart)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stale = [
        path for path, text in files.items() if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]
    if args.check:
        for path in stale:
            print(f"{path} is stale: run `python -m karta.chart`", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[path], encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
