#!/usr/bin/env bash
# Installs everything the tests need into .venv, then runs lint, format check, types, import
# contracts and the whole test suite. This is what CI (.ci/run) calls.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
export PATH="$PWD/.venv/bin:$PATH"

echo "== ruff check";  ruff check src tests bench
echo "== ruff format"; ruff format --check src tests bench
echo "== mypy";        mypy
echo "== import contracts"; lint-imports
echo "== pytest";      pytest "$@"
