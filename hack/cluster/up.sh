#!/usr/bin/env bash
# Starts a local control plane (etcd + kube-apiserver on 127.0.0.1; --controllers adds
# kube-controller-manager and kube-scheduler), building the binaries first if needed.
# Prints `export KUBECONFIG=...` lines:  eval "$(bash hack/cluster/up.sh)"
# Options: --feature-gates A=true,B=false  --runtime-config group/version=true  --dir DIR
# Logs: DIR/logs/<component>.log (DIR defaults to /tmp/karta-cluster-$UID); down.sh keeps them.
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/controlplane.py" up "$@"
