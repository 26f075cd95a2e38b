#!/usr/bin/env bash
# ci/check-layers.sh fails on an upward include: on a copy of the tree, plant
# `#include "fleetprint/report.h"` (reports/) in core/log.c and a private
# include of detect/ in fingerprint/store.c, and expect exit 1 naming both;
# the unplanted copy passes.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in ci include core kernels collectives burnin fingerprint detect whatif admit reports app; do
    cp -r "$FP_SRC/$d" "$tmp/$d"
done
bash "$tmp/ci/check-layers.sh" >"$tmp/clean.out" || { cat "$tmp/clean.out"; echo "FAIL: the clean tree fails"; exit 1; }
sed -i '0,/^#include "fleetprint\/log.h"/s//#include "fleetprint\/log.h"\n#include "fleetprint\/report.h"/' "$tmp/core/log.c"
sed -i '0,/^#include "store_internal.h"/s//#include "store_internal.h"\n#include "..\/detect\/detect_internal.h"/' "$tmp/fingerprint/store.c"
rc=0
bash "$tmp/ci/check-layers.sh" >"$tmp/planted.out" || rc=$?
cat "$tmp/planted.out"
[ "$rc" = 1 ] || { echo "FAIL: exit $rc, want 1"; exit 1; }
grep -q '^layers: core/log.c:[0-9]*: core includes fleetprint/report.h of reports' "$tmp/planted.out" ||
    { echo "FAIL: the upward include is not named"; exit 1; }
grep -q '^layers: fingerprint/store.c:[0-9]*: .*private header ../detect/detect_internal.h' "$tmp/planted.out" ||
    { echo "FAIL: the private include is not named"; exit 1; }
[ "$(grep -c '^layers: ' "$tmp/planted.out")" = 2 ] || { echo "FAIL: more offences than planted"; exit 1; }
echo "ok: both planted includes fail the check"
