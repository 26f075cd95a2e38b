#!/usr/bin/env bash
# History evidence before and after, on 8 emulated nodes of this machine:
# BASE clean preflights into a fresh store and `baseline build`, then CLEAN
# clean preflights and FAULTY ones with a marginal fault on rank 5
# (--inject slow:rank=5,factor=FACTOR), each stored with its verdicts. Every
# stored run after the baselines is then judged twice by detect, with the
# default rules (history on: the verdicts stored before it) and with history
# off ("history": {"runs": 0}), and the counts are printed side by side:
#   clean runs   false alarms: runs that fail; node-runs that warn; repeat
#                offenders among them (history adds warns, never fails)
#   faulty runs  misses: runs where n5 passes; runs where it fails; other
#                nodes that warn or fail
#
#   bench/history_series.sh [BASE CLEAN FAULTY FACTOR]    (default 3 10 10 1.3)
#
# FLEETPRINT names the binary (default build/fleetprint). Exit 0 when it ran
# (the counts are the result), 4 when a preflight could not run.
set -eu
BASE=${1:-3} CLEAN=${2:-10} FAULTY=${3:-10} FACTOR=${4:-1.3}
HERE=$(cd "$(dirname "$0")" && pwd)
F=${FLEETPRINT:-$HERE/../build/fleetprint}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
read -ra mpiexec <<<"${MPIEXEC:-mpirun}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pf() { "${mpiexec[@]}" -np 8 --oversubscribe "$HERE/../tests/fpnode" "$F" preflight \
  --store "$W/s.h5" --test membw --test gemm --test allreduce "$@" >"$W/out" 2>&1; }

for i in $(seq "$BASE"); do
  rc=0; pf || rc=$?
  [ "$rc" -le 1 ] || { cat "$W/out" >&2; exit 4; }
done
"$F" baseline build --store "$W/s.h5" >"$W/out" 2>&1 || { cat "$W/out" >&2; exit 4; }
for phase in clean faulty; do
  n=$CLEAN inj=()
  [ "$phase" = faulty ] && n=$FAULTY inj=(--inject "slow:rank=5,factor=$FACTOR")
  for i in $(seq "$n"); do
    rc=0; pf "${inj[@]}" || rc=$?
    echo "$phase run $i: exit $rc"
    [ "$rc" -le 1 ] || { cat "$W/out" >&2; exit 4; }
  done
done

# judge every run after the baselines with history on and off
"$F" detect --print-rules | "$PY" -c '
import json, sys
r = json.load(sys.stdin); r["history"]["runs"] = 0
json.dump(r, open(sys.argv[1], "w"))' "$W/off.json"
ids=$("$F" store ls --store "$W/s.h5" | awk 'NR > 1 {print $1}' | tail -n +"$((BASE + 1))")
k=0
for id in $ids; do
  k=$((k + 1))
  phase=clean
  [ "$k" -gt "$CLEAN" ] && phase=faulty
  for mode in on off; do
    rules=()
    [ "$mode" = off ] && rules=(--rules "$W/off.json")
    "$F" detect --store "$W/s.h5" --run "$id" -q "${rules[@]}" --json "$W/$phase-$k-$mode.json" \
      >/dev/null 2>&1 || true
  done
done
"$PY" - "$W" "$CLEAN" "$FAULTY" "$FACTOR" <<'PY'
import glob, json, os, sys
w, clean, faulty, factor = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def load(phase, mode):
    out = []
    for k in range(1, clean + faulty + 1):
        p = os.path.join(w, f"{phase}-{k}-{mode}.json")
        if os.path.exists(p):
            out.append(json.load(open(p)))
    return out
def nodes(j):
    return {e["entity"][5:]: e["verdict"] for e in j["entities"] if e["entity"].startswith("node:")}
# what the clean runs' warnings rest on (evidence, rule), history off
kinds = {}
for j in load("clean", "off"):
    for e in j["entities"]:
        for r in e["reasons"]:
            if r["verdict"] == "warn":
                k = f"{r['evidence']}/{r['rule']}"
                kinds[k] = kinds.get(k, 0) + 1
print("clean warnings by evidence/rule: " +
      (", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda x: -x[1])) or "none"))
for mode in ("off", "on"):
    c, f = load("clean", mode), load("faulty", mode)
    label = "before (history off)" if mode == "off" else "after (history on) "
    fails = sum(j["verdict"] == "fail" for j in c)
    warns = sum(v == "warn" for j in c for v in nodes(j).values())
    offs = sorted({o["entity"] for j in c for o in j.get("repeat_offenders", [])})
    print(f"clean  {label}: {fails} of {len(c)} runs fail; {warns} node-runs warn; "
          f"repeat offenders: {', '.join(offs) or 'none'}")
    miss = sum(nodes(j).get("n5") == "pass" for j in f)
    n5fail = sum(nodes(j).get("n5") == "fail" for j in f)
    other = sum(v != "pass" for j in f for n, v in nodes(j).items() if n != "n5")
    flagged = sum(any(o["entity"] == "node:n5" for o in j.get("repeat_offenders", [])) for j in f)
    print(f"faulty {label}: n5 (slow x{factor}) missed (pass) in {miss} of {len(f)}, fails in "
          f"{n5fail}, flagged a repeat offender in {flagged}; other nodes warn or fail "
          f"{other} times")
PY
