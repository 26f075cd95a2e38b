#!/usr/bin/env bash
# Preflight against a store's baselines, on 8 emulated nodes of this machine:
# BASE clean preflights into a fresh store, `baseline build`, then
#   CLEAN clean `preflight --store` runs            -> want: none fails
#   SLOW  with --inject slow:rank=5,factor=1.5      -> want: each drains exactly n5
#   LINK  with --inject link:ranks=2-6,factor=4     -> want: each names link:n2~n6
#                                                      and drains nothing
#   UNTIL with --inject slow:rank=5,factor=1.5,until=T, the slow rank during
#         the first pass only                       -> want: each drains nothing and
#                                                      says "did not reproduce"
#   SPLIT with slow:rank=R,factor=2 on ranks 1-4     -> want: the verdict fails
#         exactly n1-n4 (a split fleet; whether it drains is the breaker's call)
#   SMALL with --inject slow:rank=3,factor=1.12 (a 12% slowdown, about twice
#         the cost floor)                           -> want: each drains exactly n3;
#         a run that does not is counted apart where its output names the
#         blind spot that hid it ("blind ..."), and as a miss where nothing does
# and print the counts, with the false alarms (healthy nodes failed) and
# misses (faulty nodes not failed) of each case. The store keeps every run
# (injected ones are never baseline material), as a real fleet's would.
#
#   bench/preflight_series.sh [--count] [BASE CLEAN SLOW LINK UNTIL SPLIT SMALL]
#                                           (default 3 20 5 5 5 3 5)
#
# T, on the run's clock as --inject reads it, lies halfway through the link
# sweep (the first pass's last test: the slow rank has failed the
# collectives by then) of the run before, as its "first pass" line says. On
# a busy machine a run's timings differ from the last one's: when its first
# pass did not fail n5 (the fault ended too early) or its sweep ended before
# T (the fault lasted into the re-test, which then rightly reproduced it),
# the run tests nothing about the confirm pass: it is counted apart and
# measured again (at most UNTIL more times), with T from the run itself.
#
# PREFLIGHT_OPTS adds options to every preflight ("--confirm off": the
# series as before the confirm pass). FLEETPRINT names the binary (default
# build/fleetprint). Exit 0 when every count is as wanted, 1 otherwise
# (--count: always 0 unless it cannot run). tests/e2e/preflight_confirm.sh
# checks the confirm pass's cases once each as a CTest.
set -eu
count_only=0
if [ "${1:-}" = "--count" ]; then count_only=1; shift; fi
BASE=${1:-3} CLEAN=${2:-20} SLOW=${3:-5} LINK=${4:-5} UNTIL=${5:-5} SPLIT=${6:-3} SMALL=${7:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
F=${FLEETPRINT:-$HERE/../build/fleetprint}
read -ra mpiexec <<<"${MPIEXEC:-mpirun}"  # a launcher with its options
read -ra extra <<<"${PREFLIGHT_OPTS:-}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pf() { rm -f "$W/v.json"; "${mpiexec[@]}" -np 8 --oversubscribe "$HERE/../tests/fpnode" "$F" preflight --store "$W/s.h5" \
  --drain-file "$W/drain.txt" --json "$W/v.json" "${extra[@]}" "$@" >"$W/out" 2>&1; }
# the confirm pass's line, when there is one
confirm_line() { grep -E '^confirm: (re-test of|no re-test)' "$W/out" | head -1 || true; }
# on the run's clock: where the collectives end, where the link sweep ends
times_of() {
  sed -nE 's/.*alltoall [0-9.]+ s \(to ([0-9.]+)\).*links [0-9.]+ s \(to ([0-9.]+)\).*/\1 \2/p' "$W/out"
}
keep() { cp "$W/out" "$W/last-$1.txt"; }
# failed WANT: the verdict's failing nodes against WANT (space-separated):
# adds the healthy ones failed to $fa and the wanted ones not failed to $miss
fa=0 miss=0
failed() {
  local got; got=$(py_failing)
  for n in $got; do case " $1 " in *" $n "*) ;; *) fa=$((fa + 1)) ;; esac; done
  for n in $1; do case " $got " in *" $n "*) ;; *) miss=$((miss + 1)) ;; esac; done
  [ "$got" = "$1" ]
}
py_failing() {
  python3 -c 'import json, sys
print(" ".join(sorted(json.load(open(sys.argv[1]))["failing_nodes"])))' "$W/v.json" 2>/dev/null || true
}

