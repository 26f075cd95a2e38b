#!/usr/bin/env bash
# The gpu-labelled tests on a lent GPU machine, one at a time, in the order
# tests/CMakeLists.txt lists them (most telling first) and each within its own
# TIMEOUT there, so that a device call cut short still brings back what ran.
# Run it inside the GPU bundle (docs/gpu.md):
#   bash .gpubundle/run.sh 'bash ci/gpu-check.sh'
# Writes $OUT/gpu-summary.txt (a line per test: passed, failed, skipped or
# timeout, and seconds) and $OUT/gpu-log.txt (the GPU, then each test's
# verbose output). Exit: 0 when none failed or timed out, else 1.
# Rebuild the bundle after changing any file: run.sh unpacks the checkout as
# it was bundled, over the copy the device tool brought.
set -u
build=${1:-build-gpu}
out=${OUT:-.}
log=$out/gpu-log.txt sum=$out/gpu-summary.txt
{ nvidia-smi; nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version|Power Limit"; } >"$log" 2>&1
names=$(ctest --test-dir "$build" -N -L gpu | sed -n 's/^ *Test *#[0-9]*: *//p')
[ -n "$names" ] || { echo "gpu-check: no gpu tests in $build (configured with a real CUDA?)" >&2; exit 2; }
: >"$sum"
for name in $names; do
  s=$(date +%s) one=$(mktemp)
  ctest --test-dir "$build" -R "^$name\$" -V >"$one" 2>&1
  # the test's result line ("1/1 Test #22: name ....   Passed   1.78 sec"), the
  # same in every CTest; the summary after it is worded differently by version
  case $(grep -E "Test +#[0-9]+: $name " "$one") in
    *Passed*) r=passed ;;
    *Skipped*) r=skipped ;;
    *Timeout*) r=timeout ;;
    *) r=failed ;;
  esac
  { echo "===== $name: $r"; cat "$one"; } >>"$log"
  rm -f "$one"
  echo "$name $r $(( $(date +%s) - s )) s" >>"$sum"
done
cat "$sum"
! grep -qE " (failed|timeout) " "$sum"
