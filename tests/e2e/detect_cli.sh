#!/usr/bin/env bash
# fleetprint simulate -> detect (file and store), drain/exclude files against
# the truth, and the input errors: one line, exit 2.
. "$FP_TESTS/lib.sh"
cd "$WORK"
F=$FLEETPRINT

# ---- a simulated fleet with known faults -------------------------------------------
expect_rc 0 "$F" simulate --nodes 120 --gpus-per-node 4 --seed 11 --runs 4 \
  --faults slow-gpu=2,slow-node=1,bad-link=1,sdc=1,throttle=1 --out sim.jsonl --truth truth.json
expect_rc 1 "$F" detect --input sim.jsonl --drain-file drain.txt --exclude-file excl.txt \
  --json verdicts.json
expect_out "detect: FAIL -- 5 failing nodes"
check_drain() {
  py - "$1" truth.json verdicts.json <<'PY'
import json, re, sys
def expand(expr):
    out = []
    for m in re.finditer(r'([^,\[]+)(?:\[([^\]]+)\])?', expr.strip()):
        pre, rng = m.group(1), m.group(2)
        if not rng:
            out.append(pre); continue
        for part in rng.split(','):
            lo, _, hi = part.partition('-'); hi = hi or lo
            out += ["%s%0*d" % (pre, len(lo), i) for i in range(int(lo), int(hi) + 1)]
    return out
drain = expand(open(sys.argv[1]).read())
truth = json.load(open(sys.argv[2]))
assert sorted(drain) == sorted(truth["faulty_nodes"]), (drain, truth["faulty_nodes"])
v = json.load(open(sys.argv[3]))
assert v["verdict"] == "fail" and sorted(v["failing_nodes"]) == sorted(drain)
# the simulated noise lets every fault of the rules' size fail: no blind spot
assert v["blind_spots"] == [], v["blind_spots"]
links = [e["entity"] for e in v["entities"] if e["entity"].startswith("link:") and e["verdict"] == "fail"]
assert links == truth["bad_links"], (links, truth["bad_links"])
# every failing entity says why: metric, value, expected, rule, evidence
for e in v["entities"]:
    if e["verdict"] == "fail":
        assert e["reasons"] and all(r["rule"] and r["evidence"] for r in e["reasons"]), e
print("drain ok:", len(drain), "nodes")
PY
}
check_drain drain.txt
cmp drain.txt excl.txt

# the same through a store, with baselines: drift and fleet evidence agree
# (the last, faulty run is marked fault-injected: no baseline material)
expect_rc 0 "$F" store ingest sim.jsonl --store s.h5
expect_rc 0 "$F" store ls --store s.h5
[ "$(grep -c 'fault-injected' "$WORK/out")" = 1 ] || fail "the faulty simulated run is not marked injected"
expect_rc 0 "$F" baseline build --store s.h5
expect_out "baselines from 3 runs \(1 skipped"
expect_rc 1 "$F" detect --store s.h5 --drain-file drain2.txt --json verdicts.json
expect_out "peer, drift and fleet evidence"
grep -q '"evidence": "drift"' verdicts.json || fail "no drift evidence in the verdicts"
check_drain drain2.txt

# the printed defaults are a valid rules file giving the same verdicts
"$F" detect --print-rules > rules.json
expect_rc 1 "$F" detect --input sim.jsonl --rules rules.json --drain-file drain3.txt
cmp drain.txt drain3.txt

# a healthy fleet passes: exit 0, empty drain file
expect_rc 0 "$F" simulate --nodes 60 --seed 3 --runs 1 --faults none --out ok.jsonl
expect_rc 0 "$F" detect --input ok.jsonl --drain-file ok.txt
[ ! -s ok.txt ] || fail "drain file of a healthy fleet is not empty"

# ---- input errors: one line, exit 2 -------------------------------------------------
one_line() { [ "$(grep -c . "$WORK/out")" = 1 ] || { cat "$WORK/out"; fail "not one line"; }; }
printf '{"fleetprint_rules": 1,\n "classes": [\n' > bad_rules.json
expect_rc 2 "$F" detect --input sim.jsonl --rules bad_rules.json
expect_out "bad_rules.json: line 3"; one_line
printf '{"fleetprint_rules": 1, "classes": [{"name": "x", "match": "*", "warn": "a", "fail": 1}]}' > bad2.json
expect_rc 2 "$F" detect --input sim.jsonl --rules bad2.json
expect_out "bad2.json: classes\[0\].warn"; one_line
expect_rc 2 "$F" detect --store s.h5 --run no-such-run
expect_out "no-such-run"; one_line
cp s.h5 v99.h5
py -c "import h5py; f=h5py.File('v99.h5','r+'); f.attrs['fleetprint_schema']=99; f.close()"
expect_rc 2 "$F" detect --store v99.h5
expect_out "schema version 99"; one_line
expect_rc 2 "$F" detect --store missing.h5
one_line
expect_rc 2 "$F" detect
expect_out "one of --store FILE or --input FILE"; one_line
printf '{"kind":"sample","run":"r","suite":"k"\n' > trunc.jsonl
expect_rc 2 "$F" detect --input trunc.jsonl
expect_out "trunc.jsonl:1:"; one_line
expect_rc 2 "$F" simulate --nodes 10 --faults slow-gpu=x --out x.jsonl
expect_out "bad count 'x'"; one_line
echo "ok"
