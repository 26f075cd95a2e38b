#!/bin/bash
# The kernels suite on the host backend, 4 ranks as 2 nodes: every test
# emits its metrics with unit and direction, results verify, and bad fused
# options are one-line usage errors (exit 2).
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export FP_RANKS_PER_NODE=2
run() { "$MPIEXEC" -np 4 --oversubscribe "$FP_TESTS/fpnode" "$FLEETPRINT" run --suite kernels \
        --threads 1 -n 2 -w 1 -b 64K -e 1M --array-size 1M --gemm-size 128 \
        --fused-m 64 --fused-nk 64,64 --chunks 1,2 -q "$@"; }
run --json "$out/run.json" 2>"$out/err" || { echo "suite run failed"; cat "$out/err"; exit 1; }
/usr/bin/python3 - "$out/run.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
got = {}
for s in run["samples"]:
    got.setdefault(s["test"], set()).add((s["metric"], s["unit"], s["better"]))
want = {
    "membw": ("triad_bw", "GB/s", "higher"),
    "gemm": ("f64_flops", "GFLOP/s", "higher"),
    "launch": ("launch_us", "us", "lower"),
    "copy": ("memcpy_bw", "GB/s", "higher"),
    "p2p": ("bidir_bw", "GB/s", "higher"),
    "fused": ("rs_m64_c2_E", "ratio", "higher"),
}
for test, row in want.items():
    assert row in got.get(test, set()), (test, row, sorted(got.get(test, ())))
wrong = [s for s in run["samples"] if "wrong" in s["metric"] and s["value"] != 0]
assert not wrong, wrong
links = {s["entity"] for s in run["samples"] if s["test"] == "p2p"}
assert links == {"link:n0/0~n0/1", "link:n0/1~n0/0", "link:n1/0~n1/1", "link:n1/1~n1/0"}, links
print("kernels suite: %d samples, %d tests, all verified" % (len(run["samples"]), len(got)))
PY
[ $? -eq 0 ] || exit 1
# usage errors name the bad item and exit 2
expect2() {
    "$MPIEXEC" -np 2 --oversubscribe "$FP_TESTS/fpnode" "$FLEETPRINT" run --test fused -q "$@" 2>"$out/err"
    rc=$?
    [ $rc -eq 2 ] || { echo "$*: exit $rc, want 2"; cat "$out/err"; exit 1; }
}
expect2 --chunks 1,x
grep -q "item 2 'x'" "$out/err" || { cat "$out/err"; exit 1; }
expect2 --fused-nk 64
grep -q "fused-nk '64'" "$out/err" || { cat "$out/err"; exit 1; }
expect2 --fused-m 100 --chunks 8
grep -q "fused-m 100 must be a multiple" "$out/err" || { cat "$out/err"; exit 1; }
echo "usage errors: ok"
