#!/bin/bash
# fleetprint admit end to end: never an occupied, excluded or failing node;
# the hostlist is valid and in rank order; malformed topology.conf files exit
# 2 with a one-line error naming the line; --store is not wired yet.
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
expect_err 2 "not wired" --topology "$D/topo.conf" --nodes 4 --store fleet.h5
expect_err 2 "tp 3" --topology "$D/topo.conf" --nodes 4 --tp 3
expect_err 1 "cannot admit 40 nodes" --topology "$D/topo.conf" --nodes 40
expect_err 2 "--topology" --nodes 4

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails check(s) failed" >&2; exit 1; }
