#!/usr/bin/env bash
# Textfiles of three runs in one node_exporter textfile folder -- a nightly
# that passes, a preflight with a slow node, a two-node smoke run with an
# unknown link -- never collide, and the documented alert rules
# (docs/prometheus-alerts.yml) fire on exactly the failing run and node:
#   - promtool check metrics on each file;
#   - node_exporter's gather check, reproduced: a (name, label set) seen in two
#     files is "collected before with the same name and label values"; one
#     family with two help texts or types is refused as well;
#   - promtool check rules, then promtool test rules with every series of the
#     three files as input: FleetprintRunFailed and FleetprintNodeFailed fire
#     for the preflight's slow node only; an unknown entity or run
#     (fleetprint_run_verdict -1) fires nothing; FleetprintNightlyNoSuccess
#     fires once the last success is more than 36 h old;
#   - a failing run keeps the last success of the file it replaces.
. "$FP_TESTS/lib.sh"
command -v promtool >/dev/null || { echo "SKIP: no promtool (Debian package prometheus; ci/deps.sh installs it)"; exit 77; }
rules=$FP_SRC/docs/prometheus-alerts.yml
cd "$WORK"
mkdir textfile

# simulated runs: deterministic verdicts, no timing noise
sim() { "$FLEETPRINT" simulate --runs 1 "$@" 2>/dev/null; }
sim --nodes 6 --gpus-per-node 2 --faults none --out nightly.jsonl
sim --nodes 6 --gpus-per-node 2 --faults slow-node=1 --out preflight.jsonl --truth truth.json
sim --nodes 2 --gpus-per-node 1 --faults none --out smoke.jsonl
# 4 of 20 nodes fail: more than --max-drain (5% and 2 nodes), the breaker trips
sim --nodes 20 --gpus-per-node 2 --faults slow-node=4 --out fleet.jsonl
sed -i 's/"tag":"sim"/"tag":"nightly"/' nightly.jsonl
sed -i 's/"tag":"sim"/"tag":"preflight"/' preflight.jsonl
sed -i 's/"tag":"sim"/"tag":""/' smoke.jsonl # untagged: run_tag is the command's name
sed -i 's/"tag":"sim"/"tag":"fleet"/' fleet.jsonl
for t in nightly preflight smoke fleet; do
  rc=0
  "$FLEETPRINT" report --input $t.jsonl --prometheus textfile/$t.prom >$t.log 2>&1 || rc=$?
  [ "$rc" -le 1 ] || { cat $t.log; fail "report of $t exited $rc"; }
  promtool check metrics <textfile/$t.prom >lint.txt 2>&1 || { cat lint.txt; fail "promtool check metrics $t"; }
done
grep -q '^fleetprint_run_verdict{run_tag="report"} 0$' textfile/smoke.prom || fail "untagged run_tag is not report"
grep -q 'state="unknown"} 1$' textfile/smoke.prom || fail "the smoke run has no unknown entity to test with"

py - "$rules" <<'PY'
import json, re, sys
files = {"nightly": "nightly", "preflight": "preflight", "smoke": "report", "fleet": "fleet"}
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$')
label_re = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
seen, help_of, type_of, series = {}, {}, {}, []
for name in files:
    for l in open(f"textfile/{name}.prom"):
        l = l.rstrip("\n")
        if l.startswith("# HELP "):
            fam, text = l[7:].split(" ", 1)
            assert help_of.setdefault(fam, text) == text, f"{fam}: two help texts ({name})"
            continue
        if l.startswith("# TYPE "):
            fam, t = l[7:].split(" ", 1)
            assert type_of.setdefault(fam, t) == t, f"{fam}: two types ({name})"
            continue
        m = line_re.match(l)
        assert m, f"{name}: unparsed line {l!r}"
        labels = tuple(sorted(label_re.findall(m[2])))
        assert dict(labels).get("run_tag") == files[name], f"{name}: run_tag missing or wrong in {l!r}"
        key = (m[1], labels)
        # node_exporter: "was collected before with the same name and label values"
        assert key not in seen, f"{l!r} in {name} was collected before in {seen[key]}"
        seen[key] = name
        series.append((m[1], labels, float(m[3])))
print(f"ok: {len(series)} series in {len(files)} files, none collected twice")

bad = json.load(open("truth.json"))["faulty_nodes"]
assert len(bad) == 1, bad
def fmt(n, labels):
    return n + "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}"
# every series holds its value for 40 h of 1 m steps; the last success of the
# nightly is put at time 0 so the staleness rule can be checked at 35 h and 37 h
inputs = []
for n, labels, v in series:
    if n == "fleetprint_last_success_timestamp_seconds":
        v = 0
    inputs.append({"series": fmt(n, labels), "values": f"{v!r}x2400"})
inputs.append({"series": 'fleetprint_run_verdict{run_tag="unjudged"}', "values": "-1x2400"})
def alert(name, t, fired):
    return {"eval_time": t, "alertname": name,
            "exp_alerts": [{"exp_labels": l, "exp_annotations": a} for l, a in fired]}
