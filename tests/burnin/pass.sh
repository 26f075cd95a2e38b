#!/bin/bash
# Must show 1: 4 ranks, --duration 20s --interval 2s: a throughput timeline
# per rank, zero mismatches, exit 0.
. "$FP_TESTS/burnin/common.sh"
expect_rc 0 burnin 4 --duration 20s --interval 2s --json "$WORK/out.json"
expect_out "burn-in throughput timeline"
expect_out "burn-in: pass"
check "
g = series('gflops')
assert sorted(g) == ['gpu:n%d/0' % r for r in range(4)], g.keys()
for ent, row in g.items():
    assert sorted(row) == list(range(10)), (ent, sorted(row))
    assert all(v > 0 for v in row.values()), (ent, row)
for m in ('self_mismatch', 'peer_mismatch', 'nonfinite'):
    vals = [v for row in series(m).values() for v in row.values()]
    assert len(vals) == 40 and all(v == 0 for v in vals), (m, vals)
# the device's busy share of every window: a fraction (timed GEMM regions lie inside it)
duty = [v for row in series('duty_cycle').values() for v in row.values()]
assert len(duty) == 40 and all(0 < v <= 1 for v in duty), duty
mem = [s['value'] for s in S if s['test'] == 'memtest' and s['metric'] == 'errors']
assert len(mem) == 16 and all(v == 0 for v in mem), mem
assert b['verdict'] == 'pass' and b['windows'] == 10 and not b['interrupted'], b
assert d['run']['status'] == 'complete'
assert not b['sdc_suspects'] and not b['degraded']
print('timeline per rank:', {e: [round(row[i], 1) for i in range(10)] for e, row in g.items()})
"
