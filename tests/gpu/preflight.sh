#!/usr/bin/env bash
# preflight with its defaults (comm nccl, one rank) exits 0 within 2 minutes
# (issue 12 failure 2: a segfault after an NCCL error).
. "$FP_TESTS/gpu/common.sh"
expect_rc 0 within 120 "$FLEETPRINT" preflight
# on the GPU, with NCCL: without a visible GPU "auto" chooses host and comm mpi
expect_out "device cuda.*comm nccl"
! grep -Eq "Segmentation fault|illegal memory access" "$WORK/out" || fail "crashed"
echo "ok: preflight go"
