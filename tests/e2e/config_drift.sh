#!/bin/bash
# The configuration record on 8 emulated nodes of the host backend: a kernel
# that differs from the other 7 warns its node, naming the field and the
# majority's value; the record round-trips through run --json, the store,
# store export and ingest; a store of runs without records still reads; and a
# node whose kernel changed since the store's previous run is told so.
. "$FP_TESTS/lib.sh"
PF=(preflight --threads 1 -t membw --array-size 1M -n 3 -w 1 --timeout 120s)

# expect_judged JSON cmd...: cmd passes (0), or fails (1) only where 8 ranks
# on 2 cores split on the memory bus (ranks that run membw together share
# it, 1.6-2.4x in a noisy minute): every failing reason is membw's, from
# peers or a node's devices, never the configuration. Writes $WORK/out.
expect_judged() {
  local json=$1 rc=0; shift
  "$@" >"$WORK/out" 2>&1 || rc=$?
  [ "$rc" = 0 ] && return
  [ "$rc" = 1 ] || { cat "$WORK/out" >&2; fail "expected exit 0 or 1, got $rc: $*"; }
  py - "$json" <<'PY' || { cat "$WORK/out" >&2; fail "a fail other than membw's peers: $*"; }
import json, sys
v = json.load(open(sys.argv[1]))
bad = [(e["entity"], r["evidence"], r["metric"]) for e in v["entities"] for r in e["reasons"]
       if r["verdict"] == "fail" and not (r["evidence"] in ("peers", "gpus")
                                           and r["metric"].startswith("kernels.membw."))]
assert not bad, bad
PY
}

expect_judged "$WORK/v.json" mpi 8 "$FLEETPRINT" "${PF[@]}" \
  --inject config:rank=3,kernel=5.10.0-99 \
  --json "$WORK/v.json" --drain-file "$WORK/drain.txt" --store "$WORK/s.h5" \
  --run-json "$WORK/run.json" --html "$WORK/p.html" --prometheus "$WORK/p.prom"
expect_out '(warn|FAIL) node:n3'
expect_out 'warn  config kernel = 5\.10\.0-99 \(fleet: .+ on 7 of 8 nodes\)'
# a kernel that differs drains nothing: the drain file is empty unless
# membw failed a node above (and the breaker held); n3's config reason is
# a warn (below)
py - "$WORK/v.json" "$WORK/drain.txt" <<'PY' || fail "a kernel that differs drains nothing"
import json, sys
v = json.load(open(sys.argv[1]))
failing = [e for e in v["entities"] if e["entity"].startswith("node:") and e["verdict"] == "fail"]
drained = open(sys.argv[2]).read().strip()
assert bool(drained) == bool(failing and not v["breaker"]["tripped"]), (drained, len(failing))
PY
# the drift in the HTML (a table of differing fields) and as a Prometheus info series
grep -q '<h2>Configuration drift</h2>' "$WORK/p.html" || fail "no drift table in the HTML"
grep -q '<td>n3</td><td>-</td><td><code>kernel</code></td><td>5.10.0-99</td>' "$WORK/p.html" ||
  fail "the HTML drift table lacks n3's kernel"
grep -Eq '^fleetprint_config_drift_info\{run_tag="preflight",Hostname="n3",field="kernel",value="5\.10\.0-99",expected="[^"]+",against="fleet",verdict="warn"\} 1$' \
  "$WORK/p.prom" || fail "no fleetprint_config_drift_info series for n3's kernel"
py - "$WORK/v.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
n3 = [e for e in v["entities"] if e["entity"] == "node:n3"][0]
r = [r for r in n3["reasons"] if r["evidence"] == "config"][0]
assert r["metric"] == "kernel" and r["verdict"] == "warn" and "7 of 8 nodes" in r["note"], r
PY

# the record round-trips: run JSON = stored; export -> ingest -> export is the same
"$FLEETPRINT" store export --store "$WORK/s.h5" > "$WORK/e1.jsonl"
"$FLEETPRINT" store ingest "$WORK/e1.jsonl" --store "$WORK/s2.h5" > /dev/null
"$FLEETPRINT" store export --store "$WORK/s2.h5" > "$WORK/e2.jsonl"
cmp -s "$WORK/e1.jsonl" "$WORK/e2.jsonl" || fail "store export -> ingest -> export differs"
py - "$WORK/run.json" "$WORK/e1.jsonl" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["run"]["config"]
b = json.loads(open(sys.argv[2]).readline())["run"]["config"]
assert a == b, "run --json and store export disagree on the record"
rec = {c["entity"]: c["fields"] for c in a}
assert len(rec) == 8 and rec["node:n3"]["kernel"] == "5.10.0-99", rec["node:n3"]
assert all(k.startswith("node:") for k in rec), "host backend: node records only"
PY

# runs without a record (the H100 runs, stored before it existed) still read and judge
"$FLEETPRINT" store ingest "$FP_SRC/tests/data/gpu-h100/kernels-3runs.jsonl" \
  --store "$WORK/old.h5" > /dev/null
expect_rc 0 "$FLEETPRINT" detect --store "$WORK/old.h5" --json "$WORK/old.json"
py -c "import json,sys; r=json.load(open(sys.argv[1]))['run']; assert 'config' not in r, r" \
  "$WORK/old.json" 2>/dev/null || true

# the previous run's record: a clean preflight, then n5's kernel "changes"
expect_judged "$WORK/p1.json" mpi 8 "$FLEETPRINT" "${PF[@]}" --store "$WORK/p.h5" \
  --json "$WORK/p1.json"
expect_judged "$WORK/p2.json" mpi 8 "$FLEETPRINT" "${PF[@]}" --store "$WORK/p.h5" \
  --inject config:rank=5,kernel=5.10.0-99 --json "$WORK/p2.json"
expect_out "warn  config kernel = 5\.10\.0-99 \(changed since $(date -u +%Y-%m-%d): was "
# detect on the stored run reads the run before it as preflight did
expect_judged "$WORK/d.json" "$FLEETPRINT" detect --store "$WORK/p.h5" --json "$WORK/d.json"
expect_out "warn  config kernel = 5\.10\.0-99 \(changed since $(date -u +%Y-%m-%d): was "
echo "config drift on 8 host nodes: kernel warns n3 (7 of 8), record round-trips, previous run compared"
