#!/usr/bin/env bash
# run --device cuda --suite all with its defaults exits 0 within 10 minutes
# (issue 12 failures 1 and 4: alltoall/sendrecv to self, fused default shapes).
. "$FP_TESTS/gpu/common.sh"
expect_rc 0 within 600 "$FLEETPRINT" run --device cuda --suite all --json "$WORK/all.json"
py - "$WORK/all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["run"]
assert r["device_backend"] == "cuda" and r["nccl_version"], r
assert "CUDA driver API" not in r["driver_version"], r["driver_version"]  # NVML's version
wrong = [s for s in d["samples"] if "wrong" in s["metric"] and s["value"] != 0]
assert not wrong, wrong[:3]
print("ok: %d samples, driver %s, NCCL %s" % (len(d["samples"]), r["driver_version"], r["nccl_version"]))
PY
