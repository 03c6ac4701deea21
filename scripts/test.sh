#!/usr/bin/env bash
# Installs everything the tests need into .venv, then runs lint, format check, types, import
# contracts and the whole test suite. This is what CI (.ci/run) calls.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in go openssl; do
  command -v "$tool" >/dev/null || { echo "scripts/test.sh needs '$tool' on PATH (Go toolchain, openssl)" >&2; exit 1; }
done
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
export PATH="$PWD/.venv/bin:$PATH"

echo "== ruff check";  ruff check src tests bench hack
echo "== ruff format"; ruff format --check src tests bench hack
echo "== mypy";        mypy
echo "== import contracts"; lint-imports
# The tests in tests/e2e run against a real kube-apiserver built from the Kubernetes Go modules
# (hack/cluster; cached under ~/.cache/karta-cluster, ~16 min the first time on 2 cores).
echo "== control plane"; bash hack/cluster/build.sh >/dev/null
# The chart tests (tests/e2e/helm) run the pinned Helm, built the same way (hack/helm; same cache,
# ~3 min the first time).
echo "== helm";        bash hack/helm/build.sh >/dev/null
echo "== pytest";      pytest "$@"
