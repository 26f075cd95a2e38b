#!/usr/bin/env bash
# burnin --duration 60s exits 0 within 70 s (issue 12 failure 5).
. "$FP_TESTS/gpu/common.sh"
t0=$(date +%s)
expect_rc 0 within 70 "$FLEETPRINT" burnin --device cuda --duration 60s
echo "ok: burn-in passed in $(( $(date +%s) - t0 )) s"
