#!/usr/bin/env bash
# Set up and run fleetprint's main job on this machine with the embedded
# defaults: host backend, 4 local ranks emulating nodes n0..n3, every suite.
# Extra arguments go to 'fleetprint run'.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec mpirun -np "${FP_RANKS:-4}" --oversubscribe tests/fpnode build/fleetprint run --suite all "$@"
