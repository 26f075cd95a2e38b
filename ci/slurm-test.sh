#!/usr/bin/env bash
# The preflight flow (ci/slurm-preflight.sbatch) on a real Slurm: munged,
# slurmctld and four slurmd daemons (nodes c1..c4, all on 127.0.0.1, each on
# its own port; no GRES, no cgroups) started from a generated slurm.conf in a
# temporary folder, and stopped again on every exit path.
#
#   ci/slurm-test.sh [BUILD_DIR]       (as root; BUILD_DIR defaults to build;
#                                       CTest runs it as slurm_preflight, label slurm)
#
# Checks:
#   1. a healthy preflight starts the job (on a partition without GRES, so
#      srun gets no GPU binding), after launching the checks again when the
#      first srun dies with no verdict (an MPI start-up crash);
#   2. an injected slow rank drains exactly its node (DRAIN, with the reason)
#      and requeues the job; once the node is back, the second attempt fails
#      again and, FP_MAX_REQUEUES=1 reached, is not requeued; each attempt
#      kept its own folder and fleetprint log, the job log holds both;
#   3. a hung rank (--inject hang:rank=1,after=3s --timeout 20s) drains its
#      node, which the attempt's drain file, JSON and HTML name;
#   4. without operator rights (scontrol update refused) nothing is drained,
#      the node goes to the job's exclude list, and the job is not requeued;
#   5. ci/slurm-healthcheck.sh as the Prolog: a passing node runs the job, a
#      failing one (a bit flip) is drained with fleetprint's reason and the
#      job does not run there;
#   6. ci/slurm-healthcheck.sh as the HealthCheckProgram drains a failing node.
# The Prolog and health check run on every node but do nothing unless the test
# switches them on for a node (a file in $T/hc). Exit 0 pass, 1 a check
# failed, 3 Slurm cannot run here (not root, packages missing: the line says
# which), 4 a daemon or job did not come up in time. Every wait is bounded.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" 2>/dev/null && pwd) || { echo "slurm-test: no build folder ${1:-build}" >&2; exit 2; }
fp=$build/fleetprint
say() { echo "slurm-test: $*"; }
skip() { say "cannot run here: $*"; exit 3; }
# evidence on failure: the drained nodes' reasons, the ends of the daemons'
# logs, and the job logs and each attempt's preflight log up to 200 lines (a
# crashed rank's first lines say which signal and code: 20 lines cut them off)
evidence() {
  [ -n "${T:-}" ] || return 0
  sinfo -R >&2 2>/dev/null
  tail -n 20 "$T"/log/*.log >&2 2>/dev/null
  tail -n 200 "$T"/work/*.log "$T"/work/preflight-*/attempt-*/preflight.log >&2 2>/dev/null
}
fail() { say "FAIL: $*"; evidence; exit 1; }
# stuck WHAT: a daemon or job did not get there in time (exit 4), with the evidence
stuck() { say "$*"; evidence; exit 4; }

[ -x "$fp" ] || { say "no $fp: build first"; exit 2; }
[ "$(id -u)" -eq 0 ] || skip "needs root (slurmd and munged run as root here)"
for b in munged mungekey slurmctld slurmd sbatch srun scontrol sinfo squeue; do
  command -v "$b" >/dev/null ||
    skip "$b missing (apt-get install munge slurmctld slurmd slurm-client; ci/deps.sh does it)"
done

