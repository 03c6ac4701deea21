#!/usr/bin/env bash
# Builds the pinned sigs.k8s.io/kwok (version in go.mod) into the cluster cache and prints its bin directory on
# stdout (last line); a no-op while the binary and its build stamp match.
# Environment: KARTA_CLUSTER_CACHE (default $HOME/.cache/karta-cluster), KARTA_KWOK_FORCE=1.
set -euo pipefail
# shellcheck source=../lib/gobuild.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/gobuild.sh"
go_build_pinned_tool kwok sigs.k8s.io/kwok
