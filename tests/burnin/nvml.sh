#!/bin/bash
# Must show 5: a stand-in NVML (argument 1) exporting the entry points
# fleetprint loads: ECC, XID and throttle values of the faulty node's GPU
# flow into samples and verdicts. With no NVML at all, telemetry is waived
# with its reason and the run still passes.
. "$FP_TESTS/burnin/common.sh"
lib=$1
export FAKE_NVML_FAULTY_NODE=n1
FLEETPRINT_NVML=$lib expect_rc 1 burnin 3 --duration 4s --interval 1s --memory-fraction 0 \
  --json "$WORK/out.json"
expect_out "XID 79"
check "
r = {v['rank']: v for v in b['ranks']}
bad = r[1]
assert bad['verdict'] == 'fail' and bad['telemetry']['state'] == 'ok', bad
assert '$lib' in bad['telemetry']['source'], bad['telemetry']
why = ' | '.join(bad['reasons'])
assert 'ECC uncorrected errors +' in why and 'XID 79' in why, why
assert 'HwThermalSlowdown' in why and bad['telemetry']['clock_events'] == 'HwThermalSlowdown', why
tel = lambda m, e: [s['value'] for s in sorted(S, key=lambda s: s['iter'])
                    if s['test'] == 'telemetry' and s['metric'] == m and s['entity'] == e]
ecc = tel('ecc_uncorrected', 'gpu:n1/0')
assert len(ecc) >= 5 and ecc[0] == 0 and ecc[-1] > 0, ecc
assert tel('xid_events', 'gpu:n1/0')[-1] == 1 and tel('last_xid', 'gpu:n1/0')[-1] == 79
assert 64 in tel('clock_event_reasons', 'gpu:n1/0')
assert tel('pcie_gen', 'gpu:n0/0')[-1] == 5 and tel('nvlink_active', 'gpu:n0/0')[-1] == 18
for k in (0, 2):
    assert r[k]['verdict'] == 'pass' and max(tel('ecc_uncorrected', 'gpu:n%d/0' % k)) == 0, r[k]
# the sampler thread: every <= 100 ms, min/mean/max per window
for k in range(3):
    e = 'gpu:n%d/0' % k
    n, lo, mean, hi = (tel(m, e) for m in ('samples', 'power_min', 'power_mean', 'power_max'))
    assert len(n) == 4 and min(n) >= 3 and len(lo) == len(hi) == 4, (e, n, lo, hi)
    assert all(300 <= a <= m <= b <= 700 and a < b for a, m, b in zip(lo, mean, hi)), (lo, mean, hi)
    assert tel('sm_clock_mean', e) == [1980] * 4 and tel('temperature_max', e), e
print('rank 1:', why)
"
# no NVML at all: waived with the reason, never a crash, the run passes
FLEETPRINT_NVML=/nonexistent/libnvidia-ml.so.1 expect_rc 0 burnin 2 --duration 2s --interval 1s \
  --memory-fraction 0 --json "$WORK/out.json"
expect_out "telemetry waived: cannot load NVML"
check "
for v in b['ranks']:
    t = v['telemetry']
    assert t['state'] == 'waived' and 'cannot load NVML' in t['source'], t
    assert v['verdict'] == 'pass'
assert not [s for s in S if s['test'] == 'telemetry']
print('waived:', b['ranks'][0]['telemetry']['source'])
"
