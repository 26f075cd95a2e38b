#!/usr/bin/env bash
# Nightly fleet burn-in: burn in every node of a hostfile, append the run to
# the fingerprint store, keep the detector's verdicts with it (history: a node
# that warns night after night is a repeat offender), fold the night's run
# into the nightly baselines (`baseline update`: the runs before it are not
# read again; a full `baseline build` where the store has no update state
# yet). Meant for cron (see
# docs/burnin.md for the crontab line); every setting is an environment
# variable:
#   FP_HOSTFILE   Open MPI hostfile of the nodes to burn in (required)
#   FP_STORE      HDF5 fingerprint store            (default /var/lib/fleetprint/fleet.h5)
#   FP_DURATION   burn-in length                    (default 30m)
#   FP_INTERVAL   window length                     (default 1m)
#   FP_PPN        ranks (GPUs) per node             (default 8)
#   FP_TAG        run tag                           (default nightly)
#   FP_BASELINE_LAST  the baselines' window: the newest N nightly runs
#                 (default 30; 0: every run, and the update state grows by a
#                 run each night)
#   FP_LOGDIR     JSON reports and logs             (default /var/log/fleetprint)
#   FLEETPRINT    the fleetprint binary             (default: fleetprint on PATH)
#   MPIRUN        the launcher and its options      (default mpirun)
#                 FLEETPRINT and MPIRUN are split into words at blanks:
#                 MPIRUN="mpirun --mca btl tcp,self" or "srun --mpi=pmix"
#   FP_EXTRA      more burnin options, e.g. "--memory-fraction 0.8"
#   FP_PROM       Prometheus textfile to write for dashboards, e.g.
#                 /var/lib/node_exporter/textfile/fleetprint.prom (default: none)
# --dry-run prints the commands instead of running them.
# Exit code: burn-in's (0 pass, 1 fail found, 5 interrupted, see README), or
# the baselines' when burn-in passed and the update (and the build it fell
# back to) failed. Two nightly
# runs never overlap (flock on the store's lock file).
set -uo pipefail

dry=0
[ "${1:-}" = "--dry-run" ] && dry=1
: "${FP_HOSTFILE:?set FP_HOSTFILE to an Open MPI hostfile of the nodes to burn in}"
store=${FP_STORE:-/var/lib/fleetprint/fleet.h5}
duration=${FP_DURATION:-30m}
interval=${FP_INTERVAL:-1m}
ppn=${FP_PPN:-8}
tag=${FP_TAG:-nightly}
last=${FP_BASELINE_LAST:-30}
logdir=${FP_LOGDIR:-/var/log/fleetprint}
read -ra fleetprint <<<"${FLEETPRINT:-fleetprint}"
read -ra mpirun <<<"${MPIRUN:-mpirun}"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
json="$logdir/burnin-$stamp.json"

[ -r "$FP_HOSTFILE" ] || { echo "nightly-burnin: cannot read hostfile $FP_HOSTFILE" >&2; exit 2; }

# pass the environment fleetprint reads on to the ranks, where it is set
envs=()
for v in PATH LD_LIBRARY_PATH FLEETPRINT_NVML; do [ -n "${!v:-}" ] && envs+=(-x "$v"); done
# shellcheck disable=SC2206
burnin=("${mpirun[@]}" --hostfile "$FP_HOSTFILE" --map-by "ppr:$ppn:node" "${envs[@]}"
        "${fleetprint[@]}" burnin --duration "$duration" --interval "$interval"
        --store "$store" --tag "$tag" --json "$json" ${FP_EXTRA:-})
# the night's verdicts, judged against the baselines before it, kept with the run
record=("${fleetprint[@]}" detect --store "$store" --tag "$tag" --run latest --record -q)
# the night's run into the baselines; exit 2 (no update state: a store from
# before updates, or baselines built with another tag or window) -> full build
window=()
[ "$last" != 0 ] && window=(--last "$last")
update=("${fleetprint[@]}" baseline update --store "$store" --tag "$tag" "${window[@]}" --run latest)
baseline=("${fleetprint[@]}" baseline build --store "$store" --tag "$tag" "${window[@]}")
report=("${fleetprint[@]}" report --store "$store" --tag "$tag" -q --html "$logdir/burnin-$stamp.html")
[ -n "${FP_PROM:-}" ] && report+=(--prometheus "$FP_PROM")

if [ $dry = 1 ]; then
  printf '%q ' "${burnin[@]}"; echo
  printf '%q ' "${record[@]}"; echo
  printf '%q ' "${update[@]}"; echo
  printf '%q ' "${baseline[@]}"; echo
  printf '%q ' "${report[@]}"; echo
  exit 0
fi

mkdir -p "$logdir" "$(dirname "$store")"
exec 9>"$store.nightly.lock"
flock -n 9 || { echo "nightly-burnin: another nightly run holds $store.nightly.lock" >&2; exit 4; }

echo "nightly-burnin: $(wc -l <"$FP_HOSTFILE") hosts, $duration, store $store, report $json"
rc=0
"${burnin[@]}" || rc=$?
case $rc in
  0|1|5) ;;   # results were written (pass, fail found, interrupted)
  *) echo "nightly-burnin: burn-in ended with exit $rc; baselines left as they were" >&2
     exit $rc ;;
esac
# detect exits 1 when the verdict fails: the verdicts are kept either way
drc=0
"${record[@]}" || drc=$?
[ $drc -le 1 ] || echo "nightly-burnin: keeping the night's verdicts failed (exit $drc)" >&2
brc=0
"${update[@]}" || brc=$?
if [ $brc = 2 ]; then
  echo "nightly-burnin: baseline update cannot fold the run in (exit 2): a full baseline build" >&2
  brc=0
  "${baseline[@]}" || brc=$?
fi
[ $brc = 0 ] || echo "nightly-burnin: baselines not updated (exit $brc)" >&2
# the night's run against the new baselines: a page to look at, a textfile for dashboards
rrc=0
"${report[@]}" || rrc=$?
# report exits 1 on a failing verdict (its files are written): only 2+ is a failure of its own
[ $rrc -le 1 ] || echo "nightly-burnin: report failed (exit $rrc)" >&2
[ $rc != 0 ] && exit $rc
exit $brc
