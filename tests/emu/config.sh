#!/bin/bash
# Configuration drift on 8 emulated GPUs (the fake NVML gives every device
# the same H100-like record): a driver that differs from the other 7 warns
# its node, naming the field and the majority's value; a lowered power limit
# fails the node and drains it. The record is what is judged here: the run
# measures an allreduce only (membw, 8 emulated GPUs computing on 2 shared
# cores, is the noisiest measurement a preflight makes, and a peer split of
# it would fail a healthy node of this test on a noisy CI host).
. "$FP_TESTS/emu/common.sh"
[ -n "$FLEETPRINT_NVML" ] || fail "FP_FAKE_NVML is not set (the fake NVML library)"
PF=(preflight -t allreduce -n 3 -w 1 -b 4K -e 16K --timeout 60s)

expect_rc 0 emu 8 nccl "${PF[@]}" --inject config:rank=3,driver_version=550.54.15 \
  --json "$WORK/v.json" --drain-file "$WORK/drain.txt" --run-json "$WORK/run.json"
no_crash
expect_out 'warn  config driver_version = 550\.54\.15 on gpu 0 \(fleet: 580\.159\.04 on 7 of 8 devices\)'
[ ! -s "$WORK/drain.txt" ] || fail "a driver that differs drains nothing: $(cat "$WORK/drain.txt")"
# the record is in the run's JSON, per node and device, and the injection with it
py - "$WORK/run.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["run"]
rec = {c["entity"]: c["fields"] for c in run["config"]}
assert rec["gpu:n3/0"]["driver_version"] == "550.54.15", rec["gpu:n3/0"]
assert rec["gpu:n2/0"]["driver_version"] == "580.159.04", rec["gpu:n2/0"]
assert rec["gpu:n2/0"]["power_limit"] == "700" and rec["gpu:n2/0"]["ecc_mode"] == "Enabled"
assert "kernel" in rec["node:n0"] and "cublas_version" in rec["gpu:n0/0"]
assert "config:rank=3,driver_version=550.54.15" in run["injections"], run["injections"]
PY

expect_rc 1 emu 8 nccl "${PF[@]}" --inject config:rank=3,power_limit=350 \
  --json "$WORK/v.json" --drain-file "$WORK/drain.txt"
no_crash
expect_out 'fail  config power_limit = 350 W on gpu 0 \(fleet: 700 W on 7 of 8 devices\)'
[ "$(cat "$WORK/drain.txt")" = n3 ] || fail "drain list: '$(cat "$WORK/drain.txt")', want n3"
echo "config drift on emulated GPUs: driver warns n3, power limit fails and drains n3"
