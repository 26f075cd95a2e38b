#!/bin/bash
# ci/nightly-burnin.sh: the commands it runs (burn-in appending to the store
# with the nightly tag, then the baseline rebuild), and its refusal without
# a readable hostfile.
. "$FP_TESTS/burnin/common.sh"
script="$FP_SRC/ci/nightly-burnin.sh"
printf 'n0 slots=8\nn1 slots=8\n' >"$WORK/hosts"
FP_HOSTFILE="$WORK/hosts" FP_STORE=/data/fleet.h5 FP_DURATION=45m FLEETPRINT=/opt/fp \
  expect_rc 0 bash "$script" --dry-run
expect_out "^mpirun --hostfile $WORK/hosts --map-by ppr:8:node .* /opt/fp burnin --duration 45m --interval 1m --store /data/fleet.h5 --tag nightly --json "
expect_out "^/opt/fp baseline build --store /data/fleet.h5 --tag nightly"
FP_HOSTFILE="$WORK/none" expect_rc 2 bash "$script" --dry-run
expect_out "cannot read hostfile"
expect_rc 1 env -u FP_HOSTFILE bash "$script" --dry-run
expect_out "set FP_HOSTFILE"
echo "nightly script: commands as documented"
