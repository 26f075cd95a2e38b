#!/usr/bin/env bash
# preflight --isolate auto (issue 34): when its whole-job collective fails
# and no culprit is named, preflight isolates in rounds and its outputs name
# the node isolation found.
#   - corrupt:rank=3,input=1: rank 3's contribution is wrong, so every rank's
#     allreduce result is wrong and all 8 nodes fail the check: no culprit.
#     Isolation names n3, which alone is in the drain file (exit 1).
#   - corrupt:rank=3: only rank 3's result is wrong: preflight names n3
#     itself (its drain file holds n3), and no isolation runs.
# FP_TEST_FAULT_SCALE=0 injects nothing (tests/measure.sh): both cases must then fail.
. "$FP_TESTS/lib.sh"
cd "$WORK"
pf=(preflight --test allreduce -b 64K -e 64K -n 2 -w 1 --timeout 20s --isolate auto)

# shellcheck disable=SC2046
expect_rc 1 mpi 8 "$FLEETPRINT" "${pf[@]}" $(inject corrupt:rank=3,input=1) \
  --drain-file spread.txt --json spread.json
expect_out 'detect .*: fail -- nodes: 0 pass, 0 warn, 8 fail'
expect_out 'preflight: collectives\.allreduce\..* fails with 8 of 8 nodes failing: no culprit named: isolating in rounds \(--isolate auto\)'
expect_out 'named: n3 wrong'
expect_out 'isolate: .*wrong results and hangs only'
[ "$(cat spread.txt)" = n3 ] || { cat "$WORK/out" >&2; fail "the drain file is '$(cat spread.txt)', want n3"; }
py -c 'import json; v=json.load(open("spread.json")); assert v["failing_nodes"]==["n3"], v["failing_nodes"]' ||
  fail "the verdicts do not fail n3 alone"
echo "ok: every node failed the allreduce; isolation drained n3 alone"

# shellcheck disable=SC2046
expect_rc 1 mpi 8 "$FLEETPRINT" "${pf[@]}" $(inject corrupt:rank=3) --drain-file named.txt
! grep -q 'isolating in rounds' "$WORK/out" || { cat "$WORK/out" >&2; fail "isolated though n3 was named"; }
# preflight's own verdicts (beside n3, a timing on shared cores may fail too)
# (a hostlist: n3, or a bracket whose item or range holds 3, as in n[2-3])
py - <<'PY' || fail "the drain file '$(cat named.txt)' lacks n3"
import re
nodes = set()
for name, rng in re.findall(r'n(?:(\d+)|\[([^]]*)\])', open('named.txt').read()):
    for item in (rng.split(',') if rng else [name]):
        a, _, b = item.partition('-')
        nodes.update(range(int(a), int(b or a) + 1))
assert 3 in nodes, nodes
PY
echo "ok: a named culprit needs no isolation"

expect_rc 2 "$FLEETPRINT" preflight --isolate ring
expect_out "fleetprint preflight: --isolate 'ring': expected grid, bisect or auto"
echo "ok: --isolate takes grid, bisect or auto"
