#!/usr/bin/env bash
# fleetprint isolate with --device cuda --comm nccl on the emulated GPU
# (issue 34, must show 4): 16 nodes, corrupt:rank=5, grid: every group's
# communicator is ncclCommInitRank with an id of its own (its leader's, handed
# over as the members meet), and n5 is named after round 2, confirmed in 3.
# FP_TEST_FAULT_SCALE=0 injects nothing (tests/measure.sh): it must then fail.
. "$FP_TESTS/emu/common.sh"
cd "$WORK"
# shellcheck disable=SC2046
expect_rc 1 emu 16 nccl isolate --strategy grid $(inject corrupt:rank=5) --size 256K \
  --timeout 30s --drain-file drain.txt --rounds-json rounds.json
no_crash
expect_out 'comm nccl'
expect_out 'named: n5 wrong \(named after round 2, confirmed in round 3\)'
[ "$(cat drain.txt)" = n5 ] || fail "drain file is '$(cat drain.txt)', want n5"
py - <<'PY' || fail "the round table does not show n5 in 2 rounds"
import json
r = json.load(open("rounds.json"))
assert r["rounds_to_isolate"] == 2 and [f["node"] for f in r["findings"]] == ["n5"], r
assert [len(t["groups"]) for t in r["table"][:2]] == [4, 4], r["table"]
PY
echo "ok: nccl on the emulated GPU: $(grep -E '^isolate' "$WORK/out")"
