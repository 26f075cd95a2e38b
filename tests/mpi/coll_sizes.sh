#!/bin/bash
# Must-show 5: 3 and 5 ranks, 0-byte and non-multiple sizes: correct results
# (every collective, every variant, 0 wrong, exit 0); a size larger than
# memory allows: one error line, exit 2, no crash or hang.
. "$(dirname "$0")/coll_common.sh"

for np in 3 5; do
    fprun $np run --suite collectives -b 0 -e 1000003 -f 10 -n 2 -w 1 -q \
        --json "$tmp/o$np.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/err"; fail "$np ranks: exit $rc, expected 0"; }
    $PY - "$tmp/o$np.json" $np <<'PYEOF' || fail "$np ranks: JSON check"
import json, sys
run = json.load(open(sys.argv[1])); n = int(sys.argv[2])
s = run["samples"]
tests = {x["test"] for x in s}
want = {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv", "links"}
assert tests == want, tests
wrong = [x for x in s if x["metric"].startswith("wrong")]
assert wrong and all(x["value"] == 0 for x in wrong), "wrong elements"
# every collective row was checked on every rank
rows = {(x["test"], x["metric"], x["size"]) for x in s if x["metric"].startswith("busbw")}
checked = {(x["test"], x["metric"].replace("wrong", "busbw", 1), x["size"]) for x in wrong}
assert rows <= checked, rows - checked
sizes = {x["size"] for x in s if x["test"] == "allgather"}
assert 0 in sizes, "no 0-byte row"
# 1000003 B of floats over n ranks, rounded down to whole elements per rank
assert (1000003 // 4 // n) * n * 4 in sizes, sorted(sizes)
assert any(x % (4 * n) == 0 and x % 1024 for x in sizes if x), "no non-power-of-two size"
print("ok", len(s), "samples", len(rows), "rows")
PYEOF
done

# larger than memory allows: one line, exit 2
fprun 3 run --test allreduce -b 1T -e 1T -q >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || fail "-e 1T: exit $rc, expected 2"
lines=$(grep -c "error:" "$tmp/err")
[ "$lines" -eq 1 ] || { cat "$tmp/err"; fail "-e 1T: $lines error lines, expected 1"; }
grep -q "lower --max-bytes" "$tmp/err" || fail "-e 1T: message does not say what to do"

# bad sweeps and pair sets: one line, exit 2
for args in "-f 1" "-b 2M -e 1M" "-w -1" "--test links --pairs k=0"; do
    fprun 2 run --suite collectives $args -q >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "'$args': exit $rc, expected 2"
    [ "$(grep -c "error:" "$tmp/err")" -eq 1 ] || { cat "$tmp/err"; fail "'$args': not one line"; }
done
echo PASS
