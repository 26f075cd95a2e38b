#!/usr/bin/env bash
# On a GPU machine: the default burn-in ends within 70 s and passes; the
# memory test runs on the device at >= 50% of the membw triad bandwidth; the
# GPU has GEMMs to run >= 95% of the wall time; the telemetry thread samples
# every <= 100 ms; an injected bitflip in the device's result fails the run
# naming the rank.
. "$FP_TESTS/lib.sh"
expect_rc 0 "$FLEETPRINT" run --device cuda --test membw --array-size 256M -n 5 --json "$WORK/m.json"
t0=$(date +%s.%N)
expect_rc 0 "$FLEETPRINT" burnin --device cuda --duration 60s --json "$WORK/b.json"
t1=$(date +%s.%N)
py - "$WORK/m.json" "$WORK/b.json" "$t0" "$t1" <<'PY'
import json, sys
m, b = (json.load(open(p)) for p in sys.argv[1:3])
wall = float(sys.argv[4]) - float(sys.argv[3])
assert wall <= 70, "burnin --duration 60s took %.1f s" % wall
triad = [s["value"] for s in m["samples"] if s["metric"] == "triad_bw" and s["iter"] == -1][0]
S = b["samples"]
mem = [s["value"] for s in S if s["test"] == "memtest" and s["metric"] == "bandwidth"]
err = [s["value"] for s in S if s["test"] == "memtest" and s["metric"] == "errors"]
assert len(mem) == 4 and all(e == 0 for e in err), (mem, err)
assert min(mem) >= 0.5 * triad, "memtest %s GB/s against triad %.0f GB/s" % (mem, triad)
duty = [s["value"] for s in S if s["metric"] == "duty_cycle"]
assert len(duty) == 6 and sum(duty) / len(duty) >= 0.95, duty
n = [s["value"] for s in S if s["test"] == "telemetry" and s["metric"] == "samples"]
assert len(n) == 6 and min(n) >= 80, n  # 10 s windows at <= 100 ms
pw = [s["value"] for s in S if s["metric"] == "power_mean"]
assert len(pw) == 6 and min(pw) > 0, pw
print("wall %.1f s; memtest %s GB/s (triad %.0f); duty %s; power mean %s W" %
      (wall, [round(x) for x in mem], triad, [round(x, 3) for x in duty], [round(x) for x in pw]))
PY
expect_rc 1 "$FLEETPRINT" burnin --device cuda --duration 20s --interval 5s \
  --inject bitflip:rank=0,at=10s --json "$WORK/f.json"
expect_out "SDC SUSPECT"
py - "$WORK/f.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["burnin"]
assert b["sdc_suspects"] == [0], b["sdc_suspects"]
r = b["ranks"][0]
assert r["verdict"] == "fail" and r["self_mismatch"] > 0 and r["first_bad_interval"] >= 0, r
print("bitflip: rank 0 suspect from window", r["first_bad_interval"])
PY
