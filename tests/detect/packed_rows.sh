#!/usr/bin/env bash
# detect --store keeps a run's samples packed (its compressed chunks) where
# no output reads them by index, and interns them a chunk at a time from the
# shapes the store counted when it wrote the run (each metric's largest
# window, its first-window and summary rows). Its verdicts are those of the
# rows read whole (--junit reads them), over several chunks; a run stored
# before the shapes existed is counted from its rows first, with the same
# verdicts; a shape that disagrees with the rows is a corrupt store: one
# line, exit 2, never a write past the values.
. "$FP_TESTS/lib.sh"
cd "$WORK"
F=$FLEETPRINT

expect_rc 0 "$F" simulate --nodes 300 --seed 5 --runs 4 --out sim.jsonl
expect_rc 0 "$F" store ingest sim.jsonl --store s.h5
expect_rc 0 "$F" baseline build --store s.h5
expect_rc 1 "$F" detect --store s.h5 --json packed.json
expect_rc 1 "$F" detect --store s.h5 --json whole.json --junit j.xml
cmp packed.json whole.json || fail "packed and whole rows give other verdicts"
expect_rc 1 "$F" detect --store s.h5 --no-baselines --json p2.json
expect_rc 1 "$F" detect --store s.h5 --no-baselines --json w2.json --junit j.xml
cmp p2.json w2.json || fail "packed and whole rows give other verdicts (peers only)"

# edit FILE ACTION: rewrite the last run's metric table in its partition
# (strip: without the shape members, as older versions wrote it; shrink: a
# windowed metric's largest window made smaller than its rows'; inflate: a
# count past the run's rows)
edit() {
  py - "$@" <<'PY'
import glob, sys, h5py, numpy as np
store, action = sys.argv[1], sys.argv[2]
run = sorted(h5py.File(store, "r")["runs"].keys())[-1]
for part in sorted(glob.glob(store + ".d/p*.h5")):
    with h5py.File(part, "r+") as f:
        if "runs/" + run not in f:
            continue
        g = f["runs/" + run]
        m = g["metrics"][...]
        names = m.dtype.names
        samples = g["samples"]
        assert samples.chunks[0] < samples.shape[0], "the run fits one chunk"
        assert "last_window" in names, names
        if action == "strip":
            keep = [n for n in names if n not in ("last_window", "first_windows", "summaries")]
            new = np.empty(m.shape, dtype=[(n, m.dtype[n]) for n in keep])
            for n in keep:
                new[n] = m[n]
        elif action == "shrink":
            new = m.copy()
            k = int(np.argmax(new["last_window"]))
            assert new["last_window"][k] > 0
            new["last_window"][k] = 0
        else: # inflate: more rows counted than the run holds
            new = m.copy()
            new["first_windows"][0] = 2**31
        del g["metrics"]
        g.create_dataset("metrics", data=new)
        print("edited", part, run, action)
        sys.exit(0)
sys.exit("run %s in no partition" % run)
PY
}
copy() { rm -rf "$2" "$2.d"; cp "$1" "$2"; cp -r "$1.d" "$2.d"; }

# damage FILE: overwrite bytes inside the compressed data of the last run's
# sample chunks 1 and the last (the interning's and, where it helps, the
# decoding-ahead thread's)
damage() {
  py - "$1" <<'PY'
import glob, sys, h5py
store = sys.argv[1]
run = sorted(h5py.File(store, "r")["runs"].keys())[-1]
for part in sorted(glob.glob(store + ".d/p*.h5")):
    with h5py.File(part, "r+") as f:
        if "runs/" + run not in f:
            continue
        ds = f["runs/" + run + "/samples"]
        n = -(-ds.shape[0] // ds.chunks[0])
        assert n >= 3, "want three chunks or more"
        for c in (1, n - 1):
            off = (c * ds.chunks[0],)
            mask, raw = ds.id.read_direct_chunk(off)
            raw = bytearray(raw)
            mid = len(raw) // 2
            raw[mid:mid + 16] = bytes(b ^ 0xFF for b in raw[mid:mid + 16])
            ds.id.write_direct_chunk(off, bytes(raw), mask)
        print("damaged", part, run, "chunks 1 and", n - 1)
        sys.exit(0)
sys.exit("run %s in no partition" % run)
PY
}

copy s.h5 old.h5
edit old.h5 strip || fail "could not strip the shapes"
expect_rc 1 "$F" detect --store old.h5 --json old.json
cmp packed.json old.json || fail "a run without stored shapes gives other verdicts"

copy s.h5 bad.h5
edit bad.h5 shrink || fail "could not shrink a shape"
expect_rc 2 "$F" detect --store bad.h5 --json bad.json
expect_out "lies outside the windows stored for its metric \(corrupt\)"
[ "$(grep -c 'error' "$WORK/out")" = 1 ] || fail "want one error line"
copy s.h5 big.h5
edit big.h5 inflate || fail "could not inflate a count"
expect_rc 2 "$F" detect --store big.h5 --json big.json
expect_out "its metrics count more rows than its [0-9]+ \(corrupt\)"
copy s.h5 dam.h5
damage dam.h5 || fail "could not damage the chunks"
expect_rc 2 "$F" detect --store dam.h5 --json dam.json
expect_out "chunk 1 \(rows from [0-9]+\) cannot be decompressed \(corrupt\)"
[ "$(grep -c 'error' "$WORK/out")" = 1 ] || fail "want one error line for the damaged chunks"
echo "packed rows: verdicts as whole rows, old and corrupt shapes and chunks handled"
