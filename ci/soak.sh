#!/usr/bin/env bash
# Soak the test suite: build once, then run it N times and count failures per
# test, to show that no assertion is flaky.
#
#   ci/soak.sh N [--hog] [--label L] [--jobs J] [--build DIR]
#
#   N          how many times to run the suite
#   --hog      run beside a CPU hog: one busy loop per core (nproc), started
#              before the first run and stopped on exit, Ctrl-C or kill
#   --label L  only the tests with CTest label L (default: every test but gpu)
#   --jobs J   tests at a time (default 2, as ci/test.sh; RUN_SERIAL tests run alone)
#   --build D  build directory (default build; configured with -DFLEETPRINT_CUDA=OFF
#              -DFLEETPRINT_WERROR=ON when it has no cache yet)
#
# Prints one line per run (result, failed tests, seconds) and a table of
# failures per test; each run's ctest output is kept in D/soak/<start time>/run-I.log.
# Exit: 0 every run green, 1 some run failed, 2 usage, 4 the build failed.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: ci/soak.sh N [--hog] [--label L] [--jobs J] [--build DIR]" >&2; exit 2; }
[ $# -ge 1 ] && [[ $1 =~ ^[1-9][0-9]*$ ]] || usage
runs=$1
shift
hog=0 label="" jobs=2 build=build
while [ $# -gt 0 ]; do
  case $1 in
    --hog) hog=1 ;;
    --label) [ $# -ge 2 ] || usage; label=$2; shift ;;
    --jobs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; jobs=$2; shift ;;
    --build) [ $# -ge 2 ] || usage; build=$2; shift ;;
    *) usage ;;
  esac
  shift
done

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DFLEETPRINT_CUDA=OFF -DFLEETPRINT_WERROR=ON >/dev/null || exit 4
fi
cmake --build "$build" -j"$(nproc)" >/dev/null || { echo "soak: build failed" >&2; exit 4; }

# our children by pid: the hog loops and the running ctest (run in the
# background and waited for, so that a signal is handled at once)
hogs=()
suite=
stop_hogs() {
  local p
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${hogs[@]}"; do wait "$p" 2>/dev/null; done
  hogs=()
}
interrupted() {
  [ -z "$suite" ] || { kill "$suite" 2>/dev/null; wait "$suite" 2>/dev/null; }
  stop_hogs
  echo "soak: interrupted" >&2
  exit 5
}
trap stop_hogs EXIT
trap interrupted INT TERM
if [ $hog = 1 ]; then
  for _ in $(seq "$(nproc)"); do
    bash -c 'while :; do :; done' &
    hogs+=($!)
  done
  echo "soak: CPU hog on $(nproc) cores (pids ${hogs[*]})"
fi

select=(-LE gpu)
[ -n "$label" ] && select=(-L "$label")
logs="$build/soak/$(date +%Y%m%d-%H%M%S)-$$"
mkdir -p "$logs"
declare -A failures=()
green=0
total_start=$(date +%s)
for i in $(seq "$runs"); do
  failed_log="$build/Testing/Temporary/LastTestsFailed.log"
  rm -f "$failed_log"
  start=$(date +%s)
  ctest --test-dir "$build" "${select[@]}" -j"$jobs" --output-on-failure >"$logs/run-$i.log" 2>&1 &
  suite=$!
  rc=0
  wait $suite || rc=$?
  suite=
  took=$(( $(date +%s) - start ))
  names=()
  if [ -f "$failed_log" ]; then
    while IFS=: read -r _ name; do
      names+=("$name")
      failures[$name]=$(( ${failures[$name]:-0} + 1 ))
    done <"$failed_log"
  fi
  passed=$(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$logs/run-$i.log" || true)
  if [ $rc = 0 ]; then
    green=$((green + 1))
    echo "run $i/$runs: green in ${took} s ($(grep -Eo '100% tests passed, 0 tests failed out of [0-9]+' "$logs/run-$i.log"))"
  else
    echo "run $i/$runs: FAILED in ${took} s (${passed:-ctest exit $rc}): ${names[*]:-see $logs/run-$i.log}"
  fi
done
echo "soak: $green of $runs runs green$([ $hog = 1 ] && echo " beside a CPU hog on $(nproc) cores")," \
  "$(( $(date +%s) - total_start )) s in all; logs in $logs"
if [ ${#failures[@]} -gt 0 ]; then
  echo "failures per test:"
  for name in "${!failures[@]}"; do printf '  %-28s %d of %d runs\n' "$name" "${failures[$name]}" "$runs"; done | sort
fi
[ $green = "$runs" ]
