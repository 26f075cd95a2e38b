#!/usr/bin/env bash
# fleetprint isolate on 16 emulated nodes (issue 34, must show 1): each fault
# alone is named, with the rounds it took, in the verdict outputs preflight
# writes (drain, exclude, JSON, JUnit, HTML, Prometheus) and the round table:
#   - corrupt:rank=5 (grid): n5 named after round 2, confirmed in round 3;
#   - hang:rank=6: n6 named after round 2; the job ends with exit 4 once
#     every other rank finished (docs/isolate.md, exit codes);
#   - slow:rank=10,factor=4: n10 named (a timing: judged against the other
#     groups of each round, and confirmed by two pairings);
#   - corrupt:rank=5 and corrupt:rank=10 (auto: two rows fail, bisected):
#     both named;
#   - link:ranks=1-2,factor=8: the link n1~n2 named, not a node.
# FP_TEST_FAULT_SCALE=0 injects nothing (tests/measure.sh): every case must then fail.
. "$FP_TESTS/lib.sh"
cd "$WORK"
outs() {
  mkdir -p "$1"
  echo --drain-file "$1/drain.txt" --exclude-file "$1/exclude.txt" --json "$1/verdicts.json" \
    --html "$1/isolate.html" --prometheus "$1/isolate.prom" --junit "$1/junit.xml" \
    --rounds-json "$1/rounds.json" --run-json "$1/run.json"
}
# check DIR NODES KIND NAMED: the outputs in DIR name exactly NODES (a
# hostlist) failing as KIND, each named after round NAMED ("-": any)
check() {
  [ "$(cat "$1/drain.txt")" = "$2" ] || fail "$1: drain file is '$(cat "$1/drain.txt")', want $2"
  [ "$(cat "$1/exclude.txt")" = "$2" ] || fail "$1: exclude file is not $2"
  py - "$@" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
d, nodes, kind, named = sys.argv[1:5]
v = json.load(open(f"{d}/verdicts.json"))
assert v["verdict"] == "fail", v["verdict"]
rule = {"wrong": "wrong-results", "hung": "hung", "slow": "collective"}[kind]
failing = v["failing_nodes"]
for n in failing:
    e = [e for e in v["entities"] if e["entity"] == f"node:{n}"][0]
    assert e["verdict"] == "fail" and e["reasons"][0]["rule"] == rule, e
    assert "isolate." in e["reasons"][0]["metric"], e
others = [e for e in v["entities"] if e["entity"].startswith("node:") and e["entity"][5:] not in failing]
assert len(others) + len(failing) == 16 and all(e["verdict"] == "pass" for e in others), others
r = json.load(open(f"{d}/rounds.json"))
named_nodes = sorted(f["node"] for f in r["findings"])
assert named_nodes == sorted(failing), (named_nodes, failing)
assert all(f["kind"] == "node" and f["outcome"] == kind for f in r["findings"]), r["findings"]
if named != "-":
    assert r["rounds_to_isolate"] == int(named), r["rounds_to_isolate"]
    assert all(f["named_round"] == int(named) for f in r["findings"]), r["findings"]
    assert r["table"][0]["groups"][0]["role"] == "row" and len(r["table"][0]["groups"]) == 4
    assert r["table"][1]["groups"][0]["role"] == "column"
run = json.load(open(f"{d}/run.json"))
keys = {(s["suite"], s["test"], s["metric"]): s["value"] for s in run["samples"]}
assert keys[("isolate", "isolation", "rounds")] == r["rounds_to_isolate"], keys
assert keys[("isolate", "isolation", "seconds")] > 0
assert keys[("isolate", "isolation", "culprits")] == len(failing)
html = open(f"{d}/isolate.html").read()
first = html[:html.index("<table")]
assert re.search(re.escape(nodes) + r"\s*(→|&rarr;)\s*drained", first), first[-600:]
prom = open(f"{d}/isolate.prom").read().splitlines()
for n in failing:
    assert f'fleetprint_verdict{{run_tag="isolate",kind="node",Hostname="{n}",state="fail"}} 1' in prom
assert any(l.startswith("fleetprint_isolation_rounds") for l in prom), "no isolation samples"
fails = [c.get("name") for c in ET.parse(f"{d}/junit.xml").iter("testcase") if c.find("failure") is not None]
assert sorted(fails) == sorted(f"node:{n}" for n in failing), fails
PY
  [ $? = 0 ] || fail "$1: the outputs do not name $2 ($3, after round $4)"
}

# The wrong and hung cases judge their rounds on those outcomes: groups that
# merely read slow beside a loaded machine (16 ranks on 2 cores) would add
# suspects and rounds (a full suite beside other builds: n6 named after round
# 3). Their rules judge a group slow only below 0.1x its round's median; the
# slow case keeps the default rules.
"$FLEETPRINT" detect --print-rules |
  sed 's/"contended": {"warn": 0.3, "fail": 0.6}/"contended": {"warn": 0.3, "fail": 0.9}/' >faults.json
grep -q '"fail": 0.9}' faults.json || fail "cannot write the rules of the wrong and hung cases"
# shellcheck disable=SC2046
expect_rc 1 mpi 16 "$FLEETPRINT" isolate --strategy grid $(inject corrupt:rank=5) --timeout 20s \
  --rules faults.json $(outs corrupt)
expect_out 'named: n5 wrong \(named after round 2, confirmed in round 3\)'
check corrupt n5 wrong 2
echo "ok: corrupt:rank=5 named in 2 rounds (grid): $(grep -E '^isolate' "$WORK/out")"

# shellcheck disable=SC2046
expect_rc 4 mpi 16 "$FLEETPRINT" isolate --strategy grid $(inject hang:rank=6,after=0s) \
  --timeout 6s --rules faults.json $(outs hang)
expect_out 'named: n6 hung \(named after round 2, confirmed in round 3\)'
expect_out 'isolate: 15 of 15 ranks off the hung nodes finished in'
check hang n6 hung 2
echo "ok: hang:rank=6 named in 2 rounds, every other rank finished, exit 4"

# shellcheck disable=SC2046
expect_rc 1 mpi 16 "$FLEETPRINT" isolate $(inject slow:rank=10,factor=4) --timeout 20s $(outs slow)
expect_out 'named: n10 slow'
check slow n10 slow -
echo "ok: slow:rank=10,factor=4 named: $(grep -E '^isolate' "$WORK/out")"

# shellcheck disable=SC2046
expect_rc 1 mpi 16 "$FLEETPRINT" isolate $(inject corrupt:rank=5) $(inject corrupt:rank=10) \
  --timeout 20s --rules faults.json $(outs two)
check two 'n[5,10]' wrong -
echo "ok: two corrupt ranks both named: $(grep -E '^isolate' "$WORK/out")"

# shellcheck disable=SC2046
expect_rc 1 mpi 16 "$FLEETPRINT" isolate --strategy grid $(inject link:ranks=1-2,factor=8) \
  --timeout 20s --json link.json --drain-file link-drain.txt
expect_out 'named: link n1~n2 slow'
[ ! -s link-drain.txt ] || fail "a link drains no node: $(cat link-drain.txt)"
py -c 'import json,sys; v=json.load(open("link.json")); e=[e for e in v["entities"] if e["entity"]=="link:n1~n2"]; assert e and e[0]["verdict"]=="fail", v["entities"]' ||
  fail "link:n1~n2 does not fail in the verdicts"
echo "ok: link:ranks=1-2 named as the link n1~n2"
