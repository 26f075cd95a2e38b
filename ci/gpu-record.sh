#!/usr/bin/env bash
# Clean re-runs of a lent GPU as test data (tests/data/gpu-<model>/), with
# nvidia-smi's power beside each burn-in. Run it inside the GPU bundle:
#   bash .gpubundle/run.sh 'bash ci/gpu-record.sh'
# Writes under $OUT:
#   kernels.jsonl        KRUNS `run --suite kernels` runs (store export: each
#                        run's context with its configuration record, then its
#                        samples), GAP seconds apart
#   burnin.jsonl         BRUNS `burnin --duration 30s` runs, the same way
#   power-burnin-N.csv   nvidia-smi every 200 ms during burn-in N (columns:
#                        timestamp, W, SM MHz, °C)
#   record.log           what ran, when, and each command's exit status
# Settings (environment): FP (the CUDA build's fleetprint), KRUNS (8), BRUNS (2),
# GAP (10 s), FP_KERNELS_ARGS (options added to every kernels run).
# Exit: 0 when every run passed, else 1 (what ran is still written).
set -u
fp=${FP:-build-gpu/fleetprint} out=${OUT:-.}
kruns=${KRUNS:-8} bruns=${BRUNS:-2} gap=${GAP:-10}
read -ra extra <<<"${FP_KERNELS_ARGS:-}"
store=$(mktemp -d /tmp/fp_record.XXXX)/runs.h5
log=$out/record.log
rc=0
step() {  # step NAME CMD...: run it, log its exit status and seconds
  local name=$1 s r=0; shift
  s=$(date +%s%N)
  "$@" >>"$log" 2>&1 || r=$?
  [ "$r" = 0 ] || rc=1
  echo "$(date -u +%T) $name: rc $r, $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$log"
}
smi() {  # exec: the background job's pid is nvidia-smi's own, so that kill ends it
  exec nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu \
    --format=csv,noheader,nounits -lms 200; }
{ date -u; "$fp" version
  nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version|Power Limit"; } >"$log" 2>&1
for i in $(seq 1 "$kruns"); do
  [ "$i" = 1 ] || sleep "$gap"
  step "kernels $i" "$fp" run --device cuda --suite kernels "${extra[@]}" --tag kernels \
    --store "$store" -q
done
for i in $(seq 1 "$bruns"); do
  sleep "$gap"
  smi >"$out/power-burnin-$i.csv" 2>/dev/null & pid=$!
  step "burnin $i" "$fp" burnin --device cuda --duration 30s --tag burnin --store "$store" -q
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
done
step "export kernels" "$fp" store export all --tag kernels --store "$store" -o "$out/kernels.jsonl"
step "export burnin" "$fp" store export all --tag burnin --store "$store" -o "$out/burnin.jsonl"
rm -rf "$(dirname "$store")"
exit "$rc"
