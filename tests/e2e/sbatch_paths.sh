#!/usr/bin/env bash
# ci/slurm-preflight.sbatch without a Slurm: srun and scontrol are stand-ins
# that record their arguments and end as told. Every exit path ends with one
# "fleetprint-preflight:" line saying what happened and what the job does;
# srun gets --mpi=pmix (or the site's) and a GPU binding only with GPUs;
# extra options pass through; an unwritable store is a warning, not a veto.
. "$FP_TESTS/lib.sh"
script=$FP_SRC/ci/slurm-preflight.sbatch
cd "$WORK"
mkdir bin
cat >bin/srun <<'SH'
#!/bin/bash
echo "srun $*" >>"$WORK/calls"
for a in "$@"; do
  [ "$prev" = --drain-file ] && [ -n "${FAKE_DRAIN:-}" ] && echo "$FAKE_DRAIN" >"$a"
  [ "$prev" = --json ] && [ -n "${FAKE_VERDICT:-}" ] && printf '{\n "run": "r",\n "verdict": "%s",\n}\n' "$FAKE_VERDICT" >"$a"
  prev=$a
done
exit "$FAKE_RC"
SH
cat >bin/scontrol <<'SH'
#!/bin/bash
echo "scontrol $*" >>"$WORK/calls"
exit "${FAKE_SCONTROL_RC:-0}"
SH
chmod +x bin/srun bin/scontrol
mkdir store
export PATH=$WORK/bin:$PATH WORK SLURM_JOB_ID=77 FP_STORE=$WORK/store/fleet.h5

# sb RC [VAR=VALUE...]: run the script (job command: touch started) with srun ending RC
sb() {
  local rc=$1; shift
  rm -f calls started; rm -rf out
  local got=0
  env FAKE_RC="$rc" FP_OUT="$WORK/out" "$@" bash "$script" touch "$WORK/started" >log 2>&1 || got=$?
  echo "$got" >code
}
last_says() {
  local line; line=$(grep '^fleetprint-preflight:' log | tail -1)
  [ "$(tail -1 log)" = "$line" ] || { cat log; fail "the last line is not the script's"; }
  echo "$line" | grep -Eq "$1" || { cat log; fail "last line lacks /$1/"; }
  echo "  srun exit $2 -> $(cat code): $line"
}

sb 0
[ "$(cat code)" = 0 ] && [ -e started ] || fail "exit 0 did not start the job"
last_says 'go: starting the job' 0
grep -q -- '--mpi=pmix' calls || fail "no --mpi=pmix"
! grep -q -- '--gpus-per-task' calls || fail "GPU binding without GPUs"
sb 0 SLURM_GPUS_ON_NODE=8
grep -q -- '--gpus-per-task=1' calls || fail "no GPU binding with 8 GPUs"
sb 0 SLURM_GPUS_ON_NODE=8 FP_GPU_BIND=--gpu-bind=closest FP_SRUN_MPI=site FP_PREFLIGHT_OPTS="--rules r.json --test gemm"
grep -q -- '--gpu-bind=closest' calls && ! grep -q -- '--mpi=' calls || fail "FP_GPU_BIND / FP_SRUN_MPI=site ignored"
grep -q -- 'preflight --store .* --rules r.json --test gemm$' calls || fail "extra options not passed"

# an unwritable store: a warning, peers only, and the job still starts
sb 0 FP_STORE=/nonexistent/fleetprint/fleet.h5
[ -e started ] || fail "a missing store held the job"
grep -q 'warning: store /nonexistent/fleetprint/fleet.h5 cannot be written' log || fail "no store warning"
! grep -q -- '--store' calls || fail "preflight still got the unwritable store"

sb 1 FAKE_DRAIN='n[1-2]'
[ "$(cat code)" = 1 ] && [ ! -e started ] || fail "a failing node started the job"
grep -q 'scontrol update NodeName=n\[1-2\] State=DRAIN Reason=fleetprint preflight 77' calls || fail "no drain"
grep -q 'scontrol requeue 77' calls || fail "no requeue"
last_says 'drained n\[1-2\].*requeued' 1
sb 1 FAKE_DRAIN='n3' FAKE_SCONTROL_RC=1
last_says 'could not be drained.*not requeued' 1
sb 1
last_says 'no node to drain.*job not started' 1
# a failing verdict whose finishing ranks srun killed (143): the verdict file decides
sb 143 FAKE_DRAIN='n4' FAKE_VERDICT=fail
[ "$(cat code)" = 1 ] || fail "a killed step with a fail verdict: exit $(cat code)"
last_says 'drained n4.*requeued' 143
for rc in 2 3 4 5 137; do
  sb "$rc"
  [ "$(cat code)" = "$rc" ] && [ ! -e started ] || fail "srun exit $rc: script exit $(cat code)"
  last_says "job not started, exit $rc" "$rc"
done
rm -rf out; expect_rc 2 env FP_OUT="$WORK/nocmd" bash "$script"
last_line=$(tail -1 "$WORK/out"); echo "$last_line" | grep -q '^fleetprint-preflight: no job command' || fail "no-command path"
echo ok