def run_failed(tag):
    return ({"severity": "critical", "run_tag": tag},
            {"summary": f"fleetprint {tag}: the run's verdict is fail",
             "description": f'See fleetprint_verdict{{run_tag="{tag}",state="fail"}} for the entities, '
                            "and the run's HTML page."})
tripped = [dict(l)["run_tag"] for n, l, v in series if n == "fleetprint_breaker_tripped" and v == 1]
assert tripped == ["fleet"], tripped
tests = [
    # the fleet run fails too, but its four nodes fire no node alert: the breaker's does
    alert("FleetprintRunFailed", "5m", [run_failed("preflight"), run_failed("fleet")]),
    alert("FleetprintBreakerTripped", "5m", [(
        {"severity": "critical", "run_tag": "fleet"},
        {"summary": "fleetprint fleet: circuit breaker tripped, nothing drained",
         "description": "More of the run's nodes failed than --max-drain allows "
                        "(fleetprint_run_failing_nodes). Suspect the baselines, the test, or a "
                        "fleet-wide change (driver, firmware, power cap) before draining by hand."})]),
    alert("FleetprintNodeFailed", "5m", [(
        {"severity": "warning", "run_tag": "preflight", "kind": "node", "Hostname": bad[0], "state": "fail"},
        {"summary": f"fleetprint preflight: node {bad[0]} fails",
         "description": "Drain it (the run's drain file lists it) and look at its reasons in the HTML page."})]),
    alert("FleetprintNightlyNoSuccess", "35h", []),
    alert("FleetprintNightlyNoSuccess", "37h", [(
        {"severity": "warning", "run_tag": "nightly"},
        {"summary": "fleetprint nightly: no successful run for 1d 13h 0m 0s"})]),
]
gpu = [dict(l) for n, l, v in series if n == "fleetprint_verdict" and v == 1
       and dict(l)["kind"] == "gpu" and dict(l)["state"] == "fail" and dict(l)["run_tag"] != "fleet"]
assert gpu and all(g["Hostname"] == bad[0] and g["run_tag"] == "preflight" for g in gpu), gpu
tests.append(alert("FleetprintGpuFailed", "5m", [(
    dict(g, severity="warning"), {"summary": f"fleetprint preflight: GPU {g['gpu']} of {bad[0]} fails"})
    for g in gpu]))
doc = {"rule_files": [sys.argv[1]], "evaluation_interval": "1m",
       "tests": [{"interval": "1m", "input_series": inputs, "alert_rule_test": tests}]}
json.dump(doc, open("alerts_test.yml", "w"), indent=1)  # JSON is YAML
PY
[ $? = 0 ] || fail "the textfiles collide or the alert test cannot be built"
promtool check rules "$rules" >check.txt 2>&1 || { cat check.txt; fail "promtool check rules"; }
promtool test rules alerts_test.yml >test.txt 2>&1 || { tail -n 40 test.txt; fail "promtool test rules"; }

# a failing run keeps the last success of the file it replaces; a passing one
# moves it to its own end
last() { sed -n "s/^fleetprint_last_success_timestamp_seconds{run_tag=\"$1\"} //p" "$2"; }
[ "$(last nightly textfile/nightly.prom)" = 1700000360.000 ] || fail "nightly's last success is not its end"
[ "$(last preflight textfile/preflight.prom)" = 0.000 ] || fail "a failing first run has a last success"
sed 's/"tag":"nightly"/"tag":"preflight"/' nightly.jsonl >ok.jsonl
"$FLEETPRINT" report --input ok.jsonl --prometheus textfile/preflight.prom >/dev/null 2>&1 || fail "passing report"
"$FLEETPRINT" report --input preflight.jsonl --prometheus textfile/preflight.prom >/dev/null 2>&1 && fail "failing report exit 0"
[ "$(last preflight textfile/preflight.prom)" = 1700000360.000 ] || fail "the failing run lost the last success"
grep -q '^fleetprint_run_verdict{run_tag="preflight"} 2$' textfile/preflight.prom || fail "run verdict not 2"
# the breaker's run: nothing in its drain file, one line saying why, exit 1
rc=0
"$FLEETPRINT" detect --input fleet.jsonl -q --drain-file fleet.drain >breaker.log 2>&1 || rc=$?
[ "$rc" = 1 ] && [ ! -s fleet.drain ] || { cat breaker.log; fail "breaker: exit $rc, drain file '$(cat fleet.drain)'"; }
grep -q "error: 4 of 20 nodes fail: more than --max-drain (5% and 2 nodes); nothing drained. Suspect the baselines, the test, or a fleet-wide change" breaker.log ||
  { cat breaker.log; fail "no breaker line"; }
rc=0
"$FLEETPRINT" detect --input fleet.jsonl -q --max-drain 1 --drain-file fleet.drain >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] && [ -s fleet.drain ] || fail "--max-drain 1 did not switch the breaker off (exit $rc)"
echo "ok: 4 textfiles in one folder, no series collected twice; promtool check/test rules pass; the breaker drains nothing"
