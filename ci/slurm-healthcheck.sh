#!/bin/bash
# fleetprint as a Slurm Prolog or HealthCheckProgram: a quick check of this
# node's devices, run by slurmd as the SlurmUser, which may drain the node
# (a job's own preflight, ci/slurm-preflight.sbatch, may not without operator
# rights). In slurm.conf, either or both:
#
#   Prolog=/usr/local/libexec/fleetprint/slurm-healthcheck.sh
#       before every job, on each of its nodes. A failing node is drained
#       with fleetprint's reason and the script exits 1: Slurm then requeues
#       the job (and marks the node DRAIN "Prolog error" too, should the
#       drain below have failed).
#   HealthCheckProgram=/usr/local/libexec/fleetprint/slurm-healthcheck.sh
#   HealthCheckInterval=3600
#   HealthCheckNodeState=IDLE
#       every hour on idle nodes. A failing node is drained with
#       fleetprint's reason (slurmd ignores the exit code).
#
# The mode is Prolog when SLURM_JOB_ID is set, else health check. slurmd
# passes no settings to these programs: they come from FP_HC_CONF (default
# /etc/fleetprint/healthcheck.conf, a shell file of VAR=value lines), else the
# environment:
#   FLEETPRINT     the fleetprint binary (default /usr/local/bin/fleetprint)
#   MPIRUN         mpirun and its options (default mpirun); the ranks run on
#                  this node only. FLEETPRINT and MPIRUN are split into words
#                  at blanks ("mpirun --mca btl self,vader")
#   FP_HC_RANKS    ranks on this node (default: the GPUs nvidia-smi lists, else 1)
#   FP_HC_OPTS     preflight options (default "--test membw --test gemm"). The
#                  ranks judge each other and the value rules (wrong results)
#                  judge each device; a node-wide slowdown needs baselines:
#                  add "--store FILE" (the run is then appended to it too)
#   FP_HC_TIMEOUT  fleetprint's deadline per step (default 60s); the whole
#                  check is killed after four times that
#   SLURM_CONF     slurm.conf, for scontrol, where it is not in the default
#                  place (slurmd does not pass it to the health check)
#   FP_HC_OUT      where each node keeps its last verdicts.json, healthcheck.html and
#                  healthcheck.log (default /var/log/fleetprint/healthcheck/<node>)
#
# Before it drains, the check re-tests (preflight's confirm pass,
# docs/confirm.md): what failed runs once more, and only what fails again
# drains the node; a failure that did not reproduce passes, and the log says
# so ("did not reproduce on re-test: not drained"). FP_HC_OPTS="--confirm off"
# drains on one measurement.
#
# Exit: 0 the node passes (or warns), or the check could not run here (a
# missing binary, a bad option: said in the log; a misconfigured check never
# drains a fleet); 1 the node fails or hangs (drained with the reason).
set -uo pipefail
conf=${FP_HC_CONF:-/etc/fleetprint/healthcheck.conf}
# shellcheck disable=SC1090
[ -r "$conf" ] && . "$conf"
[ -n "${SLURM_CONF:-}" ] && export SLURM_CONF
node=${SLURMD_NODENAME:-$(hostname -s)}
mode=healthcheck
[ -n "${SLURM_JOB_ID:-}" ] && mode="prolog (job $SLURM_JOB_ID)"
read -r -a fp <<<"${FLEETPRINT:-/usr/local/bin/fleetprint}"
read -r -a mpirun <<<"${MPIRUN:-mpirun}"
out=${FP_HC_OUT:-/var/log/fleetprint/healthcheck}/$node
timeout=${FP_HC_TIMEOUT:-60s}
read -r -a opts <<<"${FP_HC_OPTS:---test membw --test gemm}"
say() { echo "fleetprint-healthcheck $node $(date -u +%FT%TZ) [$mode]: $*" >>"$out/healthcheck.log"; }
# confirmed LIST: whether this node is in the confirm pass's LIST (reproduced,
# not_reproduced) of the verdicts JSON
confirmed() {
  awk -v want="\"$1\": [" -v me="\"node:$node\"" '
    /"confirm": \{/ { c = 1 }
    c && index($0, want) { l = ($0 !~ /\]/); next }
    l && /\]/ { l = 0 }
    l && index($0, me) { found = 1 }
    END { exit !found }' "$out/verdicts.json" 2>/dev/null
}

mkdir -p "$out" 2>/dev/null || { logger -t fleetprint-healthcheck "cannot create $out" 2>/dev/null; exit 0; }
if ! command -v "${fp[0]:-}" >/dev/null; then
  say "cannot run: no fleetprint at ${fp[*]} (set FLEETPRINT in $conf); node left as it is"
  exit 0
fi
ranks=${FP_HC_RANKS:-}
if [ -z "$ranks" ]; then
  ranks=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  [ "$ranks" -gt 0 ] 2>/dev/null || ranks=1
fi
secs=${timeout%s}
case $secs in '' | *[!0-9]*) say "cannot run: FP_HC_TIMEOUT '$timeout' is not N or Ns"; exit 0 ;; esac

rm -f "$out/drain.txt" "$out/verdicts.json"
# the ranks stay on this node: Open MPI must not take the job's allocation
# from SLURM_* (it would launch through srun), and slurmd runs us as root
(
  for v in $(compgen -e | grep '^SLURM_'); do unset "$v"; done
  export FLEETPRINT_NODE=$node OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  exec timeout -k 10 $((secs * 4)) "${mpirun[@]}" -np "$ranks" --bind-to none "${fp[@]}" preflight \
    --timeout "$timeout" --tag healthcheck --drain-file "$out/drain.txt" \
    --json "$out/verdicts.json" --html "$out/healthcheck.html" -q "${opts[@]}"
) >>"$out/healthcheck.log" 2>&1
rc=$?
# mpirun reports the rank's exit code; a killed check (timeout's 124/137) hung
case $rc in
  0)
    if confirmed not_reproduced; then
      say "pass: it failed, but did not reproduce on re-test: not drained"
    else
      say "pass"
    fi
    exit 0 ;;
  1 | 4 | 124 | 137)
    what=fail
    [ "$rc" = 1 ] || what=hung
    grep -q '"rule": "hung"' "$out/verdicts.json" 2>/dev/null && what=hung
    [ "$what" = fail ] && confirmed reproduced && what="fail, reproduced on re-test"
    reason="fleetprint healthcheck: $what (see $out/healthcheck.html)"
    if scontrol update NodeName="$node" State=DRAIN Reason="$reason" >>"$out/healthcheck.log" 2>&1; then
      say "$what: drained ($reason)"
    else
      say "$what: scontrol update refused to drain the node (run this as the SlurmUser)"
    fi
    exit 1 ;;
  *) say "cannot run the check (fleetprint exit $rc, message above): node left as it is"
     exit 0 ;;
esac
