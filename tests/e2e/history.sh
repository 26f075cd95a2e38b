#!/bin/bash
# Must show 4 (issue 33): verdicts kept per run in the store, and repeat
# offenders. Five preflights of 8 emulated nodes are stored with --store; in
# three of them rank 5 (node n5) has a bit flip in its GEMM results, which the
# rules here make a warn (the wrong-results value rule, verdict "warn"; every
# timing class is ignored, so the verdicts do not depend on how loaded this
# machine is). Then:
#   - store history n5 lists the five runs oldest first (warn pass warn pass
#     warn) and says n5 is a repeat offender now; a node that never warned is
#     not; bad entity text and a missing store exit 2;
#   - the sixth preflight, clean, flags n5 as a repeat offender: warn with a
#     history reason, in the console, JSON, Prometheus and HTML; exit 0 (history
#     never fails a node); its record keeps n5's own pass, so after it n5's
#     last 5 judged runs hold 2 warns and it is no longer one;
#   - admit --store takes n5 as a warned node: used last (not for 7 of the 8
#     nodes, only when all 8 are needed);
#   - detect --store judges without writing; detect --record keeps the verdicts
#     of runs stored without them: the same five runs exported as JSON Lines,
#     ingested into a new store and recorded one by one give the same history.
source "$(dirname "$0")/../lib.sh"
F=$FLEETPRINT
S=$WORK/fleet.h5
cd "$WORK"

# the rules: the defaults, timing classes ignored, a wrong result warns
"$F" detect --print-rules | py -c '
import json, sys
r = json.load(sys.stdin)
r["classes"] = [{"name": "not-judged", "mode": "ignore", "match": ["*"]}]
for v in r["values"]:
    if v["name"] == "wrong-results":
        v["verdict"] = "warn"
json.dump(r, open("rules.json", "w"), indent=1)'
PF=(preflight --store "$S" --rules rules.json --test gemm --threads 1 -n 3 --timeout 120s)

# ---- five stored runs: n5 warns in runs 1, 3 and 5 -----------------------------------
for i in 1 2 3 4 5; do
  inj=()
  [ $((i % 2)) = 1 ] && inj=(--inject bitflip:rank=5)
  expect_rc 0 mpi 8 "$F" "${PF[@]}" "${inj[@]}" --json "run$i.json"
  py - "run$i.json" "$i" <<'PY' || fail "run $1: verdicts"
import json, sys
j, i = json.load(open(sys.argv[1])), int(sys.argv[2])
nodes = {e["entity"]: e["verdict"] for e in j["entities"] if e["entity"].startswith("node:")}
want = {f"node:n{k}": "warn" if (k == 5 and i % 2) else "pass" for k in range(8)}
assert nodes == want, nodes
# fewer than 3 judged runs before it: no repeat offender yet, whatever n5 did
assert j["repeat_offenders"] == [], j["repeat_offenders"]
assert j.get("history", {"runs": 0})["runs"] == i - 1, j.get("history")  # none before run 1
PY
  expect_out "stored run .* \(80 samples, the verdicts of (9|8) entities\)"
done
"$F" store ls --store "$S"

# ---- store history ------------------------------------------------------------------
expect_rc 0 "$F" store history n5 --store "$S" --rules rules.json
cat "$WORK/out"
[ "$(grep -c ' preflight ' "$WORK/out")" = 5 ] || fail "store history n5: not 5 runs"
[ "$(awk '$4 == "preflight" {printf "%s ", $5}' "$WORK/out")" = "warn pass warn pass warn " ] ||
  fail "store history n5: verdicts are not warn pass warn pass warn, oldest first"
expect_out "^node:n5: a repeat offender: failed or warned in 3 of its last 5 judged runs \(rule: 3"
# each line names its run: the runs in the order they were stored
ids=$("$F" store ls --store "$S" | awk 'NR > 1 {printf "%s ", $1}')
[ "$(awk '$4 == "preflight" {printf "%s ", $3}' "$WORK/out")" = "$ids" ] ||
  fail "store history n5: the runs are not listed oldest first"
expect_rc 0 "$F" store history gpu:n5/0 --store "$S" --rules rules.json
expect_out "warn +value kernels.gemm.f64_wrong"
expect_out "^gpu:n5/0: a repeat offender"
expect_rc 0 "$F" store history node:n2 --store "$S" --last 2
[ "$(grep -c ' preflight ' "$WORK/out")" = 2 ] || fail "store history --last 2: not 2 lines"
expect_out "^node:n2: not a repeat offender: failed or warned in 0 of its last 5 judged runs"
expect_rc 0 "$F" store history n9 --store "$S"
expect_out "0 judged runs"
expect_rc 2 "$F" store history 'n5;reboot' --store "$S"
expect_out "is not a node, device or link"
expect_rc 2 "$F" store history rank:5@n5 --store "$S"
expect_rc 2 "$F" store history link:n2 --store "$S"
expect_rc 2 "$F" store history n5 --store "$WORK/none.h5"
expect_out "no such store"

