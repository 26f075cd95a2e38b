#!/usr/bin/env bash
# report --prometheus DIR/ (one textfile per node, docs/prometheus.md "One file
# per node") on simulated fleets with known faults:
#   - one fleetprint-<node>.prom per node plus fleetprint-run.prom, nothing
#     else (no temporary left), each within 64 KiB and 400 series, each clean
#     under promtool check metrics;
#   - a node file holds only series with Hostname="<node>", the run file none
#     with a Hostname; node_exporter's gather check, reproduced over the node
#     files, the run file and another run's single textfile in the same folder:
#     no series twice, one help text and type per family;
#   - a passing link's series is summarised: the node's min/median/max equal
#     those computed from the single textfile's link series at either end; a
#     link that does not pass keeps its series and verdict in its first end's
#     file; node and device verdicts are all there;
#   - the alert rules on the folder's series: FleetprintNodeFailed fires for
#     exactly the faulty node, FleetprintRunFailed once; on a fleet whose
#     breaker trips, no node alert and one breaker alert;
#   - a family of two metrics (link_bandwidth: bw_inter, bw_intra) has one help
#     text in every file;
#   - detect writes the same folder; a node named "run" is refused.
. "$FP_TESTS/lib.sh"
command -v promtool >/dev/null || { echo "SKIP: no promtool (Debian package prometheus; ci/deps.sh installs it)"; exit 77; }
rules=$FP_SRC/docs/prometheus-alerts.yml
cd "$WORK"
F=$FLEETPRINT

# 40 nodes: beyond 32 the link sweep pairs each node with a few partners, as at scale
"$F" simulate --runs 1 --nodes 40 --gpus-per-node 8 --seed 5 --faults slow-node=1,bad-link=1 \
  --out fleet.jsonl --truth truth.json 2>/dev/null || fail "simulate"
sed -i 's/"tag":"sim"/"tag":"preflight"/' fleet.jsonl
"$F" simulate --runs 1 --nodes 40 --gpus-per-node 2 --seed 6 --faults slow-node=6 \
  --out breaker.jsonl 2>/dev/null || fail "simulate (breaker)"
sed -i 's/"tag":"sim"/"tag":"fleet"/' breaker.jsonl
"$F" simulate --runs 1 --nodes 6 --gpus-per-node 2 --faults none --out nightly.jsonl 2>/dev/null
sed -i 's/"tag":"sim"/"tag":"nightly"/' nightly.jsonl

rc=0
"$F" report --input fleet.jsonl --prometheus nodes/ -q >report.log 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat report.log; fail "report of a failing fleet exited $rc"; }
# the same run as one file, for the comparisons below
"$F" report --input fleet.jsonl --prometheus single.prom -q >/dev/null 2>&1 || true
# detect writes the folder too; an existing folder needs no '/'
rc=0
"$F" detect --input breaker.jsonl -q --prometheus breaker/ >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] && [ -s breaker/fleetprint-run.prom ] || fail "detect --prometheus breaker/ exited $rc"
mkdir existing
"$F" report --input breaker.jsonl -q --prometheus existing >/dev/null 2>&1 || true
[ -s existing/fleetprint-run.prom ] || fail "report --prometheus into an existing folder wrote no run file"
"$F" report --input nightly.jsonl --prometheus nodes/nightly.prom -q >/dev/null 2>&1 || fail "nightly report"

