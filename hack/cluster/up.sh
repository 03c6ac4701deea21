#!/usr/bin/env bash
# Starts a local control plane (etcd + kube-apiserver on 127.0.0.1; --controllers adds
# kube-controller-manager and kube-scheduler), building the binaries first if needed.
# Prints `export KUBECONFIG=...` lines:  eval "$(bash hack/cluster/up.sh)"
# Options: --feature-gates A=true,B=false  --runtime-config group/version=true  --dir DIR
#   --kwok: also kwok, the kubelet of the Nodes annotated kwok.x-k8s.io/node=fake
#           (hack/fake_nodes.py --kwok); their pods run through hack/kwok/stages.yaml
#   --operators kuberay,training: also these operators, after their CRDs
#   (both imply --controllers; each is built from its pinned Go module first: hack/<name>/build.sh)
#   kuberay comes with hack/raydash, the Ray dashboard of every head pod (KubeRay reaches it through
#   HTTP_PROXY; tests move Ray jobs and Serve applications with its control API at $KARTA_RAYDASH_URL,
#   printed as an export line too)
#   --statefulset-controller: also the StatefulSet controller (off by default: the LWS tests play it)
#   --kueue: also Kueue's controller manager (hack/kueue/build.sh), its CRDs and webhooks (loopback
#           TLS), configured for karta's catalog by `python -m karta.kueue.config --native batch/job`
#           (needs karta installed: .venv); --kueue-config FILE: with this Configuration (JSON) instead
#           (both imply --controllers); its visibility API (queue positions) behind the API server's
#           aggregation layer, served on this machine's non-loopback address (KARTA_CLUSTER_HOST_ADDRESS
#           to choose it; without one, or =none: on 127.0.0.1 behind an ExternalName Service, the
#           aggregator routing to Services), its certificate in /visibility
# Logs: DIR/logs/<component>.log (DIR defaults to /tmp/karta-cluster-$UID; kwok.log, kuberay.log,
# raydash.log, training.log, kueue.log too); down.sh stops them all and keeps the logs.
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/controlplane.py" up "$@"
