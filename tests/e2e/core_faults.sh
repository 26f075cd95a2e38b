#!/usr/bin/env bash
# Deadlines and failures: a hung rank is named and the run ends with exit 4;
# a crashed rank is named; cuda without a GPU is exit 3; bad flags and
# malformed injections are exit 2 with the bad token named.
. "$FP_TESTS/lib.sh"
run=(run --suite kernels --test membw --array-size 2M -w 1)

# stamped CMD...: CMD's output, each line prefixed with the wall time it came
stamped() {
  "$@" 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done
  return "${PIPESTATUS[0]}"
}
# named_within LIMIT: rank 0 named the hung rank within LIMIT s of the hang
# (start-up and teardown of 4 ranks on a loaded machine do not count)
named_within() {
  local t0 t1
  t0=$(grep -m1 'injected hang' "$WORK/out" | cut -d' ' -f1)
  t1=$(grep -m1 'timeout after' "$WORK/out" | cut -d' ' -f1)
  awk -v a="$t0" -v b="$t1" -v l="$1" 'BEGIN { printf "hung rank named %.1f s after the hang\n", b - a; exit !(b - a <= l) }' ||
    fail "hung rank not named within $1 s of the hang"
}

start=$(date +%s)
expect_rc 4 stamped mpi 4 "$FLEETPRINT" "${run[@]}" -n 200 --inject hang:rank=2,after=1s --timeout 10s
took=$(( $(date +%s) - start ))
# the hang itself never ends: the run must end by the deadline, not before it;
# the guard above it covers mpirun's start and end on a busy machine
[ "$took" -ge 10 ] && [ "$took" -le 60 ] || fail "hang run took ${took}s (want 10..60 s, --timeout 10s)"
expect_out 'timeout after 10.0 s .*waiting for rank 2 \(node n2\)'
named_within 15

# the same inside blocking MPI calls, where the watchdog keeps the deadline:
# the timed allreduce loop (rank 2 stops at a call's entry, its peers are
# blocked in MPI_Allreduce), and fused, whose chunks' collectives block on a
# comm thread (rank 2 stops where it is after 3 s: at a chunk's start, so the
# others block on the comm thread, or at a variant's end or barrier)
# (fused plans its iterations into 3/4 of --timeout, so its hang comes at 1 s)
for spec in "run --test allreduce -b 1M -e 1M -n 1000000 -c 0 --inject hang:rank=2,after=3s|in allreduce float sum out-of-place" \
            "run --test fused --threads 1 --fused-m 256 --fused-nk 256,256 --chunks 8 -n 100000 --inject hang:rank=2,after=1s|in "; do
  args=${spec%%|*}
  start=$(date +%s)
  # shellcheck disable=SC2086
  expect_rc 4 stamped mpi 4 "$FLEETPRINT" $args --timeout 5s
  took=$(( $(date +%s) - start ))
  [ "$took" -le 60 ] || fail "hang in '$args' took ${took}s (limit 60)"
  expect_out "timeout after 5.0 s ${spec#*|}.*waiting for rank 2 \(node n2\), which never arrived"
  grep -m1 'timeout after' "$WORK/out"
  named_within 10
done

expect_rc 134 mpi 4 "$FLEETPRINT" "${run[@]}" -n 50 --inject crash:rank=1
expect_out 'injected crash of rank 1'
expect_out 'process rank 1 .*exited on signal'

expect_rc 3 "$FLEETPRINT" run --device cuda
expect_out 'device cuda cannot run here'
[ "$(wc -l < "$WORK/out")" -eq 1 ] || fail "cuda error is not one line"

expect_rc 0 "$FLEETPRINT" "${run[@]}" -n 2 --device auto
expect_out 'auto chose host'

expect_rc 2 "$FLEETPRINT" run --frobnicate
expect_out "unknown option '--frobnicate'"
expect_rc 2 "$FLEETPRINT" run -n many
expect_out "'many'"
expect_rc 2 "$FLEETPRINT" bogus
expect_out "unknown command 'bogus'"
for spec in 'slow:rank=x,factor=2' 'slow:rank=1' 'warp:rank=1' 'link:ranks=1,factor=2' \
            'hang:rank=1,after=soon' 'slow:rank=1,factor=2,speed=3'; do
  expect_rc 2 "$FLEETPRINT" "${run[@]}" --inject "$spec"
  [ "$(wc -l < "$WORK/out")" -eq 1 ] || fail "inject error for $spec is not one line"
  expect_out "--inject '$spec'"
done
expect_rc 2 mpi 2 "$FLEETPRINT" "${run[@]}" --inject slow:rank=5,factor=2
expect_out 'rank 5 out of range \(2 ranks\)'
expect_rc 2 "$FLEETPRINT" run --suite nosuch
expect_out "unknown suite 'nosuch' \(kernels, collectives, or all; "
# burn-in is a command, not a suite: refused, and never offered as one
expect_rc 2 "$FLEETPRINT" run --suite burnin
expect_out "unknown suite 'burnin'"
! grep -Eq '(\(|, )burnin(,| or)' "$WORK/out" || fail "the refusal offers the refused suite"
expect_out 'fleetprint burnin'
expect_rc 2 "$FLEETPRINT" whatif-not-a-command

# a node name that is not a host name never reaches a drain file or scontrol:
# the run is refused at start-up, naming the rank (issue 33)
bad='n2 State=RESUME;touch /tmp/x'
expect_rc 2 "$MPIEXEC" -np 4 --oversubscribe env "FP_BAD=$bad" bash -c \
  'r=$OMPI_COMM_WORLD_RANK; [ "$r" = 2 ] && n=$FP_BAD || n=n$r; FLEETPRINT_NODE=$n exec "$@"' _ \
  "$FLEETPRINT" preflight --test membw --drain-file "$WORK/drain.txt"
expect_out "rank 2: node name 'n2 State=RESUME;touch /tmp/x' \(from FLEETPRINT_NODE\) is not a host name"
[ ! -e "$WORK/drain.txt" ] || fail "a drain file was written: $(cat "$WORK/drain.txt")"
echo ok
