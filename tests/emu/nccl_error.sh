#!/bin/bash
# An NCCL error (injected by the emulator, FPEMU_NCCL_FAIL) ends the run with
# exit 4 and the NCCL message, after aborting the communicator: the failed
# communicator is never used again and no group is left open (issue 12's
# failure 2: "Attempt to use communicator before the previous operation
# returned ncclSuccess", then a crash).
. "$FP_TESTS/emu/common.sh"
for spec in Send:1 AllReduce:3 async:2; do
  export FPEMU_NCCL_FAIL=$spec FPEMU_NCCL_FAIL_RANK=0
  expect_rc 4 emu 2 nccl run --suite collectives -t sendrecv -t allreduce "${SMALL[@]}"
  no_crash
  expect_out "NCCL error"
  ! grep -q "Attempt to use communicator" "$WORK/out" || { cat "$WORK/out" >&2; fail "$spec: communicator used after its error"; }
  ! grep -q "group left open" "$WORK/out" || { cat "$WORK/out" >&2; fail "$spec: group left open"; }
  echo "$spec: exit 4, communicator aborted"
done
