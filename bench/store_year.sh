#!/bin/bash
# A year of nightly runs: DAYS runs (default 365) of NODES x GPUS entities x
# METRICS metrics (default 1250 x 8 x 10: 10,000 GPUs, 100,000 samples a run),
# each ingested as its own commit (one partition a night), then times
#   - store ls (the manifest's catalog only),
#   - baseline build --last 30 (reads the 30 newest partitions, no others),
#   - the baseline load for the 10,000 entities and a lookup of every
#     (metric, entity) (fp_bench_store_load).
#   store_year.sh [DAYS NODES GPUS METRICS]
# Binaries come from FLEETPRINT, GEN, LOADER or the build dir FP_BUILD.
set -euo pipefail
DAYS=${1:-365} NODES=${2:-1250} GPUS=${3:-8} METRICS=${4:-10}
B=${FP_BUILD:-$(cd "$(dirname "$0")/../build" && pwd)}
F=${FLEETPRINT:-$B/fleetprint}
GEN=${GEN:-$B/tests/fp_gen_jsonl}
LOADER=${LOADER:-$B/bench/fp_bench_store_load}
W=$(mktemp -d /tmp/fp_store_year.XXXXXX)
trap 'rm -rf "$W"' EXIT
ms() { echo $(( $(date +%s%N) / 1000000 )); }
t0=$(ms)
for d in $(seq 1 "$DAYS"); do
    "$GEN" --runs 1 --nodes "$NODES" --gpus "$GPUS" --metrics "$METRICS" --iters 1 --seed "$d" \
        --prefix "night$d" --time $((1700000000 + d * 86400)) > "$W/in.jsonl"
    "$F" store ingest "$W/in.jsonl" --store "$W/s.h5" 2> "$W/err" || { cat "$W/err"; exit 1; }
done
rm -f "$W/in.jsonl"
echo "store: $DAYS runs x $((NODES * GPUS * METRICS)) samples, $(ls "$W/s.h5.d" | wc -l) partitions," \
     "$(du -sb "$W/s.h5" "$W/s.h5.d" | awk '{ s += $1 } END { printf "%.0f MB", s / 1e6 }')" \
     "(manifest $(stat -c %s "$W/s.h5") bytes), built in $(( ($(ms) - t0) / 1000 )) s"
t0=$(ms)
n=$("$F" store ls --store "$W/s.h5" | wc -l)
echo "store ls: $((n - 1)) runs in $(( $(ms) - t0 )) ms"
t0=$(ms)
"$F" baseline build --store "$W/s.h5" --last 30 2> "$W/err" || { cat "$W/err"; exit 1; }
echo "baseline build --last 30: $(( $(ms) - t0 )) ms ($(tail -1 "$W/err" | sed 's/^fleetprint: //'))"
"$LOADER" "$W/s.h5" "$NODES" "$GPUS" "$METRICS"
