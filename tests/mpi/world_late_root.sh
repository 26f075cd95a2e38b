#!/usr/bin/env bash
# world_late_root.c on 4 ranks: rank 0 names rank 2 as never arrived, in the
# step its peers timed out in, and the job ends with the timeout's exit code 4,
# ended by rank 0 (no peer gives up on it first).
. "$FP_TESTS/lib.sh"
prog=${1:?usage: world_late_root.sh PROGRAM}
expect_rc 4 mpi 4 "$prog"
expect_out '\[n0 r0\] error: timeout after 2.0 s in the late-root barrier: waiting for rank 2 \(node n2\), which never arrived'
if grep 'did not end the job' "$WORK/out"; then fail "a peer ended the job before rank 0 diagnosed it"; fi
echo "ok: rank 0, busy outside any step, diagnosed its peers' timeout"
