#!/usr/bin/env bash
# gather_rows.c on 5 ranks, two a node: rank 0 holds the gathered run as rows,
# every rank's samples in rank order, stored as its samples would be.
. "$FP_TESTS/lib.sh"
prog=${1:?usage: gather_rows.sh PROGRAM}
FP_RANKS_PER_NODE=2 expect_rc 0 mpi 5 "$prog"
expect_out 'gather_rows: ok'
echo "ok: the gathered run is rows, in rank order, stored as its samples"
