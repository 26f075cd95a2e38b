#!/usr/bin/env bash
# A full disk (ENOSPC, a real tmpfs filled to the last block) and a failing
# disk (EIO, from tests/io/eio_shim.c) on every write path: the store
# (ingest), store export, simulate, and each report (JSON, HTML, JUnit,
# Prometheus as one file and as a folder of one per node, drain list). Each
# ends with exit 4 and one line naming the file and the cause; the store's
# bytes (md5) and an existing output file (or folder) are unchanged, and no
# temporary is left beside them.
. "$FP_TESTS/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: mounting a tmpfs needs root"; exit 77; }
cd "$WORK"
F=$FLEETPRINT
full=$WORK/full
mkdir -p "$full"
mount -t tmpfs -o size=1m fpfull "$full" 2>mount.err || { cat mount.err; echo "SKIP: cannot mount a tmpfs here"; exit 77; }
trap 'umount "$full" 2>/dev/null; rm -rf "$WORK"' EXIT

# inputs on the roomy disk: a simulated fleet, one run per file
expect_rc 0 "$F" simulate --nodes 12 --gpus-per-node 2 --seed 3 --runs 2 --faults slow-node=1 --out sim.jsonl
awk '/"kind":"run"/{n++} n==1' sim.jsonl >run1.jsonl
awk '/"kind":"run"/{n++} n==2' sim.jsonl >run2.jsonl
expect_rc 0 "$F" store ingest run1.jsonl --store "$full/fleet.h5"
printf 'the old page\n' >"$full/old.html"
# a folder of per-node textfiles from an earlier run: all of it stays as it was
mkdir "$full/prom"
printf '# the old run file\n' >"$full/prom/fleetprint-run.prom"
printf '# the old n01 file\n' >"$full/prom/fleetprint-n01.prom"
# the store is its manifest and its partitions (docs/store.md)
store_md5() { (cd "$full" && md5sum fleet.h5 old.html fleet.h5.d/* prom/*); }
before=$(store_md5)

# one_line WHAT: the last command said one line, naming the cause
one_line() {
  [ "$(grep -c . "$WORK/out")" -eq 1 ] || { cat "$WORK/out"; fail "$1: not one line"; }
  grep -Eiq "$2" "$WORK/out" || { cat "$WORK/out"; fail "$1: the line does not say /$2/"; }
  ! grep -q '\.c:[0-9]' "$WORK/out" || { cat "$WORK/out"; fail "$1: a source location in an I/O error"; }
  echo "  $1 -> exit 4: $(cat "$WORK/out")"
}
unchanged() {
  [ "$(store_md5)" = "$before" ] || fail "$1: the store or a file changed"
  ! ls "$full" "$full/fleet.h5.d" "$full/prom" | grep -q '\.tmp$' || { ls -la "$full"; fail "$1: a temporary left behind"; }
}

# every write path, in a folder that cannot take a byte more (or whose writes fail)
paths() {
  local cause=$1
  expect_rc 4 $F store ingest run2.jsonl --store "$full/fleet.h5"
  one_line "store ingest" "fleet\.h5.*$cause"; unchanged "store ingest"
  expect_rc 4 $F store export --store "$full/fleet.h5" --out "$full/export.jsonl"
  one_line "store export" "export\.jsonl.*$cause"; unchanged "store export"
  expect_rc 4 $F simulate --nodes 12 --seed 3 --runs 1 --out "$full/sim.jsonl"
  one_line "simulate" "sim\.jsonl.*$cause"; unchanged "simulate"
  for out in "report --json $full/v.json" "report --html $full/old.html" \
             "report --junit $full/j.xml" "report --prometheus $full/f.prom" \
             "report --prometheus $full/prom/" "detect --drain-file $full/drain.txt"; do
    # shellcheck disable=SC2086
    expect_rc 4 $F ${out%% *} --input sim.jsonl -q ${out#* }
    grep -v 'FAIL\|detect' "$WORK/out" >"$WORK/err" && mv "$WORK/err" "$WORK/out"
    one_line "$out" "${out##*/}.*$cause"; unchanged "$out"
  done
}

# ENOSPC in the middle of the store's commit: room for its working copy, not
# for the new run (HDF5 fails at the write or the close, where it once crashed)
room=$(( $(stat -c %s "$full/fleet.h5") + 8192 ))
avail=$(( $(df -B1 --output=avail "$full" | tail -1) ))
dd if=/dev/zero of="$full/filler" bs=4096 count=$(( (avail - room) / 4096 )) 2>/dev/null
expect_rc 4 $F store ingest run2.jsonl --store "$full/fleet.h5"
one_line "store ingest (mid-commit)" "fleet\.h5.*no space left on device"; unchanged "store ingest (mid-commit)"

# ENOSPC: fill what is left of the tmpfs
dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null || true
paths "no space left on device"
echo "ENOSPC: store ingest, export, simulate and 6 reports: exit 4, one line, store md5 unchanged"

# EIO: room enough, but every write under the folder fails
rm -f "$full/filler"
: "${FP_EIO_SHIM:?FP_EIO_SHIM must name tests/io/eio_shim.so}"
F="env LD_PRELOAD=$FP_EIO_SHIM FP_EIO_DIR=$full $FLEETPRINT"
paths "[Ii]nput/output error"
echo "EIO: the same paths: exit 4, one line, store md5 unchanged"
echo ok
