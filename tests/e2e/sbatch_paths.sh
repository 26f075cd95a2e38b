#!/usr/bin/env bash
# ci/slurm-preflight.sbatch without a Slurm: srun and scontrol are stand-ins
# that record their arguments and end as told. Every exit path ends with one
# "fleetprint-preflight:" line saying what happened and what the job does;
# srun gets --mpi=pmix (or the site's) and a GPU binding only with GPUs;
# extra options pass through; an unwritable store is a warning, not a veto; a
# launch that ends with no verdict is run once more.
. "$FP_TESTS/lib.sh"
script=$FP_SRC/ci/slurm-preflight.sbatch
cd "$WORK"
mkdir bin
cat >bin/srun <<'SH'
#!/bin/bash
echo "srun $*" >>"$WORK/calls"
for a in "$@"; do
  [ "$prev" = --drain-file ] && [ -n "${FAKE_DRAIN:-}" ] && echo "$FAKE_DRAIN" >"$a"
  [ "$prev" = --json ] && [ -n "${FAKE_VERDICT:-}" ] &&
    printf '{\n "run": "r",\n "verdict": "%s",\n "rule": "%s",\n "breaker": {\n  "tripped": %s\n }\n}\n' \
      "$FAKE_VERDICT" "${FAKE_RULE:-}" "${FAKE_TRIPPED:-false}" >"$a"
  prev=$a
done
# FAKE_RC_FIRST: the first launch of a run ends so (a start-up crash)
[ -n "${FAKE_RC_FIRST:-}" ] && [ "$(grep -c '^srun' "$WORK/calls")" = 1 ] && exit "$FAKE_RC_FIRST"
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
# (sb_keep: the same, keeping the output folder of the attempts before)
sb() { rm -rf out; sb_keep "$@"; }
sb_keep() {
  local rc=$1; shift
  rm -f calls started
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
sb 0 FP_PREFLIGHT_OPTS="--isolate auto" # isolation when no culprit is named (docs/isolate.md)
grep -q -- 'preflight --store .* --isolate auto$' calls || fail "--isolate auto not passed"

# an unwritable store: a warning, peers only, and the job still starts
sb 0 FP_STORE=/nonexistent/fleetprint/fleet.h5
[ -e started ] || fail "a missing store held the job"
grep -q 'warning: store /nonexistent/fleetprint/fleet.h5 cannot be written' log || fail "no store warning"
! grep -q -- '--store' calls || fail "preflight still got the unwritable store"

# the circuit breaker tripped: fleetprint wrote an empty drain file; no drain, no requeue
sb 1 FAKE_VERDICT=fail FAKE_TRIPPED=true
[ "$(cat code)" = 1 ] && [ ! -e started ] || fail "a tripped breaker started the job"
! grep -q 'scontrol' calls || fail "a tripped breaker drained or requeued: $(cat calls)"
last_says 'circuit breaker: .*nothing drained, not requeued' 1

sb 1 FAKE_DRAIN='n[1-2]'
[ "$(cat code)" = 1 ] && [ ! -e started ] || fail "a failing node started the job"
grep -q 'scontrol update NodeName=n\[1-2\] State=DRAIN Reason=fleetprint preflight 77' calls || fail "no drain"
grep -q 'scontrol requeue 77' calls || fail "no requeue"
last_says 'drained n\[1-2\].*requeued' 1
[ -d out/attempt-0 ] || fail "attempt 0 has no folder of its own"
# each attempt its own folder and fleetprint log; the cap stops the requeues
sb_keep 1 FAKE_DRAIN='n1' SLURM_RESTART_COUNT=1
[ -d out/attempt-0 ] && [ -e out/attempt-1/preflight.log ] || fail "attempt 1 did not keep attempt 0's folder"
grep -q 'scontrol requeue 77' calls || fail "attempt 1 of at most 2 not requeued"
last_says 'drained n1.*requeued without them \(requeue 2 of at most 2\)' 1
sb_keep 1 FAKE_DRAIN='n2' SLURM_RESTART_COUNT=2
grep -q 'scontrol update NodeName=n2 State=DRAIN' calls || fail "the last attempt did not drain"
! grep -q 'scontrol requeue' calls || fail "requeued beyond FP_MAX_REQUEUES=2"
last_says 'drained n2.*not requeued: attempt 2 reached FP_MAX_REQUEUES=2.*exit 1' 1
sb 1 FAKE_DRAIN='n2' FP_MAX_REQUEUES=0
! grep -q 'scontrol requeue' calls || fail "requeued with FP_MAX_REQUEUES=0"
sb 1 FAKE_DRAIN='n2' SLURM_RESTART_COUNT=x
last_says 'not a count.*exit 2' 1
# no operator rights: an exclude list gathered over the attempts, no requeue
sb 1 FAKE_DRAIN='n3' FAKE_SCONTROL_RC=1
last_says 'could not be drained.*operator rights.*exclude.txt: resubmit with sbatch --exclude=.*not requeued, exit 1' 1
! grep -q 'scontrol requeue' calls || fail "requeued although the drain was refused"
sb_keep 1 FAKE_DRAIN='n[5-6]' FAKE_SCONTROL_RC=1 SLURM_RESTART_COUNT=1
[ "$(cat out/exclude.txt)" = "$(printf 'n3\nn[5-6]')" ] || fail "exclude list: '$(cat out/exclude.txt)'"
# a hung rank: preflight exits 4 with its node in the drain file, which is drained
sb 4 FAKE_DRAIN='n7'
grep -q 'scontrol update NodeName=n7 State=DRAIN Reason=fleetprint preflight 77: hung' calls || fail "hung node not drained"
last_says 'hung: drained n7.*requeued' 4
# ... and when srun reports the other ranks' signal, the verdict file's rule says hung
sb 137 FAKE_DRAIN='n7' FAKE_VERDICT=fail FAKE_RULE=hung
last_says 'hung: drained n7.*requeued' 137
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
# a launch that ends by a signal with no verdict (an MPI start-up crash) is
# run once more (FP_LAUNCH_RETRIES, default 1), and the second answer counts
sb 0 FAKE_RC_FIRST=139
[ "$(grep -c '^srun' calls)" = 2 ] && [ -e started ] || fail "a start-up crash was not launched again"
grep -q 'ended with 139 before a verdict.*launching the checks again' log || fail "no line for the second launch"
grep -q 'ended with 139 before a verdict' out/attempt-0/preflight.log || fail "the attempt log lacks the second launch"
last_says 'go: starting the job' 0
sb 137
[ "$(grep -c '^srun' calls)" = 2 ] || fail "a crash that repeats: $(grep -c '^srun' calls) launches, not 2"
sb 137 FP_LAUNCH_RETRIES=0
[ "$(grep -c '^srun' calls)" = 1 ] || fail "FP_LAUNCH_RETRIES=0 launched again"
sb 1 FAKE_RC_FIRST=1
[ "$(grep -c '^srun' calls)" = 1 ] || fail "a fleetprint exit code was launched again"
sb 0 FP_LAUNCH_RETRIES=x
last_says 'not a count.*exit 2' 0
rm -rf out; expect_rc 2 env FP_OUT="$WORK/nocmd" bash "$script"
last_line=$(tail -1 "$WORK/out"); echo "$last_line" | grep -q '^fleetprint-preflight: no job command' || fail "no-command path"
echo ok
