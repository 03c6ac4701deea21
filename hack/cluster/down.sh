#!/usr/bin/env bash
# Stops the control plane that up.sh started and removes its work directory (--dir DIR if
# up.sh was given one). The components' logs are kept: moved to DIR-logs (by default
# /tmp/karta-cluster-$UID-logs, replacing the previous run's), or --logs PATH; --discard-logs
# removes them too.
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/controlplane.py" down "$@"
