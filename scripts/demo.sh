#!/usr/bin/env bash
# Offline demo: installs kli into .venv and runs it on the bundled examples (no cluster needed).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e .
export PATH="$PWD/.venv/bin:$PATH"

run() {
  printf '\n$ %s\n' "$*"
  local rc=0
  "$@" || rc=$?
  [ "$rc" -eq 0 ] || printf '(exit code %s)\n' "$rc"
}

run kli validate examples/definitions/kubeflow-org-pytorchjob-v1.yaml
run kli validate examples/invalid/broken-karta.yaml
run kli inspect -f examples/workloads/pytorchjob-train-7.yaml \
  --definition examples/definitions/kubeflow-org-pytorchjob-v1.yaml \
  --pods examples/pods/pytorchjob-train-7-pods.yaml
# Without --definition, kli resolves the definition by the object's GVK ($KARTA_DEFINITIONS is a directory).
export KARTA_DEFINITIONS="$PWD/examples/definitions"
run kli inspect -f examples/workloads/jobgroup-etl.yaml --pods examples/pods/jobgroup-etl-pods.yaml
run kli inspect -f examples/workloads/servicegraph-chat.yaml -o yaml
unset KARTA_DEFINITIONS
# The built-in catalog: 53 definitions of 49 workload kinds (some kinds have one per version).
run kli definitions --component-limit 2
# What a workload asks for (file mode: desired replicas and requests per component).
run kli describe -f examples/workloads/pytorchjob-train-7.yaml
# The gang-scheduler objects for two backends, ready for kubectl apply.
# (--definition: the example with master/worker sub-groups of docs/spec/gang-backends.md#running-example)
run kli gang -f examples/workloads/pytorchjob-train-7.yaml --backend kai \
  --definition examples/definitions/kubeflow-org-pytorchjob-v1.yaml
run kli gang -f examples/workloads/pytorchjob-train-7.yaml --backend volcano \
  --definition examples/definitions/kubeflow-org-pytorchjob-v1.yaml
