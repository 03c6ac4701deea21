#!/usr/bin/env bash
# Gangs per replica: a LeaderWorkerSet of 3 groups x 4 pods, gang-scheduled by kube-scheduler 1.37
# through karta-controller, one gang per group (the catalog's LWS definition, format extension E1
# `podGroup.split`). On Nodes with room for 9 pods, exactly 2 groups bind and the third waits whole;
# with room for 3 more, the third binds.
#
# Needs what hack/demo/gang-scheduling.sh needs: the test cluster with its controllers
# (eval "$(bash hack/cluster/up.sh --controllers)"), karta-controller running against it with
# --backend workload-api --enable-webhook --register-webhooks --webhook-url https://127.0.0.1:9443
# (docs/tasks/gang-schedule.md), kubectl. The namespace is labelled karta.run.ai/gang-scheduling=enabled
# (the default --gang-scope opt-in manages only such namespaces). No LWS operator and no kubelet run
# in the test cluster (nor its StatefulSet controller): the script creates the LWS's StatefulSets and
# pods the way LWS and its pod webhook would (labels group-index, worker-index, group-key; owner
# references), and Nodes are plain objects ("bound" = spec.nodeName set).
# Cleans up after itself (namespace demo-replicas, its Nodes); --keep leaves them for a look.
set -euo pipefail
cd "$(dirname "$0")/../.."
ns=demo-replicas
corpus=../shared/corpus
keep=${1:-}
lws=serve
lbl=leaderworkerset.sigs.k8s.io
command -v kubectl >/dev/null || { echo "per-replica-gangs.sh needs kubectl on PATH" >&2; exit 1; }
[ -n "${KUBECONFIG:-}" ] || { echo 'set KUBECONFIG first: eval "$(bash hack/cluster/up.sh --controllers)"' >&2; exit 1; }

cleanup() {
  [ "$keep" = --keep ] && return
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  kubectl delete node demo-replicas-a demo-replicas-b demo-replicas-c >/dev/null 2>&1 || true
}
trap cleanup EXIT

# bound [GROUP]: how many pods (of one group) have a Node
bound() {
  kubectl -n "$ns" get pods ${1:+-l "$lbl/group-index=$1"} \
    -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true
}
groups() { for g in 0 1 2; do printf '  group %s: %s/4' "$g" "$(bound "$g")"; done; echo; }
podgroups() {
  kubectl -n "$ns" get podgroups.scheduling.k8s.io \
    -o custom-columns='PODGROUP:.metadata.name,TEMPLATE:.spec.workloadRef.templateName,MINCOUNT:.spec.schedulingPolicy.gang.minCount'
}
show() {
  podgroups
  kubectl -n "$ns" get pods --sort-by=.metadata.name \
    -o custom-columns="POD:.metadata.name,GROUP:.metadata.labels.leaderworkerset\.sigs\.k8s\.io/group-index,PODGROUP:.spec.schedulingGroup.podGroupName,NODE:.spec.nodeName"
}
node() {  # node NAME CPUS: a Ready Node with room for CPUS one-CPU pods
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {demo: replicas}}
YAML
  kubectl patch node "$1" --subresource=status --type=merge -p "{\"status\": {
    \"capacity\": {\"cpu\": \"$2\", \"memory\": \"16Gi\", \"pods\": \"110\"},
    \"allocatable\": {\"cpu\": \"$2\", \"memory\": \"16Gi\", \"pods\": \"110\"},
    \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"reason\": \"KubeletReady\"}]}}" >/dev/null
}
owner() {  # owner APIVERSION KIND NAME RESOURCE: the controller reference LWS sets
  echo "[{apiVersion: $1, kind: $2, name: $3, controller: true, blockOwnerDeletion: true,
    uid: $(kubectl -n "$ns" get "$4" "$3" -o jsonpath='{.metadata.uid}')}]"
}
statefulset() {  # statefulset NAME OWNER REPLICAS START SELECTOR: as LWS builds it
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $1, labels: $5, ownerReferences: $2}
spec:
  replicas: $3
  ordinals: {start: $4}
  serviceName: $lws
  podManagementPolicy: Parallel
  selector: {matchLabels: $5}
  template:
    metadata: {labels: $5}
    spec: {nodeSelector: {demo: replicas}, containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]}
YAML
}
pod() {  # pod NAME GROUP WORKER ORDINAL OWNER: as the StatefulSet and LWS's pod webhook make it
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels:
    $lbl/name: $lws
    $lbl/group-index: "$2"
    $lbl/worker-index: "$3"
    $lbl/group-key: k$2
    statefulset.kubernetes.io/pod-name: $1
    apps.kubernetes.io/pod-index: "$4"
  annotations: {$lbl/size: "4"}
  ownerReferences: $5
spec:
  hostname: $1
  subdomain: $lws
  nodeSelector: {demo: replicas}
  containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
}

echo "== the LeaderWorkerSet CRD (from $corpus/crds), namespace $ns opted in to gang scheduling"
kubectl apply --server-side -f "$corpus/crds/leaderworkerset.x-k8s.io_leaderworkersets.yaml" >/dev/null
until kubectl get leaderworkersets -A >/dev/null 2>&1; do sleep 0.5; done
kubectl create namespace "$ns" >/dev/null
kubectl label namespace "$ns" karta.run.ai/gang-scheduling=enabled >/dev/null

echo "== LeaderWorkerSet $lws: 3 groups (replicas) of 4 pods (size), 1 CPU each"
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: $lws}
spec:
  replicas: 3
  leaderWorkerTemplate:
    size: 4
    workerTemplate:
      spec: {nodeSelector: {demo: replicas}, containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]}
YAML
for _ in $(seq 120); do [ "$(kubectl -n "$ns" get podgroups.scheduling.k8s.io -o name | grep -c .)" = 3 ] && break; sleep 0.5; done
echo "karta-controller wrote one PodGroup per group, before any pod exists:"
podgroups

echo "== its StatefulSets and pods, as LWS creates them (leaders, then each group's workers)"
statefulset "$lws" "$(owner leaderworkerset.x-k8s.io/v1 LeaderWorkerSet "$lws" leaderworkersets.leaderworkerset.x-k8s.io)" 3 0 "{$lbl/name: $lws, $lbl/worker-index: \"0\"}"
for g in 0 1 2; do
  pod "$lws-$g" "$g" 0 "$g" "$(owner apps/v1 StatefulSet "$lws" statefulsets.apps)"
  statefulset "$lws-$g" "$(owner v1 Pod "$lws-$g" pods)" 3 1 "{$lbl/name: $lws, $lbl/group-index: \"$g\", $lbl/group-key: k$g}"
  for w in 1 2 3; do pod "$lws-$g-$w" "$g" "$w" "$w" "$(owner apps/v1 StatefulSet "$lws-$g" statefulsets.apps)"; done
done

echo "== two Nodes with room for 9 pods (5 + 4): 2 groups fit, the third does not"
node demo-replicas-a 5
node demo-replicas-b 4
sleep 15
echo "after 15 s: $(bound) of 12 pods bound;$(groups)"
echo "(each group is all or nothing: no pod of the waiting group holds a CPU it cannot use)"
show

echo "== a third Node with room for 3 more: the waiting group fits (1 + 3 = 4)"
node demo-replicas-c 3
for _ in $(seq 120); do [ "$(bound)" = 12 ] && break; sleep 0.5; done
echo "$(bound) of 12 pods bound;$(groups)"
show
[ "$(bound)" = 12 ]
