#!/usr/bin/env bash
# Kueue for a kind Kueue has never heard of: two runs of a made-up CRD (example.com/v1 TrainingRun,
# described only by a cluster Karta: tests/definitions/example-com-trainingrun-v1.yaml) of 8 GPUs
# each, on a ClusterQueue of 8 GPUs. karta-controller --kueue suspends both at creation, creates
# their Kueue Workloads, starts the first when Kueue admits it (the flavor's node labels written as
# the trainer's required node affinity, through the definition's write-back paths) and keeps the
# second paused and pending; deleting the first gets the second admitted and started.
#
# Needs: the test cluster with Kueue (eval "$(bash hack/cluster/up.sh --kueue)"), karta-controller
# running against it with --kueue --enable-webhook --register-webhooks --webhook-url
# https://127.0.0.1:9443 (docs/tasks/kueue.md), kubectl, and karta installed
# in .venv (kli). No operator runs the made-up kind: "started" means unpaused, with the node
# affinity written. Cleans up after itself (the runs, the queues, the Karta, the CRD); --keep
# leaves them for a look.
set -euo pipefail
cd "$(dirname "$0")/../.."
keep=${1:-}
kli=.venv/bin/kli
command -v kubectl >/dev/null || { echo "kueue.sh needs kubectl on PATH" >&2; exit 1; }
[ -n "${KUBECONFIG:-}" ] || { echo 'set KUBECONFIG first: eval "$(bash hack/cluster/up.sh --kueue)"' >&2; exit 1; }
[ -x "$kli" ] || { echo "kueue.sh needs karta in .venv (docs/getting-started/offline.md)" >&2; exit 1; }

cleanup() {
  [ "$keep" = --keep ] && return
  kubectl delete trainingruns.example.com --all -n default --wait=false >/dev/null 2>&1 || true
  kubectl delete localqueue team -n default >/dev/null 2>&1 || true
  kubectl delete clusterqueue gpus >/dev/null 2>&1 || true
  kubectl delete resourceflavor gpu >/dev/null 2>&1 || true
  kubectl delete karta example-com-trainingrun-v1 >/dev/null 2>&1 || true
}
trap cleanup EXIT

say() { printf '\n== %s\n' "$*"; }
wait_for() {  # wait_for WHAT COMMAND...: until COMMAND succeeds, at most 60 s
  local what=$1; shift
  for _ in $(seq 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting for $what" >&2; exit 1
}
paused() { [ "$(kubectl get trainingrun "$1" -n default -o jsonpath='{.spec.paused}')" = "$2" ]; }

say "the CRD (a kind Kueue has no integration for), karta's Karta CRD and the cluster Karta"
kubectl apply -f - <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trainingruns.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: TrainingRun, plural: trainingruns, singular: trainingrun, listKind: TrainingRunList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
YAML
"$kli" crd | kubectl apply -f -
kubectl wait --for condition=Established crd/trainingruns.example.com crd/kartas.run.ai --timeout=60s >/dev/null
kubectl apply -f tests/definitions/example-com-trainingrun-v1.yaml
managed() {
  [ "$(kubectl get karta example-com-trainingrun-v1 -o jsonpath='{.status.conditions[?(@.type=="KueueManaged")].status}')" = True ]
}
wait_for "the Karta's KueueManaged condition (is karta-controller --kueue running?)" managed
kubectl get karta example-com-trainingrun-v1 -o jsonpath='{.status.conditions[?(@.type=="KueueManaged")].message}{"\n"}'

say "a ResourceFlavor, a ClusterQueue of 8 GPUs and the LocalQueue team"
kubectl apply -f - <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
spec: {nodeLabels: {example.com/gpu-pool: a100}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: gpus}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: memory, nominalQuota: 256Gi}
      - {name: nvidia.com/gpu, nominalQuota: "8"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team, namespace: default}
spec: {clusterQueue: gpus}
YAML

run() {  # run NAME: a TrainingRun of 2 trainers x 4 GPUs on the queue team, created unpaused
  kubectl apply -f - <<YAML
apiVersion: example.com/v1
kind: TrainingRun
metadata:
  name: $1
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: team}
spec:
  paused: false
  trainer:
    replicas: 2
    containers:
    - name: train
      image: busybox
      resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "4"}, limits: {nvidia.com/gpu: "4"}}
  launcher:
    podSpec:
      containers: [{name: launch, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}

say "two runs of 8 GPUs each, created unpaused: karta's webhook pauses both, Kueue admits one"
run first
wait_for "the first run to start" paused first false
run second
queued() { "$kli" get trainingruns -n default -o jsonpath='{.items[*].queue.state}' | grep -q Pending; }
wait_for "the second run to be pending" queued
"$kli" get trainingruns -n default
"$kli" describe trainingrun second -n default | grep '^Queue:'
echo "first: paused=$(kubectl get trainingrun first -n default -o jsonpath='{.spec.paused}'), node affinity: $(kubectl get trainingrun first -n default -o jsonpath='{.spec.trainer.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]}')"
echo "second: paused=$(kubectl get trainingrun second -n default -o jsonpath='{.spec.paused}')"

say "the first run deleted: Kueue admits the second, karta starts it"
kubectl delete trainingrun first -n default
wait_for "the second run to start" paused second false
"$kli" get trainingruns -n default
"$kli" describe trainingrun second -n default | grep '^Queue:'
say "done: two runs of a kind Kueue never heard of shared 8 GPUs, one after the other"
