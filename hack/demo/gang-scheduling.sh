#!/usr/bin/env bash
# A PyTorchJob from the shared corpus, gang-scheduled by kube-scheduler 1.37 through
# karta-controller: nothing binds while the gang cannot fit, everything binds once it can.
#
# Needs: the test cluster with its controllers (eval "$(bash hack/cluster/up.sh --controllers)"),
# karta-controller running against it with --backend workload-api --enable-webhook
# --register-webhooks --webhook-url https://127.0.0.1:9443 (docs/tasks/gang-schedule.md), kubectl.
# Gang scheduling is opt-in (--gang-scope opt-in, the default): the script labels its namespace
# karta.run.ai/gang-scheduling=enabled, so its workloads are in the scope and the pod webhook,
# registered for labelled namespaces only, is called for their pods.
# No training operator and no kubelet run in the test cluster: the script creates the job's pods
# the way the training operator would, and Nodes are plain objects ("bound" = spec.nodeName set).
# Cleans up after itself (namespace demo-gang, its Nodes); --keep leaves them for a look.
set -euo pipefail
cd "$(dirname "$0")/../.."
ns=demo-gang
corpus=../shared/corpus
keep=${1:-}
command -v kubectl >/dev/null || { echo "gang-scheduling.sh needs kubectl on PATH" >&2; exit 1; }
[ -n "${KUBECONFIG:-}" ] || { echo 'set KUBECONFIG first: eval "$(bash hack/cluster/up.sh --controllers)"' >&2; exit 1; }

cleanup() {
  [ "$keep" = --keep ] && return
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  kubectl delete node demo-gang-a demo-gang-b >/dev/null 2>&1 || true
}
trap cleanup EXIT

bound() { kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
node() {  # node NAME CPUS: a Ready Node with room for CPUS one-CPU pods
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {demo: gang}}
YAML
  kubectl patch node "$1" --subresource=status --type=merge -p "{\"status\": {
    \"capacity\": {\"cpu\": \"$2\", \"memory\": \"16Gi\", \"pods\": \"110\"},
    \"allocatable\": {\"cpu\": \"$2\", \"memory\": \"16Gi\", \"pods\": \"110\"},
    \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"reason\": \"KubeletReady\"}]}}" >/dev/null
}

echo "== the PyTorchJob CRD (from $corpus/crds) and namespace $ns, opted in to gang scheduling"
kubectl apply --server-side -f "$corpus/crds/kubeflow.org_pytorchjobs.yaml" >/dev/null
until kubectl get pytorchjobs -A >/dev/null 2>&1; do sleep 0.5; done
kubectl create namespace "$ns" >/dev/null
kubectl label namespace "$ns" karta.run.ai/gang-scheduling=enabled >/dev/null

echo "== a PyTorchJob: 1 master + 3 workers, 1 CPU each"
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  pytorchReplicaSpecs:
    Master: &replica
      replicas: 1
      template:
        spec:
          nodeSelector: {demo: gang}
          containers: [{name: pytorch, image: busybox, resources: {requests: {cpu: "1"}}}]
    Worker: {<<: *replica, replicas: 3}
YAML
uid=$(kubectl -n "$ns" get pytorchjob ddp -o jsonpath='{.metadata.uid}')

echo "== its pods, as the training operator creates them (labels, controller reference)"
for pod in master-0 worker-0 worker-1 worker-2; do
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: ddp-$pod
  labels:
    training.kubeflow.org/job-name: ddp
    training.kubeflow.org/replica-type: ${pod%-*}
    training.kubeflow.org/replica-index: "${pod#*-}"
  ownerReferences:
  - {apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: ddp, uid: $uid, controller: true}
spec:
  nodeSelector: {demo: gang}
  containers: [{name: pytorch, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
done
kubectl -n "$ns" get pods -o custom-columns='POD:.metadata.name,GANG:.spec.schedulingGroup.podGroupName'
echo "PodGroup ddp-pytorchjob: $(kubectl -n "$ns" get podgroups.scheduling.k8s.io ddp-pytorchjob -o jsonpath='{.spec.schedulingPolicy}')"

echo "== a Node with room for 3 of the 4 pods"
node demo-gang-a 3
sleep 15
echo "after 15 s: $(bound) of 4 pods bound (a gang is never placed partly)"

echo "== one more Node: room for the whole gang"
node demo-gang-b 1
for _ in $(seq 120); do [ "$(bound)" = 4 ] && break; sleep 0.5; done
echo "$(bound) of 4 pods bound"
kubectl -n "$ns" get pods -o custom-columns='POD:.metadata.name,NODE:.spec.nodeName'
[ "$(bound)" = 4 ]
