#!/bin/bash
# A synthetic 16-rank job (DP 4 x PP 4, 1F1B, 8 microbatches, 4 steps) whose
# worker dp 2 / stage 1 (rank 6) computes 1.5x slower, written as the NCCL
# profiler plugin's per-rank traces (args: the gen_job_trace binary):
#   trace -> whatif names DP rank 2 and worker rank 6;
#   trace -> store -> detect fails rank 6 and nothing else;
# the same job without the slow worker passes both; the layout found from the
# communicators equals --dp 4 --pp 4; bad input exits 2 naming file and line.
source "$(dirname "$0")/../lib.sh"
GEN=$1

mkdir -p "$WORK/slow" "$WORK/ok"
"$GEN" "$WORK/slow" 4 4 8 4 2 1 1.5 "$WORK/truth" >/dev/null
"$GEN" "$WORK/ok" 4 4 8 4 -1 -1 1.0 >/dev/null

# ---- trace -> whatif ----------------------------------------------------------------------
expect_rc 0 "$FLEETPRINT" trace "$WORK/slow" --out "$WORK/slow_wi" --store "$WORK/s.h5" \
    --id slowjob --timeline "$WORK/tl.json"
expect_out "16 ranks, 1760 NCCL ops on 13 communicators"
expect_rc 0 "$FLEETPRINT" whatif --trace "$WORK/slow_wi.csv" --meta "$WORK/slow_wi.yaml" \
    --json "$WORK/slow.json"
expect_out "first: rank 6, dp 2 stage 1"
# the job as generated, compute included: what the inference must come close to
expect_rc 0 "$FLEETPRINT" whatif --trace "$WORK/truth.csv" --meta "$WORK/truth.yaml" \
    --json "$WORK/truth.json"
expect_rc 0 "$FLEETPRINT" trace "$WORK/ok" --out "$WORK/ok_wi" --store "$WORK/s.h5" --id okjob
expect_rc 0 "$FLEETPRINT" whatif --trace "$WORK/ok_wi.csv" --meta "$WORK/ok_wi.yaml" \
    --json "$WORK/ok.json"
py - "$WORK" <<'PY' || fail "what-if attribution"
import json, sys
d = sys.argv[1]
slow, ok = json.load(open(d + "/slow.json")), json.load(open(d + "/ok.json"))
truth = json.load(open(d + "/truth.json"))
# compute inferred from the gaps between NCCL ops: S within 5% of the truth's
assert abs(slow["blocking_slowdown"] / truth["blocking_slowdown"] - 1) < 0.05, \
    (slow["blocking_slowdown"], truth["blocking_slowdown"])
print("S traced %.4f, truth %.4f" % (slow["blocking_slowdown"], truth["blocking_slowdown"]))
by_dp = slow["blocking_decompose_by_dp_rank"]
top = max(by_dp, key=by_dp.get)
assert top == "2", by_dp                       # the slow DP rank
assert slow["mw"]["workers"][0]["rank"] == 6, slow["mw"]
# separation: the slow job is well clear of the healthy one
assert slow["blocking_slowdown"] > 1.1, slow["blocking_slowdown"]
assert slow["blocking_slowdown"] > ok["blocking_slowdown"] + 0.1
assert ok["blocking_slowdown"] < 1.05, ok["blocking_slowdown"]
tl = json.load(open(d + "/tl.json"))
assert sum(e["ph"] == "X" for e in tl["traceEvents"]) == 1760
PY

# ---- trace -> store -> detect ---------------------------------------------------------------
expect_rc 1 "$FLEETPRINT" detect --store "$WORK/s.h5" --run slowjob --json "$WORK/d.json" -q
py - "$WORK/d.json" <<'PY' || fail "detect names rank 6 only"
import json, sys
d = json.load(open(sys.argv[1]))
bad = sorted(e["entity"] for e in d["entities"] if e["verdict"] != "pass")
assert bad == ["node:n06", "rank:6@n06"], bad
assert d["failing_nodes"] == ["n06"], d["failing_nodes"]
PY
# report exits as detect does: 1, the verdict it prints is fail
expect_rc 1 "$FLEETPRINT" report --store "$WORK/s.h5" --run slowjob --html "$WORK/r.html"
grep -q "rank:6@n06" "$WORK/r.html" || fail "the HTML report does not name rank 6"
expect_rc 0 "$FLEETPRINT" detect --store "$WORK/s.h5" --run okjob -q

# ---- layout: automatic equals explicit --------------------------------------------------------
expect_rc 0 "$FLEETPRINT" trace "$WORK/slow" --out "$WORK/explicit" --dp 4 --pp 4
cmp -s "$WORK/slow_wi.csv" "$WORK/explicit.csv" || fail "--dp 4 --pp 4 differs from automatic layout"
expect_rc 2 "$FLEETPRINT" trace "$WORK/slow" --out "$WORK/x" --dp 3 --pp 4
expect_out "dp \* pp must equal the 16 ranks"

# ---- bad input: one line naming file, line and field; exit 2 ----------------------------------
f="$WORK/slow/fleetprint-trace.r00003.jsonl"
sed -i '5s/.*/{"ev":"coll","id":1}/' "$f"
expect_rc 2 "$FLEETPRINT" trace "$WORK/slow" --out "$WORK/y"
expect_out "r00003.jsonl:5: coll record needs id, comm, t0 <= t1"
expect_rc 2 "$FLEETPRINT" trace "$WORK/empty-does-not-exist" --out "$WORK/y"
expect_rc 2 "$FLEETPRINT" trace "$WORK/ok"
echo "job_straggler: ok"
