#!/usr/bin/env bash
# Builds the pinned Kubernetes control plane (kube-apiserver, kube-controller-manager,
# kube-scheduler) and etcd from Go modules into a cache directory keyed by the Kubernetes
# version, and prints that bin directory on stdout (last line). A second run is a fast no-op
# while the binaries and the build stamp (hash of go.mod, go.sum, our wrappers and the Go
# version) are present and match.
#
# Environment:
#   KARTA_CLUSTER_CACHE  cache root (default: $HOME/.cache/karta-cluster)
#   KARTA_CLUSTER_FORCE  set to 1 to rebuild even when cached
#   GOMAXPROCS           build parallelism (default: 2, the machine's core count)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

command -v go >/dev/null || { echo "build.sh: go is not on PATH" >&2; exit 2; }

# Read the pinned versions from go.mod itself (the require lines are kept by `go mod tidy`).
pinned() { sed -nE "s#^[[:space:]]*(require[[:space:]]+)?$1[[:space:]]+(v[^[:space:]]+).*#\2#p" go.mod | head -n1; }
k8s_version=$(pinned k8s.io/kubernetes)
etcd_version=$(pinned go.etcd.io/etcd/server/v3)
[ -n "$k8s_version" ] && [ -n "$etcd_version" ] || { echo "build.sh: cannot read versions from go.mod" >&2; exit 2; }

cache_root="${KARTA_CLUSTER_CACHE:-$HOME/.cache/karta-cluster}"
dest="$cache_root/$k8s_version"
bin="$dest/bin"

stamp=$( { cat go.mod go.sum cmd/etcd/main.go; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -d' ' -f1)

minor=${k8s_version#v1.}
minor=${minor%%.*}
ver_pkg() { printf -- "-X %s.%s=%s " "$1" "$2" "$3"; }
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" $(ver_pkg "$pkg" gitVersion "$k8s_version")"
  ldflags+=" $(ver_pkg "$pkg" gitMajor 1)"
  ldflags+=" $(ver_pkg "$pkg" gitMinor "$minor")"
  ldflags+=" $(ver_pkg "$pkg" gitTreeState clean)"
  ldflags+=" $(ver_pkg "$pkg" buildDate 1970-01-01T00:00:00Z)"
done

# shellcheck source=../lib/gobuild.sh
. "$here/../lib/gobuild.sh"
go_build_cached "build.sh: Kubernetes $k8s_version and etcd $etcd_version" "$dest" "$stamp" \
  "${KARTA_CLUSTER_FORCE:-0}" "$ldflags" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  ./cmd/etcd
versions=$(printf 'kubernetes=%s\netcd=%s' "$k8s_version" "$etcd_version")
[ "$(cat "$dest/versions" 2>/dev/null)" = "$versions" ] || printf '%s\n' "$versions" > "$dest/versions"
echo "$bin"
