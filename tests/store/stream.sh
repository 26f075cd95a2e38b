# Streamed ingest (issue 36): runs of several chunks of rows (32,768 a chunk)
# come back sample for sample, whether their lines come run after run or
# interleaved (more runs at once than keep their buffers), through the fast
# path or the full parser; HDF5's own tools read
# every chunk; a bad line after the first chunks were written leaves the store
# as it was, with no partition file behind.
source "$(dirname "$0")/lib.sh"

# 2 runs x 80,000 samples (2.4 chunks each), lines without "kind", as the bench's
"$GEN" --runs 2 --nodes 100 --gpus 8 --metrics 50 --iters 2 --prefix st > in.jsonl
expect_rc 0 "$F" store ingest in.jsonl --store s.h5
expect_err "ingested 2 runs, 160000 samples"
# the manifest lists the samples the partition holds (store check reads them all)
expect_rc 0 "$F" store check --store s.h5
grep -q "st-0 .* 80000 *$" out.txt || { cat out.txt; fail "st-0 is not listed with 80000 samples"; }
expect_rc 0 "$F" store export --store s.h5 -o out.jsonl
$PY "$HERE/compare_jsonl.py" in.jsonl out.jsonl st-0 st-1
# the export (lines with "kind") read back gives the same export again
expect_rc 0 "$F" store ingest out.jsonl --store s2.h5
"$F" store export --store s2.h5 > out2.jsonl
cmp out.jsonl out2.jsonl || fail "export of a re-ingested export differs"

# the runs' lines interleaved, one run's in a form only the full parser reads
# (blanks after the colons): the same runs again
awk '/"st-0"/ { print > "a.txt"; next } /"st-1"/ { gsub(/":/, "\": "); print > "b.txt" }' in.jsonl
paste -d '\n' a.txt b.txt | sed '/^$/d' > mixed.jsonl
expect_rc 0 "$F" store ingest mixed.jsonl --store s3.h5
expect_rc 0 "$F" store export --store s3.h5 -o out3.jsonl
$PY "$HERE/compare_jsonl.py" in.jsonl out3.jsonl st-0 st-1

# six runs of 40,000 samples, their lines in blocks of 10,000 taking turns: more
# runs than keep their chunk buffers at once, so runs are parked and resumed
"$GEN" --runs 6 --nodes 50 --gpus 8 --metrics 50 --iters 2 --prefix six > six.jsonl
awk '{ r = match($0, /"run":"[^"]*"/) ? substr($0, RSTART, RLENGTH) : "";
       n[r]++; print > ("blk" int(n[r] / 10000) ".txt") }' six.jsonl
cat blk0.txt blk1.txt blk2.txt blk3.txt blk4.txt > turns.jsonl
[ "$(wc -l < turns.jsonl)" = "$(wc -l < six.jsonl)" ] || fail "turns.jsonl lost lines"
expect_rc 0 "$F" store ingest turns.jsonl --store s4.h5
expect_rc 0 "$F" store check --store s4.h5
expect_rc 0 "$F" store export --store s4.h5 -o out4.jsonl
$PY "$HERE/compare_jsonl.py" six.jsonl out4.jsonl six-0 six-1 six-2 six-3 six-4 six-5

# HDF5's tools decompress every chunk of a streamed table
part=$(ls s.h5.d/p*.h5 | head -1)
h5dump -p -H -d /runs/st-1/samples "$part" > props.txt || fail "h5dump cannot read the samples"
grep -q "CHUNKED ( 32768 )" props.txt || { cat props.txt; fail "samples not in 32768-row chunks"; }
grep -q "SHUFFLE" props.txt && grep -q "DEFLATE" props.txt || fail "samples not shuffled + deflated"
h5dump -d /runs/st-1/samples -s 79999 -c 1 "$part" > last.txt || fail "h5dump cannot read the last row"
grep -q "(79999)" last.txt || { cat last.txt; fail "the last row is missing"; }

# a bad line past the first chunks: exit 2 naming the line, nothing committed, nothing left
before=$(md5sum s.h5 | cut -d' ' -f1)
files=$(ls s.h5.d | sort | tr '\n' ' ')
"$GEN" --runs 1 --nodes 100 --gpus 8 --metrics 50 --iters 2 --prefix late > late.jsonl
sed -i '70001s/"better":"higher"/"better":"sideways"/' late.jsonl
expect_rc 2 "$F" store ingest late.jsonl --store s.h5
expect_err "late.jsonl:70001: field 'better'"
[ "$(md5sum s.h5 | cut -d' ' -f1)" = "$before" ] || fail "a refused ingest changed the manifest"
[ "$(ls s.h5.d | sort | tr '\n' ' ')" = "$files" ] || fail "a refused ingest left files: $(ls s.h5.d)"
echo "store stream: all checks passed"
