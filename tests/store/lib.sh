# Shared setup for the store's script tests: strict mode, a scratch directory
# removed on exit, the binaries, and small assertion helpers.
set -euo pipefail
F=${FLEETPRINT:?FLEETPRINT must name the fleetprint binary}
GEN=${FP_BUILD:?}/tests/fp_gen_jsonl
PY=/usr/bin/python3
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d /tmp/fp_store_test.XXXXXX)
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_rc CODE CMD...: run CMD, require exit code CODE; its stderr is kept in err.txt
expect_rc() {
    local want=$1; shift
    local rc=0
    "$@" > out.txt 2> err.txt || rc=$?
    [ "$rc" = "$want" ] || { cat err.txt >&2; fail "'$*' exited $rc, expected $want"; }
}
# expect_err TEXT: err.txt is one line and contains TEXT
expect_err() {
    grep -qF -- "$1" err.txt || { cat err.txt >&2; fail "stderr lacks '$1'"; }
    [ "$(wc -l < err.txt)" -le 1 ] || { cat err.txt >&2; fail "error is not one line"; }
}
run_ids() { "$F" store ls --store "$1" | awk 'NR > 1 {print $1}' | sort | tr '\n' ' '; }
