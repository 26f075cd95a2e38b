# fleetprint baseline update from the command line: its refusals (exit 2, one
# line: no baselines, no update state asked of a build), an update killed at
# random moments leaves the store and its baselines readable and as they
# were, and the finished update's exported baselines match a full build over
# the same runs within docs/store.md's tolerance (48 iterations a run: more
# than the 32 points the state keeps, so reading back between them is
# exercised).
source "$(dirname "$0")/lib.sh"
KILLS=${1:-6}
seed=${FP_KILL_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$seed
echo "baseline update test: seed $seed (FP_KILL_SEED=$seed reproduces the kills)"

"$GEN" --runs 5 --nodes 40 --gpus 4 --metrics 12 --iters 48 --prefix n --tag nightly \
    --seed 11 > all.jsonl
for r in 0 1 2 3 4; do
    grep -F "\"n-$r\"" all.jsonl > "r$r.jsonl"
done
for r in 0 1 2 3; do "$F" store ingest "r$r.jsonl" --store u.h5 2> /dev/null; done

# usage and refusals
expect_rc 2 "$F" baseline update --store u.h5
expect_err "has no baselines to update: run 'fleetprint baseline build --store u.h5' first"
expect_rc 2 "$F" baseline update --store u.h5 --since 2025-01-01
expect_err "--since is the build's"
expect_rc 0 "$F" baseline build --store u.h5 --tag nightly --last 4
expect_rc 2 "$F" baseline update --store u.h5 --tag weekly
expect_err "built for tag 'nightly', not 'weekly'"
expect_rc 2 "$F" baseline update --store u.h5 --last 30
expect_err "built with --last 4, not 30"
expect_rc 0 "$F" baseline update --store u.h5
grep -qF "run n-3 is in the baselines already" err.txt || fail "a run already in is not said so"
"$F" store export --baselines --store u.h5 -o before.jsonl

# kill -9 the update of the 5th run at random moments: every time the store
# checks clean and holds the baselines of before (or, when the update won the
# race, the new ones)
"$F" store ingest r4.jsonl --store u.h5 2> /dev/null
cp -r u.h5 probe.h5 && cp -r u.h5.d probe.h5.d
t0=$(date +%s%N)
"$F" baseline update --store probe.h5 2> /dev/null
span_ms=$(( ($(date +%s%N) - t0) / 1000000 + 10 ))
echo "one update takes ~${span_ms} ms; kills land in [0, ${span_ms}] ms"
landed=0
for i in $(seq 1 "$KILLS"); do
    "$F" baseline update --store u.h5 2> /dev/null &
    pid=$!
    delay_ms=$(( RANDOM % span_ms ))
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    expect_rc 0 "$F" store check --store u.h5
    "$F" store export --baselines --store u.h5 -o now.jsonl
    if ! cmp -s before.jsonl now.jsonl; then
        landed=$((landed + 1))
        break
    fi
done
echo "$landed of the kills came after the update's commit"
expect_rc 0 "$F" baseline update --store u.h5
"$F" store export --baselines --store u.h5 -o updated.jsonl

# the same runs built in full
for r in 0 1 2 3 4; do "$F" store ingest "r$r.jsonl" --store full.h5 2> /dev/null; done
expect_rc 0 "$F" baseline build --store full.h5 --tag nightly --last 4
"$F" store export --baselines --store full.h5 -o full.jsonl
"$PY" - updated.jsonl full.jsonl <<'EOF'
import json, sys
def rows(path):
    out = {}
    for line in open(path):
        o = json.loads(line)
        if o.get("kind") == "baseline":
            out[(o["scope"], o["key"], o.get("entity", o.get("sku")))] = o
    return out
u, f = rows(sys.argv[1]), rows(sys.argv[2])
assert u.keys() == f.keys(), "the update and the build have other rows"
def rel(a, b):
    return 0.0 if a == b else abs(a - b) / abs(b)
worst = {"median": 0.0, "mad": 0.0}
for k, b in f.items():
    a = u[k]
    assert a["runs"] == b["runs"] and a["count"] + a["rejected"] == b["count"] + b["rejected"], k
    for m in worst:
        worst[m] = max(worst[m], rel(a[m], b[m]))
print("update against build, %d rows: largest relative difference of the median %.3g, of the "
      "MAD %.3g" % (len(f), worst["median"], worst["mad"]))
assert worst["median"] <= 0.01 and worst["mad"] <= 0.15, worst
EOF
echo "baseline update: refusals, kills and the tolerance hold"