# a baseline preflight is stored whatever its (peers-only) verdict: only
# injected or incomplete runs are no baseline material
for i in $(seq "$BASE"); do
  rc=0; pf || rc=$?
  echo "baseline run $i: exit $rc"
  [ "$rc" -le 1 ] || { cat "$W/out" >&2; exit 4; }
done
"$F" baseline build --store "$W/s.h5" >"$W/out" 2>&1 || { cat "$W/out" >&2; exit 4; }

clean_fail=0 clean_first=0
for i in $(seq "$CLEAN"); do
  rc=0; pf || rc=$?
  # a first pass that failed and was not confirmed: a false alarm the re-test caught
  first=$(grep -c '^confirm: re-test of' "$W/out" || true)
  [ "$first" -gt 0 ] && clean_first=$((clean_first + 1))
  failed "" || true
  echo "clean run $i: exit $rc; $(confirm_line)"
  if [ "$rc" != 0 ]; then clean_fail=$((clean_fail + 1)); grep -E "^(FAIL|warn)|^ +fail" "$W/out" | head -8; fi
done
clean_fa=$fa; fa=0 miss=0

slow_ok=0
for i in $(seq "$SLOW"); do
  rc=0; pf --inject slow:rank=5,factor=1.5 || rc=$?
  failed "n5" || true
  echo "slow run $i: exit $rc, drain '$(cat "$W/drain.txt")'; $(confirm_line)"
  if [ "$rc" = 1 ] && [ "$(cat "$W/drain.txt")" = "n5" ]; then slow_ok=$((slow_ok + 1))
  else grep -E "^(FAIL|warn)|^ +fail|^confirm" "$W/out" | head -8; fi
  read -r coll_end links_end <<<"$(times_of)" || true
done
slow_fa=$fa slow_miss=$miss; fa=0 miss=0

link_ok=0
for i in $(seq "$LINK"); do
  rc=0; pf --inject link:ranks=2-6,factor=4 || rc=$?
  failed "" || true
  echo "link run $i: exit $rc, drain '$(cat "$W/drain.txt")', $(grep -c "FAIL link:n2~n6" "$W/out") FAIL link:n2~n6; $(confirm_line)"
  if [ "$rc" = 1 ] && [ ! -s "$W/drain.txt" ] && grep -q "FAIL link:n2~n6" "$W/out"; then link_ok=$((link_ok + 1))
  else
    grep -E "^(FAIL|warn)|^ +fail|^confirm" "$W/out" | head -8
    # the link's evidence chain, judged as the preflight judged it
    contended=(); grep -q "ranks share CPU cores" "$W/out" && contended=(--contended)
    "$F" detect --store "$W/s.h5" --run latest "${contended[@]}" --explain link:n2~n6 2>/dev/null |
      sed -n '/^explain /,$p' | grep -E '^explain|links\.bw_' || true
  fi
  read -r coll_end links_end <<<"$(times_of)" || true
done

link_fa=$fa; fa=0 miss=0

