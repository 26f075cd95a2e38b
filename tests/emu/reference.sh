#!/bin/bash
# Everything equally slow: 8 emulated GPUs, every rank 3x slow, no store. Peers
# cannot see it (they are all alike) and there is no baseline; the reference
# catalog (tests/data/references-emu.json) fails every device, and each
# verdict names the reference and its source. 8 of 8 failing trips the
# circuit breaker (nothing drained); --max-drain 1 drains them all.
. "$FP_TESTS/emu/common.sh"
cat_=$FP_TESTS/data/references-emu.json
PF=(preflight -t membw -t allreduce -n 3 -w 1 -b 4K -e 16K --array-size 256K --timeout 60s
    --references "$cat_")
slow=(); for r in 0 1 2 3 4 5 6 7; do slow+=(--inject "slow:rank=$r,factor=3"); done

expect_rc 1 emu 8 nccl "${PF[@]}" "${slow[@]}" --json "$WORK/v.json" --drain-file "$WORK/drain.txt"
no_crash
py - "$WORK/v.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
assert v["breaker"]["tripped"] and v["breaker"]["failing"] == 8, v["breaker"]
gpus = [e for e in v["entities"] if e["entity"].startswith("gpu:")]
assert len(gpus) == 8, [e["entity"] for e in gpus]
for e in gpus:
    refs = [r for r in e["reasons"] if r["evidence"] == "reference" and r["verdict"] == "fail"]
    assert refs, (e["entity"], e["reasons"])
    for r in refs:
        assert "reference Emulated GPU (fpemu), measured 2026-11-26 at ee29bbf" in r["note"], r
        assert r["value"] < 0.7 * r["expected"], r
    peers = [r for r in e["reasons"] if r["evidence"] == "peers" and r["verdict"] == "fail"
             and r["metric"].startswith("kernels.membw")]
    assert not peers, peers
print("reference fails all 8 devices; peers fail none of their membw")
PY
[ ! -s "$WORK/drain.txt" ] || fail "the breaker drains nothing, got $(cat "$WORK/drain.txt")"

expect_rc 1 emu 8 nccl "${PF[@]}" "${slow[@]}" --max-drain 1 --drain-file "$WORK/drain.txt"
[ "$(cat "$WORK/drain.txt")" = "n[0-7]" ] || fail "drain: '$(cat "$WORK/drain.txt")', want n[0-7]"

# the same catalog on a clean run: no reference fail
expect_rc 0 emu 8 nccl "${PF[@]}" --json "$WORK/clean.json"
py - "$WORK/clean.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
bad = [(e["entity"], r["metric"], r["value"], r["expected"]) for e in v["entities"]
       for r in e["reasons"] if r["evidence"] == "reference" and r["verdict"] == "fail"]
assert not bad, bad
PY
echo "reference evidence: 3x slow everywhere fails every device; clean passes"
