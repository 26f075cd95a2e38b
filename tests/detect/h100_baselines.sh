#!/usr/bin/env bash
# Real measurements: the three kernels runs of one H100 (tests/data/gpu-h100,
# clean re-runs of an unchanged GPU). Each run, judged against baselines built
# from the other two with the default rules, must not fail: a 2-run baseline is
# below min_runs (3), no verdict rests on it, and --explain says so.
# With min_runs 2 the drift evidence is used and printed as expected ± band
# over runs × windows for every metric, and still no run fails (copies are
# noisy: judged on persistence over windows; membw, GEMM and pinned copies on
# the run's best against the baseline runs' best). The first run with a fault
# planted in it (bf16 GEMM windows at 0.6x) fails naming that metric: the
# evidence is not blind.
. "$FP_TESTS/lib.sh"
cd "$WORK"
F=$FLEETPRINT
D=$FP_TESTS/data/gpu-h100/kernels-3runs.jsonl
ids=$(py -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["kind"] == "run": print(o["run"]["id"])' "$D")
[ "$(echo "$ids" | wc -l)" = 3 ] || fail "want 3 runs in $D"
"$F" detect --print-rules | sed 's/"min_runs": 3/"min_runs": 2/' >r2.json
grep -q '"min_runs": 2' r2.json || fail "cannot make a min_runs 2 rules file"

# store with the other two runs' baselines, then the live run ($2: jsonl)
judge_store() {
  rm -rf s.h5 s.h5.d  # the manifest and its partitions (docs/store.md)
  grep -v "\"$1\"" "$D" >hist.jsonl
  expect_rc 0 "$F" store ingest hist.jsonl --store s.h5
  expect_rc 0 "$F" baseline build --store s.h5
  expect_rc 0 "$F" store ingest "$2" --store s.h5
}

for id in $ids; do
  grep "\"$id\"" "$D" >live.jsonl
  judge_store "$id" live.jsonl
  expect_rc 0 "$F" detect --store s.h5 --run "$id" --explain gpu:vm/0
  expect_out "not judged: drift: entity baseline of 2 runs < min_runs 3"
  rc=0
  # stderr apart: its log lines must not split the evidence lines counted below
  "$F" detect --store s.h5 --run "$id" --rules r2.json --explain gpu:vm/0 >"$WORK/out" 2>err.txt || rc=$?
  expect_out "expected [0-9.e+]+ ± [0-9.e+]+ GB/s over 2 runs × 20 windows"
  ndrift=$(grep -Ec '^ +(pass|warn|fail) +drift ' "$WORK/out" || true)
  # 37 variance-judged metrics: membw 4, gemm 6, launch 2, copy 25 (the rest are value rules)
  [ "$ndrift" -ge 37 ] || fail "run $id: drift evidence judged $ndrift series, want all 37"
  [ "$rc" = 0 ] || { cat "$WORK/out" >&2; fail "run $id fails with min_runs 2"; }
  echo "ok: run $id passes against baselines of the other two (min_runs 3 and 2)"
done

# min_runs 2 on the first run with a planted fault: a fail naming it
first=$(echo "$ids" | head -1)
grep "\"$first\"" "$D" >live.jsonl
py - live.jsonl >bad.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["kind"] == "sample" and o["metric"] == "bf16_flops":
        o["value"] *= 0.6
    print(json.dumps(o))
PY
judge_store "$first" bad.jsonl
expect_rc 1 "$F" detect --store s.h5 --run "$first" --rules r2.json
expect_out "fail +drift +kernels.gemm.bf16_flops"
echo ok
