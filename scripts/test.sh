#!/usr/bin/env bash
# The README's test command (docs/contributing/tests.md). On a fresh machine it installs what the tests need, then runs lint,
# format check, types, import contracts and the test suite. CI (.ci/run) calls it as it is.
#
#   scripts/test.sh [--unit] [PYTEST ARGS...]
#
#   --unit   the fast loop: no Go build, no e2e tests (tests/e2e is left out); everything else runs.
#
# Both runs build the documentation site with `mkdocs build --strict` (tests/unit/docs: no warning,
# links and anchors checked) and run every offline command example of docs/ and the README.
#
# What it installs when missing:
# - Debian packages (as root with apt-get; otherwise one message naming them, exit 1):
#   openssl (certificates of the test control plane and webhooks), and for the full run
#   chromium + chromium-driver (the web view's browser tests) and prometheus (the platform-metrics
#   scrape test);
# - the Python packages, into .venv (pip, from PyPI);
# - for the full run, the control plane and Helm built from their Go modules (hack/cluster,
#   hack/helm; cached under ~/.cache/karta-cluster: ~16 and ~3 minutes the first time on 2 cores),
#   kubectl, and kwok, KubeRay and the training operator (hack/kwok, hack/kuberay,
#   hack/training-operator: ~22 minutes together the first time with an empty Go build cache),
#   and Kueue's controller manager (hack/kueue: ~7 minutes alone with an empty Go build cache,
#   ~4.5 with the other builds' packages cached).
# Go itself is not installed here: the project's machines have it (a toolchain from Debian is too
# old for the pinned Kubernetes release).
set -euo pipefail
cd "$(dirname "$0")/.."

unit=0
if [ "${1:-}" = "--unit" ]; then
  unit=1
  shift
fi

# Debian packages: the command each one provides, then the package.
needed=("openssl openssl")
if [ "$unit" = 0 ]; then
  needed+=("chromium chromium" "chromedriver chromium-driver" "prometheus prometheus")
fi
missing=()
for pair in "${needed[@]}"; do
  command -v "${pair%% *}" >/dev/null || missing+=("${pair#* }")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "scripts/test.sh: install these Debian packages first (as root: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
if [ "$unit" = 0 ] && ! command -v go >/dev/null; then
  echo "scripts/test.sh: the e2e tests need Go on PATH (to build the control plane); --unit runs without" >&2
  exit 1
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
export PATH="$PWD/.venv/bin:$PATH"

echo "== ruff check";  ruff check src tests bench hack
echo "== ruff format"; ruff format --check src tests bench hack
echo "== mypy";        mypy
echo "== import contracts"; lint-imports
if [ "$unit" = 1 ]; then
  echo "== pytest (no e2e)"; exec pytest --ignore=tests/e2e "$@"
fi
# The tests in tests/e2e run against a real kube-apiserver built from the Kubernetes Go modules
# (hack/cluster; cached under ~/.cache/karta-cluster, ~16 min the first time on 2 cores).
echo "== control plane"; bash hack/cluster/build.sh >/dev/null
# The chart tests (tests/e2e/helm) run the pinned Helm, built the same way (hack/helm; same cache,
# ~3 min the first time).
echo "== helm";        bash hack/helm/build.sh >/dev/null
# kubectl for the tests that run documented kubectl commands verbatim (docs/tasks/helm.md):
# a new machine has none. Pinned to the cluster's release (hack/kubectl; same cache, ~2 min the
# first time), first on PATH so that a kubectl of another version on the machine is not used.
echo "== kubectl";     PATH="$(bash hack/kubectl/build.sh | tail -n1):$PATH"; export PATH
# kwok (the kubelet of fake GPU Nodes: their pods run) and the KubeRay and Kubeflow training operators,
# for the tests that run workloads through the real operators (the `ecosystem_cluster` fixture), and
# Kueue, for the tests that queue workloads through it (the `kueue_cluster` fixture).
# Pinned Go modules of their own (hack/kwok, hack/kuberay, hack/training-operator, hack/kueue); same cache.
for addon in kwok kuberay training-operator kueue; do
  echo "== $addon";    bash "hack/$addon/build.sh" >/dev/null
done
echo "== pytest";      exec pytest "$@"
