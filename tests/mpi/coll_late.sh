#!/bin/bash
# Must-show 4: --inject slow:rank=3,factor=3 on 4 ranks: rank 3 is the late
# rank of >= 95% of allreduce calls, in the JSON (late_rank samples) and as
# printed (the late column of every row names r3).
. "$(dirname "$0")/coll_common.sh"

fprun 4 run --test allreduce -b 1M -e 4M -n 20 -w 3 --inject slow:rank=3,factor=3 \
    --json "$tmp/o.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err"; fail "exit $rc, expected 0"; }
$PY - "$tmp/o.json" "$tmp/out" <<'PYEOF' || fail "check"
import json, sys
run = json.load(open(sys.argv[1]))
assert "slow:rank=3" in run["run"]["injections"], run["run"]["injections"]
late = [x for x in run["samples"] if x["metric"].startswith("late_rank_")]
share = sum(x["value"] == 3 for x in late) / len(late)
print("rank 3 late in %.1f%% of %d calls" % (100 * share, len(late)))
assert len(late) >= 20 * 3 * 6 * 2, len(late)
assert share >= 0.95
# the lateness of rank 3 against the median is positive in those calls
lat3 = [x["value"] for x in run["samples"] if x["metric"].startswith("lateness_") and x["entity"] == "rank:3@n3"]
assert sum(v > 0 for v in lat3) / len(lat3) >= 0.95
rows = [l for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
assert rows and all(l.split().count("r3") == 2 for l in rows), "printed late rank is not r3"
PYEOF
echo PASS
