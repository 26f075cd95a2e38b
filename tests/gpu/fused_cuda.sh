#!/usr/bin/env bash
# On a GPU machine: the whole default fused test ends within 60 s and
# verifies; the GEMM-into-peer-buffers path takes at most 1.25x the plain
# cuBLAS GEMM of the same shape.
. "$FP_TESTS/lib.sh"
t0=$(date +%s.%N)
expect_rc 0 "$FLEETPRINT" run --device cuda --test fused --json "$WORK/f.json"
t1=$(date +%s.%N)
py - "$WORK/f.json" "$t0" "$t1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
assert wall <= 60, "fused took %.1f s" % wall
S = {s["metric"]: s["value"] for s in d["samples"] if s["iter"] == -1}
assert all(v == 0 for k, v in S.items() if k.endswith("wrong")), S
ratio = S["rs_p2p_fused_over_gemm"]
assert ratio <= 1.25, (ratio, S["rs_p2p_fused_time"], S["rs_p2p_gemm_time"])
print("fused: %.1f s; p2p %.3f ms vs cuBLAS %.3f ms (%.2fx)" %
      (wall, S["rs_p2p_fused_time"], S["rs_p2p_gemm_time"], ratio))
PY
