#!/usr/bin/env bash
# A preflight's Prometheus textfile passes `promtool check metrics`, and its
# GPU series join dcgm-exporter's on (Hostname, gpu): a hand-written
# DCGM_FI_DEV_GPU_TEMP pair (one hot GPU, one cool) selects exactly the hot
# GPU's fleetprint_gemm_flops, through promtool's PromQL engine.
. "$FP_TESTS/lib.sh"
command -v promtool >/dev/null || { echo "SKIP: no promtool (Debian package prometheus; ci/deps.sh installs it)"; exit 77; }
cd "$WORK"
# the verdict is not the point here (a loaded machine may warn or fail a node)
rc=0
mpi 4 "$FLEETPRINT" preflight --test membw --test gemm --test links \
  --array-size 2M --threads 1 --prometheus pf.prom >pf.log 2>&1 || rc=$?
[ "$rc" -le 1 ] || { cat pf.log; fail "preflight exited $rc"; }
[ ! -e pf.prom.tmp ] || fail "the textfile's temporary was left behind"
promtool check metrics <pf.prom >lint.txt 2>&1 || { cat lint.txt; fail "promtool check metrics"; }
grep -q '^fleetprint_memory_bandwidth_bytes_per_second{run_tag="preflight",op="triad",Hostname="n0",gpu="0"' pf.prom ||
  fail "no triad bandwidth for n0's device 0"
[ "$(grep -Ec '^fleetprint_verdict\{run_tag="preflight",kind="node",Hostname="n0",state="[a-z]+"\} 1$' pf.prom)" = 1 ] ||
  fail "n0 is not in exactly one verdict state"
# the join: promtool test rules evaluates the PromQL against these series
py - <<'PY'
import re
flops = {}
for l in open("pf.prom"):
    m = re.match(r'^fleetprint_gemm_flops\{run_tag="preflight",precision="f64",Hostname="(n[0-9])",gpu="([0-9]+)"[^}]*\} (\S+)$', l)
    if m:
        flops[(m[1], m[2])] = (l.split(" ")[0], m[3])
assert ("n1", "0") in flops and ("n2", "0") in flops, flops
hot, cool = flops[("n1", "0")], flops[("n2", "0")]
with open("join.yml", "w") as f:
    f.write("""rule_files: []
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: '%s'
        values: '%s'
      - series: '%s'
        values: '%s'
      - series: 'DCGM_FI_DEV_GPU_TEMP{Hostname="n1",gpu="0",UUID="GPU-1",modelName="H100"}'
        values: '85'
      - series: 'DCGM_FI_DEV_GPU_TEMP{Hostname="n2",gpu="0",UUID="GPU-2",modelName="H100"}'
        values: '40'
    promql_expr_test:
      - expr: 'fleetprint_gemm_flops{precision="f64"} and on(Hostname, gpu) (DCGM_FI_DEV_GPU_TEMP > 80)'
        eval_time: 0m
        exp_samples:
          - labels: '%s'
            value: %s
      - expr: 'DCGM_FI_DEV_GPU_TEMP * on(Hostname, gpu) group_left(precision) (0 * fleetprint_gemm_flops{precision="f64"} + 1)'
        eval_time: 0m
        exp_samples:
          - labels: '{Hostname="n1",gpu="0",UUID="GPU-1",modelName="H100",precision="f64"}'
            value: 85
          - labels: '{Hostname="n2",gpu="0",UUID="GPU-2",modelName="H100",precision="f64"}'
            value: 40
""" % (hot[0], hot[1], cool[0], cool[1], hot[0], hot[1]))
PY
promtool test rules join.yml >join.txt 2>&1 || { cat join.yml join.txt; fail "the PromQL join did not match"; }
echo "ok: promtool check clean, $(grep -vc '^#' pf.prom) series; join on (Hostname, gpu) matches"
