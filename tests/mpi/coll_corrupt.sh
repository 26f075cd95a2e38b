#!/bin/bash
# Must-show 2: --inject corrupt:rank=1 perturbs rank 1's results after each
# collective: #wrong > 0 on the rows it affects, those rows say FAIL, exit 1.
# reduce (root 0) gives rank 1 no result, so its rows stay clean.
. "$(dirname "$0")/coll_common.sh"

fprun 4 run --suite collectives --test allreduce --test allgather --test reduce \
    -b 64K -e 256K -n 3 -w 1 $(inject corrupt:rank=1) --json "$tmp/o.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err"; fail "exit $rc, expected 1"; }
grep -q "wrong results" "$tmp/err" || fail "no error line about wrong results"
$PY - "$tmp/o.json" "$tmp/out" <<'PYEOF' || fail "check"
import json, sys
s = json.load(open(sys.argv[1]))["samples"]
w = [x for x in s if x["metric"].startswith("wrong_")]
for t in ("allreduce", "allgather"):
    r1 = [x for x in w if x["test"] == t and x["entity"] == "gpu:n1/0"]
    assert r1 and all(x["value"] > 0 for x in r1), t + ": rank 1 rows without wrong elements"
    assert all(x["value"] == 0 for x in w if x["test"] == t and x["entity"] != "gpu:n1/0"), t
assert all(x["value"] == 0 for x in w if x["test"] == "reduce"), "reduce: root 0 is not corrupted"
out = open(sys.argv[2]).read().split("# collectives/")
table = {part.split()[0]: "\n".join(part.splitlines()[1:]) for part in out[1:]}
for t in ("allreduce", "allgather"):
    rows = [l for l in table[t].splitlines() if l.strip() and not l.startswith("#")]
    assert rows and all(l.endswith("FAIL") for l in rows), t + ": rows do not say FAIL"
rows = [l for l in table["reduce"].splitlines() if l.strip() and not l.startswith("#")]
assert rows and not any(l.endswith("FAIL") for l in rows), "reduce rows say FAIL"
print("ok")
PYEOF
echo PASS
