#!/bin/bash
# The kernels suite on emulated GPUs, 2 ranks on one node (fused p2p needs
# one node): kernels.sh COMM. With --comm mpi this is issue 12's failure 3
# (device pointers handed to an MPI that is not CUDA-aware: SIGSEGV).
. "$FP_TESTS/emu/common.sh"
comm=$1
export FP_RANKS_PER_NODE=2
expect_rc 0 emu 2 "$comm" run --suite kernels "${SMALL[@]}" --array-size 256K --gemm-size 64 \
  --fused-m 64 --fused-nk 64,64 --chunks 1,2 --json "$WORK/out.json"
no_crash
py - "$WORK/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
got = {(s['test'], s['metric']) for s in d['samples']}
for want in [('membw', 'triad_bw'), ('gemm', 'f64_flops'), ('gemm', 'bf16_flops'), ('gemm', 'fp8_flops'),
             ('launch', 'launch_us'), ('copy', 'd2d_bw'), ('fused', 'rs_p2p_fused_time')]:
    assert want in got, (want, sorted(got))
wrong = [s for s in d['samples'] if 'wrong' in s['metric'] and s['value'] != 0]
assert not wrong, wrong[:3]
print('emu kernels: %d samples, all verified' % len(d['samples']))
PY
