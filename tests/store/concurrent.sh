# Must show 3: two writers appending at once: both runs present, neither
# corrupted; the one that waits says so.
source "$(dirname "$0")/lib.sh"
ROUNDS=${1:-3}
for r in $(seq 1 "$ROUNDS"); do
    "$GEN" --runs 1 --nodes 50 --gpus 4 --metrics 10 --iters 10 --prefix "a$r" --seed "$r" > "a$r.jsonl"
    "$GEN" --runs 1 --nodes 50 --gpus 4 --metrics 10 --iters 10 --prefix "b$r" --seed "$((r + 100))" > "b$r.jsonl"
done
cat a*.jsonl b*.jsonl > all.jsonl
expected=""
waited=0
for r in $(seq 1 "$ROUNDS"); do
    "$F" store ingest "a$r.jsonl" --store s.h5 2> "ea$r.txt" & pa=$!
    "$F" store ingest "b$r.jsonl" --store s.h5 2> "eb$r.txt" & pb=$!
    wait $pa || { cat "ea$r.txt"; fail "writer a$r failed"; }
    wait $pb || { cat "eb$r.txt"; fail "writer b$r failed"; }
    if grep -q "waiting for the writer lock" "ea$r.txt" "eb$r.txt"; then waited=$((waited + 1)); fi
    expected=$(echo "$expected a$r-0 b$r-0" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')
    got=$(run_ids s.h5)
    [ "$got" = "$expected" ] || fail "round $r: store holds [$got], expected [$expected]"
done
"$F" store export --store s.h5 -o out.jsonl
$PY "$HERE/compare_jsonl.py" all.jsonl out.jsonl $expected
h5dump -H s.h5 > /dev/null || fail "h5dump cannot read the store"
echo "$ROUNDS rounds of two concurrent writers; in $waited of them one writer reported waiting"
echo "store concurrent: all checks passed"
