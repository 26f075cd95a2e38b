#!/usr/bin/env bash
# The preflight flow (ci/slurm-preflight.sbatch) on a real Slurm: munged,
# slurmctld and four slurmd daemons (nodes c1..c4, all on 127.0.0.1, each on
# its own port; no GRES, no cgroups) started from a generated slurm.conf in a
# temporary folder, and stopped again on every exit path.
#
#   ci/slurm-test.sh [BUILD_DIR]       (as root; BUILD_DIR defaults to build;
#                                       CTest runs it as slurm_preflight, label slurm)
#
# Checks: a healthy preflight starts the job (on a partition without GRES, so
# srun gets no GPU binding); an injected slow rank drains exactly its node
# (DRAIN, with the reason) and requeues the job. Exit 0 pass, 1 a check
# failed, 3 Slurm cannot run here (not root, packages missing: the line says
# which), 4 a daemon or job did not come up in time. Every wait is bounded.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" 2>/dev/null && pwd) || { echo "slurm-test: no build folder ${1:-build}" >&2; exit 2; }
fp=$build/fleetprint
say() { echo "slurm-test: $*"; }
skip() { say "cannot run here: $*"; exit 3; }
fail() { say "FAIL: $*"; [ -n "${T:-}" ] && tail -n 20 "$T"/log/*.log >&2; exit 1; }

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
AuthInfo=socket=$sock
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
NodeName=c1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 1)) CPUs=2 State=UNKNOWN
NodeName=c2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=2 State=UNKNOWN
NodeName=c3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 3)) CPUs=2 State=UNKNOWN
NodeName=c4 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 4)) CPUs=2 State=UNKNOWN
PartitionName=cpu Nodes=c[1-4] Default=YES MaxTime=UNLIMITED State=UP OverSubscribe=FORCE:4
EOF
export SLURM_CONF=$T/slurm.conf
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
wait_job() {
  local id=$1 limit=$2 st=""; shift 2
  for _ in $(seq $((limit * 2))); do
    st=$(scontrol show job "$id" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    for want in "$@"; do [ "$st" = "$want" ] && return 0; done
    sleep 0.5
  done
  say "job $id still ${st:-unknown} after ${limit}s (wanted $*)"
  scontrol show job "$id" >&2
  return 1
}
# compute tests only: on emulated nodes sharing 2 cores the late-rank rule of a
# collective can pick a healthy rank; the slow rank shows in membw and gemm
opts="--threads 1 --array-size 2M -n 4 --test membw --test gemm"
cd "$T/work"
export PATH=$build:$PATH FP_STORE=$T/work/fleet.h5

# 1. healthy: the job's command runs, with no GPU binding on this GRES-less
#    partition, and a store that cannot be written is a warning, not a veto
id=$(FP_STORE=$T/missing/fleet.h5 FP_PREFLIGHT_OPTS="$opts" sbatch --parsable -p cpu -t 10 -N 4 --ntasks-per-node=1 \
  -o "$T/work/healthy-%j.log" "$here/slurm-preflight.sbatch" touch "$T/work/job-ran") ||
  fail "sbatch refused the healthy job"
wait_job "$id" 420 COMPLETED FAILED CANCELLED TIMEOUT || exit 4
log=$T/work/healthy-$id.log
sed 's/^/  | /' "$log" | grep -E 'fleetprint-preflight:|detect ' || true
[ -e "$T/work/job-ran" ] || fail "healthy preflight did not start the job (log $log)"
grep -q 'go: starting the job' "$log" || fail "no go line in the job log"
! grep -q -- '--gpus-per-task' "$log" || fail "srun got a GPU binding on a partition without GRES"
grep -q -- '--mpi=pmix' "$log" || fail "srun did not use --mpi=pmix"
grep -q "warning: store $T/missing/fleet.h5 cannot be written" "$log" || fail "no warning for the missing store"
say "healthy: job $id started its command (srun --mpi=pmix, no GPU binding, missing store only a warning)"

# 2. a slow rank: rank 2 (node c3) drained with the reason, the job requeued
id=$(FP_PREFLIGHT_OPTS="$opts --inject slow:rank=2,factor=20" sbatch --parsable -p cpu -t 10 -N 4 \
  --ntasks-per-node=1 -o "$T/work/slow-%j.log" --open-mode=append \
  "$here/slurm-preflight.sbatch" touch "$T/work/slow-job-ran") || fail "sbatch refused the slow job"
for _ in $(seq 840); do
  restarts=$(scontrol show job "$id" 2>/dev/null | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
  [ "${restarts:-0}" -ge 1 ] && break
  sleep 0.5
done
sed 's/^/  | /' "$T/work/slow-$id.log" | grep -E 'fleetprint-preflight:|FAIL' || true
[ "${restarts:-0}" -ge 1 ] || fail "the job was not requeued within 420 s"
c3=$(scontrol show node c3 | grep -E 'State=|Reason=')
echo "$c3" | sed 's/^ */  scontrol show node c3: /'
echo "$c3" | grep -q 'State=[A-Z+]*DRAIN' || fail "c3 is not drained"
echo "$c3" | grep -q "Reason=fleetprint preflight $id" || fail "c3's drain reason does not name the job"
for n in c1 c2 c4; do
  scontrol show node "$n" | grep -q 'State=[A-Z+]*DRAIN' && fail "$n was drained too"
done
[ ! -e "$T/work/slow-job-ran" ] || fail "the job ran despite the slow rank"
say "slow rank: c3 drained ($(echo "$c3" | grep -o 'Reason=.*')), job $id requeued (Restarts=$restarts)"
scancel "$id" # it waits for 4 nodes where 3 are left
scontrol update NodeName=c3 State=RESUME
say "ok"
