#!/bin/bash
# Must show 2: --inject bitflip:rank=2,at=5s: rank 2 (its node) is the
# silent-data-corruption suspect with its first bad interval; exit 1; the
# other ranks pass. The flipped bit is a low mantissa bit: a 1e-3 tolerance
# (gpu-burn, DCGM) would not see it, the bitwise checks do.
. "$FP_TESTS/burnin/common.sh"
expect_rc 1 burnin 4 --duration 10s --interval 1s $(inject bitflip:rank=2,at=5s) \
  --json "$WORK/out.json" --junit "$WORK/j.xml" --store "$WORK/s.h5"
expect_out "SDC SUSPECT \(first bad window [0-9]+\)"
check "
assert b['sdc_suspects'] == [2], b['sdc_suspects']
r = {v['rank']: v for v in b['ranks']}
bad = r[2]
assert bad['node'] == 'n2' and bad['verdict'] == 'fail', bad
# the first bad window is the one in which the injection's time (5 s) fell
fb = bad['first_bad_interval']
t = {s['iter']: s['t'] for s in S if s['metric'] == 'gflops' and s['entity'] == 'gpu:n2/0'}
assert t[fb] >= 5.0 and (fb == 0 or t[fb - 1] < 5.0 + 0.5), (fb, t)
# 5 s counts from the run's start: on a busy machine set-up can outlast it, and
# then the flip is in the first result, which self-checks compare against:
# only the peers can see it
assert bad['peer_mismatch'] > 0 and (fb == 0 or bad['self_mismatch'] > 0), bad
for k in (0, 1, 3):
    assert r[k]['verdict'] == 'pass' and not r[k]['sdc_suspect'] and r[k]['peer_mismatch'] == 0, r[k]
assert d['run']['status'] == 'failed' and 'bitflip:rank=2' in d['run']['injections']
print('suspect: rank 2 on', bad['node'], 'first bad window', fb)
"
# CI and the store see it too: one failing JUnit case (rank 2), the run stored as failed
xmllint --noout --schema "$FP_TESTS/junit.xsd" "$WORK/j.xml"
[ "$(grep -c '<failure' "$WORK/j.xml")" -eq 1 ] || fail "JUnit: expected exactly 1 failure"
grep -q 'name="rank 2 gpu:n2/0"' "$WORK/j.xml" || fail "JUnit: no case for rank 2"
expect_rc 0 "$FLEETPRINT" store ls --store "$WORK/s.h5"
expect_out " failed +4 +4 "
