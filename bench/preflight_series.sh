#!/usr/bin/env bash
# Preflight against a store's baselines, on 8 emulated nodes of this machine:
# BASE clean preflights into a fresh store, `baseline build`, then
#   CLEAN clean `preflight --store` runs            -> want: none fails
#   SLOW  with --inject slow:rank=5,factor=1.5      -> want: each drains exactly n5
#   LINK  with --inject link:ranks=2-6,factor=4     -> want: each names link:n2~n6
#                                                      and drains nothing
# and print the counts. The store keeps every run (injected ones are never
# baseline material), as a real fleet's would.
#
#   bench/preflight_series.sh [--count] [BASE CLEAN SLOW LINK]   (default 3 10 5 5)
#
# FLEETPRINT names the binary (default build/fleetprint). Exit 0 when every
# count is as wanted, 1 otherwise (--count: always 0 unless it cannot run).
# tests/e2e/preflight_series.sh runs a short series of it as a CTest.
set -eu
count_only=0
if [ "${1:-}" = "--count" ]; then count_only=1; shift; fi
BASE=${1:-3} CLEAN=${2:-10} SLOW=${3:-5} LINK=${4:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
F=${FLEETPRINT:-$HERE/../build/fleetprint}
read -ra mpiexec <<<"${MPIEXEC:-mpirun}"  # a launcher with its options
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pf() { "${mpiexec[@]}" -np 8 --oversubscribe "$HERE/../tests/fpnode" "$F" preflight --store "$W/s.h5" \
  --drain-file "$W/drain.txt" --json "$W/v.json" "$@" >"$W/out" 2>&1; }
keep() { cp "$W/out" "$W/last-$1.txt"; }

# a baseline preflight is stored whatever its (peers-only) verdict: only
# injected or incomplete runs are no baseline material
for i in $(seq "$BASE"); do
  rc=0; pf || rc=$?
  echo "baseline run $i: exit $rc"
  [ "$rc" -le 1 ] || { cat "$W/out" >&2; exit 4; }
done
"$F" baseline build --store "$W/s.h5" >"$W/out" 2>&1 || { cat "$W/out" >&2; exit 4; }

clean_fail=0
for i in $(seq "$CLEAN"); do
  rc=0; pf || rc=$?
  echo "clean run $i: exit $rc"
  if [ "$rc" != 0 ]; then clean_fail=$((clean_fail + 1)); grep -E "^(FAIL|warn)|^ +fail" "$W/out" | head -8; fi
done

slow_ok=0
for i in $(seq "$SLOW"); do
  rc=0; pf --inject slow:rank=5,factor=1.5 || rc=$?
  echo "slow run $i: exit $rc, drain '$(cat "$W/drain.txt")'"
  if [ "$rc" = 1 ] && [ "$(cat "$W/drain.txt")" = "n5" ]; then slow_ok=$((slow_ok + 1))
  else grep -E "^(FAIL|warn)|^ +fail" "$W/out" | head -8; fi
done

link_ok=0
for i in $(seq "$LINK"); do
  rc=0; pf --inject link:ranks=2-6,factor=4 || rc=$?
  echo "link run $i: exit $rc, drain '$(cat "$W/drain.txt")', $(grep -c "FAIL link:n2~n6" "$W/out") FAIL link:n2~n6"
  if [ "$rc" = 1 ] && [ ! -s "$W/drain.txt" ] && grep -q "FAIL link:n2~n6" "$W/out"; then link_ok=$((link_ok + 1))
  else
    grep -E "^(FAIL|warn)|^ +fail" "$W/out" | head -8
    # the link's evidence chain, judged as the preflight judged it
    contended=(); grep -q "ranks share CPU cores" "$W/out" && contended=(--contended)
    "$F" detect --store "$W/s.h5" --run latest "${contended[@]}" --explain link:n2~n6 2>/dev/null |
      sed -n '/^explain /,$p' | grep -E '^explain|links\.bw_' || true
  fi
done

echo "clean: $clean_fail of $CLEAN failed (want 0)"
echo "slow rank 5: $slow_ok of $SLOW drained exactly n5 (want $SLOW)"
echo "slow link 2-6: $link_ok of $LINK named link:n2~n6 and drained nothing (want $LINK)"
[ "$count_only" = 1 ] && exit 0
[ "$clean_fail" = 0 ] && [ "$slow_ok" = "$SLOW" ] && [ "$link_ok" = "$LINK" ]
