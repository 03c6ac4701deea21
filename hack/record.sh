#!/usr/bin/env bash
# Records the recorder's flows on a cluster of its own (issue 24 item 3; tests/recorded/README.md):
# starts a control plane with kwok (and the operator the flows need) in a fresh directory, runs
# `python -m tests.recorder` against it, and stops it (logs kept in DIR-logs).
#   hack/record.sh --operator kube|training|kuberay [--kind K] [--flow F] [--check] [--out DIR]
# Environment: PYTHON (default: .venv/bin/python when present, else python3),
#   KARTA_RECORD_DIR (the cluster's work directory, default /tmp/karta-record-$UID).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
operator=""
args=("$@")
while [[ $# -gt 0 ]]; do
  case "$1" in
    --operator) operator="${2:-}"; shift 2 ;;
    --operator=*) operator="${1#--operator=}"; shift ;;
    *) shift ;;
  esac
done
if [[ -z "$operator" ]]; then
  echo "usage: hack/record.sh --operator kube|training|kuberay [--kind K] [--flow F] [--check]" >&2
  exit 2
fi
ops="$(cd "$root" && "$python" -c "from tests.recorder.registry import OPERATORS; import sys; print(','.join(OPERATORS[sys.argv[1]].up_operators))" "$operator")"
dir="${KARTA_RECORD_DIR:-/tmp/karta-record-$UID}"
up=(--dir "$dir" --kwok --controllers)
[[ -n "$ops" ]] && up+=(--operators "$ops")
eval "$(python3 "$root/hack/cluster/controlplane.py" up "${up[@]}")"
trap 'python3 "$root/hack/cluster/controlplane.py" down --dir "$dir" >/dev/null' EXIT
cd "$root"
"$python" -m tests.recorder "${args[@]}"
