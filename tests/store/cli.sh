# Must show 1: JSONL ingest -> export round trip gives the same samples.
# Plus the store's input errors: one line, exit 2, nothing written.
source "$(dirname "$0")/lib.sh"

# ---- round trip -------------------------------------------------------------------
"$GEN" --runs 3 --nodes 6 --gpus 2 --metrics 5 --iters 3 --prefix rt > in.jsonl
# hand-written lines: escapes, unicode, NaN, every entity kind, no "kind", extra keys,
# and samples of a run that has no run line
cat >> in.jsonl <<'JSONL'
{"run":"rt-0","suite":"collectives","test":"allreduce","metric":"busbw","unit":"GB/s","better":"higher","entity":"link:n0000/0~n0001/1","size":1024,"iter":-1,"value":1.5e-300,"t":1e300}
{"kind":"sample","run":"rt-0","suite":"kernels","test":"lat\"q\\","metric":"t\u00e9","unit":"us","better":"lower","entity":"rank:3@n0001","size":0,"iter":7,"value":null,"t":0.5,"note":"ignored"}
{"run":"rt-0","suite":"collectives","test":"allreduce","metric":"busbw","unit":"GB/s","better":"higher","entity":"group:world","size":1024,"iter":0,"value":-0.0,"t":2}
{"run":"bare","suite":"kernels","test":"membw","metric":"triad","unit":"GB/s","better":"higher","entity":"node:x","value":42}

JSONL
expect_rc 0 "$F" store ingest in.jsonl --store s.h5 --tag adhoc
grep -q "ingested 4 runs, 544 samples" err.txt || { cat err.txt; fail "ingest summary"; }
expect_rc 0 "$F" store export --store s.h5 -o out.jsonl
$PY "$HERE/compare_jsonl.py" in.jsonl out.jsonl rt-0 rt-1 rt-2 bare
# the run without a run line got the --tag; tagged runs kept theirs
"$F" store ls --store s.h5 --tag adhoc | grep -q "^bare " || fail "bare run lacks tag adhoc"
"$F" store ls --store s.h5 --tag test | grep -q "^rt-2 " || fail "rt-2 lost its tag"
# export of one run, and of the latest; re-ingest of an export into a new store
expect_rc 0 "$F" store export rt-1 --store s.h5 -o one.jsonl
$PY "$HERE/compare_jsonl.py" in.jsonl one.jsonl rt-1
expect_rc 0 "$F" store ingest out.jsonl --store s2.h5
"$F" store export --store s2.h5 > out2.jsonl
cmp out.jsonl out2.jsonl || fail "export of a re-ingested export differs"
expect_rc 0 "$F" store show rt-0 --store s.h5
grep -q "samples    183" out.txt || { cat out.txt; fail "show rt-0"; }
h5dump -H s.h5 > /dev/null || fail "h5dump cannot read the store"

# ---- bad input: one line, exit 2, nothing written -----------------------------------
sum() { md5sum "$1" | cut -d' ' -f1; }
before=$(sum s.h5)
"$GEN" --runs 1 --prefix bad > bad.jsonl
sed -i '5s/"better":"higher"/"better":"sideways"/' bad.jsonl
expect_rc 2 "$F" store ingest bad.jsonl --store s.h5
expect_err "bad.jsonl:5: field 'better'"
printf '{"run":"x","suite":"k","test":"t"\n' > trunc.jsonl
expect_rc 2 "$F" store ingest trunc.jsonl --store s.h5
expect_err "trunc.jsonl:1: malformed JSON at column"
# same metric, two units
printf '%s\n%s\n' \
  '{"run":"u","suite":"k","test":"t","metric":"m","unit":"us","better":"lower","entity":"node:a","value":1}' \
  '{"run":"u","suite":"k","test":"t","metric":"m","unit":"ms","better":"lower","entity":"node:a","value":1}' > units.jsonl
expect_rc 2 "$F" store ingest units.jsonl --store s.h5
expect_err "units.jsonl:2: metric k.t.m has unit 'ms'"
# a run already stored
expect_rc 2 "$F" store ingest one.jsonl --store s.h5
expect_err "run rt-1 is already in"
[ "$(sum s.h5)" = "$before" ] || fail "a refused ingest changed the store"

