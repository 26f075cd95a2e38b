#!/usr/bin/env bash
# Every metric the suites can emit is judged by a rule of its own, not the
# catch-all `default` class: the keys of a real host run of every suite
# (run --suite all, and burnin, on 2 emulated nodes) plus the cuda/NVML-only
# names in cuda_metrics.txt, classified by `detect --classify`. Fails naming
# each key that only the default rule (or no rule) matches.
. "$FP_TESTS/lib.sh"
cd "$WORK"
F=$FLEETPRINT
expect_rc 0 mpi 2 "$F" run --suite all --threads 1 -n 2 -w 1 -b 64K -e 256K --array-size 1M \
  --gemm-size 128 --fused-m 64 --fused-nk 64,64 --chunks 1,2 -q --json run.json
expect_rc 0 mpi 2 "$F" burnin --duration 2s --interval 1s --threads 1 -q --json burnin.json
py - run.json burnin.json >keys.txt <<'PY'
import json, sys
keys = set()
for path in sys.argv[1:]:
    for s in json.load(open(path))["samples"]:
        k = f"{s['suite']}.{s['test']}.{s['metric']}"
        keys.add(f"{k}@{s['size']}" if s["size"] else k)
print("\n".join(sorted(keys)))
PY
grep -v '^#' "$FP_TESTS/detect/cuda_metrics.txt" >>keys.txt
suites=$(cut -d. -f1 keys.txt | sort -u | tr '\n' ' ')
case "$suites" in *burnin*collectives*kernels*) ;; *) fail "expected keys of every suite, got: $suites" ;; esac
"$F" detect --classify <keys.txt >rules.txt || fail "detect --classify failed"
[ "$(wc -l <rules.txt)" = "$(wc -l <keys.txt)" ] || fail "not every key was classified"
if grep -E ' (default|-)$' rules.txt; then
  fail "the keys above are judged only by the default rule: give them a class"
fi
echo "ok: $(wc -l <keys.txt) metric keys, each with a rule of its own: $(awk '{print $2}' rules.txt | sort -u | tr '\n' ' ')"
