#!/bin/bash
# Must-show 3: 4 emulated nodes, --pairs all, --inject link:ranks=1-3,factor=64:
# all 6 pairs in 3 rounds; the injected link n1~n3 lies outside the whole
# healthy distribution: its bandwidth <= 0.5 x the lowest healthy link; and
# the detector's verdict fails link:n1~n3. Nothing is asserted about how far
# healthy links spread: with ranks sharing 2 busy cores they range from ~0.5x
# to ~2x their median. 4 ranks show the sweep as well as 8 did, with half the
# oversubscription. Factor 64, not 4: the detector fails a link at z >= 4
# against the links' spread in log space, and beside a CPU hog the 5 healthy
# links spread 4.6x (0.08-0.37 GB/s): a factor-16 link, 12x below their
# median, scored z 3.9 and was not failed (a factor-8 link 5x below the
# lowest was not failed at load 50 either).
# Exchanges are 1 MiB each way, 3 timed per pass (-n 3): the injected link
# stretches every exchange of its pair 64 times, and beside a CPU hog the 4 MiB,
# -n 10 sweep ran past the 300 s limit (ci/soak.sh --hog); now ~60 s there,
# 3 s on a quiet machine, with n1~n3 at 0.01-0.03x the lowest healthy link
# beside the hog (4 runs; 1 of 3 failed at ~1.06x when the slow link was
# emulated by repeated transfers, see core/suite.c slow_link). Link times compare two ranks' time stamps: a sweep
# is measured again (at most 3 times) only when its start-up clock offsets are
# looser than 100 us (clock_ok; the sync gets within 50 us, beside busy loops
# too), as that sweep's figures are not measurements of the links; where no
# sweep gets there the test fails saying so (issue 19's report). The
# property (n1~n3 below half the lowest healthy link) is not retried; the
# verdict is, where the detector found a healthy link out of bounds too
# (below). The verdict is taken with the latency rule off: latencies of small
# exchanges (us) are not measurable with such clock bounds.
. "$(dirname "$0")/coll_common.sh"

# A sweep in which a healthy link read far below the others (shared cores)
# can fail that link too, and then a node slow with 2 of its 3 partners is
# blamed instead of the link: where the verdict misses n1~n3 and a healthy
# link is out of bounds itself, the sweep tested nothing here and is measured
# again (at most 3 times), saying so.
"$FLEETPRINT" detect --print-rules | $PY -c '
import json, sys
r = json.load(sys.stdin)
for c in r["classes"]:
    if c["name"] == "latency":
        c["mode"] = "ignore"
json.dump(r, sys.stdout)' >"$tmp/rules.json" || fail "cannot derive the rules"
for attempt in 1 2 3; do
    fprun 4 run --suite collectives --test links --pairs all -e 1M -n 3 -w 1 \
        $(inject link:ranks=1-3,factor=64) --json "$tmp/o.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/err"; fail "exit $rc, expected 0"; }
    if ! clock_ok "$tmp/err" 100; then
        [ $attempt -lt 3 ] || fail "3 sweeps in a row with clock offsets too loose to time exchanges"
        continue
    fi
    cat "$tmp/out"
    grep -q "6 pairs in 3 rounds" "$tmp/out" || fail "not 6 pairs in 3 rounds"
    "$FLEETPRINT" detect -i "$tmp/o.json" --contended -r "$tmp/rules.json" --json "$tmp/v.json" >"$tmp/dout" 2>&1
    prc=0
    $PY - "$tmp/o.json" "$tmp/v.json" <<'PYEOF' || prc=$?
import json, statistics, sys
s = json.load(open(sys.argv[1]))["samples"]
assert [x["value"] for x in s if x["metric"] == "rounds"] == [3]
bw = {x["entity"]: x["value"] for x in s if x["metric"] == "bw_inter" and x["iter"] == -1}
assert len(bw) == 6, sorted(bw)
slow = bw.pop("link:n1~n3")
low = min(bw, key=bw.get)
print("n1~n3 %.3f GB/s; healthy links %.3f .. %.3f GB/s; n1~n3 = %.2f x the lowest (%s)" %
      (slow, bw[low], max(bw.values()), slow / bw[low] if bw[low] else float("inf"), low))
assert slow <= 0.5 * bw[low], "n1~n3 is not below half the lowest healthy link"
v = json.load(open(sys.argv[2]))
bad = [e["entity"] for e in v["entities"] if e["verdict"] == "fail"]
print("detect fails:", bad)
# healthy links the detector found out of bounds themselves (warn or fail on
# their bandwidth, before any demarcation): noise of shared cores
noisy = [e["entity"] for e in v["entities"] if e["entity"] in bw and
         any("bw_inter" in r["metric"] for r in e["reasons"])]
if "link:n1~n3" not in bad and noisy:
    print("healthy links out of bounds too:", noisy, "(%.2f .. %.2f x their median)" %
          (bw[low] / statistics.median(bw.values()), max(bw.values()) / statistics.median(bw.values())))
    sys.exit(3)
assert "link:n1~n3" in bad, "the verdict does not fail link:n1~n3"
PYEOF
    [ $prc -eq 3 ] && [ $attempt -lt 3 ] || break
    echo "attempt $attempt: a healthy link failed too (shared cores): measuring again"
done
[ $prc -eq 0 ] || { cat "$tmp/dout"; fail "n1~n3 not singled out"; }
echo PASS
