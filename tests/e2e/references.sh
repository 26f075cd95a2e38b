#!/bin/bash
# The reference catalog: the built-in one is docs/references.json and lists
# the H100 and H200 with measured provenance, A100 and B200 from vendor specs;
# a bad catalog is refused naming the field; baseline export-reference
# round-trips: exported from a store's baselines, loaded with --references, a
# clean run of that store passes against it and a 4x slow rank fails on it.
. "$FP_TESTS/lib.sh"

expect_rc 0 "$FLEETPRINT" detect --print-references
cmp -s "$WORK/out" "$FP_SRC/docs/references.json" ||
  fail "detect --print-references differs from docs/references.json (regenerate detect/references.c)"
py - "$WORK/out" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
by = {m["name"]: m for m in c["models"]}
for name in ("H100 SXM5 80GB", "H200 141GB"):
    s = by[name]["source"]
    assert s["kind"] == "measured" and s["date"] and s["commit"], (name, s)
for name in ("A100 80GB", "B200"):
    assert by[name]["source"]["kind"] == "spec", name
PY

printf '{"fleetprint_references": 1, "models": [{"name": "x", "match": ["x"], "figures": [{"metric": "kernels.membw.triad_bw", "value": -1}]}]}' > "$WORK/bad.json"
expect_rc 2 "$FLEETPRINT" detect --print-references --references "$WORK/bad.json"
expect_out 'bad.json: models\[0\]\.figures\[0\]\.value: expected a number > 0'

# a store of clean host runs, its baselines, exported as a catalog entry
RUN=(run --suite kernels --test membw --test gemm --threads 1 --array-size 1M --gemm-size 128
     -n 4 -w 1 --tag nightly --store "$WORK/s.h5" -q)
for i in 1 2 3; do expect_rc 0 mpi 4 "$FLEETPRINT" "${RUN[@]}"; done
expect_rc 0 "$FLEETPRINT" baseline build --store "$WORK/s.h5"
sku=$(py -c "import json,sys; print(json.load(open(sys.argv[1]))['run']['ranks'][0]['model'])" \
  <("$FLEETPRINT" store export --store "$WORK/s.h5" | head -1 | py -c \
    "import json,sys; print(json.dumps(json.loads(sys.stdin.readline())))"))
expect_rc 0 "$FLEETPRINT" baseline export-reference --store "$WORK/s.h5" --sku "$sku" \
  -o "$WORK/ref.json"
expect_rc 0 "$FLEETPRINT" detect --print-references --references "$WORK/ref.json"
py - "$WORK/ref.json" "$sku" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
m = c["models"][0]
assert m["name"] == sys.argv[2] and m["match"] == [sys.argv[2]], m
keys = {f["metric"] for f in m["figures"]}
assert "kernels.membw.triad_bw" in keys and any(k.startswith("kernels.gemm.") for k in keys), keys
assert all(f["source"]["kind"] == "baseline" and f["source"]["runs"] == 3 for f in m["figures"])
PY
expect_rc 2 "$FLEETPRINT" baseline export-reference --store "$WORK/s.h5" --sku "no such GPU"
expect_out "no baselines of SKU 'no such GPU'"

# a clean run of the store, judged against the exported figures: reference
# evidence fails nothing (peers, on this shared machine, may: the exit code is theirs)
# (4 ranks on this machine's 2 cores: judged as the contended runs they are,
# as preflight would record them; `run` does not check for shared cores)
"$FLEETPRINT" detect --store "$WORK/s.h5" --no-baselines --contended --references "$WORK/ref.json" \
  --json "$WORK/clean.json" > "$WORK/out" 2>&1 || [ $? = 1 ] || fail "detect: $(cat "$WORK/out")"
py - "$WORK/clean.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
bad = [r for e in v["entities"] for r in e["reasons"]
       if r["evidence"] == "reference" and r["verdict"] == "fail"]
assert not bad, bad
PY
# a run with one rank 4x slow fails that device on reference evidence
expect_rc 0 mpi 4 "$FLEETPRINT" run --suite kernels --test membw --test gemm --threads 1 \
  --array-size 1M --gemm-size 128 -n 4 -w 1 --json "$WORK/slow.json" -q --inject slow:rank=2,factor=4
expect_rc 1 "$FLEETPRINT" detect --input "$WORK/slow.json" --contended --references "$WORK/ref.json" \
  --json "$WORK/v.json"
py - "$WORK/v.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
ents = {e["entity"]: e for e in v["entities"]}
refs = [r for r in ents["gpu:n2/0"]["reasons"] if r["evidence"] == "reference"]
assert any(r["verdict"] == "fail" and "baselines of" in r["note"] for r in refs), refs
PY
echo "references: built-in catalog = docs copy, H100/H200 measured; export-reference round-trips"
