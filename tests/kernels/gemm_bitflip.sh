#!/bin/bash
# Must show 4: GEMM verification fails the run (exit 1) when an injected
# bitflip corrupts a result; the same run without it passes.
set -u
. "$FP_TESTS/measure.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { "$MPIEXEC" -np 2 --oversubscribe "$FP_TESTS/fpnode" "$FLEETPRINT" run --test gemm \
        --threads 1 --gemm-size 128 -n 2 -w 1 -q "$@"; }
run --json "$out/ok.json" 2>"$out/ok.err"
rc=$?
[ $rc -eq 0 ] || { echo "clean run: exit $rc"; cat "$out/ok.err"; exit 1; }
run $(inject bitflip:rank=1) --json "$out/bad.json" 2>"$out/bad.err"
rc=$?
[ $rc -eq 1 ] || { echo "bitflip run: exit $rc, want 1"; cat "$out/bad.err"; exit 1; }
grep -q "injected bitflip" "$out/bad.err" || { echo "no bitflip logged"; exit 1; }
grep -q "result elements wrong" "$out/bad.err" || { echo "wrong elements not reported"; exit 1; }
/usr/bin/python3 - "$out/ok.json" "$out/bad.json" <<'PY'
import json, sys
def wrong(path):
    run = json.load(open(path))
    return {(s["entity"], s["metric"]): s["value"] for s in run["samples"] if s["metric"].endswith("_wrong")}
ok, bad = wrong(sys.argv[1]), wrong(sys.argv[2])
assert ok and all(v == 0 for v in ok.values()), ok
flipped = {k: v for k, v in bad.items() if v > 0}
assert flipped and all(k[0] == "gpu:n1/0" for k in flipped), bad
print("bitflip caught:", flipped)
PY
