#!/usr/bin/env bash
# burnin --inject bitflip:rank=0,at=10s exits 1 naming rank 0 as the SDC
# suspect (issue 12 failure 6: it passed).
. "$FP_TESTS/gpu/common.sh"
expect_rc 1 within 90 "$FLEETPRINT" burnin --device cuda --duration 30s \
  --inject bitflip:rank=0,at=10s --json "$WORK/b.json"
py - "$WORK/b.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["burnin"]
r = {v["rank"]: v for v in b["ranks"]}
assert r[0]["verdict"] == "fail" and r[0]["self_mismatch"] > 0, r[0]
print("ok: rank 0 fails, first bad window", r[0].get("first_bad_interval"))
PY
