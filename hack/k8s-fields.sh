#!/usr/bin/env bash
# Regenerates src/karta/extract/_k8s_fields.py (the Kubernetes field tree that extracted pod templates,
# pod specs and fragments are trimmed to: karta.extract.trim) from the OpenAPI v3 document of the
# pinned kube-apiserver, or with --check only verifies it (exit 1 when stale). Starts a control plane of
# its own (hack/cluster/up.sh, building it first if needed) in a temporary directory and stops it again;
# with KUBECONFIG already pointing at the pinned API server (KARTA_K8S_FIELDS_KUBECONFIG), uses that.
#   bash hack/k8s-fields.sh [--check]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
python=${PYTHON:-$root/.venv/bin/python}
if [[ -n "${KARTA_K8S_FIELDS_KUBECONFIG:-}" ]]; then
  KUBECONFIG=$KARTA_K8S_FIELDS_KUBECONFIG exec "$python" "$here/k8s_fields.py" "$@"
fi
dir=$(mktemp -d /tmp/karta-k8s-fields.XXXXXX)
trap 'bash "$here/cluster/down.sh" --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir" "$dir-logs"' EXIT
eval "$(bash "$here/cluster/up.sh" --dir "$dir")"
"$python" "$here/k8s_fields.py" "$@"