T=$(mktemp -d /tmp/fp-slurm.XXXXXX)
chmod 755 "$T"
pids=()
cleanup() {
  # stop what this script started, by pid, newest first; then the folder
  local p
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    p=${pids[i]}
    kill "$p" 2>/dev/null
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 5' INT TERM
mkdir -p "$T"/{log,state,spool,munge,work}

# ---- munge ---------------------------------------------------------------------------
mungekey -c -k "$T/munge/munge.key" >/dev/null 2>&1 || skip "mungekey cannot create a key"
chmod 700 "$T/munge"; chmod 400 "$T/munge/munge.key"
sock=$T/munge/munge.socket
munged -F -f --key-file="$T/munge/munge.key" --socket="$sock" --pid-file="$T/munge/munged.pid" \
  --seed-file="$T/munge/seed" --log-file="$T/log/munged.log" >>"$T/log/munged.log" 2>&1 &
pids+=($!)

# ---- slurm.conf ------------------------------------------------------------------------
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ctl=$(port); base=$(port)
cat >"$T/slurm.conf" <<EOF
ClusterName=fpci
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctl
SlurmdPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# cred_expire: how long a requeued job waits before it runs again (default 120 s)
AuthInfo=socket=$sock,cred_expire=30
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd-%n.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobRequeue=1
SchedulerType=sched/builtin
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=600
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
Prolog=$T/hc-wrap.sh
HealthCheckProgram=$T/hc-wrap.sh
HealthCheckInterval=5
HealthCheckNodeState=ANY
NodeName=c1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 1)) CPUs=2 State=UNKNOWN
NodeName=c2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=2 State=UNKNOWN
NodeName=c3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 3)) CPUs=2 State=UNKNOWN
NodeName=c4 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 4)) CPUs=2 State=UNKNOWN
PartitionName=cpu Nodes=c[1-4] Default=YES MaxTime=UNLIMITED State=UP OverSubscribe=FORCE:4
EOF
export SLURM_CONF=$T/slurm.conf
# the Prolog and health check: ci/slurm-healthcheck.sh on the nodes the test
# names in $T/hc (prolog-NODE, check-NODE: the file holds FP_HC_OPTS)
mkdir -p "$T/hc"
cat >"$T/hc-wrap.sh" <<EOF
#!/bin/bash
f=$T/hc/check-\${SLURMD_NODENAME:-}
[ -n "\${SLURM_JOB_ID:-}" ] && f=$T/hc/prolog-\${SLURMD_NODENAME:-}
[ -e "\$f" ] || exit 0
exec env PATH="$PATH" SLURM_CONF="$SLURM_CONF" FP_HC_CONF=/dev/null FLEETPRINT="$fp" FP_HC_OUT="$T/hc/out" FP_HC_RANKS=1 \\
  FP_HC_OPTS="\$(cat "\$f")" bash "$here/slurm-healthcheck.sh"
EOF
chmod 755 "$T/hc-wrap.sh"
# one host, four slurmd: each reads the same slurm.conf from its own folder,
# beside an mpi.conf giving pmix its own client folder (pmix names it
# spmix_appdir_UID_JOB.STEP, the same on every node of a step)
for n in 1 2 3 4; do
  mkdir -p "$T/spool/c$n" "$T/etc/c$n" "$T/pmix/c$n"
  cp "$T/slurm.conf" "$T/etc/c$n/slurm.conf"
  echo "PMIxCliTmpDirBase=$T/pmix/c$n" >"$T/etc/c$n/mpi.conf"
done

for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { cat "$T/log/munged.log" >&2; skip "munged did not start"; }

slurmctld -D -i -f "$T/slurm.conf" >>"$T/log/slurmctld.out" 2>&1 &
pids+=($!)
for n in 1 2 3 4; do
  SLURM_CONF=$T/etc/c$n/slurm.conf slurmd -D -N "c$n" -f "$T/etc/c$n/slurm.conf" \
    >>"$T/log/slurmd-c$n.out" 2>&1 &
  pids+=($!)
done

# every node idle within 60 s, else say why
up=0
for _ in $(seq 120); do
  up=$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')
  [ "$up" -eq 4 ] && break
  sleep 0.5
