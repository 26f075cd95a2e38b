#!/bin/bash
# The collectives suite on the emulated GPU: coll.sh NRANKS COMM. Every row
# verifies (wrong = 0) and the run exits 0. With one rank and nccl this is
# issue 12's failure 1 (alltoall and sendrecv to the rank itself refused by
# NCCL with "invalid argument").
. "$FP_TESTS/emu/common.sh"
np=$1 comm=$2
expect_rc 0 emu "$np" "$comm" run --suite collectives "${SMALL[@]}" --json "$WORK/out.json"
no_crash
py - "$WORK/out.json" "$np" "$comm" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
np, comm = int(sys.argv[2]), sys.argv[3]
ctx = d['run'] if 'run' in d else d
tests = {s['test'] for s in d['samples']}
for t in ('allreduce', 'allgather', 'reduce_scatter', 'alltoall', 'broadcast', 'reduce', 'sendrecv'):
    assert t in tests, (t, sorted(tests))
wrong = [s for s in d['samples'] if 'wrong' in s['metric'] and s['value'] != 0]
assert not wrong, wrong[:3]
print('emu collectives: %d ranks, comm %s: %d samples, all verified' % (np, comm, len(d['samples'])))
PY
