#!/bin/bash
# Failure 6 of issue 12: a bitflip that lands in the first window of a rank
# with no peers to outvote it. The reference is the untimed warm-up result,
# taken before any window, so the flipped first window differs from it.
. "$FP_TESTS/burnin/common.sh"
expect_rc 1 burnin 1 --duration 3s --interval 1s --memory-fraction 0 \
  --inject bitflip:rank=0,at=0s --json "$WORK/out.json"
expect_out "SDC SUSPECT \(first bad window 0\)"
check "
r = b['ranks'][0]
assert b['sdc_suspects'] == [0] and r['self_mismatch'] >= 3 and r['first_bad_interval'] == 0, r
assert all(v > 0 for v in series('self_mismatch')['gpu:n0/0'].values())
print('alone: flipped from window 0, self mismatches', r['self_mismatch'])
"