done
if [ "$up" -ne 4 ]; then
  sinfo -N 2>&1 | sed 's/^/  /'
  tail -n 5 "$T"/log/*.log "$T"/log/*.out 2>/dev/null >&2
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || skip "a Slurm daemon exited at start (logs above)"; done
  echo "slurm-test: nodes not idle after 60 s" >&2
  exit 4
fi
srun --mpi=list 2>&1 | grep -q pmix || skip "srun offers no pmix plugin (srun --mpi=list)"
say "slurmctld and 4 slurmd up: $(sinfo -h -N -o '%N' | tr '\n' ' ')(pmix: yes)"

# ---- jobs --------------------------------------------------------------------------------
# wait_job ID SECONDS STATE...: until the job reaches one of the states
# ("requeued": it was requeued at least once); $job_state says which
wait_job() {
  local id=$1 limit=$2 st="" show; shift 2
  for _ in $(seq $((limit * 2))); do
    show=$(scontrol show job "$id" 2>/dev/null)
    st=$(echo "$show" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    echo "$show" | grep -q 'Restarts=[1-9]' && [[ " $* " == *" requeued "* ]] && st=requeued
    for want in "$@"; do [ "$st" = "$want" ] && { job_state=$st; return 0; }; done
    sleep 0.5
  done
  say "job $id still ${st:-unknown} after ${limit}s (wanted $*)"
  scontrol show job "$id" >&2
  return 1
}
# preflight_job NAME OPTS [VAR=VALUE...]: submit slurm-preflight.sbatch on the 4
# nodes with FP_PREFLIGHT_OPTS=OPTS (log NAME-ID.log, job command: touch
# NAME-job-ran); prints the job id
preflight_job() {
  local name=$1 o=$2
  shift 2
  env "$@" FP_PREFLIGHT_OPTS="$o" sbatch --parsable -p cpu -t 10 -N 4 --ntasks-per-node=1 \
    -o "$T/work/$name-%j.log" "$here/slurm-preflight.sbatch" touch "$T/work/$name-job-ran" ||
    fail "sbatch refused the $name job"
}
# expect_drain_requeue ID NAME NODE SECONDS WHAT: within SECONDS the job was
# requeued, NODE drained with the reason "fleetprint preflight ID: WHAT", and
# the job's command did not run
expect_drain_requeue() {
  local id=$1 name=$2 node=$3 ok=0
  wait_requeued "$id" "$4" && ok=1
  sed 's/^/  | /' "$T/work/$name-$id.log" | grep -E 'fleetprint-preflight:|FAIL|never arrived' || true
  [ $ok = 1 ] || fail "the $name job was not requeued within $4 s"
  drained "$node" 1 || fail "$node is not drained"
  echo "$node_state" | grep -q "Reason=fleetprint preflight $id: $5" || fail "$node's drain reason is not '$5' for job $id"
  [ ! -e "$T/work/$name-job-ran" ] || fail "the $name job ran despite its failing node"
}
# wait_requeued ID SECONDS: until the job was requeued once; $restarts is its count
wait_requeued() {
  wait_job "$1" "$2" requeued || return 1
  restarts=$(scontrol show job "$1" 2>/dev/null | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
}
# steps_gone ID SECONDS: until no slurmstepd of job ID is left (a step's
# stepds outlive its job by seconds; beside a CPU hog the job after the hang
# job lost rank 0 in MPI_Init twice while the hung step's stepds were still
# there); names them if they stay
steps_gone() {
  for _ in $(seq $(($2 * 2))); do
    pgrep -f "^slurmstepd: \[$1\." >/dev/null || return 0
    sleep 0.5
  done
  say "job $1's slurmstepd still running after $2 s: $(pgrep -af "^slurmstepd: \[$1\." | tr '\n' ' ')"
  return 1
}
# drained NODE [SECONDS]: whether the node is (within SECONDS: becomes) DRAIN;
# $node_state holds its State= and Reason= lines, also printed
drained() {
  local rc=1
  for _ in $(seq $((${2:-0} * 2 + 1))); do
    node_state=$(scontrol show node "$1" | grep -E 'State=|Reason=')
    echo "$node_state" | grep -q 'State=[A-Z+]*DRAIN' && { rc=0; break; }
    [ "${2:-0}" = 0 ] || sleep 0.5
  done
  [ "${2:-0}" = 0 ] || echo "$node_state" | sed "s/^ */  scontrol show node $1: /"
  return $rc
}
# compute tests only: on emulated nodes sharing 2 cores the late-rank rule of a
# collective can pick a healthy rank; the slow rank shows in membw and gemm.
# The slow rank's factor is 8 (87.5% worse; contended runs fail from 60%): at
# 20 each slow job spent ~20 s waiting for it, and beside other load a step
# of it could near the job's 60 s deadline
opts="--threads 1 --array-size 2M -n 4 --test membw --test gemm"
cd "$T/work"
export PATH=$build:$PATH FP_STORE=$T/work/fleet.h5

# 1. healthy: the job's command runs, with no GPU binding on this GRES-less
#    partition, and a store that cannot be written is a warning, not a veto;
#    its first srun dies as an MPI start-up crash does (signal, no verdict),
#    and the checks are launched once more. That injected crash spends one
#    retry, so the job gets two (FP_LAUNCH_RETRIES=2): a real start-up crash
#    on the relaunch (docs/slurm.md; seen once in a quiet soak at 4d940b6,
#    "Segmentation fault" after "launching the checks again") is then
#    retried, as in every other job here, instead of failing the test
mkdir -p "$T/flaky"
cat >"$T/flaky/srun" <<EOF
#!/bin/bash
[ -e "$T/flaky/crashed" ] || { touch "$T/flaky/crashed"; echo "srun: error: c1: task 0: Segmentation fault" >&2; exit 139; }
exec $(command -v srun) "\$@"
EOF
chmod 755 "$T/flaky/srun"
id=$(preflight_job healthy "$opts" FP_STORE="$T/missing/fleet.h5" PATH="$T/flaky:$PATH" \
  FP_LAUNCH_RETRIES=2) || exit 1
