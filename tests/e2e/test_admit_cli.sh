#!/bin/bash
# fleetprint admit end to end: never an occupied, excluded or failing node;
# the hostlist is valid and in rank order; malformed topology.conf files exit
# 2 with a one-line error naming the line; with --store, the nodes the
# detector fails on the store's latest run are never used.
set -u
FP=${FLEETPRINT:?}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# 3 pods x 3 leaves x 4 nodes = 36 nodes, c[01-36]
{
  echo "# test tree"
  for l in $(seq 0 8); do
    printf 'SwitchName=leaf%d Nodes=c[%02d-%02d] LinkSpeed=200\n' "$l" $((l * 4 + 1)) $((l * 4 + 4))
  done
  echo "SwitchName=pod0 Switches=leaf[0-2]"
  echo "SwitchName=pod1 Switches=leaf[3-5]"
  echo "SwitchName=pod2 Switches=leaf[6-8]"
  echo "SwitchName=core Switches=pod[0-2]"
} > "$D/topo.conf"

FREE='c[01-10,13-30,33-36]'
EXCL='c[05,14]'
FAIL='c[20-21]'
WARN='c22'
"$FP" admit --topology "$D/topo.conf" --nodes 16 --dp 8 --tp 4 --pp 4 --alpha 0.5 \
  --free "$FREE" --exclude "$EXCL" --fail-nodes "$FAIL" --warn-nodes "$WARN" \
  --json "$D/out.json" > "$D/out.txt" 2> "$D/err.txt"
rc=$?
[ $rc -eq 0 ] || bad "admit exited $rc: $(cat "$D/err.txt")"
cat "$D/out.txt"
HL=$(awk '$1 == "hostlist" {print $2}' "$D/out.txt")
[ -n "$HL" ] || bad "no hostlist line"
/usr/bin/python3 - "$D/out.json" "$HL" <<'PY' || bad "JSON checks"
import json, sys
j = json.load(open(sys.argv[1]))
nodes = j["nodes"]
def ex(a, b): return {"c%02d" % i for i in range(a, b + 1)}
free = ex(1, 10) | ex(13, 30) | ex(33, 36)
banned = ex(5, 5) | ex(14, 14) | ex(20, 21)
assert len(nodes) == 16 and len(set(nodes)) == 16, nodes
assert set(nodes) <= free, set(nodes) - free
assert not (set(nodes) & banned), set(nodes) & banned
assert "c22" not in nodes, "a warned node was used although healthy ones were free"
assert j["hostlist"] == sys.argv[2]
assert j["ours"]["objective"] <= j["first_fit"]["objective"]
PY
# the hostlist is valid syntax and holds exactly these nodes in this order:
# feeding it back as --free with a pure-DP job (one row) reproduces the set
"$FP" admit --topology "$D/topo.conf" --nodes 16 --free "$HL" --json "$D/back.json" > /dev/null ||
  bad "the printed hostlist does not parse back"
/usr/bin/python3 - "$D/out.json" "$D/back.json" <<'PY' || bad "hostlist round trip"
import json, sys
a = json.load(open(sys.argv[1]))["nodes"]
b = json.load(open(sys.argv[2]))["nodes"]
assert sorted(a) == sorted(b), (a, b)
PY

# exit codes and one-line errors with line numbers
expect_err() { # code pattern args...
  local code=$1 pat=$2
  shift 2
  "$FP" admit "$@" > /dev/null 2> "$D/e.txt"
  local rc=$?
  [ $rc -eq "$code" ] || bad "admit $* exited $rc, want $code"
  [ "$(wc -l < "$D/e.txt")" -eq 1 ] || bad "admit $*: not one line: $(cat "$D/e.txt")"
  grep -q -- "$pat" "$D/e.txt" || bad "admit $*: '$(cat "$D/e.txt")' lacks '$pat'"
}

# hostlists from files (@FILE, @- for stdin): the same answer as on the
# command line, one name or expression a line, comments and blank lines
{ echo "# the free nodes"; python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["nodes"]))' "$D/out.json"; echo; } >"$D/free.txt"
"$FP" admit --topology "$D/topo.conf" --nodes 16 --free "@$D/free.txt" --json "$D/file.json" > /dev/null ||
  bad "--free @FILE"
"$FP" admit --topology "$D/topo.conf" --nodes 16 --free @- --json "$D/stdin.json" < "$D/free.txt" > /dev/null ||
  bad "--free @-"
