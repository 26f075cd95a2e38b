#!/bin/bash
# Must show 3: --inject slow:rank=1,factor=2,after=5s: rank 1 is flagged as
# degraded over time; the others are not.
. "$FP_TESTS/burnin/common.sh"
expect_rc 1 burnin 4 --duration 15s --interval 1s --memory-fraction 0 \
  --inject slow:rank=1,factor=2,after=5s --json "$WORK/out.json"
expect_out "DEGRADED"
check "
assert b['degraded'] == [1], b['degraded']
r = {v['rank']: v for v in b['ranks']}
d1 = r[1]['degradation']
assert d1['degraded'] and d1['relative_late_early'] < 0.75, d1
for k in (0, 2, 3):
    assert not r[k]['degradation']['degraded'] and r[k]['verdict'] == 'pass', r[k]
assert not b['sdc_suspects']
print('rank 1 late/early', round(d1['late_early_ratio'], 2), 'against peers', round(d1['relative_late_early'], 2))
"
