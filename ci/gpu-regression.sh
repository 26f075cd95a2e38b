#!/usr/bin/env bash
# CI regression gate on a GPU runner: run the suites on this machine's
# devices, judge the run against the committed baseline store, and fail the
# job with a JUnit report naming metric, value and expected value.
#
#   ci/gpu-regression.sh            check: exit 0 pass, 1 regression or wrong
#                                   result, 2 bad input (e.g. no baseline), 4 error
#   FP_RECORD=1 ci/gpu-regression.sh   record the baseline: FP_RUNS runs, then
#                                   baseline build; commit the store afterwards
#                                   (ci/baseline.h5 and its ci/baseline.h5.d/)
#
# Settings (environment):
#   FP_BASELINE  the committed baseline store       (default ci/baseline.h5)
#   FP_OUT       where reports go                   (default out)
#   FP_NP        ranks                              (default: GPUs seen by nvidia-smi, else 1)
#   FP_DEVICE    device backend                     (default cuda)
#   FP_ARGS      what to run                        (default --suite all)
#   FP_RULES     detector rules file                (default: the built-in rules)
#   FP_RUNS      runs when recording                (default 3)
#   FLEETPRINT   the binary                         (default build-cuda/fleetprint)
#   MPIRUN       the launcher and its options       (default mpirun)
#                FLEETPRINT, MPIRUN and FP_WRAP are split into words at blanks
#   FP_WRAP      a command the ranks start fleetprint through (a container
#                runner, or tests/fpnode to emulate nodes)   (default none)
set -uo pipefail

baseline=${FP_BASELINE:-ci/baseline.h5}
out=${FP_OUT:-out}
np=${FP_NP:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)}
[ "${np:-0}" -ge 1 ] 2>/dev/null || np=1
read -ra fleetprint <<<"${FLEETPRINT:-build-cuda/fleetprint}"
read -ra mpirun <<<"${MPIRUN:-mpirun}"
read -ra what <<<"${FP_ARGS:---suite all}"
read -ra wrap <<<"${FP_WRAP:-}"
rules=()
[ -n "${FP_RULES:-}" ] && rules=(--rules "$FP_RULES")
mkdir -p "$out"

run() { # tag store
  "${mpirun[@]}" -np "$np" "${wrap[@]}" "${fleetprint[@]}" run "${what[@]}" --device "${FP_DEVICE:-cuda}" \
    --tag "$1" --store "$2" --json "$out/run-$1.json" -q
}

if [ "${FP_RECORD:-0}" = 1 ]; then
  for i in $(seq "${FP_RUNS:-3}"); do
    echo "gpu-regression: baseline run $i of ${FP_RUNS:-3} into $baseline"
    run baseline "$baseline" || exit $?
  done
  exec "${fleetprint[@]}" baseline build --store "$baseline" --tag baseline
fi

[ -r "$baseline" ] || {
  echo "gpu-regression: no baseline store $baseline (record one: FP_RECORD=1 $0)" >&2
  exit 2
}
# the committed store stays as it is: the run goes into a copy (a store is
# FILE, its manifest, and FILE.d, its partitions: docs/store.md)
work="$out/ci.h5"
rm -rf "$work" "$work.d" || exit 4
cp "$baseline" "$work" || exit 4
if [ -d "$baseline.d" ]; then cp -r "$baseline.d" "$work.d" || exit 4; fi
rc=0
run ci "$work" || rc=$?
case $rc in
  0|1) ;;      # measured: 1 means wrong results, which detect reports too
  *) echo "gpu-regression: the run ended with exit $rc" >&2; exit $rc ;;
esac
drc=0
"${fleetprint[@]}" detect --store "$work" --tag ci "${rules[@]}" --junit "$out/junit.xml" \
  --html "$out/report.html" --json "$out/verdicts.json" || drc=$?
echo "gpu-regression: run exit $rc, detect exit $drc; reports in $out (junit.xml, report.html)"
[ $drc -gt $rc ] && exit $drc
exit $rc
