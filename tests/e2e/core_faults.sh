#!/usr/bin/env bash
# Deadlines and failures: a hung rank is named and the run ends with exit 4;
# a crashed rank is named; cuda without a GPU is exit 3; bad flags and
# malformed injections are exit 2 with the bad token named.
. "$FP_TESTS/lib.sh"
run=(run --suite kernels --test membw --array-size 2M -w 1)

start=$(date +%s)
expect_rc 4 mpi 4 "$FLEETPRINT" "${run[@]}" -n 200 --inject hang:rank=2,after=1s --timeout 10s
took=$(( $(date +%s) - start ))
# the hang itself never ends: the run must end by the deadline, not before it;
# the margin covers mpirun's start and end on a busy machine
[ "$took" -ge 10 ] && [ "$took" -le 40 ] || fail "hang run took ${took}s (want 10..40 s, --timeout 10s)"
expect_out 'timeout after 10.0 s .*waiting for rank 2 \(node n2\)'

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
expect_out "unknown suite 'nosuch'"
expect_rc 2 "$FLEETPRINT" whatif-not-a-command
echo ok