wait_job "$id" 420 COMPLETED FAILED CANCELLED TIMEOUT requeued || stuck "the healthy job did not end"
log=$T/work/healthy-$id.log
sed 's/^/  | /' "$log" | grep -E 'fleetprint-preflight:|detect ' || true
[ "$job_state" != requeued ] || fail "the healthy job was requeued: its preflight drained a healthy node"
[ -e "$T/work/healthy-job-ran" ] || fail "healthy preflight did not start the job (log $log)"
grep -q 'go: starting the job' "$log" || fail "no go line in the job log"
! grep -q -- '--gpus-per-task' "$log" || fail "srun got a GPU binding on a partition without GRES"
grep -q -- '--mpi=pmix' "$log" || fail "srun did not use --mpi=pmix"
grep -q "warning: store $T/missing/fleet.h5 cannot be written" "$log" || fail "no warning for the missing store"
grep -q 'ended with 139 before a verdict.*launching the checks again' "$log" || fail "the crashed launch was not retried"
say "healthy: job $id started its command (srun --mpi=pmix, no GPU binding, missing store only a warning, a launch that crashed retried)"

# 2. a slow rank: rank 2 (node c3) drained with the reason, the job requeued
#    (the script's own --open-mode=append keeps the log over the requeue)
id=$(preflight_job slow "$opts --inject slow:rank=2,factor=8" FP_MAX_REQUEUES=1) || exit 1
expect_drain_requeue "$id" slow c3 420 fail
say "slow rank: c3 drained ($(echo "$node_state" | grep -o 'Reason=.*')), job $id requeued (Restarts=$restarts)"
for n in c1 c2 c4; do drained "$n" && fail "$n was drained too"; done
# c3 back: the second attempt fails again, drains c3, and stops at the cap.
# Wait for that attempt's last word in the log, not only a final job state:
# beside a CPU hog the state read FAILED while attempt 1 was still running
# (its first line was in the log, its outcome not yet)
scontrol update NodeName=c3 State=RESUME
log=$T/work/slow-$id.log
for _ in $(seq 840); do
  # a line after attempt 1's first that ends the attempt ("..., exit N")
  awk '/ attempt 1 \(/ {on = 1; next} on && /exit [0-9]+$/ {done = 1} END {exit !done}' "$log" 2>/dev/null && break
  sleep 0.5
done
wait_job "$id" 420 FAILED COMPLETED CANCELLED TIMEOUT || stuck "the slow job's second attempt did not end"
sed 's/^/  | /' "$log" | grep -E 'fleetprint-preflight: (job|fail)' || true
grep -q "fleetprint-preflight: job $id attempt 0 " "$log" && grep -q "fleetprint-preflight: job $id attempt 1 " "$log" ||
  fail "the job log does not hold both attempts (truncated by the requeue?)"
tail -n 1 "$log" | grep -q 'not requeued: attempt 1 reached FP_MAX_REQUEUES=1' || fail "the cap did not stop the requeue"
[ "$(scontrol show job "$id" | grep -o 'Restarts=[0-9]*')" = Restarts=1 ] || fail "requeued beyond the cap"
for a in 0 1; do
  d=$T/work/preflight-$id/attempt-$a
  [ "$(cat "$d/drain.txt")" = c3 ] && grep -q 'detect: FAIL' "$d/preflight.log" && [ -s "$d/preflight.html" ] ||
    fail "attempt $a did not keep its own drain file, log and page in $d"
done
say "cap: attempt 1 failed again and was not requeued (FP_MAX_REQUEUES=1); attempt-0/ and attempt-1/ each kept drain.txt, preflight.log, preflight.html"
scontrol update NodeName=c3 State=RESUME

# 3. a hung rank: rank 1 (node c2) never arrives; its node is drained
id=$(preflight_job hang "${opts/-n 4/-n 100000} --inject hang:rank=1,after=3s --timeout 20s") || exit 1
expect_drain_requeue "$id" hang c2 120 hung
d=$T/work/preflight-$id/attempt-0
[ "$(cat "$d/drain.txt")" = c2 ] || fail "the drain file is '$(cat "$d/drain.txt")', not c2"
grep -q '"note": "hung: never arrived in' "$d/verdicts.json" || fail "the JSON does not say hung"
grep -q 'c2 → drained' "$d/preflight.html" && grep -q 'hung: never arrived in' "$d/preflight.html" ||
  fail "the HTML does not name c2 as hung and drained"
