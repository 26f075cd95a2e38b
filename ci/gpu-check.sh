#!/usr/bin/env bash
# The gpu-labelled tests on a lent GPU machine, one at a time, most telling
# first, each with its own limit, so that a device call cut short still brings
# back what ran. Run it inside the bundle (../shared/gpu/bundle.sh):
#   bash .gpubundle/run.sh 'bash ci/gpu-check.sh'
# Writes $OUT/gpu-summary.txt (a line per test: exit code, seconds) and
# $OUT/gpu-log.txt (the GPU, then each test's verbose output).
# Rebuild the bundle after changing any file: run.sh unpacks the checkout as
# it was bundled, over the copy the device tool brought.
set -u
build=${1:-build-gpu}
log=$OUT/gpu-log.txt sum=$OUT/gpu-summary.txt
{ nvidia-smi; nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version|Power Limit"; } >"$log" 2>&1
for t in membw_cuda:60 preflight:130 burnin_cuda:130 power:70 fused_cuda:80 suite_all:150 \
         sanitizer:200 trace_torch:60 burnin_bitflip:60 burnin:80; do
  name=gpu_${t%%:*} limit=${t##*:} s=$(date +%s)
  echo "===== $name (limit $limit s)" >>"$log"
  ctest --test-dir "$build" -R "^$name\$" -V --timeout "$limit" >>"$log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s" >>"$sum"
done
cat "$sum"
