#!/usr/bin/env bash
# Builds the pinned Kueue controller manager (sigs.k8s.io/kueue/cmd/kueue, version in go.mod) into the
# cluster cache and prints its bin directory on stdout (last line); a no-op while the binary and its
# build stamp match. Cold build: about 10 minutes on 2 cores; warm: well under a second.
# Environment: KARTA_CLUSTER_CACHE (default $HOME/.cache/karta-cluster), KARTA_KUEUE_FORCE=1.
set -euo pipefail
# shellcheck source=../lib/gobuild.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/gobuild.sh"
go_build_pinned_tool kueue sigs.k8s.io/kueue