# not HDF5, truncated, wrong schema: readers and writers refuse, nothing changes
echo "hello" > text.h5
for act in "ls" "ingest in.jsonl"; do
    expect_rc 2 "$F" store $act --store text.h5
    expect_err "not an HDF5 file"
done
head -c $(( $(stat -c %s s.h5) / 2 )) s.h5 > cut.h5
cut_sum=$(sum cut.h5)
for act in "ls" "ingest one.jsonl" "export"; do
    expect_rc 2 "$F" store $act --store cut.h5
    expect_err "truncated or corrupt"
done
[ "$(sum cut.h5)" = "$cut_sum" ] || fail "a truncated store was modified"
# a truncated partition: the catalog still lists its runs, reading them fails cleanly
cp s.h5 cutp.h5 && cp -r s.h5.d cutp.h5.d
part=$(ls cutp.h5.d | head -1)
head -c 3000 "s.h5.d/$part" > "cutp.h5.d/$part"
expect_rc 0 "$F" store ls --store cutp.h5
expect_rc 2 "$F" store export --store cutp.h5
expect_err "truncated or corrupt"
cp s.h5 v99.h5
$PY -c "import h5py,sys; f=h5py.File('v99.h5','r+'); f.attrs['fleetprint_schema']=99; f.close()"
v99_sum=$(sum v99.h5)
for act in "ls" "ingest one.jsonl" "rm rt-0"; do
    expect_rc 2 "$F" store $act --store v99.h5
    expect_err "store schema version 99, this fleetprint reads versions 1 and 2"
done
expect_rc 2 "$F" baseline build --store v99.h5
[ "$(sum v99.h5)" = "$v99_sum" ] || fail "a store of another schema was modified"
expect_rc 2 "$F" store ls --store missing.h5
expect_err "no such store"
expect_rc 2 "$F" store frobnicate --store s.h5
expect_err "unknown action 'frobnicate'"
expect_rc 2 "$F" store rm nope --store s.h5
expect_err "no run 'nope'"
expect_rc 2 "$F" baseline build --store s.h5 --last 2 --since 2024-01-01
expect_rc 2 "$F" baseline build --store s.h5 --since yesterday
expect_err "--since 'yesterday' is not a date"

# a read-only directory: run as an unprivileged user (root ignores mode bits)
mkdir ro && cp -r s.h5 s.h5.d ro/ && chmod 555 ro && chmod 644 ro/s.h5 && chmod 644 one.jsonl
if command -v setpriv > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups "$F" --version > /dev/null 2>&1; then
    ro_sum=$(sum ro/s.h5)
    expect_rc 2 setpriv --reuid=65534 --regid=65534 --clear-groups "$F" store ingest one.jsonl --store ro/s.h5
    expect_err "cannot write in ro"
    expect_rc 0 setpriv --reuid=65534 --regid=65534 --clear-groups "$F" store ls --store ro/s.h5
    expect_rc 0 setpriv --reuid=65534 --regid=65534 --clear-groups "$F" store export --store ro/s.h5
    [ "$(sum ro/s.h5)" = "$ro_sum" ] && [ "$(ls ro | tr '\n' ' ')" = "s.h5 s.h5.d " ] || fail "read-only dir was written"
else
    echo "note: cannot drop privileges here; read-only directory case not run"
fi

