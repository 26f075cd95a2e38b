#!/bin/bash
# Preflight on emulated GPUs: preflight.sh NRANKS COMM exits 0 (go).
. "$FP_TESTS/emu/common.sh"
np=$1 comm=$2
expect_rc 0 emu "$np" "$comm" preflight -t membw -t allreduce -t alltoall -t links -n 2 -w 1 \
  -b 4K -e 16K --array-size 256K --timeout 30s --json "$WORK/v.json"
no_crash
