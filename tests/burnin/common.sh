# Shared by the burn-in shell tests: lib.sh plus a burn-in launcher sized
# for a shared 2-core machine (1 thread per rank, small GEMM).
. "$FP_TESTS/lib.sh"
# On a busy 2-core machine a healthy rank's throughput can halve against its
# peers for a while (a healthy 6 s run read 53%), which the default
# --degrade-threshold (0.25) fails. The tests whose subject is not
# degradation judge it only at a 90% drop (DEGRADE); burnin_slow sets its own
# and asserts separation instead.
DEGRADE=${DEGRADE:-0.9}
# burnin N args...: fleetprint burnin on N emulated nodes
burnin() {
  local n=$1; shift
  mpi "$n" "$FLEETPRINT" burnin --threads 1 --gemm-size 256 --degrade-threshold "$DEGRADE" "$@"
}
# check PYTHON-CODE: run it with the JSON report as sys.argv[1]
check() { py - "$WORK/out.json" <<<"import json, sys
d = json.load(open(sys.argv[1]))
b = d['burnin']
S = d['samples']
def series(metric, test='gemm'):
    out = {}
    for s in S:
        if s['test'] == test and s['metric'] == metric and s['iter'] >= 0:
            out.setdefault(s['entity'], {})[s['iter']] = s['value']
    return out
$1" || { cat "$WORK/out" >&2; fail "JSON check failed"; }; }
