#!/usr/bin/env bash
# A preflight step that times out still writes its verdict outputs: the hung
# rank's node is the drain file's one node, fails in the JSON with the reason
# "hung: never arrived in <step>", leads the HTML page's drain list, fails in
# the JUnit file and the Prometheus textfile (run verdict 2); the exit code
# stays 4 (timeout); with --prometheus-local, rank 0 writes its own node's
# file and the run file (verdict 2) and no other node's. Both ways a deadline
# expires are covered:
#   - gemm: the main thread's polled wait (fp_world_wait) returns the timeout;
#   - allreduce: the main thread is blocked inside MPI and the watchdog
#     thread diagnoses it, writes the outputs, and ends the job.
. "$FP_TESTS/lib.sh"
cd "$WORK"
check() { # check DIR NODE STEP: the outputs in DIR name NODE, hung in STEP
  [ "$(cat "$1/drain.txt")" = "$2" ] || fail "$1: drain file is '$(cat "$1/drain.txt")', want $2"
  [ "$(cat "$1/exclude.txt")" = "$2" ] || fail "$1: exclude file is not $2"
  py - "$1" "$2" "$3" <<'PY'
import json, re, sys
d, node, step = sys.argv[1:]
v = json.load(open(f"{d}/verdicts.json"))
assert v["verdict"] == "fail" and v["failing_nodes"] == [node], v
ent = {e["entity"]: e for e in v["entities"]}
notes = [r["note"] for r in ent[f"node:{node}"]["reasons"]]
assert notes and all(n.startswith(f"hung: never arrived in {step}") for n in notes), notes
others = [e for k, e in ent.items() if k.startswith("node:") and k != f"node:{node}"]
assert others and all(e["verdict"] == "unknown" for e in others), others
html = open(f"{d}/preflight.html").read()
first = html[:html.index("<table")]  # the first screen: verdict, counts, drain list
assert re.search(rf"{node}\s*(→|&rarr;)\s*drained", first), first[-800:]
assert f"hung: never arrived in {step}" in html
prom = open(f"{d}/preflight.prom").read().splitlines()
assert 'fleetprint_run_verdict{run_tag="preflight"} 2' in prom, [l for l in prom if "run_verdict" in l]
assert f'fleetprint_verdict{{run_tag="preflight",kind="node",Hostname="{node}",state="fail"}} 1' in prom
import xml.etree.ElementTree as ET
fails = [c.get("name") for c in ET.parse(f"{d}/junit.xml").iter("testcase") if c.find("failure") is not None]
assert any(f"node:{node}" in n for n in fails), fails
PY
  [ $? = 0 ] || fail "$1: outputs do not name $2 as hung in $3"
}
outs() {
  mkdir -p "$1"
  echo --drain-file "$1/drain.txt" --exclude-file "$1/exclude.txt" --json "$1/verdicts.json" \
    --html "$1/preflight.html" --prometheus "$1/preflight.prom" --junit "$1/junit.xml"
}

# polled wait: rank 2 stops in gemm (after 2 s of membw and gemm)
# shellcheck disable=SC2046
expect_rc 4 mpi 4 "$FLEETPRINT" preflight --test membw --test gemm -n 200 --array-size 1M \
  --inject hang:rank=2,after=2s --timeout 8s $(outs polled) --prometheus-local "$WORK/polled/local/%n/"
expect_out 'waiting for rank 2 \(node n2\), which never arrived'
step=$(sed -n 's/.*timeout after [0-9.]* s in \(.*\): waiting for rank 2.*/\1/p' "$WORK/out" | head -n1)
[ -n "$step" ] || fail "no step named in the timeout line"
check polled n2 "$step"
[ "$(cd polled/local && find . -type f | sort | tr '\n' ' ')" = "./n0/fleetprint-n0.prom ./n0/fleetprint-run.prom " ] ||
  fail "--prometheus-local after a timeout: $(cd polled/local && find . -type f)"
grep -q '^fleetprint_run_verdict{run_tag="preflight"} 2$' polled/local/n0/fleetprint-run.prom ||
  fail "--prometheus-local after a timeout: the run file's verdict is not 2"

# blocked in MPI: rank 1 stops inside an allreduce; the watchdog writes the outputs
# shellcheck disable=SC2046
expect_rc 4 mpi 4 "$FLEETPRINT" preflight --test allreduce -b 1M -e 1M -n 1000000 -c 0 \
  --inject hang:rank=1,after=2s --timeout 8s $(outs blocked)
expect_out 'in allreduce float sum out-of-place 1048576 B: waiting for rank 1 \(node n1\)'
check blocked n1 "allreduce float sum out-of-place 1048576 B"
echo "ok: a timeout drains the hung rank's node (drain, exclude, JSON, HTML), polled and blocked"
