#!/usr/bin/env bash
# CI regression gate on a GPU runner: run the suites on this machine's
# devices, judge the run against the committed baseline store, and fail the
# job with a JUnit report naming metric, value and expected value. Before it
# fails the job it re-tests: the failing tests run once more into the work
# store (`run --confirms`, within a quarter of the run's time), the run is
# judged with that re-test, and the job fails only on what failed again; what
# did not reproduce warns ("did not reproduce on re-test" in the output and
# the JUnit report). docs/confirm.md.
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
#   FP_CONFIRM   auto: re-test before failing the job; off: fail on one run (default auto)
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
t0=$(date +%s.%N)
run ci "$work" || rc=$?
t1=$(date +%s.%N)
case $rc in
  0|1) ;;      # measured: 1 means wrong results, which detect reports too
  *) echo "gpu-regression: the run ended with exit $rc" >&2; exit $rc ;;
esac
judge() { # extra detect options
  "${fleetprint[@]}" detect --store "$work" --tag ci "${rules[@]}" --junit "$out/junit.xml" \
    --html "$out/report.html" --json "$out/verdicts.json" "$@"
}
drc=0
judge --retest-args "$out/retest.args" || drc=$?
# a re-test when something failed, or when a host-side deficit waits for one
# to fail (it warns until then; docs/confirm.md): retest.args is not empty
if [ "$drc" -le 1 ] && [ "${FP_CONFIRM:-auto}" != off ] && [ -s "$out/retest.args" ]; then
  # the run's id is the verdicts' first "run" (the confirm object's comes later)
  id=$(sed -n 's/^ *"run": "\([^"]*\)".*/\1/p' "$out/verdicts.json" | head -1)
  read -ra again <"$out/retest.args"
  # what to run, less its test selection and iterations: the re-test names its own
  base=()
  skip=0
  for a in "${what[@]}"; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    case $a in
      --suite|--test|-t|--iters|-n|--pairs) skip=1 ;;
      --suite=*|--test=*|--iters=*|--pairs=*) ;;
      *) base+=("$a") ;;
    esac
  done
  what_for="failed run $id"
  [ "$drc" = 1 ] || what_for="warned on run $id, a host-side deficit that a re-test confirms"
  echo "gpu-regression: detect $what_for: re-testing (${again[*]}) once more" \
    "before failing the job"
  r0=$(date +%s.%N)
  rrc=0
  "${mpirun[@]}" -np "$np" "${wrap[@]}" "${fleetprint[@]}" run "${base[@]}" "${again[@]}" \
    --device "${FP_DEVICE:-cuda}" --tag ci --store "$work" --confirms "$id" \
    --json "$out/run-retest.json" -q || rrc=$?
  r1=$(date +%s.%N)
  case $rrc in
    0|1) ;;
    *) echo "gpu-regression: the re-test ended with exit $rrc: judging the run alone" >&2 ;;
  esac
  drc=0
  judge || drc=$?
  share=$(awk -v a="$t0" -v b="$t1" -v c="$r0" -v d="$r1" 'BEGIN {
    printf "%.2f s, %.0f%% of the run'"'"'s %.2f s", d - c, 100 * (d - c) / (b - a), b - a }')
  if [ "$drc" = 1 ]; then
    echo "gpu-regression: reproduced on re-test ($share): the job fails"
  else
    echo "gpu-regression: did not reproduce on re-test ($share): the job passes;" \
      "the first run's failures warn"
    rc=0 # a wrong result that did not reproduce still fails in detect (exit 1 above)
  fi
fi
echo "gpu-regression: run exit $rc, detect exit $drc; reports in $out (junit.xml, report.html)"
[ $drc -gt $rc ] && exit $drc
exit $rc
