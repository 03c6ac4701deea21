#!/usr/bin/env bash
# Builds the pinned kubectl (k8s.io/kubectl in go.mod) into the cluster cache and prints its bin
# directory on stdout (last line); a no-op while the binary and its build stamp match.
# Environment: KARTA_CLUSTER_CACHE (default $HOME/.cache/karta-cluster), KARTA_KUBECTL_FORCE=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

command -v go >/dev/null || { echo "hack/kubectl/build.sh: go is not on PATH" >&2; exit 2; }

lib_version=$(sed -nE 's#^[[:space:]]*(require[[:space:]]+)?k8s\.io/kubectl[[:space:]]+(v[^[:space:]]+).*#\2#p' go.mod | head -n1)
[ -n "$lib_version" ] || { echo "hack/kubectl/build.sh: cannot read the k8s.io/kubectl version from go.mod" >&2; exit 2; }
version="v1.${lib_version#v0.}" # k8s.io/kubectl v0.37.2 is Kubernetes v1.37.2

dest="${KARTA_CLUSTER_CACHE:-$HOME/.cache/karta-cluster}/kubectl-$version"
stamp=$( { cat go.mod go.sum cmd/kubectl/main.go; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -d' ' -f1)
minor=${version#v1.}
minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# shellcheck source=../lib/gobuild.sh
. "$here/../lib/gobuild.sh"
go_build_cached "hack/kubectl/build.sh: kubectl $version" "$dest" "$stamp" "${KARTA_KUBECTL_FORCE:-0}" "$ldflags" \
  ./cmd/kubectl
echo "$dest/bin"
