#!/bin/bash
# The store's benchmark: ingest RUNS runs of NODES x GPUS entities x METRICS
# metrics (1 iteration) from JSON Lines, build baselines over them, load the
# baselines and look every entity up. Prints samples/s, seconds and bytes per
# stored sample, all measured in this run.
#   store_bench.sh [NODES GPUS METRICS RUNS]   (default 1250 8 100 5: 1M samples a run)
# Binaries come from FLEETPRINT, GEN, LOADER or the build dir FP_BUILD.
# --smoke (first argument) runs a small size and checks only correctness.
set -euo pipefail
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; set -- 40 4 10 3; fi
NODES=${1:-1250} GPUS=${2:-8} METRICS=${3:-100} RUNS=${4:-5}
B=${FP_BUILD:-$(cd "$(dirname "$0")/../build" && pwd)}
F=${FLEETPRINT:-$B/fleetprint}
GEN=${GEN:-$B/tests/fp_gen_jsonl}
LOADER=${LOADER:-$B/bench/fp_bench_store_load}
W=$(mktemp -d /tmp/fp_store_bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
per_run=$((NODES * GPUS * METRICS))
ms() { echo $(( $(date +%s%N) / 1000000 )); }
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / (t / 1000) }'; }
echo "store bench: $RUNS runs x $per_run samples ($((NODES * GPUS)) entities x $METRICS metrics)"
best=0 total_ms=0 total_cpu_ms=0
for r in $(seq 1 "$RUNS"); do
    "$GEN" --runs 1 --nodes "$NODES" --gpus "$GPUS" --metrics "$METRICS" --iters 1 \
        --seed "$r" --prefix "bench$r" --time $((1700000000 + r * 86400)) > "$W/in.jsonl"
    bytes=$(stat -c %s "$W/in.jsonl")
    t0=$(ms)
    # bash's time keyword: user and system CPU seconds of the ingest
    { TIMEFORMAT="%U %S"; time "$F" store ingest "$W/in.jsonl" --store "$W/s.h5" 2> "$W/err"; } 2> "$W/cpu" ||
        { cat "$W/err"; exit 1; }
    dt=$(( $(ms) - t0 ))
    cpu_ms=$(awk '{ printf "%d", ($1 + $2) * 1000 + 1 }' "$W/cpu")
    total_cpu_ms=$((total_cpu_ms + cpu_ms))
    total_ms=$((total_ms + dt))
    r_s=$(rate "$per_run" "$dt")
    [ "$r_s" -gt "$best" ] && best=$r_s
    echo "  ingest run $r: $per_run samples ($((bytes / 1048576)) MiB JSONL) in ${dt} ms: $r_s samples/s" \
         "(CPU ${cpu_ms} ms: $(rate "$per_run" "$cpu_ms") samples per CPU second)"
    if [ "$r" = 1 ]; then
        size1=$(du -sb "$W/s.h5" "$W/s.h5.d" | awk '{ s += $1 } END { print s }')
        echo "  bytes per stored sample (one run in the file): $(awk -v a="$size1" -v n="$per_run" 'BEGIN { printf "%.2f", a / n }')"
    fi
    rm -f "$W/in.jsonl"
done
size=$(du -sb "$W/s.h5" "$W/s.h5.d" | awk '{ s += $1 } END { print s }')
bps=$(awk -v a="$size" -v n=$((per_run * RUNS)) 'BEGIN { printf "%.2f", a / n }')
echo "ingest: mean $(rate $((per_run * RUNS)) "$total_ms") samples/s, best $best samples/s;" \
     "$(rate $((per_run * RUNS)) "$total_cpu_ms") samples per CPU second (user + sys)"
echo "store: $size bytes for $((per_run * RUNS)) samples: $bps bytes per stored sample"
t0=$(ms)
"$F" baseline build --store "$W/s.h5" 2> "$W/err" || { cat "$W/err"; exit 1; }
echo "baseline build over $RUNS runs: $(( $(ms) - t0 )) ms ($(tail -1 "$W/err" | sed 's/^fleetprint: //'))"
"$LOADER" "$W/s.h5" "$NODES" "$GPUS" "$METRICS"
if [ "$smoke" = 1 ]; then
    n=$("$F" store ls --store "$W/s.h5" | awk 'NR > 1 { s += $7 } END { print s }')
    [ "$n" = $((per_run * RUNS)) ] || { echo "FAIL: store holds $n samples"; exit 1; }
    echo "store bench smoke: correct"
fi