say "hang: c2 drained ($(echo "$node_state" | grep -o 'Reason=.*')), named in drain.txt, verdicts.json, preflight.html; job $id requeued"
scancel "$id"
# the operator resumes c2 once the hung job's processes are gone
wait_job "$id" 60 CANCELLED && steps_gone "$id" 60 || stuck "the hung job's steps did not end"
scontrol update NodeName=c2 State=RESUME

# 4. no operator rights: scontrol update refused (as Slurm refuses a user)
mkdir -p "$T/noadmin"
cat >"$T/noadmin/scontrol" <<EOF
#!/bin/bash
[ "\$1" = update ] && case "\$2" in NodeName=*) echo "slurm_update error: Invalid user id" >&2; exit 1 ;; esac
exec $(command -v scontrol) "\$@"
EOF
chmod 755 "$T/noadmin/scontrol"
id=$(preflight_job noadmin "$opts --inject slow:rank=2,factor=8" PATH="$T/noadmin:$PATH") || exit 1
wait_job "$id" 420 FAILED COMPLETED CANCELLED TIMEOUT || stuck "the noadmin job did not end"
line=$(grep '^fleetprint-preflight:' "$T/work/noadmin-$id.log" | tail -n 1)
echo "  | $line"
echo "$line" | grep -q 'nodes c3 could not be drained.*operator rights.*exclude.txt.*not requeued' || fail "no clear message"
[ "$(cat "$T/work/preflight-$id/exclude.txt")" = c3 ] || fail "c3 is not in the job's exclude list"
for n in c1 c2 c3 c4; do drained "$n" && fail "$n was drained without rights"; done
[ "$(scontrol show job "$id" | grep -o 'Restarts=[0-9]*')" = Restarts=0 ] || fail "requeued without a drain"
say "no operator rights: nothing drained, c3 in preflight-$id/exclude.txt, not requeued"

# 5. the Prolog: c2 passes and runs the job, c1 (a bit flip) is drained
hc="--test membw --test gemm --threads 1 --array-size 2M -n 4"
echo "$hc" >"$T/hc/prolog-c2"
echo "$hc --inject bitflip:rank=0" >"$T/hc/prolog-c1"
id=$(sbatch --parsable -p cpu -t 5 -N 1 -w c2 -o /dev/null --wrap "touch $T/work/prolog-ok") || fail "sbatch refused"
wait_job "$id" 120 COMPLETED FAILED CANCELLED TIMEOUT || stuck "the prolog job on c2 did not end"
[ -e "$T/work/prolog-ok" ] || fail "the job on c2 (prolog passes) did not run"
grep -q "c2 .*\[prolog (job $id)\]: pass" "$T/hc/out/c2/healthcheck.log" || fail "no passing prolog line for c2"
id=$(sbatch --parsable -p cpu -t 5 -N 1 -w c1 -o /dev/null --wrap "touch $T/work/prolog-bad") || fail "sbatch refused"
drained c1 120 || fail "the prolog did not drain c1 within 120 s"
echo "$node_state" | grep -q 'Reason=fleetprint healthcheck: fail' || fail "c1's reason is not fleetprint's"
sleep 2
[ ! -e "$T/work/prolog-bad" ] || fail "the job ran on c1 despite its failing prolog"
rm -f "$T/hc/prolog-c1" "$T/hc/prolog-c2"
scancel "$id"
scontrol update NodeName=c1 State=RESUME
say "prolog: c2 passed and ran the job, c1 drained ($(echo "$node_state" | grep -o 'Reason=.*')) and its job did not run"

# 6. the health check: slurmd runs it every 5 s; c4 (a bit flip) is drained
echo "$hc --inject bitflip:rank=0" >"$T/hc/check-c4"
drained c4 60
rm -f "$T/hc/check-c4"
echo "$node_state" | grep -q 'Reason=fleetprint healthcheck: fail' || fail "the health check did not drain c4 within 60 s"
grep -q 'c4 .*\[healthcheck\]: fail: drained' "$T/hc/out/c4/healthcheck.log" || fail "no health check line for c4"
scontrol update NodeName=c4 State=RESUME
say "health check: c4 drained ($(echo "$node_state" | grep -o 'Reason=.*'))"
say "ok"

