#!/usr/bin/env bash
# The run context records the Slurm job it ran in: SLURM_JOB_ID,
# SLURM_JOB_PARTITION and SLURM_JOB_NAME (when set) in the run JSON and as
# attributes of the run's group in the store; outside Slurm they are empty.
. "$FP_TESTS/lib.sh"
cd "$WORK"
run() { mpi 2 "$FLEETPRINT" run --test membw --array-size 1M -n 2 -q "$@" >run.log 2>&1 || { cat run.log; fail "run $*"; }; }
SLURM_JOB_ID=4242 SLURM_JOB_PARTITION=gpu-a SLURM_JOB_NAME='train "x"' run --json in.json --store s.h5
env -u SLURM_JOB_ID -u SLURM_JOB_PARTITION -u SLURM_JOB_NAME bash -c '. "$FP_TESTS/lib.sh"; cd '"$WORK"'; mpi 2 "$FLEETPRINT" run --test membw --array-size 1M -n 2 -q --json out.json >out.log 2>&1' ||
  { cat out.log; fail "run outside Slurm"; }
py - <<'PY'
import json, h5py
c = json.load(open("in.json"))["run"]
assert (c["slurm_job_id"], c["slurm_partition"], c["slurm_job_name"]) == ("4242", "gpu-a", 'train "x"'), c
o = json.load(open("out.json"))["run"]
assert (o["slurm_job_id"], o["slurm_partition"], o["slurm_job_name"]) == ("", "", ""), o
runs = h5py.File("s.h5", "r")["runs"]  # each run an external link into its partition
found = [{k: runs[r].attrs[k].decode() for k in ("slurm_job_id", "slurm_partition", "slurm_job_name")}
         for r in runs]
assert found == [{"slurm_job_id": "4242", "slurm_partition": "gpu-a", "slurm_job_name": 'train "x"'}], found
print("ok: the run JSON and the store record the Slurm job; empty outside Slurm")
PY
