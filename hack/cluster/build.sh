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
binaries=(kube-apiserver kube-controller-manager kube-scheduler etcd)

stamp=$( { cat go.mod go.sum cmd/etcd/main.go; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -d' ' -f1)

cached() {
  [ "${KARTA_CLUSTER_FORCE:-0}" != 1 ] || return 1
  [ "$(cat "$dest/build.stamp" 2>/dev/null)" = "$stamp" ] || return 1
  for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || return 1; done
}

if cached; then
  echo "$bin"
  exit 0
fi

mkdir -p "$dest"
# One build at a time per cache directory (pytest and a shell may both ask for it).
exec 9>"$dest/.lock"
flock 9
if cached; then
  echo "$bin"
  exit 0
fi

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

tmp="$dest/bin.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

echo "build.sh: building Kubernetes $k8s_version and etcd $etcd_version into $bin (first time: several minutes)" >&2
start=$(date +%s)
# -p and GOMAXPROCS bound the parallel compiles to the machine's two cores; nice keeps the
# machine usable for whatever else runs. CGO is off: static binaries, no C toolchain needed.
export GOMAXPROCS="${GOMAXPROCS:-2}"
export CGO_ENABLED=0
export GOFLAGS="-mod=readonly -buildvcs=false"
nice -n 10 go build -p "$GOMAXPROCS" -trimpath -ldflags="$ldflags" -o "$tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  ./cmd/etcd >&2

rm -rf "$bin"
mv "$tmp" "$bin"
trap - EXIT
printf '%s\n' "$stamp" > "$dest/build.stamp"
printf 'kubernetes=%s\netcd=%s\n' "$k8s_version" "$etcd_version" > "$dest/versions"
echo "build.sh: built in $(( $(date +%s) - start ))s" >&2
echo "$bin"
