#!/usr/bin/env bash
# fleetprint report: a simulated fleet with a bad link and a slow node
# renders as HTML whose link matrix has one cell per node pair and names the
# failing link, and as a Prometheus textfile in the exposition format; the
# exit code matches the printed verdict (fail: 1, files still written);
# nothing to write is a usage error.
. "$FP_TESTS/lib.sh"
cd "$WORK"
expect_rc 0 "$FLEETPRINT" simulate --nodes 12 --gpus-per-node 2 --seed 7 --runs 1 \
  --faults bad-link=1,slow-node=1 --out sim.jsonl --truth truth.json
expect_rc 1 "$FLEETPRINT" report --input sim.jsonl --html r.html --prometheus r.prom --json v.json
expect_out "detect: FAIL"
[ ! -e r.prom.tmp ] || fail "the textfile's temporary was left behind"
py - <<'PY'
import json, re
truth = json.load(open("truth.json"))
html = open("r.html").read()
a = html.index("<h2>Link matrix</h2>")
svg = html[html.index("<svg", a):html.index("</svg>", a) + 6]
import xml.dom.minidom
cells = [r for r in xml.dom.minidom.parseString(svg).getElementsByTagName("rect")]
assert len(cells) == 12 * 12, len(cells)
assert "failing link: " + truth["bad_links"][0] in html, truth
assert truth["faulty_nodes"][0] in html
line = re.compile(r'^[a-z_]+\{([a-z_]+="([^"\\]|\\.)*",?)*\} -?[0-9.e+-]+(nan)?$|^# (HELP|TYPE) .*$')
lines = open("r.prom").read().splitlines()
bad = [l for l in lines if not line.match(l)]
assert not bad, bad[:3]
assert any(l.startswith("fleetprint_verdict{") and l.endswith(" 2") for l in lines)
assert any(l.startswith("fleetprint_value{suite=\"kernels\"") for l in lines)
print("ok: %d cells, %d textfile lines" % (len(cells), len(lines)))
PY
expect_rc 2 "$FLEETPRINT" report --input sim.jsonl
expect_out "nothing to write"
echo ok
