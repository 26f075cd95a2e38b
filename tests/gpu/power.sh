#!/usr/bin/env bash
# Over a 30 s bf16 burn-in nvidia-smi shows >= 650 W mean, and fleetprint's
# own telemetry mean is within 10% of it (issue 12 failure 7).
. "$FP_TESTS/gpu/common.sh"
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi"; exit 77; }
nvidia-smi --query-gpu=power.draw --format=csv,noheader,nounits -lms 500 >"$WORK/smi.csv" &
smi=$!
expect_rc 0 within 60 "$FLEETPRINT" burnin --device cuda --duration 30s --gemm-type bf16 \
  --memory-fraction 0 --json "$WORK/b.json"
kill "$smi"
py - "$WORK/b.json" "$WORK/smi.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
smi = [float(x) for x in open(sys.argv[2]) if x.strip()]
smi = smi[len(smi) // 10:]  # past the ramp-up
smi_mean = sum(smi) / len(smi)
# the sampler's per-window means (power_mean, iter = window), not the single
# readings (metric power, iter 0 = before the load, idle)
tel = [s["value"] for s in d["samples"] if s["metric"] == "power_mean"]
assert len(tel) == 3, tel
tel_mean = sum(tel) / len(tel)
print("nvidia-smi %.0f W (%d samples), fleetprint %.0f W (%d samples)" % (smi_mean, len(smi), tel_mean, len(tel)))
assert smi_mean >= 650, smi_mean
assert abs(tel_mean - smi_mean) <= 0.10 * smi_mean, (tel_mean, smi_mean)
print("ok")
PY
