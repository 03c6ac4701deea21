"""``python -m karta.crd [--check] [PATH]``: write (or verify) the generated CRD manifest.

Owns the command that keeps ``src/karta/crd/kartas.run.ai.yaml`` equal to the generator's output.
Without arguments it rewrites the packaged file; ``--check`` exits 1 when the file is stale; a PATH
of ``-`` prints the manifest.
"""

from __future__ import annotations

import sys
from pathlib import Path

from karta._generated import write_or_check
from karta.crd import CRD_FILE, render_crd_yaml


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    if len(paths) > 1 or any(a.startswith("--") for a in paths):
        print("usage: python -m karta.crd [--check] [PATH|-]", file=sys.stderr)
        return 2
    text = render_crd_yaml()
    if paths == ["-"]:
        sys.stdout.write(text)
        return 0
    target = Path(paths[0]) if paths else CRD_FILE
    return write_or_check(target, text, check=check, command="python -m karta.crd")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
