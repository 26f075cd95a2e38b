#!/bin/bash
# --prometheus DIR/ at fleet size (docs/prometheus.md, "One file per node"):
# simulate one run of NODES nodes x GPUS devices, then time `report
# --prometheus FILE` (one textfile) and `report --prometheus DIR/` (one per
# node), each REPEAT times, median wall and peak RSS from /usr/bin/time; then
# count the folder's files, the largest file's bytes and series, run
# `promtool check metrics` on every file and node_exporter's duplicate check
# over the whole folder. Prints the figures docs/prometheus.md gives.
#   prom_nodes.sh [NODES GPUS REPEAT]   (default 1000 8 3)
# The binary comes from FLEETPRINT or the build dir FP_BUILD.
set -euo pipefail
NODES=${1:-1000} GPUS=${2:-8} REPEAT=${3:-3}
S=$(cd "$(dirname "$0")/.." && pwd)
B=${FP_BUILD:-$S/build}
F=${FLEETPRINT:-$B/fleetprint}
W=$(mktemp -d /tmp/fp_prom_nodes.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
"$F" simulate --nodes "$NODES" --gpus-per-node "$GPUS" --runs 1 --out sim.jsonl 2>&1 | tail -n 1
# timed: median of REPEAT runs each, the two modes interleaved
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for i in $(seq 1 "$REPEAT"); do
    for mode in single dir; do
        out=single.prom
        [ "$mode" = dir ] && out=dir/
        /usr/bin/time -f "%e %M" -o t.txt "$F" report --input sim.jsonl --prometheus "$out" -q \
            >/dev/null 2>&1 || [ $? -le 1 ]
        read -r secs kb < <(tail -n 1 t.txt) # after "Command exited with non-zero status 1"
        echo "$secs" >>"$mode.secs"
        echo "$kb" >>"$mode.kb"
    done
done
echo "load before the checks: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in single dir; do
    echo "report --prometheus ($mode): median $(median <"$mode.secs") s of $REPEAT" \
         "(all: $(tr '\n' ' ' <"$mode.secs")), peak RSS $(median <"$mode.kb") KB"
done
echo "single file: $(stat -c %s single.prom) bytes, $(grep -vc '^#' single.prom) series"
files=$(find dir -name '*.prom' | wc -l)
read -r bytes big_bytes < <(find dir -name '*.prom' -printf '%s %p\n' | sort -n | tail -n 1)
read -r series big_series < <(for f in dir/*.prom; do echo "$(grep -vc '^#' "$f") $f"; done |
                               sort -n | tail -n 1)
echo "folder: $files files, $(du -sb dir | cut -f1) bytes; largest $bytes bytes ($big_bytes)," \
     "most series $series ($big_series)"
bad=0
for f in dir/*.prom; do
    promtool check metrics <"$f" >lint.txt 2>&1 || { bad=$((bad + 1)); cat lint.txt; }
done
echo "promtool check metrics: $((files - bad)) of $files clean"
python3 "$S/tests/prom_gather.py" dir/*.prom # node_exporter's duplicate check
[ "$bad" = 0 ]
