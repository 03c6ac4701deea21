#!/usr/bin/env bash
# Stops the control plane that up.sh started and removes its work directory (--dir DIR if
# up.sh was given one).
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/controlplane.py" down "$@"
