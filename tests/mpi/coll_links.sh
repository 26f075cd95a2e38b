#!/bin/bash
# Must-show 3: 8 emulated nodes, --pairs all, --inject link:ranks=2-5,factor=4:
# 7 rounds; n2~n5's bandwidth <= 0.5 x the median of the other links, and no
# other link below 0.7 x that median. Each link is the median of 7 passes x 20
# exchanges, in other rounds each pass. On a shared, oversubscribed machine
# (8 ranks on 2 cores plus other users' load) a burst can still skew one
# sweep, so the sweep is measured up to 3 times and one clean sweep passes;
# every attempt's figures are printed.
. "$(dirname "$0")/coll_common.sh"

for attempt in 1 2 3; do
    fprun 8 run --suite collectives --test links --pairs all -e 1M -n 20 -w 2 \
        --inject link:ranks=2-5,factor=4 --json "$tmp/o.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/err"; fail "exit $rc, expected 0"; }
    grep -q "28 pairs in 7 rounds" "$tmp/out" || { cat "$tmp/out"; fail "not 28 pairs in 7 rounds"; }
    $PY - "$tmp/o.json" <<'PYEOF' && { echo PASS; exit 0; }
import json, statistics, sys
s = json.load(open(sys.argv[1]))["samples"]
rounds = [x["value"] for x in s if x["metric"] == "rounds"]
assert rounds == [7], rounds
bw = {x["entity"]: x["value"] for x in s if x["metric"] == "bw_inter" and x["iter"] == -1}
assert len(bw) == 28, len(bw)
slow = bw.pop("link:n2~n5")
med = statistics.median(bw.values())
low = min(bw, key=bw.get)
print("n2~n5 %.3f GB/s = %.2f x the median of the others (%.3f); lowest other %s %.2f x" %
      (slow, slow / med, med, low, bw[low] / med))
sys.exit(0 if slow <= 0.5 * med and bw[low] >= 0.7 * med else 1)
PYEOF
    [ $attempt -lt 3 ] && echo "attempt $attempt: not clean, measuring again"
done
cat "$tmp/out"
fail "n2~n5 not singled out in 3 sweeps"
