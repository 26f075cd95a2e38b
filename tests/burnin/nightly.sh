#!/bin/bash
# ci/nightly-burnin.sh: the commands it runs (burn-in appending to the store
# with the nightly tag, its verdicts kept with it, the baseline update (a full
# build where there is nothing to update), the report), its refusal without
# a readable hostfile, and a real nightly run on this host.
. "$FP_TESTS/burnin/common.sh"
script="$FP_SRC/ci/nightly-burnin.sh"
printf 'n0 slots=8\nn1 slots=8\n' >"$WORK/hosts"
FP_HOSTFILE="$WORK/hosts" FP_STORE=/data/fleet.h5 FP_DURATION=45m FLEETPRINT=/opt/fp \
  expect_rc 0 bash "$script" --dry-run
expect_out "^mpirun --hostfile $WORK/hosts --map-by ppr:8:node .* /opt/fp burnin --duration 45m --interval 1m --store /data/fleet.h5 --tag nightly --json "
expect_out "^/opt/fp detect --store /data/fleet.h5 --tag nightly --run latest --record -q"
expect_out "^/opt/fp baseline update --store /data/fleet.h5 --tag nightly --last 30 --run latest"
expect_out "^/opt/fp baseline build --store /data/fleet.h5 --tag nightly --last 30"
expect_out "^/opt/fp report --store /data/fleet.h5 --tag nightly -q --html "
FP_HOSTFILE="$WORK/hosts" FP_BASELINE_LAST=0 FLEETPRINT=/opt/fp expect_rc 0 bash "$script" --dry-run
expect_out "^/opt/fp baseline update --store /var/lib/fleetprint/fleet.h5 --tag nightly --run latest"
# a launcher with options, as sites set it: split into words, not one name
FP_HOSTFILE="$WORK/hosts" MPIRUN="mpirun --mca pml ob1" FLEETPRINT="env FOO=1 /opt/fp" \
  expect_rc 0 bash "$script" --dry-run
expect_out "^mpirun --mca pml ob1 --hostfile $WORK/hosts .* env FOO=1 /opt/fp burnin "
FP_HOSTFILE="$WORK/none" expect_rc 2 bash "$script" --dry-run
expect_out "cannot read hostfile"
expect_rc 1 env -u FP_HOSTFILE bash "$script" --dry-run
expect_out "set FP_HOSTFILE"

# for real, on this host: burn-in into a store, baselines built (the first
# night has none to update), a page and a textfile (a healthy run:
# degradation judged at DEGRADE, see common.sh); the second night's run is
# folded in by an update
printf 'localhost slots=4\n' >"$WORK/local"
night() {
  FP_HOSTFILE="$WORK/local" FP_STORE="$WORK/fleet.h5" FP_DURATION=6s FP_INTERVAL=1s FP_PPN=4 \
    FP_LOGDIR="$WORK/log" FP_PROM="$WORK/fleetprint.prom" FLEETPRINT="$FLEETPRINT" MPIRUN="$MPIEXEC --oversubscribe" \
    FP_EXTRA="--threads 1 --gemm-size 128 --memory-fraction 0 --degrade-threshold $DEGRADE" expect_rc 0 bash "$script"
}
night
expect_out "has no baselines to update"
expect_out "a full baseline build"
night
expect_out "baselines updated: 1 run folded in, 0 dropped past --last, 2 in all"
expect_rc 0 "$FLEETPRINT" store ls --store "$WORK/fleet.h5"
expect_out " nightly +complete +1 +4 "
expect_rc 0 "$FLEETPRINT" store show --baselines --store "$WORK/fleet.h5"
grep -q '^fleetprint_burnin_gemm_flops{run_tag="nightly",Hostname=' "$WORK/fleetprint.prom" || fail "no burn-in values in the textfile"
ls "$WORK"/log/burnin-*.html >/dev/null || fail "no HTML page in the log directory"
# the night's verdicts are kept with the run: its node has a history
expect_rc 0 "$FLEETPRINT" store history "$(hostname)" --store "$WORK/fleet.h5"
expect_out "2 judged run"
echo "nightly script: commands as documented, and a real nightly run"
