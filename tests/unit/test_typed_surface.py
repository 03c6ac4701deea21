"""The public surface is precisely typed: a consumer written against ``from karta import X`` (and
the other packages that export lazily) type-checks under ``mypy --strict`` and sees no ``Any``.

The lazy packages resolve their names at run time through ``__getattr__`` (kli's start-up budget);
a name missing from their ``TYPE_CHECKING`` imports would silently become ``Any`` to a type
checker, and a non-literal ``__all__`` would hide every re-export under ``--strict``.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAZY_PACKAGES = (
    "karta",
    "karta.jq",
    "karta.model",
    "karta.kube",
    "karta.definitions",
    "karta.render",
    "karta.report",
    "karta.scaffold",
)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_exports_and_all_agree(package: str) -> None:
    module = importlib.import_module(package)
    exports = getattr(module, "_EXPORTS", None)
    names = set(module.__all__) - {"__version__"}
    if exports is not None:
        assert set(exports) == names
    for name in names:
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_a_consumer_type_checks_and_sees_no_any(tmp_path: Path) -> None:
    lines = ["from __future__ import annotations", ""]
    checks: list[str] = []
    for package in LAZY_PACKAGES:
        module = importlib.import_module(package)
        names = sorted(set(module.__all__) - {"__version__"})
        alias = package.replace(".", "_")
        lines.append(f"import {package} as {alias}")
        checks.extend(f"reveal_type({alias}.{name})  # {package}.{name}" for name in names)
        lines.append(f"from {package} import {', '.join(names)}")
    lines += ["", *checks, "", "def first_error() -> type[Exception]:", "    return KartaError", ""]
    consumer = tmp_path / "consumer.py"
    consumer.write_text("\n".join(lines))
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.11"]
    result = subprocess.run(
        [*command, "--follow-imports=silent", str(consumer)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    revealed = re.findall(r":(\d+): note: Revealed type is \"(.*)\"", result.stdout)
    assert len(revealed) == len(checks), result.stdout
    source = consumer.read_text().splitlines()
    anys = [source[int(line) - 1] for line, kind in revealed if kind == "Any" or kind.startswith("Any ")]
    assert not anys, "typed as Any: " + ", ".join(a.split("# ")[-1] for a in anys)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert not errors, "\n".join(errors)
