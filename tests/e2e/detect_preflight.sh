#!/usr/bin/env bash
# fleetprint preflight on 8 emulated nodes: healthy -> exit 0 with an empty
# drain file; a slow rank -> exit 1 naming its node; a slow link -> exit 1
# naming the link and neither end; the drain file holds exactly the failing
# nodes. The fault cases need the collectives suite (lateness and the link
# sweep); without it they are skipped with a note.
#
# On a busy 2-core machine (8 ranks share it with other load) a healthy rank
# can measure far off its peers, so:
# - the fault cases assert that the verdict names the injected fault and does
#   not blame what was not injected for it (the link's ends); a node failing
#   on its own, uninjected evidence is printed, not asserted;
# - the healthy case is statistical (no node may read > 60% off its peers on
#   shared cores): it passes on one clean preflight of up to 3, and says so;
# - a run is measured again when its clock offsets are too loose (clock_ok).
# 8 ranks, not 4: with 4 ranks sharing 2 cores one healthy rank can be the last
# to arrive in over half the collective calls, which fails it (issue 19's report).
. "$FP_TESTS/lib.sh"
cd "$WORK"
F=$FLEETPRINT

# preflight ARGS...: expect_rc-style run of preflight on 8 nodes, again while
# its clock offsets are too loose to compare ranks (at most 3 runs)
preflight() {
  local want=$1 i; shift
  for i in 1 2 3; do
    expect_rc "$want" mpi 8 "$F" preflight "$@"
    clock_ok "$WORK/out" 100 && return 0
  done
  fail "3 preflights in a row with clock offsets too loose to compare ranks"
}

for attempt in 1 2 3; do
  t0=$(date +%s)
  rc=0
  mpi 8 "$F" preflight --drain-file drain.txt --json v.json >"$WORK/out" 2>&1 || rc=$?
  t1=$(date +%s)
  echo "healthy preflight on 8 nodes: exit $rc in $((t1 - t0)) s"
  [ $rc = 0 ] && clock_ok "$WORK/out" 100 && break
  grep -E '^(FAIL|warn) ' "$WORK/out" || true
  [ $attempt -lt 3 ] || { cat "$WORK/out" >&2; fail "healthy preflight failed 3 times in a row"; }
  echo "attempt $attempt: not clean, measuring again (statistical on shared cores)"
done
# its time is printed, not asserted: the 60 s target holds on a quiet machine
# (12 s there); at load 50 on 2 cores it took 305 s. A hang ends at CTest's limit.
[ -f drain.txt ] && [ ! -s drain.txt ] || fail "healthy: drain file missing or not empty"
py -c "import json; v=json.load(open('v.json')); assert v['verdict'] in ('pass','warn'), v['verdict']; assert v['nodes']['fail']==0"

if grep -q "test 'links' is not in this build" "$WORK/out"; then
  echo "note: the collectives suite is not in this build: slow-rank and slow-link cases skipped"
  exit 0
fi

# drained: the failing nodes of v.json are exactly the drain file's
drained() { py - <<'PY'
import json
v = json.load(open('v.json'))
drain = open('drain.txt').read().split()
print("failing nodes:", v['failing_nodes'], "drain file:", drain)
assert sorted(drain) == sorted(v['failing_nodes']), (drain, v['failing_nodes'])
PY
}

preflight 1 $(inject slow:rank=5,factor=1.5) --drain-file drain.txt --junit j.xml --store s.h5 --json v.json \
  --html r.html
expect_out "failing node.*n5"
grep -q "1 of 8 nodes fails: n5 .* drained" r.html || fail "HTML: no summary naming the drained node"
drained
grep -qx n5 drain.txt || fail "drain file: '$(cat drain.txt)', lacks n5"
# CI reads the JUnit file; the run (verdict fail) joined the store as 'preflight'
xmllint --noout --schema "$FP_TESTS/junit.xsd" j.xml || fail "JUnit file is not XML"
grep -q '<testcase classname="fleetprint.detect.node" name="node:n5"[^/]*>' j.xml ||
  fail "JUnit has no failing test case for node:n5"
expect_rc 0 "$F" store ls --store s.h5
expect_out " preflight +failed? +8 +8 |preflight"
# the stored run recorded its shared cores: detect judges it as preflight did
# (its summary line says so, whether or not a row of the verdict is a timing)
expect_rc 1 "$F" detect --store s.h5 --no-baselines
expect_out "evidence; contended thresholds: [0-9]+ threads on [0-9]+ cores of host"

# the link sweep alone: the other tests judge nothing this case asserts
# (the whole test 30 s quiet, 35 s with them). A 16x link, not 4x: the
# detector fails a link when it lies z >= 3 (contended) log-spreads below its
# peers, and a 4x link (log 4 = 1.39) can reach that only while healthy links
# spread by less than 1.59x (log-spread 0.46). In a soak beside other 8-rank
# jobs the 4x link once only warned (on latency; its bandwidth row passed, the
# samples were not kept: a wider spread is the likeliest reading). 16x holds
# up to a 2.5x spread (0.92).
preflight 1 $(inject link:ranks=2-6,factor=16) --test links --drain-file drain.txt --json v.json
expect_out "FAIL link:n2~n6"
drained
py - <<'PY'
import json
v = json.load(open('v.json'))
bad = [e['entity'] for e in v['entities'] if e['verdict'] == 'fail']
assert 'link:n2~n6' in bad, bad
assert 'node:n2' not in bad and 'node:n6' not in bad, bad
# the re-test's sweep ran its 3 passes, whatever its deadline: one pass's
# medians spread too far on shared cores for the link to stand out again
c = v['confirm']
assert c['ran'] and c['link_passes'] >= 3, c
PY
echo ok
