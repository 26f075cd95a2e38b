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
expect_rc 1 "$FLEETPRINT" report --input sim.jsonl --html r.html --prometheus r.prom --json v.json \
  --junit j.xml
expect_out "detect: FAIL"
# JUnit: valid against a Jenkins-style schema, with a fail, a warn and an unknown
xmllint --noout --schema "$FP_TESTS/junit.xsd" j.xml || fail "JUnit does not validate against tests/junit.xsd"
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
# the first screen: verdict, node counts and the drain list, before any table
top = html[:html.index("<table")]
node = truth["faulty_nodes"][0]
assert re.search(r'Verdict: <span class="fail">fail</span>', top), top
assert "1 of 12 nodes fails: %s \u2192 drained" % node in top, top
assert '<code class="drain">%s</code>' % node in top, top
# one reason line per (entity, metric) however many evidence kinds agree, at
# most 10 per entity, then "+N more"
v = json.load(open("v.json"))
rows = re.findall(r'<tr class="entity"><td>([^<]*)</td>.*?</ul>', html, re.S)
assert rows, "no entity rows"
for row in re.finditer(r'<tr class="entity"><td>([^<]*)</td>(.*?)</ul>', html, re.S):
    ent, body = row.group(1), row.group(2)
    keys = {r["metric"] for e in v["entities"] if e["entity"] == ent for r in e["reasons"]}
    lines = body.count('<li class="fail"') + body.count('<li class="warn"')
    assert lines == min(len(keys), 10), (ent, lines, keys)
    assert ("+%d more" % (len(keys) - 10) in body) == (len(keys) > 10), ent
    fails = [m.start() for m in re.finditer('<li class="fail"', body)]
    warns = [m.start() for m in re.finditer('<li class="warn"', body)]
    assert not fails or not warns or max(fails) < min(warns), ("fails before warns", ent)
reasons = html[html.index("<table"):html.index("<h2>Link matrix</h2>")]
assert not re.search(r"[0-9]e[+-][0-9]", reasons), "values in engineering units, not 1e+05"
line = re.compile(r'^[a-z_]+\{([A-Za-z_]+="([^"\\]|\\.)*",?)*\} -?[0-9.e+-]+(nan)?$|^# (HELP|TYPE) .*$')
lines = open("r.prom").read().splitlines()
bad = [l for l in lines if not line.match(l)]
assert not bad, bad[:3]
assert any(l.startswith("fleetprint_verdict{") and l.endswith('state="fail"} 1') for l in lines)
assert any(l.startswith("fleetprint_memory_bandwidth_bytes_per_second{run_tag=\"sim\",op=\"triad\",Hostname=") for l in lines)
import xml.etree.ElementTree as ET
suite = ET.parse("j.xml").getroot().find("testsuite")
assert suite.get("hostname") and suite.get("timestamp"), suite.attrib
assert float(suite.get("time")) > 0 and int(suite.get("skipped")) >= 1, suite.attrib
cases = {c.get("name"): c for c in suite.iter("testcase")}
assert all(float(c.get("time")) > 0 for c in cases.values()), "every case has a duration"
verdict = {e["entity"]: e for e in v["entities"]}
kinds = set()
for name, c in cases.items():
    e = verdict.get(name, {"verdict": "pass", "reasons": []})
    kinds.add(e["verdict"])
    f, sk, out = c.find("failure"), c.find("skipped"), c.find("system-out")
    assert (f is not None) == (e["verdict"] == "fail"), name
    assert (sk is not None) == (e["verdict"] == "unknown"), name
    if e["verdict"] == "warn":
        assert out is not None and "warn" in out.text, name
    if f is not None and e["reasons"]:
        body = [l for l in f.text.splitlines() if l.strip()]
        want = [r for r in e["reasons"] if r["verdict"] == "fail"]
        assert len(body) == len(want), (name, body, want)  # one reason a line, none cut
        assert f.get("type") == want[0]["rule"] and f.get("message") == body[0].strip(), name
assert {"fail", "warn", "unknown"} <= kinds, kinds
print("ok: %d cells, %d textfile lines, %d JUnit cases" % (len(cells), len(lines), len(cases)))
PY
# an entity with 13 failing metrics shows 10 lines, then "+3 more"
py - <<'PY'
import json
ranks = [{"node": n, "local_rank": 0, "dev": 0, "clock_offset": 0.0, "clock_error": 0.0,
          "model": "host"} for n in ("n0", "n1")]
run = {"id": "many", "tag": "t", "status": "complete", "command": "fleetprint run",
       "device_backend": "host", "comm_backend": "mpi", "fleetprint_version": "0.1.0",
       "mpi_version": "", "cuda_version": "", "driver_version": "", "nccl_version": "",
       "injections": "", "time": 1.7e9, "duration": 10.0, "nodes": ["n0", "n1"], "ranks": ranks}
samples = [{"suite": "kernels", "test": "gemm", "metric": "m%02d_wrong" % k, "unit": "count",
            "better": "lower", "entity": "gpu:%s/0" % n, "size": 64, "iter": -1,
            "value": float(n == "n1"), "t": 1.0} for k in range(13) for n in ("n0", "n1")]
json.dump({"run": run, "samples": samples}, open("many.json", "w"))
PY
expect_rc 1 "$FLEETPRINT" report --input many.json --html many.html
py - <<'PY'
import re
html = open("many.html").read()
assert "1 of 2 nodes fails: n1 \u2192 drained" in html
row = re.search(r'<tr class="entity"><td>gpu:n1/0</td>(.*?)</ul>', html, re.S).group(1)
assert row.count('<li class="fail"') == 10 and "+3 more" in row, row
PY
expect_rc 2 "$FLEETPRINT" report --input sim.jsonl
expect_out "nothing to write"
echo ok