[ "$(ls nodes | grep -c '^fleetprint-')" = 41 ] || { ls nodes; fail "expected 41 files (40 nodes and the run)"; }
! ls nodes breaker | grep -q '\.tmp$' || fail "a temporary was left behind"
for f in nodes/*.prom breaker/*.prom; do
  promtool check metrics <"$f" >lint.txt 2>&1 || { cat lint.txt; fail "promtool check metrics $f"; }
done

py - "$rules" "$FP_TESTS" <<'PY'
import glob, json, os, sys
sys.path.insert(0, sys.argv[2])
from prom_gather import gather
def parse(path):
    return [(n, l, v) for p, n, l, v in gather([path])]

# node_exporter's gather check over the whole folder, another tag's file included
n = len(gather(sorted(glob.glob("nodes/*.prom"))))
print(f"ok: {n} series in {len(glob.glob('nodes/*.prom'))} files, none collected twice")

files = {p: parse(p) for p in glob.glob("nodes/fleetprint-*.prom")}
sizes = {p: os.path.getsize(p) for p in files}
big = max(files, key=lambda p: len(files[p]))
assert max(sizes.values()) <= 64 * 1024, max(sizes.items(), key=lambda x: x[1])
assert len(files[big]) <= 400, (big, len(files[big]))
print(f"ok: largest file {max(sizes.values())} bytes, most series {len(files[big])} ({big})")
run = files.pop("nodes/fleetprint-run.prom")
assert all("Hostname" not in l for n, l, v in run), "a run-file series has a Hostname"
for p, ser in files.items():
    node = p[len("nodes/fleetprint-"):-len(".prom")]
    bad = [(n, l) for n, l, v in ser if l.get("Hostname") != node]
    assert not bad, f"{p}: series of another node: {bad[:2]}"

single = parse("single.prom")
verdict = {}
for n, l, v in single:
    if n == "fleetprint_verdict" and v == 1:
        verdict[tuple(sorted((k, x) for k, x in l.items() if k != "state"))] = l["state"]
def state(l, kind):
    keys = ("run_tag", "Hostname", "gpu", "peer_Hostname", "peer_gpu", "rank")
    return verdict[tuple(sorted([("kind", kind)] + [(k, l[k]) for k in keys if k in l]))]
links = [(l, v) for n, l, v in single if n == "fleetprint_link_bandwidth_bytes_per_second"]
assert links, "no link series in the single file"
failing = [l for l, v in links if state(l, "link") != "pass"]
assert failing, "the bad link does not show: nothing to test the kept series with"
# every link that does not pass keeps its series and its verdict in its first end's file
for l in failing:
    mine = files[f"nodes/fleetprint-{l['Hostname']}.prom"]
    assert any(n == "fleetprint_link_bandwidth_bytes_per_second" and x == l for n, x, v in mine), l
    assert any(n == "fleetprint_verdict" and x.get("kind") == "link" and
               x.get("peer_Hostname") == l["peer_Hostname"] for n, x, v in mine), l
# every node's summary: min, lower median, max of its passing links at either end
for p, ser in files.items():
    node = p[len("nodes/fleetprint-"):-len(".prom")]
    vals = sorted(v for l, v in links if node in (l["Hostname"], l["peer_Hostname"])
                  and state(l, "link") == "pass")
    got = {l["stat"]: v for n, l, v in ser if n == "fleetprint_node_link_bandwidth_bytes_per_second"}
    want = {"min": vals[0], "median": vals[(len(vals) - 1) // 2], "max": vals[-1]} if vals else {}
    assert got == want, (node, got, want)
    assert not any(n == "fleetprint_link_bandwidth_bytes_per_second" and
                   state(l, "link") == "pass" for n, l, v in ser), f"{p}: a passing link kept"
    # its node and device verdicts, each a full state set
    kinds = [l["kind"] for n, l, v in ser if n == "fleetprint_verdict"]
    assert kinds.count("node") == 4 and kinds.count("gpu") == 32, (p, kinds.count("gpu"))
    counts = {(l["kind"], l["state"]): v for n, l, v in ser if n == "fleetprint_node_verdicts"}
    assert counts[("link", "pass")] == len(vals), (node, counts, len(vals))
# the device series are the single file's, unchanged
dev = sorted((n, tuple(sorted(l.items())), v) for n, l, v in single if "gpu" in l and "peer_Hostname" not in l
             and n != "fleetprint_verdict")
mine = sorted((n, tuple(sorted(l.items())), v) for ser in files.values() for n, l, v in ser
              if "gpu" in l and "peer_Hostname" not in l and n != "fleetprint_verdict")
assert dev == mine, "the device series differ from the single file's"

# the alert rules over the folder's series (each node file as its own node
# would serve it, the run file beside them)
bad = json.load(open("truth.json"))["faulty_nodes"]
failed_nodes = sorted(l["Hostname"] for ser in files.values() for n, l, v in ser
                      if n == "fleetprint_verdict" and l["kind"] == "node" and l["state"] == "fail" and v == 1)
assert set(bad) <= set(failed_nodes), (bad, failed_nodes)
def fmt(n, labels):
    return n + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
def inputs(paths):
    return [{"series": fmt(n, l), "values": f"{v!r}x60"} for p in paths for n, l, v in parse(p)]
def alert(name, fired):
    return {"eval_time": "5m", "alertname": name, "exp_alerts": fired}
node_alerts = [{"exp_labels": {"severity": "warning", "run_tag": "preflight", "kind": "node",
                               "Hostname": h, "state": "fail"},
                "exp_annotations": {"summary": f"fleetprint preflight: node {h} fails",
                                    "description": "Drain it (the run's drain file lists it) and look at its reasons in the HTML page."}}
               for h in failed_nodes]
run_failed = lambda tag: {"exp_labels": {"severity": "critical", "run_tag": tag},
                          "exp_annotations": {"summary": f"fleetprint {tag}: the run's verdict is fail",
                                              "description": f'See fleetprint_verdict{{run_tag="{tag}",state="fail"}} for the entities, '
                                                             "and the run's HTML page."}}
tests = [{"interval": "1m", "input_series": inputs(glob.glob("nodes/fleetprint-*.prom")),
          "alert_rule_test": [alert("FleetprintNodeFailed", node_alerts),
                              alert("FleetprintRunFailed", [run_failed("preflight")]),
                              alert("FleetprintBreakerTripped", [])]},
         {"interval": "1m", "input_series": inputs(glob.glob("breaker/*.prom")),
          "alert_rule_test": [alert("FleetprintNodeFailed", []), alert("FleetprintGpuFailed", []),
                              alert("FleetprintRunFailed", [run_failed("fleet")]),
                              alert("FleetprintBreakerTripped", [{
                                  "exp_labels": {"severity": "critical", "run_tag": "fleet"},
                                  "exp_annotations": {"summary": "fleetprint fleet: circuit breaker tripped, nothing drained",
                                                      "description": "More of the run's nodes failed than --max-drain allows "
                                                                     "(fleetprint_run_failing_nodes). Suspect the baselines, the test, or a "
                                                                     "fleet-wide change (driver, firmware, power cap) before draining by hand."}}])]}]
json.dump({"rule_files": [sys.argv[1]], "evaluation_interval": "1m", "tests": tests},
          open("alerts_test.yml", "w"), indent=1)
PY
[ $? = 0 ] || fail "the folder's files are wrong (above)"
promtool test rules alerts_test.yml >test.txt 2>&1 || { tail -n 40 test.txt; fail "promtool test rules on the folder"; }

# one family, two metrics (bw_inter and bw_intra: link_bandwidth by scope): a
# node whose only kept link is intra-node (n10~n11's samples made bw_intra,
# 0.5 GB/s) and the faulty link's node, inter-node, give it one help text
awk '/"metric":"bw_inter"/ && /"link:n10~n11"/ { sub(/"bw_inter"/, "\"bw_intra\""); sub(/"value":[^,]*/, "\"value\":0.5") }
     { print }' fleet.jsonl >scopes.jsonl
grep -q '"bw_intra".*"link:n10~n11".*"value":0.5' scopes.jsonl || fail "no intra-node link made"
"$F" report --input scopes.jsonl --prometheus scopes/ -q >/dev/null 2>&1 || true
grep -q 'fleetprint_link_bandwidth_bytes_per_second{.*scope="intra".*Hostname="n10"' scopes/fleetprint-n10.prom ||
  fail "n10's intra-node link has no series of its own"
py - "$FP_TESTS" <<'PY' || fail "the two scopes of link_bandwidth give two help texts"
import glob, sys
sys.path.insert(0, sys.argv[1])
from prom_gather import gather
gather(sorted(glob.glob("scopes/*.prom")))
PY

# a node named "run" would overwrite the run file: refused, the folder untouched
sed -E 's/\bn0\b/run/g' nightly.jsonl >clash.jsonl
grep -q '"run"' clash.jsonl || fail "no node renamed to run (simulate's names changed?)"
expect_rc 2 "$F" report --input clash.jsonl --prometheus clash/
expect_out "node 'run' cannot name its file"
[ ! -e clash/fleetprint-run.prom ] || fail "a refused folder was written"
echo "ok: 41 files, bounds, promtool check and test rules, duplicates, summaries, breaker"