/usr/bin/python3 - "$D/back.json" "$D/file.json" "$D/stdin.json" <<'PY' || bad "@FILE and @- differ from the expression"
import json, sys
a, b, c = (sorted(json.load(open(p))["nodes"]) for p in sys.argv[1:])
assert a == b == c, (a, b, c)
PY
printf 'c01\nc[3-1]\n' > "$D/badfree.txt"
expect_err 2 "badfree.txt:2: position 3: range 3-1 goes backwards" --topology "$D/topo.conf" --nodes 1 --free "@$D/badfree.txt"
expect_err 2 "nosuch.txt: cannot read it" --topology "$D/topo.conf" --nodes 1 --exclude "@$D/nosuch.txt"
printf 'SwitchName=s0 Nodes=n[1-2]\nSwitchName=a Switches=b\nSwitchName=b Switches=a,s0\n' > "$D/cycle.conf"
expect_err 2 "cycle.conf:2: switches form a cycle" --topology "$D/cycle.conf" --nodes 1
printf 'SwitchName=s0 Nodes=n[1-2]\n\n# x\nSwitchName=s0 Nodes=n3\n' > "$D/dup.conf"
expect_err 2 "dup.conf:4: duplicate switch 's0' (first defined on line 1)" --topology "$D/dup.conf" --nodes 1
printf 'SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[2-3]\n' > "$D/two.conf"
expect_err 2 "two.conf:2: node 'n2' is already under leaf switch 's0' (line 1)" --topology "$D/two.conf" --nodes 1
printf 'SwitchName=p0 Switches=s9\n' > "$D/unknown.conf"
expect_err 2 "unknown.conf:1: switch 'p0' lists unknown switch 's9'" --topology "$D/unknown.conf" --nodes 1
expect_err 2 "cannot open" --topology "$D/missing.conf" --nodes 1
expect_err 2 "position 3" --topology "$D/topo.conf" --nodes 4 --exclude 'c[9-1]'
expect_err 2 "'zz1' is not in the topology" --topology "$D/topo.conf" --nodes 4 --free 'zz1'
expect_err 2 "no such store" --topology "$D/topo.conf" --nodes 4 --store "$D/none.h5"

# ---- health from the store: a simulated fleet with 3 slow nodes ------------------------
{
  for l in $(seq 0 8); do
    printf 'SwitchName=leaf%d Nodes=n[%02d-%02d]\n' "$l" $((l * 4)) $((l * 4 + 3))
  done
  echo "SwitchName=pod0 Switches=leaf[0-2]"
  echo "SwitchName=pod1 Switches=leaf[3-5]"
  echo "SwitchName=pod2 Switches=leaf[6-8]"
} > "$D/sim.conf"
"$FP" simulate --nodes 36 --gpus-per-node 2 --seed 5 --runs 2 --faults slow-node=3 \
  --out "$D/sim.jsonl" --truth "$D/truth.json" 2>/dev/null || bad "simulate failed"
"$FP" store ingest "$D/sim.jsonl" --store "$D/sim.h5" 2>/dev/null || bad "ingest failed"
# 3 of 36 nodes fail: more than 5% and more than 2, so the circuit breaker
# holds the drain by default (docs/detect.md); with it off they are drained,
# and admit --store keeps off them either way (the verdicts still fail them)
"$FP" detect --store "$D/sim.h5" --drain-file "$D/drain.txt" > /dev/null 2>&1
[ ! -s "$D/drain.txt" ] || bad "the breaker did not hold the drain of 3 of 36 nodes"
"$FP" detect --store "$D/sim.h5" --drain-file "$D/drain.txt" --max-drain 1 > /dev/null 2>&1
[ -s "$D/drain.txt" ] || bad "detect drained nothing on a fleet with 3 slow nodes"
# every usable node is needed: the answer must be exactly the nodes not drained
USABLE=$((36 - $(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["faulty_nodes"]))' "$D/truth.json")))
"$FP" admit --topology "$D/sim.conf" --nodes "$USABLE" --store "$D/sim.h5" --json "$D/h.json" \
  > /dev/null 2> "$D/err.txt" || bad "admit --store exited $?: $(cat "$D/err.txt")"
/usr/bin/python3 - "$D/h.json" "$D/truth.json" <<'PY' || bad "admit --store used a failing node"
import json, sys
nodes = set(json.load(open(sys.argv[1]))["nodes"])
faulty = set(json.load(open(sys.argv[2]))["faulty_nodes"])
assert faulty and not (nodes & faulty), nodes & faulty
assert len(nodes) == 36 - len(faulty)
PY
"$FP" admit --topology "$D/sim.conf" --nodes 36 --store "$D/sim.h5" > /dev/null 2> "$D/e.txt"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot admit" "$D/e.txt" || bad "36 nodes with 3 failing: exit $rc: $(cat "$D/e.txt")"
grep -q "3 failing" "$D/e.txt" || bad "admit --store does not say what it took from the store"
expect_err 2 "tp 3" --topology "$D/topo.conf" --nodes 4 --tp 3
expect_err 1 "cannot admit 40 nodes" --topology "$D/topo.conf" --nodes 40
expect_err 2 "--topology" --nodes 4

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails check(s) failed" >&2; exit 1; }
