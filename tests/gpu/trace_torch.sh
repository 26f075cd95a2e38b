#!/usr/bin/env bash
# On a GPU machine: a torch.distributed (NCCL backend) job with the fleetprint
# profiler plugin (arg: libnccl-profiler-fleetprint.so). NCCL must load it
# (NCCL_DEBUG=INFO "PROFILER/Plugin: Loaded"), call its init and finalize, and
# the rank's trace file must be whole. One GPU: NCCL fires no events for a
# one-rank communicator, so the file holds no ops. Two GPUs or more: a
# torchrun job's allreduces are in every rank's file and `fleetprint trace`
# reads them. Skips (77) without torch or CUDA.
. "$FP_TESTS/lib.sh"
PLUGIN=$1
ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>/dev/null || echo 0)
[ "$ngpu" -ge 1 ] || { echo "no torch with CUDA: skipped"; exit 77; }
export FLEETPRINT_TRACE_DIR=$WORK/tr NCCL_PROFILER_PLUGIN=$PLUGIN NCCL_DEBUG=INFO
mkdir -p "$FLEETPRINT_TRACE_DIR"
cat >"$WORK/job.py" <<'PY'
import os, torch, torch.distributed as dist
rank = int(os.environ.get("RANK", 0))
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
dist.init_process_group("nccl")
x = torch.ones(1 << 20, device="cuda")
for _ in range(10):
    dist.all_reduce(x)
torch.cuda.synchronize()
assert x[0].item() == dist.get_world_size() ** 10
dist.destroy_process_group()
PY
n=1
[ "$ngpu" -ge 2 ] && n=2
expect_rc 0 python3 -m torch.distributed.run --standalone --nproc_per_node=$n "$WORK/job.py"
expect_out "PROFILER/Plugin: Loaded"
expect_out "fleetprint profiler: init v[0-9] comm [0-9a-f]+ rank 0/$n"
expect_out "fleetprint profiler: finalize comm"
py - "$FLEETPRINT_TRACE_DIR" "$n" <<'PY' || fail "trace files"
import glob, json, sys
d, n = sys.argv[1], int(sys.argv[2])
files = sorted(glob.glob(d + "/*.jsonl"))
assert len(files) == n, files
for f in files:
    recs = [json.loads(l) for l in open(f)]
    evs = [r["ev"] for r in recs]
    assert evs[0] == "header" and evs[-1] == "end", evs[:3]
    assert "comm" in evs and "comm_end" in evs
    colls = [r for r in recs if r["ev"] == "coll" and r["op"] == "AllReduce"]
    if n == 1:
        assert not colls, len(colls)       # no events for a one-rank communicator
    else:
        assert len(colls) >= 10, len(colls)
print("ok: %d trace file(s)" % len(files))
PY
if [ "$n" -ge 2 ]; then
    expect_rc 0 "$FLEETPRINT" trace "$FLEETPRINT_TRACE_DIR" --timeline "$WORK/tl.json"
fi
echo "trace_torch: ok ($n GPU)"
