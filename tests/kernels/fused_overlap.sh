#!/bin/bash
# Must show 2: 4 ranks, fused reports per rank and chunk count GEMM, comm,
# sequential and overlapped times, ECT and E; an injected slow link between
# ranks 0 and 1 (factor 4) makes the communication time grow, and the report
# shows it. The link stretches every collective of the run, so the control
# is the same run's GEMM time: load slows GEMM and communication alike, and
# comm / GEMM (per rank, pattern and chunk count) cancels it. Asserted: the
# median comm / GEMM of the slow run >= 2 x that of the base run (4 x
# injected). Comparing raw times of two runs is not robust: at load 50 a
# whole run without any fault read 50 x slower than the one before it.
set -u
. "$FP_TESTS/measure.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { "$MPIEXEC" -np 4 --oversubscribe "$FP_TESTS/fpnode" "$FLEETPRINT" run --suite kernels \
        --test fused --threads 1 --fused-m 256 --fused-nk 256,256 --chunks 1,2,4 -n 5 -w 1 -q "$@"; }
run --json "$out/base.json" 2>"$out/base.err" || { echo "base run failed"; cat "$out/base.err"; exit 1; }
run $(inject link:ranks=0-1,factor=4) --json "$out/slow.json" 2>"$out/slow.err" ||
    { echo "slow-link run failed"; cat "$out/slow.err"; exit 1; }
/usr/bin/python3 - "$out/base.json" "$out/slow.json" <<'PY'
import json, sys
def load(path):
    run = json.load(open(path))
    return run, {(s["entity"], s["metric"]): s["value"] for s in run["samples"] if s["iter"] == -1}
(base_run, base), (slow_run, slow) = load(sys.argv[1]), load(sys.argv[2])
ents = sorted({e for e, _ in base})
assert len(ents) == 4, ents
for pat in ("rs", "ag"):
    for e in ents:
        for key in ("gemm_best", "ect_seq", "wrong"):
            assert (e, f"{pat}_m256_{key}") in base, (e, pat, key)
        assert base[(e, f"{pat}_m256_wrong")] == 0
        for c in (1, 2, 4):
            for q in ("gemm", "comm", "seq", "overlap", "ect", "E"):
                assert (e, f"{pat}_m256_c{c}_{q}") in base, (e, pat, c, q)
                assert (e, f"{pat}_m256_c{c}_{q}") in slow, (e, pat, c, q)
print("%-10s %-9s %10s %10s %7s" % ("entity", "metric", "base ms", "slow ms", "ratio"))
for pat in ("rs", "ag"):
    for e in ents:
        m = f"{pat}_m256_c1_comm"
        print("%-10s %-9s %10.3f %10.3f %7.2f" % (e, pat + " comm", base[(e, m)], slow[(e, m)],
                                                  slow[(e, m)] / base[(e, m)]))
import statistics
def ratio(fig):
    return statistics.median(fig[(e, f"{pat}_m256_c{c}_comm")] / fig[(e, f"{pat}_m256_c{c}_gemm")]
                             for pat in ("rs", "ag") for e in ents for c in (1, 2, 4))
rb, rs = ratio(base), ratio(slow)
print("median comm / GEMM over 24 figures: base %.3f, slow link %.3f: %.2fx" % (rb, rs, rs / rb))
assert rs >= 2.0 * rb, "the slow link's comm does not stand above the base run's"
assert "link:ranks=0-1" in slow_run["run"]["injections"], slow_run["run"]["injections"]
PY