# ---- the sixth run, clean: n5 is a repeat offender -----------------------------------
before=$(sum "$S"; ls "$S.d")
expect_rc 0 "$F" detect --store "$S" --rules rules.json --run latest -q
[ "$(sum "$S"; ls "$S.d")" = "$before" ] || fail "detect without --record changed the store"
expect_rc 0 mpi 8 "$F" "${PF[@]}" --json run6.json --prometheus run6.prom --html run6.html
grep -v '^fleetprint\[' "$WORK/out"
expect_out "^warn node:n5"
expect_out "warn +history repeat offender: failed or warned in 3 of its last 5 judged runs"
expect_out "^history: 2 repeat offenders .*: node:n5 \(3 of 5\), gpu:n5/0 \(3 of 5\)"
py - run6.json <<'PY' || fail "run 6: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
off = {o["entity"]: o for o in j["repeat_offenders"]}
assert set(off) == {"node:n5", "gpu:n5/0"}, off
o = off["node:n5"]
assert (o["verdict"], o["own_verdict"], o["bad"], o["judged"]) == ("warn", "pass", 3, 5), o
assert j["history"] == {"k": 3, "n": 5, "runs": 5}, j["history"]
n5 = [e for e in j["entities"] if e["entity"] == "node:n5"][0]
r = n5["reasons"][0]
assert n5["verdict"] == "warn" and r["evidence"] == "history" and r["windows_bad"] == 3, n5
others = [e for e in j["entities"] if e["entity"].startswith("node:") and e["entity"] != "node:n5"]
assert all(e["verdict"] == "pass" for e in others), others
assert j["verdict"] == "warn" and j["failing_nodes"] == []
PY
grep -q '^fleetprint_node_repeat_offender{run_tag="preflight",Hostname="n5"} 1$' run6.prom ||
  fail "Prometheus: n5 is not a repeat offender"
[ "$(grep -c '^fleetprint_node_repeat_offender{.*} 0$' run6.prom)" = 7 ] ||
  fail "Prometheus: the 7 other nodes are not 0"
grep -q '^fleetprint_repeat_offender{run_tag="preflight",kind="node",Hostname="n5"} 1$' run6.prom ||
  fail "Prometheus: fleetprint_repeat_offender of node n5"
grep -q 'class="offenders">Repeat offenders .*node:n5 (3 of 5)' run6.html ||
  fail "HTML: no repeat-offender line"
# the sixth run's record keeps n5's own verdict (pass), flagged; now its last
# 5 judged runs are runs 2-6, with 2 warns: no longer a repeat offender
expect_rc 0 "$F" store history n5 --store "$S"
expect_out "preflight +pass +\[repeat offender\] -$"
expect_out "^node:n5: not a repeat offender: failed or warned in 2 of its last 5 judged runs"

# ---- admit --store: the repeat offender is a warned node, used last -------------------
printf 'SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[4-7]\nSwitchName=top Switches=s[0-1]\n' \
  > topo.conf
expect_rc 0 "$F" admit --topology topo.conf --nodes 7 --store "$S" --rules rules.json --json a7.json
expect_out "0 failing, 1 warned node\(s\) \(1 repeat offender: history\)"
py -c 'import json; n=json.load(open("a7.json"))["nodes"]; assert len(n)==7 and "n5" not in n, n' ||
  fail "admit --nodes 7 used the repeat offender n5"
expect_rc 0 "$F" admit --topology topo.conf --nodes 8 --store "$S" --rules rules.json --json a8.json
expect_out "1 warned node\(s\) used"
py -c 'import json; n=json.load(open("a8.json"))["nodes"]; assert "n5" in n, n' ||
  fail "admit --nodes 8 did not use n5"

# ---- the same history from JSON Lines: ingest, then detect --record --------------------
"$F" store export all --store "$S" -o all.jsonl
J=$WORK/jsonl.h5
expect_rc 0 "$F" store ingest all.jsonl --store "$J"
expect_rc 0 "$F" store history n5 --store "$J"
expect_out "0 judged runs"
for id in $ids $("$F" store ls --store "$S" | awk 'END {print $1}'); do
  expect_rc 0 "$F" detect --store "$J" --run "$id" --rules rules.json --record -q
  expect_out "kept the verdicts of [0-9]+ entities with run $id"
done
expect_rc 2 "$F" detect --store "$J" --run "$id" --rules rules.json --record -q
expect_out "has its verdicts already"
expect_rc 2 "$F" detect --input run6.json --record
expect_out "needs --store"
expect_rc 0 "$F" store history n5 --store "$J"
cat "$WORK/out"
got=$(awk '$4 == "preflight" {printf "%s ", $5}' "$WORK/out")
[ "$got" = "warn pass warn pass warn pass " ] ||
  fail "recorded history of n5 differs from the stored one"
expect_out "preflight +pass +\[repeat offender\] -$"
# its last 5 are now runs 2-6: 2 warns, so the next run would not flag it
expect_out "^node:n5: not a repeat offender: failed or warned in 2 of its last 5 judged runs"
expect_rc 0 "$F" store check --store "$J"
expect_rc 0 "$F" store check --store "$S"
echo "history: all checks passed"
