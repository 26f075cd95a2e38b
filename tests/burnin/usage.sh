#!/bin/bash
# Bad burn-in options: exit 2 with one line naming the option, no crash.
. "$FP_TESTS/burnin/common.sh"
bad() { local want=$1; shift; expect_rc 2 "$FLEETPRINT" burnin --threads 1 "$@"; expect_out "$want"; }
bad "--duration must be positive" --duration 0
bad "--interval must be positive and at most --duration" --duration 2s --interval 5s
bad "--gemm-type 'f17'" --duration 2s --interval 1s --gemm-type f17
bad "--memory-fraction must be" --duration 2s --interval 1s --memory-fraction 2
bad "--sdc-tolerance must be" --duration 2s --interval 1s --sdc-tolerance -1
bad "--degrade-threshold must be" --duration 2s --interval 1s --degrade-threshold 1
bad "--gemm-type bf16: rank 0's device \(host\) does not run it" --duration 2s --interval 1s \
  --gemm-type bf16
bad "option '--duration': bad duration" --duration xx
bad "--inject 'bitflip:rank=x'" --duration 2s --interval 1s --inject bitflip:rank=x
echo "usage errors: all exit 2 with the option named"
