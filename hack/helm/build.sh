#!/usr/bin/env bash
# Builds the pinned Helm release (helm.sh/helm/v4 at the version go.mod requires) from Go modules
# into the same cache as the control plane (hack/cluster/build.sh), keyed by the Helm version, and
# prints that bin directory on stdout (last line). A second run is a fast no-op while the binary
# and the build stamp (hash of go.mod, go.sum and the Go version) are present and match.
#
# Environment:
#   KARTA_CLUSTER_CACHE  cache root (default: $HOME/.cache/karta-cluster)
#   KARTA_HELM_FORCE     set to 1 to rebuild even when cached
#   GOMAXPROCS           build parallelism (default: 2, the machine's core count)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

command -v go >/dev/null || { echo "hack/helm/build.sh: go is not on PATH" >&2; exit 2; }

helm_version=$(sed -nE 's#^[[:space:]]*(require[[:space:]]+)?helm\.sh/helm/v4[[:space:]]+(v[^[:space:]]+).*#\2#p' go.mod | head -n1)
[ -n "$helm_version" ] || { echo "hack/helm/build.sh: cannot read the helm.sh/helm/v4 version from go.mod" >&2; exit 2; }

dest="${KARTA_CLUSTER_CACHE:-$HOME/.cache/karta-cluster}/helm-$helm_version"
stamp=$( { cat go.mod go.sum; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -d' ' -f1)
# `helm version` reports the release (its Makefile sets the same variables).
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version"
ldflags+=" -X helm.sh/helm/v4/internal/version.gitTreeState=clean"

# shellcheck source=../lib/gobuild.sh
. "$here/../lib/gobuild.sh"
go_build_cached "hack/helm/build.sh: Helm $helm_version" "$dest" "$stamp" "${KARTA_HELM_FORCE:-0}" "$ldflags" \
  helm.sh/helm/v4/cmd/helm
echo "$dest/bin"
