#!/usr/bin/env bash
# ci/check-layers.sh fails on an upward include: on a copy of the tree, plant
# `#include "fleetprint/report.h"` (reports/) in core/log.c, a private
# include of detect/ in fingerprint/store.c and `#include
# "fleetprint/status.h"` (core/) in emu/rt.c (emu/ is a leaf below core), and
# expect exit 1 naming each; the unplanted copy passes. With the layers'
# libraries built (FP_BUILD), a planted libfpemu.a that takes core's fp__fail
# fails the link check too.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in ci include emu core kernels collectives burnin fingerprint detect whatif admit reports \
    app; do
    cp -r "$FP_SRC/$d" "$tmp/$d"
done
bash "$tmp/ci/check-layers.sh" >"$tmp/clean.out" || { cat "$tmp/clean.out"; echo "FAIL: the clean tree fails"; exit 1; }
sed -i '0,/^#include "fleetprint\/log.h"/s//#include "fleetprint\/log.h"\n#include "fleetprint\/report.h"/' "$tmp/core/log.c"
sed -i '0,/^#include "store_internal.h"/s//#include "store_internal.h"\n#include "..\/detect\/detect_internal.h"/' "$tmp/fingerprint/store.c"
sed -i '0,/^#include "fpemu.h"/s//#include "fpemu.h"\n#include "fleetprint\/status.h"/' "$tmp/emu/rt.c"
want=3
build=()
if [ -n "${FP_BUILD:-}" ] && [ -f "$FP_BUILD/core/libfp_core.a" ]; then
    # the built layers' libraries, and an fpemu whose one object calls fp__fail
    for lib in "$FP_BUILD"/*/libfp_*.a; do
        d=$(basename "$(dirname "$lib")")
        mkdir -p "$tmp/build/$d"
        ln -s "$lib" "$tmp/build/$d/"
    done
    mkdir -p "$tmp/build/emu"
    echo 'int fp__fail(); int fpemu_planted(void) { return fp__fail(); }' |
        ${CC:-cc} -x c -c - -o "$tmp/build/emu/planted.o"
    ar rc "$tmp/build/emu/libfpemu.a" "$tmp/build/emu/planted.o"
    build=("$tmp/build")
    want=4
fi
rc=0
bash "$tmp/ci/check-layers.sh" "${build[@]}" >"$tmp/planted.out" || rc=$?
cat "$tmp/planted.out"
[ "$rc" = 1 ] || { echo "FAIL: exit $rc, want 1"; exit 1; }
grep -q '^layers: core/log.c:[0-9]*: core includes fleetprint/report.h of reports' "$tmp/planted.out" ||
    { echo "FAIL: the upward include is not named"; exit 1; }
grep -q '^layers: fingerprint/store.c:[0-9]*: .*private header ../detect/detect_internal.h' "$tmp/planted.out" ||
    { echo "FAIL: the private include is not named"; exit 1; }
grep -q '^layers: emu/rt.c:[0-9]*: emu includes fleetprint/status.h of core' "$tmp/planted.out" ||
    { echo "FAIL: the emu->core include is not named"; exit 1; }
if [ "$want" = 4 ]; then
    grep -q '^layers: emu/planted.o uses fp__fail of core' "$tmp/planted.out" ||
        { echo "FAIL: libfpemu.a taking fp__fail is not named"; exit 1; }
fi
[ "$(grep -c '^layers: ' "$tmp/planted.out")" = "$want" ] ||
    { echo "FAIL: more offences than planted"; exit 1; }
echo "ok: all $want planted offences fail the check"
