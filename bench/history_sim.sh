#!/usr/bin/env bash
# History evidence on simulated fleets: for each seed, `simulate` NODES x 8
# GPUs over RUNS runs (the last one carries the faults), ingest them, keep
# every run's verdicts in order with `detect --record` (history of the runs
# before each), then judge the last run with history on and off and count,
# against the truth: failing nodes (true and false), warned nodes, and the
# repeat offenders (true: a faulty node; false: a healthy one). Clean
# history runs make every repeat offender of the last run a healthy node
# whose warnings fell on it by chance or by a persistent offset within
# tolerance: the price of history in precision.
#
#   bench/history_sim.sh [NODES SEEDS RUNS BASELINES]   (default 1000 3 6 yes)
#
# BASELINES yes: baselines built from the clean runs (drift and fleet
# evidence too); no: peers only. FLEETPRINT names the binary.
set -eu
NODES=${1:-1000} SEEDS=${2:-3} RUNS=${3:-6} BASE=${4:-yes}
HERE=$(cd "$(dirname "$0")" && pwd)
F=${FLEETPRINT:-$HERE/../build/fleetprint}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
nob=()
[ "$BASE" = yes ] || nob=(--no-baselines)
"$F" detect --print-rules | "$PY" -c '
import json, sys
r = json.load(sys.stdin); r["history"]["runs"] = 0
json.dump(r, open(sys.argv[1], "w"))' "$W/off.json"
for seed in $(seq "$SEEDS"); do
  S=$W/s$seed.h5
  "$F" simulate --nodes "$NODES" --gpus-per-node 8 --seed "$seed" --runs "$RUNS" \
    --out "$W/sim.jsonl" --truth "$W/truth$seed.json" 2>/dev/null
  "$F" store ingest "$W/sim.jsonl" --store "$S" 2>/dev/null
  [ "$BASE" = yes ] && "$F" baseline build --store "$S" >/dev/null 2>&1
  for id in $("$F" store ls --store "$S" | awk 'NR > 1 {print $1}'); do
    "$F" detect --store "$S" --run "$id" --record -q "${nob[@]}" >/dev/null 2>&1 || true
  done
  "$F" detect --store "$S" -q "${nob[@]}" --json "$W/on$seed.json" >/dev/null 2>&1 || true
  "$F" detect --store "$S" -q "${nob[@]}" --rules "$W/off.json" --json "$W/off$seed.json" \
    >/dev/null 2>&1 || true
done
"$PY" - "$W" "$SEEDS" "$NODES" "$RUNS" "$BASE" <<'PY'
import json, sys
w, seeds, nodes, runs, base = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
tot = {m: dict(tp=0, fp=0, fn=0, warn=0, off_true=0, off_false=0) for m in ("off", "on")}
for s in range(1, seeds + 1):
    faulty = set(json.load(open(f"{w}/truth{s}.json"))["faulty_nodes"])
    for m in ("off", "on"):
        j = json.load(open(f"{w}/{m}{s}.json"))
        v = {e["entity"][5:]: e["verdict"] for e in j["entities"] if e["entity"].startswith("node:")}
        t = tot[m]
        t["tp"] += sum(v[n] == "fail" for n in v if n in faulty)
        t["fp"] += sum(v[n] == "fail" for n in v if n not in faulty)
        t["fn"] += sum(v.get(n) != "fail" for n in faulty)
        t["warn"] += sum(x == "warn" for x in v.values())
        offs = {o["entity"][5:] for o in j.get("repeat_offenders", [])
                if o["entity"].startswith("node:")}
        t["off_true"] += len(offs & faulty)
        t["off_false"] += len(offs - faulty)
print(f"{nodes} nodes x 8, {runs} runs (the last with faults), {seeds} seeds, "
      f"baselines {base}; the last run judged:")
for m, label in (("off", "before (history off)"), ("on", "after (history on) ")):
    t = tot[m]
    p = t["tp"] / (t["tp"] + t["fp"]) if t["tp"] + t["fp"] else float("nan")
    r = t["tp"] / (t["tp"] + t["fn"]) if t["tp"] + t["fn"] else float("nan")
    print(f"  {label}: fail tp {t['tp']} fp {t['fp']} fn {t['fn']} (precision {p:.3f}, "
          f"recall {r:.3f}); nodes warned {t['warn']}; repeat offenders {t['off_true']} "
          f"faulty, {t['off_false']} healthy")
PY