# ---- schema 1, retention, compaction ------------------------------------------------
# a partition is itself a schema-1 store: with the baselines copied in, it is
# what a store written before manifests looks like
"$GEN" --runs 4 --nodes 4 --gpus 2 --metrics 3 --iters 2 --prefix old > old.jsonl
expect_rc 0 "$F" store ingest old.jsonl --store a.h5
expect_rc 0 "$F" baseline build --store a.h5
# a table of names that repeats one is refused, by dataset and row
cp a.h5 dup.h5 && cp -r a.h5.d dup.h5.d
$PY -c "import h5py; f=h5py.File('dup.h5','r'); b=f.attrs['baselines']; f.close(); g=h5py.File('dup.h5.d/'+(b.decode() if isinstance(b, bytes) else b),'r+'); e=g['baselines/entities']; e[1]=e[0]; g.close()"
expect_rc 2 "$F" store export --store dup.h5 --baselines -o dup.jsonl
grep -q "dataset 'entities': row 1 repeats" err.txt || { cat err.txt; fail "a repeated name was not refused"; }
# a run's entity that does not parse: refused by run, row and text, whether
# read as rows (detect) or as samples (export)
rm -rf dup.h5 dup.h5.d && cp a.h5 dup.h5 && cp -r a.h5.d dup.h5.d
$PY -c "import h5py; g=h5py.File('dup.h5.d/p0000000000.h5','r+'); g['runs/old-3/entities'][2]=b'bogus'; g.close()"
for act in "detect --store dup.h5 --run old-3 --no-baselines" "store export old-3 --store dup.h5 -o dup.jsonl"; do
    expect_rc 2 "$F" $act
    grep -q "run old-3: entity 2 'bogus' is malformed" err.txt || { cat err.txt; fail "$act: a malformed entity was not refused"; }
done
cp a.h5.d/p0000000000.h5 legacy.h5
$PY -c "import h5py; a=h5py.File('a.h5','r'); l=h5py.File('legacy.h5','r+'); l.copy(a['baselines'], 'baselines')"
expect_rc 0 "$F" store export --store legacy.h5 --baselines -o l1.jsonl
$PY "$HERE/compare_jsonl.py" old.jsonl l1.jsonl old-0 old-1 old-2 old-3
grep -q '"kind":"baseline"' l1.jsonl || fail "schema-1 baselines not read"
# its first change makes it a manifest; the old file becomes its first partition
"$GEN" --runs 1 --nodes 4 --gpus 2 --metrics 3 --iters 2 --prefix new --time 1900000000 > new.jsonl
expect_rc 0 "$F" store ingest new.jsonl --store legacy.h5
[ "$($PY -c "import h5py; print(int(h5py.File('legacy.h5','r').attrs['fleetprint_schema']))")" = 2 ] ||
    fail "legacy.h5 was not migrated"
[ "$(ls legacy.h5.d | tr '\n' ' ')" = "p0000000000.h5 p0000000001.h5 " ] || fail "partitions: $(ls legacy.h5.d)"
expect_rc 0 "$F" store export --store legacy.h5 --baselines -o l2.jsonl
cat old.jsonl new.jsonl > both.jsonl
$PY "$HERE/compare_jsonl.py" both.jsonl l2.jsonl old-0 old-1 old-2 old-3 new-0
grep '"kind":"baseline"' l1.jsonl > b1.txt && grep '"kind":"baseline"' l2.jsonl > b2.txt
cmp b1.txt b2.txt || fail "baselines changed in the migration"
# rm by id rewrites the partition that keeps other runs; --before drops old runs
expect_rc 0 "$F" store rm old-1 --store legacy.h5
[ "$(run_ids legacy.h5)" = "new-0 old-0 old-2 old-3 " ] || fail "after rm: $(run_ids legacy.h5)"
expect_rc 2 "$F" store rm --before someday --store legacy.h5
expect_err "--before 'someday' is not a date"
expect_rc 2 "$F" store rm old-0 --before 2020-01-01 --store legacy.h5
expect_rc 0 "$F" store rm --before 2030-01-01 --store legacy.h5
[ "$(run_ids legacy.h5)" = "new-0 " ] || fail "after rm --before: $(run_ids legacy.h5)"
expect_rc 0 "$F" store rm --before 2030-01-01 --store legacy.h5
grep -q "nothing removed" err.txt || fail "rm --before with nothing to remove"
# compact merges the small partitions and gives the baselines a file of their own
for i in 1 2 3; do
    "$GEN" --runs 1 --nodes 4 --gpus 2 --metrics 3 --iters 2 --prefix "c$i" --seed "$i" > "c$i.jsonl"
    expect_rc 0 "$F" store ingest "c$i.jsonl" --store legacy.h5
done
expect_rc 0 "$F" store export --store legacy.h5 --baselines -o l3.jsonl
expect_rc 0 "$F" store compact --store legacy.h5
grep -q "4 runs moved; 4 partition files before, 1 after" err.txt || { cat err.txt; fail "compact summary"; }
[ "$(ls legacy.h5.d | cut -c1 | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" = "1b 1p " ] ||
    fail "after compact: $(ls legacy.h5.d)"
