#!/usr/bin/env bash
# fleetprint run --suite kernels on N emulated nodes: exit 0, membw samples
# with units for every node, the run context filled in; ranks that share
# this machine's cores are recorded so, and detect judges the stored run so.
. "$FP_TESTS/lib.sh"
n=${1:?ranks}
expect_rc 0 mpi "$n" "$FLEETPRINT" run --suite kernels --test membw --array-size 2M -n 3 -w 1 \
  --json "$WORK/out.json"
py - "$WORK/out.json" "$n" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
run, samples = d["run"], d["samples"]
assert run["nodes"] == ["n%d" % i for i in range(n)], run["nodes"]
assert len(run["ranks"]) == n and run["id"] and run["command"] and run["mpi_version"]
assert run["device_backend"] == "host" and run["comm_backend"] == "mpi"
# each emulated node's rank wants every core: two or more share them
import re
assert (re.fullmatch(r"\d+ threads on \d+ cores of host .+", run["contended"]) if n > 1
        else run["contended"] == ""), run["contended"]
for i in range(n):
    mine = [s for s in samples if s["entity"] == "gpu:n%d/0" % i]
    metrics = {s["metric"] for s in mine}
    assert {"copy_bw", "scale_bw", "add_bw", "triad_bw", "wrong"} <= metrics, metrics
    assert all(s["unit"] in ("GB/s", "count") for s in mine)
    assert all(s["value"] > 0 for s in mine if s["unit"] == "GB/s")
    assert all(s["value"] == 0 for s in mine if s["metric"] == "wrong")
print("ok: %d samples from %d nodes" % (len(samples), n))
PY
if [ "$n" = 2 ]; then
  expect_rc 0 mpi 2 "$FLEETPRINT" run --test membw --array-size 1M -n 2 -w 0 --junit "$WORK/j.xml"
  xmllint --noout --schema "$FP_TESTS/junit.xsd" "$WORK/j.xml"
  [ "$(grep -c '<testcase ' "$WORK/j.xml")" -eq 2 ] || fail "JUnit: expected 2 test cases"
  grep -q 'failures="0"' "$WORK/j.xml" || fail "JUnit: expected no failures"
  # every verification count is a case (gemm's f64_wrong, f32_wrong too)
  expect_rc 1 mpi 2 "$FLEETPRINT" run --test gemm --inject bitflip:rank=1 --junit "$WORK/j.xml"
  grep -Eq '<testcase classname="fleetprint.kernels.gemm" name="kernels.gemm.f(32|64)_wrong@[0-9]+ gpu:n1/0"[^/]*>' \
    "$WORK/j.xml" || fail "JUnit: no failing gemm case for gpu:n1/0"
fi
if [ "$n" = 3 ]; then
  # --store: rank 0 appends each run; a second run lands beside the first
  for i in 1 2; do
    expect_rc 0 mpi 3 "$FLEETPRINT" run --test membw --array-size 1M -n 2 -w 0 --tag t \
      --store "$WORK/fleet.h5"
  done
  expect_rc 0 "$FLEETPRINT" store ls --store "$WORK/fleet.h5"
  [ "$(grep -c ' t  *complete  *3  *3 ' "$WORK/out")" -eq 2 ] || { cat "$WORK/out"; fail "expected 2 stored runs"; }
  h5dump -H "$WORK/fleet.h5" >/dev/null || fail "h5dump cannot read the store"
  # the stored run says its ranks shared cores: detect uses the contended thresholds
  "$FLEETPRINT" detect --store "$WORK/fleet.h5" >"$WORK/out" 2>&1 || [ $? = 1 ] ||
    { cat "$WORK/out"; fail "detect on the stored run"; }
  expect_out "evidence; contended thresholds: [0-9]+ threads on [0-9]+ cores of host"
fi
