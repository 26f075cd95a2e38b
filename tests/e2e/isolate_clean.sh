#!/usr/bin/env bash
# fleetprint isolate on 16 healthy emulated nodes, 10 times (issue 34, must
# show 2): nothing is named, every run exits 0 with an empty drain file. The
# slow judgement compares timings on shared cores, so this is the false-alarm
# count of the rule (docs/isolate.md): it must be 0 of 10.
. "$FP_TESTS/lib.sh"
cd "$WORK"
runs=${FP_ISOLATE_RUNS:-10}
named=0
for i in $(seq 1 "$runs"); do
  rc=0
  mpi 16 "$FLEETPRINT" isolate --timeout 20s --drain-file "drain$i.txt" \
    --rounds-json "rounds$i.json" >"out$i" 2>&1 || rc=$?
  summary=$(grep -E '^isolate \(' "out$i" || true)
  echo "run $i: exit $rc: $summary"
  if [ "$rc" != 0 ] || [ -s "drain$i.txt" ] || grep -q '^named:' "out$i"; then
    named=$((named + 1))
    grep -E '^(named|note):' "out$i" >&2 || cat "out$i" >&2
  fi
done
[ "$named" = 0 ] || fail "$named of $runs clean runs named something"
echo "ok: $runs clean runs at 16 nodes, nothing named"
