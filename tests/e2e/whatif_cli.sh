#!/bin/bash
# fleetprint whatif end to end on the artifact's ST trace: outputs (JSON, SVG heat
# map, Chrome trace) and the one-line, exit-2 rejections of bad input.
set -u
data=$FP_TESTS/data/whatif
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# ---- a good run -------------------------------------------------------------------
"$FLEETPRINT" whatif --trace "$data/trace-ST.csv" --meta "$data/meta-ST.yaml" \
    --json "$tmp/r.json" --heatmap "$tmp/h.svg" --timeline "$tmp/t.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ok "ST run exits 0" || { bad "ST run exit $rc"; cat "$tmp/err"; }
grep -q "straggler slowdown S = 1.17" "$tmp/out" && ok "summary names S" || bad "summary: $(cat "$tmp/out")"
/usr/bin/python3 - "$tmp" <<'PY' && ok "JSON, SVG and timeline are well formed" || bad "output checks"
import json, sys, xml.dom.minidom
d = sys.argv[1]
r = json.load(open(d + "/r.json"))
assert abs(r["blocking_slowdown"] - 1.1787021836556841) < 0.02 * 1.1787, r["blocking_slowdown"]
assert set(r["blocking_decompose_by_stage"]) == {"0", "1", "2", "3"}
svg = xml.dom.minidom.parse(d + "/h.svg")          # raises on malformed XML
cells = [e for e in svg.getElementsByTagName("rect") if e.getAttribute("class") == "cell"]
assert len(cells) == 2 * 4, len(cells)             # one per worker: dp 2 x pp 4
got = {(int(c.getAttribute("data-dp-rank")), int(c.getAttribute("data-stage"))) for c in cells}
assert got == {(d_, s) for d_ in range(2) for s in range(4)}, got
hot = max(cells, key=lambda c: float(c.getAttribute("data-slowdown")))
assert hot.getAttribute("data-stage") == "3"       # the last stage is the hot row
t = json.load(open(d + "/t.json"))
ev = [e for e in t["traceEvents"] if e["ph"] == "X"]
assert len(ev) == 2 * 6784, len(ev)                # original and ideal, every op
assert all(e["dur"] >= 0 for e in ev)
print("cells", len(cells), "events", len(ev))
PY

# ---- rejections: exit 2, one line on stderr naming the file -------------------------
reject() { # name expect-substring args...
    local name=$1 want=$2
    shift 2
    "$FLEETPRINT" whatif "$@" >"$tmp/o" 2>"$tmp/e"
    local rc=$? lines
    lines=$(wc -l <"$tmp/e")
    if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -q -- "$want" "$tmp/e"; then
        ok "$name: $(cat "$tmp/e")"
    else
        bad "$name: exit $rc, $lines line(s): $(cat "$tmp/e")"
    fi
}
meta=$data/meta-ST.yaml
head -c 300017 "$data/trace-ST.csv" >"$tmp/trunc.csv"
reject "truncated mid-row" "trunc.csv:[0-9]*: expected 11 fields" --trace "$tmp/trunc.csv" --meta "$meta"
head -n 5000 "$data/trace-ST.csv" >"$tmp/short.csv"
reject "truncated at a row" "short.csv: step .* has .* ops" --trace "$tmp/short.csv" --meta "$meta"
cut -d, -f1-10 "$data/trace-ST.csv" >"$tmp/nocol.csv"
reject "missing column" "nocol.csv:1: missing column 'gmc'" --trace "$tmp/nocol.csv" --meta "$meta"
sed '2s/,backward-compute,/,backward-computer,/' "$data/trace-ST.csv" >"$tmp/optype.csv"
reject "unknown optype" "optype.csv:2: unknown optype 'backward-computer'" --trace "$tmp/optype.csv" --meta "$meta"
sed '7s/,0\.[0-9]*,/,abc,/' "$data/trace-ST.csv" >"$tmp/num.csv"
reject "bad number" "num.csv:7: start_ts: expected a finite number" --trace "$tmp/num.csv" --meta "$meta"
sed 's/^world_size: 8/world_size: 9/' "$meta" >"$tmp/world.yaml"
reject "meta world_size" "world.yaml: world_size 9 != " --trace "$data/trace-ST.csv" --meta "$tmp/world.yaml"
sed -e 's/^dp_size: 2/dp_size: 4/' -e 's/^world_size: 8/world_size: 16/' "$meta" >"$tmp/dp.yaml"
reject "meta dp_size vs trace" "no ops for dp_rank 2" --trace "$data/trace-ST.csv" --meta "$tmp/dp.yaml"
sed -e 's/^pp_size: 4/pp_size: 2/' -e 's/^world_size: 8/world_size: 4/' "$meta" >"$tmp/pp.yaml"
reject "meta pp_size vs trace" "stage 2 out of range for pp_size 2" --trace "$data/trace-ST.csv" --meta "$tmp/pp.yaml"
printf 'dp_size: two\n' >"$tmp/word.yaml"
reject "meta not a number" "word.yaml:1: dp_size: expected an integer" --trace "$data/trace-ST.csv" --meta "$tmp/word.yaml"
reject "missing file" "nope.csv: cannot open" --trace "$tmp/nope.csv" --meta "$meta"
reject "no --meta" "needs --trace" --trace "$data/trace-ST.csv"
exit $fail
