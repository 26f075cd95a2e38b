#!/usr/bin/env bash
# A preflight at scale, modelled: rank 0's gather volume and memory, every
# rank's start-up tables, the clock sync, detect and the store append for a
# 1,000 / 10,000 / 100,000-node preflight (8 ranks a node), from figures
# measured here in the same run:
#   - samples per rank of each test of the default set, and per node pair of
#     the link sweep (default preflights of 8 and 16 emulated nodes);
#   - the round trip of one clock exchange (the bound preflight logs);
#   - detect's time per sample (bench/detect_sim at 1,000 x 8, with
#     baselines: the engine alone, as rank 0 runs it), its memory beyond the
#     samples and the store's append rate (detect -i and store ingest of a
#     simulated 1,000 x 8 run);
# then names, for each size, every quantity past its budget (a step's
# deadline: preflight's --timeout, 60 s; rank 0's memory: FP_RANK0_GIB, 256).
#   bash bench/preflight_scale.sh          (FLEETPRINT, MPIEXEC as elsewhere)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
F=${FLEETPRINT:-$HERE/../build/fleetprint}
SIM=${DETECT_SIM:-$HERE/../build/bench/detect_sim}
read -ra mpiexec <<<"${MPIEXEC:-mpirun}"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

for n in 8 16; do
  echo "measuring: a default preflight of $n emulated nodes" >&2
  "${mpiexec[@]}" -np "$n" --oversubscribe "$HERE/../tests/fpnode" "$F" preflight \
    --run-json "$W/pf$n.json" >"$W/pf$n.log" 2>&1 || [ $? = 1 ] || { cat "$W/pf$n.log"; exit 4; }
done
echo "measuring: detect and store ingest of a simulated 1,000 x 8 run" >&2
"$F" simulate --nodes 1000 --runs 1 -o "$W/sim.jsonl" 2>/dev/null
/usr/bin/time -f "%e %M" -o "$W/detect.time" "$F" detect -i "$W/sim.jsonl" -q >/dev/null 2>&1 || true
/usr/bin/time -f "%e %M" -o "$W/ingest.time" "$F" store ingest "$W/sim.jsonl" --store "$W/s.h5" \
  >/dev/null 2>&1
"$SIM" --nodes 1000 --seeds 1 >"$W/detect_sim.txt" 2>&1

python3 - "$W" <<'PY'
import json, re, sys, collections
W = sys.argv[1]
SAMPLE, ROW, RANKINFO, NAME, NODEID = 272, 32, 168, 64, 88  # bytes: fp_sample, its row, fp_rank_info, ...
STEP_S, RANK0 = 60.0, float(__import__("os").environ.get("FP_RANK0_GIB", "256")) * 2**30
runs = {}
for n in (8, 16):
    d = json.load(open(f"{W}/pf{n}.json"))
    c = collections.Counter(s["test"] for s in d["samples"])
    rtt = 2e-6 * float(re.search(r"clock offsets within ([0-9.]+) us", open(f"{W}/pf{n}.log").read())[1])
    runs[n] = (c, rtt)
c8, c16 = runs[8][0], runs[16][0]
per_rank = {t: c16[t] / 16 for t in c16 if t != "links"}       # rank-local and collective tests
per_pair = c16["links"] / (16 * 15 / 2)                          # the link sweep: all pairs at 16
rtt = min(runs[8][1], runs[16][1])
sim_samples = sum(1 for l in open(f"{W}/sim.jsonl") if '"kind":"sample"' in l)
_, dm = map(float, open(f"{W}/detect.time").read().split("\n")[-2].split())
sim = open(f"{W}/detect_sim.txt").read()
dt = float(re.search(r"pooled with baselines: .* detect ([0-9.]+) s median", sim)[1])
it, im = map(float, open(f"{W}/ingest.time").read().split("\n")[-2].split())
print("measured here: samples per rank " + ", ".join(f"{t} {v:.0f}" for t, v in sorted(per_rank.items()))
      + f"; links {per_pair:.1f} per node pair; clock round trip {rtt*1e6:.1f} us (shared memory: an "
      f"InfiniBand one is ~3 us, TCP ~50 us)")
extra = max(dm * 1024 - sim_samples * SAMPLE, 0) / sim_samples     # detect's bytes beyond the samples
print(f"measured here: detect {dt:.3f} s for {sim_samples:,} samples (detect_sim, with baselines), "
      f"{extra:.0f} B a sample beyond the samples (detect -i peak {dm/1024:.0f} MB); "
      f"store ingest {it:.2f} s, peak {im/1024:.0f} MB")
print(f"budgets: a step's deadline {STEP_S:.0f} s (preflight --timeout), rank 0's memory {RANK0/2**30:.0f} GiB\n")
hdr = ("nodes", "ranks", "samples", "gather GiB", "tables/rank MiB", "clock sync s", "detect s",
       "detect GiB", "store s", "past its budget")
print("%7s %8s %12s %10s %15s %12s %9s %10s %8s  %s" % hdr)
for N in (1000, 10000, 100000):
    R = 8 * N
    pairs = N * (N - 1) / 2 if N <= 32 else 8 * N / 2               # --pairs auto: random=8
    S = R * sum(per_rank.values()) + pairs * per_pair
    gather = S * ROW + R * RANKINFO                                 # rank 0 gathers rows
    tables = R * (NAME + NODEID + RANKINFO + 16)                    # every rank: names, ids, infos, offsets
    clock = R * 8 * rtt                                             # rank 0 exchanges with each rank in turn
    det_s, det_b = S * dt / sim_samples, S * extra
    store_s = S * it / sim_samples
    over = [(what, v, lim) for what, v, lim in (
        ("gather: more than INT_MAX samples a rank", S / R, 2**31 - 1),
        ("rank 0's memory (gathered run + detect)", gather + det_b, RANK0),
        ("clock sync at start-up", clock, STEP_S),
        ("detect", det_s, STEP_S),
        ("store append", store_s, STEP_S)) if v > lim]
    first = "; ".join(f"{w} ({v:.3g} > {l:.3g})" for w, v, l in over) if over else "-"
    print("%7d %8d %12.3g %10.1f %15.1f %12.1f %9.1f %10.1f %8.1f  %s" % (
        N, R, S, gather / 2**30, tables / 2**20, clock, det_s, det_b / 2**30, store_s, first))
print("\nEach figure scales a measurement linearly; the clock sync is serial at rank 0 (a round")
print("trip per exchange, 8 exchanges a rank at least), the gather every rank's rows and tables to")
print("rank 0, a batch of ranks at a time.")
PY
