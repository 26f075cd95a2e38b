#!/bin/bash
# Must-show 3: 8 emulated nodes, --pairs all, --inject link:ranks=2-5,factor=4:
# 7 rounds; n2~n5's bandwidth <= 0.5 x the median of the other links, and no
# other link below 0.7 x that median (each link is the median of every
# exchange over several passes, so scheduling noise does not decide it).
. "$(dirname "$0")/coll_common.sh"

fprun 8 run --suite collectives --test links --pairs all -e 4M -n 10 -w 2 \
    --inject link:ranks=2-5,factor=4 --json "$tmp/o.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err"; fail "exit $rc, expected 0"; }
grep -q "28 pairs in 7 rounds" "$tmp/out" || { cat "$tmp/out"; fail "not 28 pairs in 7 rounds"; }
$PY - "$tmp/o.json" <<'PYEOF' || { cat "$tmp/out"; fail "check"; }
import json, statistics, sys
s = json.load(open(sys.argv[1]))["samples"]
rounds = [x["value"] for x in s if x["metric"] == "rounds"]
assert rounds == [7], rounds
bw = {x["entity"]: x["value"] for x in s if x["metric"] == "bw_inter" and x["iter"] == -1}
assert len(bw) == 28, len(bw)
slow = bw.pop("link:n2~n5")
med = statistics.median(bw.values())
print("n2~n5 %.3f GB/s, median of the others %.3f, lowest other %.3f" % (slow, med, min(bw.values())))
assert slow <= 0.5 * med
low = {k: v / med for k, v in bw.items() if v < 0.7 * med}
assert not low, low
PYEOF
echo PASS