expect_rc 0 "$F" store export --store legacy.h5 --baselines -o l4.jsonl
cmp l3.jsonl l4.jsonl || fail "compact changed the store's contents"
expect_rc 0 "$F" store compact --store legacy.h5
grep -q "0 runs moved" err.txt || fail "a second compact moved runs"
expect_rc 2 "$F" store compact extra --store legacy.h5

# partitions without their manifest are never collected as garbage
mv legacy.h5 moved.h5
expect_rc 2 "$F" store ingest c1.jsonl --store legacy.h5
expect_err "the manifest that lists them, is missing"
[ -n "$(ls legacy.h5.d)" ] || fail "partitions of a missing manifest were removed"

# ---- a lost partition file: ls lists it as unreadable, check reads every run ----------
"$GEN" --runs 3 --prefix lost > lost.jsonl
for i in 0 1 2; do awk -v i=$i '/"kind":"run"/ {n++} n == i + 1' lost.jsonl > lost$i.jsonl; done
for i in 0 1 2; do expect_rc 0 "$F" store ingest lost$i.jsonl --store lost.h5; done
expect_rc 0 "$F" store check --store lost.h5
grep -q "store check: 3 runs read whole: ok" out.txt || fail "check of a whole store: $(cat out.txt)"
gone=$(ls lost.h5.d/p*.h5 | sed -n 2p)
rm "$gone"
expect_rc 2 "$F" store ls --store lost.h5
[ "$(grep -c . out.txt)" = 4 ] || fail "ls left a run out: $(cat out.txt)"
[ "$(grep -c "UNREADABLE: its partition $gone is missing" out.txt)" = 1 ] ||
    fail "ls does not name the missing file: $(cat out.txt)"
expect_err "lost.h5: 1 of 3 runs cannot be read"
lost_id=$(awk '/UNREADABLE/ {print $1}' out.txt)
expect_rc 2 "$F" detect --store lost.h5 --run "$lost_id"
expect_err "the partition of $lost_id is missing: $gone"
expect_rc 1 "$F" store check --store lost.h5
grep -q "UNREADABLE: its partition $gone is missing" out.txt || fail "check: $(cat out.txt)"
# a partition cut short: ls cannot tell (the file is there), check can
expect_rc 0 "$F" store ingest lost1.jsonl --store lost2.h5
part=$(ls lost2.h5.d/p*.h5)
truncate -s 2000 "$part"
expect_rc 0 "$F" store ls --store lost2.h5
expect_rc 1 "$F" store check --store lost2.h5
grep -q "UNREADABLE: its partition $part cannot be read" out.txt || fail "check: $(cat out.txt)"

# ---- the writer lock ----------------------------------------------------------------
"$GEN" --runs 1 --prefix lk > lk.jsonl
# the holder keeps the lock until told to let go (no sleeps to race on a busy machine)
flock s.h5.lock sh -c 'touch held; while [ ! -e release ]; do sleep 0.05; done' &
holder=$!
until [ -e held ]; do kill -0 $holder 2>/dev/null || fail "lock holder died"; sleep 0.05; done
expect_rc 4 "$F" store ingest lk.jsonl --store s.h5 --lock-timeout 0.5
grep -q "waiting for the writer lock" err.txt || fail "waiting writer was silent"
tail -n 1 err.txt > last.txt && mv last.txt err.txt
expect_err "is locked by another writer"
[ "$(sum s.h5)" = "$before" ] || fail "a writer that timed out changed the store"
# a writer that waits says so, then succeeds once the holder lets go
"$F" store ingest lk.jsonl --store s.h5 --lock-timeout 60 >/dev/null 2>err.txt &
writer=$!
until grep -q "waiting for the writer lock" err.txt; do
    kill -0 $writer 2>/dev/null || { cat err.txt; fail "waiting writer was silent"; }
    sleep 0.05
done
touch release
wait $holder
wait $writer || { cat err.txt; fail "the waiting writer failed after the lock was let go"; }
echo "store cli: all checks passed"
