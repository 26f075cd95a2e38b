#!/bin/bash
# Burn-in on emulated GPUs: burnin.sh COMM. A clean run passes; a bitflip
# injected in the first window fails the run naming the rank (issue 12's
# failure 6: the corrupted first window became the reference and the run
# passed).
. "$FP_TESTS/emu/common.sh"
comm=$1
B=(burnin --threads 1 --gemm-size 32 --memory-fraction 0.01 --interval 1s --timeout 30s)
expect_rc 0 emu 2 "$comm" "${B[@]}" --duration 3s
no_crash
expect_rc 1 emu 1 "$comm" "${B[@]}" --duration 3s --inject bitflip:rank=0,at=0.5s --json "$WORK/out.json"
no_crash
py - "$WORK/out.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))['burnin']
r = {v['rank']: v for v in b['ranks']}
assert r[0]['verdict'] == 'fail' and r[0]['self_mismatch'] > 0, r[0]
print('emu burn-in bitflip: rank 0 fails, first bad window', r[0].get('first_bad_interval'))
PY
