#!/usr/bin/env bash
# On a GPU machine: membw through the cuda backend, every element verified.
. "$FP_TESTS/lib.sh"
expect_rc 0 "$FLEETPRINT" run --device cuda --test membw --array-size 256M -n 5 --json "$WORK/g.json"
py - "$WORK/g.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["run"]["device_backend"] == "cuda" and d["run"]["ranks"][0]["uuid"].startswith("GPU-")
triad = [s["value"] for s in d["samples"] if s["metric"] == "triad_bw" and s["iter"] == -1]
assert triad and triad[0] > 100, triad  # any datacenter GPU exceeds 100 GB/s
assert all(s["value"] == 0 for s in d["samples"] if s["metric"] == "wrong")
print("ok: triad %.0f GB/s" % triad[0])
PY
