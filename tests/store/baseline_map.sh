#!/usr/bin/env bash
# The baselines' entity table is written contiguous, uncompressed and on a
# page boundary, its rows laid out as detect holds them, so that detect maps
# it from the file (shared with the page cache) instead of reading it into
# fresh memory. The same table as earlier versions wrote it (chunked,
# compressed, members packed) is read instead, with the same verdicts; a
# table cut short is an error naming the store (exit 2), never a crash.
. "$FP_TESTS/lib.sh"
cd "$WORK"
F=$FLEETPRINT

expect_rc 0 "$F" simulate --nodes 300 --seed 7 --runs 4 --out sim.jsonl
expect_rc 0 "$F" store ingest sim.jsonl --store s.h5
expect_rc 0 "$F" baseline build --store s.h5
py - s.h5 <<'PY'
import glob, sys, h5py
part = sorted(glob.glob(sys.argv[1] + ".d/b*.h5"))[-1]
d = h5py.File(part, "r")["baselines/entity"]
assert d.chunks is None and d.compression is None, (d.chunks, d.compression)
assert d.id.get_offset() % 4096 == 0, d.id.get_offset()
assert d.dtype.itemsize == 112 and d.dtype.fields["median"][1] == 32, d.dtype
print("ok: entity table contiguous at", d.id.get_offset(), "rows of", d.dtype.itemsize, "bytes")
PY
# mapped: the detect process maps the partition (strace shows the mapping)
if command -v strace >/dev/null; then
  strace -f -e trace=mmap -o trace.txt "$F" detect --store s.h5 --json mapped.json \
    >/dev/null 2>&1 || true
  grep -q "PROT_READ, MAP_PRIVATE|MAP_POPULATE" trace.txt || fail "the entity table was not mapped"
fi
expect_rc 1 "$F" detect --store s.h5 --json mapped.json
expect_rc 1 "$F" detect --store s.h5 --explain node:n007 --json mapped_x.json

# rewrite FILE ACTION: the entity table of the baselines partition
# (old: chunked, deflated, members packed as earlier versions wrote them;
# cut: the file truncated inside the table)
rewrite() {
  py - "$@" <<'PY'
import glob, os, sys, h5py, numpy as np
part = sorted(glob.glob(sys.argv[1] + ".d/b*.h5"))[-1]
if sys.argv[2] == "cut":
    with h5py.File(part, "r") as f:
        d = f["baselines/entity"]
        end = d.id.get_offset() + d.id.get_storage_size() // 2
    os.truncate(part, end)
    sys.exit(0)
with h5py.File(part, "r+") as f:
    g = f["baselines"]
    rows = g["entity"][...]
    packed = np.dtype([(n, rows.dtype[n]) for n in rows.dtype.names])  # no gaps: 108 bytes
    assert packed.itemsize == 108
    del g["entity"]
    g.create_dataset("entity", data=rows.astype(packed), chunks=(4096,), maxshape=(None,),
                     compression="gzip", compression_opts=1, shuffle=True)
PY
}
rewrite s.h5 old
expect_rc 1 "$F" detect --store s.h5 --json read.json
cmp mapped.json read.json || fail "the mapped and the read baselines give other verdicts"
expect_rc 1 "$F" detect --store s.h5 --explain node:n007 --json read_x.json
cmp mapped_x.json read_x.json || fail "the mapped and the read baselines explain otherwise"
echo "ok: an entity table as earlier versions wrote it is read, verdicts identical"

# a new build writes the mappable table again; then the file cut inside it
expect_rc 0 "$F" baseline build --store s.h5
rewrite s.h5 cut
expect_rc 2 "$F" detect --store s.h5
expect_out "s.h5: the baselines cannot be read"
! grep -Eq "Bus error|Segmentation" "$WORK/out" || fail "crashed on a cut table"
echo "ok: a table cut short: exit 2, one line naming the store"