until_ok=0 until_runs=0 until_off=0
T=""
[ -n "${coll_end:-}" ] && T=$(awk -v a="$coll_end" -v b="$links_end" 'BEGIN { printf "%.2f", (a + b) / 2 }')
for i in $(seq $((2 * UNTIL))); do
  [ "$until_runs" -lt "$UNTIL" ] || break
  [ -n "$T" ] || { echo "until: no first pass line to take T from"; break; }
  rc=0; pf --inject "slow:rank=5,factor=1.5,until=${T}s" || rc=$?
  coll_end="" links_end=""
  read -r coll_end links_end <<<"$(times_of)" || true
  # valid: the first pass failed n5 (a re-test ran, or with --confirm off n5
  # was drained) and the slowdown ended before the re-test (after the sweep)
  first=0
  if grep -q '^confirm: re-test of' "$W/out" || [ "$(cat "$W/drain.txt")" = n5 ]; then first=1; fi
  valid=$(awk -v t="$T" -v f="$first" -v b="${links_end:-0}" 'BEGIN { print (f && t < b) }')
  said=$(grep -c "did not reproduce on re-test" "$W/out" || true)
  why=": the first pass did not fail n5, not counted"
  [ "$first" = 1 ] && why=": T after the sweep (the re-test saw the fault), not counted"
  echo "until=${T}s run $i: exit $rc, drain '$(cat "$W/drain.txt")', collectives to ${coll_end:-?} s, sweep to ${links_end:-?} s$([ "$valid" = 1 ] || echo "$why"); $(confirm_line)"
  T=$(awk -v a="${coll_end:-0}" -v b="${links_end:-0}" 'BEGIN { printf "%.2f", (a + b) / 2 }')
  if [ "$valid" != 1 ]; then until_off=$((until_off + 1)); continue; fi
  until_runs=$((until_runs + 1))
  if [ "$rc" = 0 ] && [ ! -s "$W/drain.txt" ] && [ "$said" -gt 0 ]; then until_ok=$((until_ok + 1))
  else grep -E "^(FAIL|warn)|^ +fail|^confirm" "$W/out" | head -8; fi
done

split_ok=0
for i in $(seq "$SPLIT"); do
  rc=0
  pf --inject slow:rank=1,factor=2 --inject slow:rank=2,factor=2 --inject slow:rank=3,factor=2 \
    --inject slow:rank=4,factor=2 || rc=$?
  ok=0; failed "n1 n2 n3 n4" && ok=1
  echo "split run $i: exit $rc, failing '$(py_failing)', drain '$(cat "$W/drain.txt")'"
  if [ "$ok" = 1 ]; then split_ok=$((split_ok + 1))
  else grep -E "^(FAIL|warn)|^ +fail" "$W/out" | head -8; fi
done
split_fa=$fa split_miss=$miss; fa=0 miss=0

small_ok=0 small_blind=0
for i in $(seq "$SMALL"); do
  rc=0; pf --inject slow:rank=3,factor=1.12 || rc=$?
  failed "n3" || true
  echo "small run $i: exit $rc, drain '$(cat "$W/drain.txt")'; $(confirm_line)"
  if [ "$rc" = 1 ] && [ "$(cat "$W/drain.txt")" = "n3" ]; then small_ok=$((small_ok + 1))
  else
    grep -E "^(FAIL|warn|blind)|^ +(fail|warn)|^confirm" "$W/out" | head -8
    grep -q "^blind " "$W/out" && small_blind=$((small_blind + 1))
  fi
done
small_fa=$fa small_miss=$miss

echo "clean: $clean_fail of $CLEAN failed (want 0); $clean_first of them had a first pass that failed; false alarms: $clean_fa nodes"
echo "slow rank 5: $slow_ok of $SLOW drained exactly n5 (want $SLOW); false alarms $slow_fa, misses $slow_miss"
echo "slow link 2-6: $link_ok of $LINK named link:n2~n6 and drained nothing (want $LINK); false alarms $link_fa nodes"
echo "slow rank 5 until T: $until_ok of $until_runs drained nothing and said 'did not reproduce' (want $UNTIL of $UNTIL; $until_off runs that tested nothing not counted)"
echo "split 1-4: $split_ok of $SPLIT failed exactly n1-n4 (want $SPLIT); false alarms $split_fa, misses $split_miss"
echo "small 12% on n3: $small_ok of $SMALL drained exactly n3 (want $SMALL); $small_blind of the others named a blind spot; false alarms $small_fa, misses $small_miss"
[ "$count_only" = 1 ] && exit 0
[ "$clean_fail" = 0 ] && [ "$slow_ok" = "$SLOW" ] && [ "$link_ok" = "$LINK" ] &&
  [ "$until_ok" = "$UNTIL" ] && [ "$until_runs" = "$UNTIL" ] && [ "$split_ok" = "$SPLIT" ] &&
  [ $((small_ok + small_blind)) = "$SMALL" ]
