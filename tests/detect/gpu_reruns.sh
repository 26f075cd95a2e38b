#!/usr/bin/env bash
# Clean re-runs of one real GPU (tests/data/gpu-<model>/, recorded by
# ci/gpu-record.sh): baselines built from the first K kernels runs judge every
# later run with the default rules, and each must pass (a false alarm on
# healthy hardware fails this test); the second burn-in, judged beside the
# first, passes too. The last run with its GEMM throughput 12% lower (every
# type, every window and the summary) must fail on drift evidence naming a
# GEMM metric: the check can fail.
#   gpu_reruns.sh DATA_DIR K
. "$FP_TESTS/lib.sh"
cd "$WORK"
F=$FLEETPRINT
D=$FP_TESTS/data/$1 K=$2
# split the export into one file per run: run-1.jsonl ... in the file's order
py - "$D/kernels-8runs.jsonl" <<'PY'
import json, sys
n, out = 0, None
for line in open(sys.argv[1]):
    if json.loads(line)["kind"] == "run":
        n += 1
        out = open("run-%d.jsonl" % n, "w")
    out.write(line)
PY
runs=$(ls run-*.jsonl | wc -l)
[ "$runs" -gt "$K" ] || fail "want more than $K runs in $D, found $runs"
id_of() {  # the id of the run in JSON Lines file $1
  py -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["run"]["id"])' "$1"
}
for i in $(seq 1 "$K"); do expect_rc 0 "$F" store ingest "run-$i.jsonl" --store s.h5; done
expect_rc 0 "$F" baseline build --store s.h5
expect_out "baselines from $K runs"
for i in $(seq $((K + 1)) "$runs"); do
  expect_rc 0 "$F" store ingest "run-$i.jsonl" --store s.h5
  id=$(id_of "run-$i.jsonl")
  rc=0
  "$F" detect --store s.h5 --run "$id" --explain "$(py -c 'import json,sys
r = json.loads(open(sys.argv[1]).readline())["run"]["ranks"][0]
print("gpu:%s/%d" % (r["node"], r["dev"]))' "run-$i.jsonl")" >"$WORK/out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$WORK/out" >&2; fail "clean re-run $i ($id) does not pass"; }
  expect_out "detect $id: pass -- nodes: 1 pass, 0 warn"
  # judged on baseline evidence, not waved through: drift lines over K runs
  n=$(grep -Ec "^ +pass +drift .* over $K runs" "$WORK/out" || true)
  [ "$n" -ge 30 ] || fail "run $i: $n series judged on drift over $K runs, want >= 30"
  echo "ok: clean re-run $i passes ($n series judged against $K runs)"
done

# the burn-ins: the second, with the first beside it in the store
expect_rc 0 "$F" store ingest "$D/burnin-2runs.jsonl" --store s.h5
expect_out "ingested 2 runs"
last=$(py -c 'import json,sys
ids = [json.loads(l)["run"]["id"] for l in open(sys.argv[1]) if l.startswith("{\"kind\":\"run\"")]
print(ids[-1])' "$D/burnin-2runs.jsonl")
expect_rc 0 "$F" detect --store s.h5 --run "$last"
expect_out "detect $last: pass"
echo "ok: the second burn-in passes"

# the last kernels run with its GEMMs 12% slower, as a new run
py - "run-$runs.jsonl" >slow.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["kind"] == "run":
        o["run"]["id"] += "-slow"
        o["run"]["time"] += 60
    else:
        o["run"] += "-slow"
        if o["test"] == "gemm" and o["metric"].endswith("_flops"):
            o["value"] *= 0.88
    print(json.dumps(o))
PY
expect_rc 0 "$F" store ingest slow.jsonl --store s.h5
expect_rc 1 "$F" detect --store s.h5 --run "$(id_of slow.jsonl)"
expect_out "fail +drift +kernels\.gemm\.[a-z0-9]+_flops"
echo "ok: the GEMMs 12% slower fail"
