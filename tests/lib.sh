# Shared helpers for fleetprint's shell tests. Source it; it sets -eu.
set -eu
: "${FLEETPRINT:?FLEETPRINT must name the fleetprint binary}"
MPIEXEC=${MPIEXEC:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FPNODE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fpnode"
. "$(dirname "${BASH_SOURCE[0]}")/measure.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# mpi N cmd...: run cmd on N ranks, each an emulated node n<rank>
mpi() { local n=$1; shift; "$MPIEXEC" -np "$n" --oversubscribe "$FPNODE" "$@"; }

# expect_rc WANT cmd...: run cmd, capture output in $WORK/out, check its exit code
expect_rc() {
  local want=$1 rc=0; shift
  "$@" >"$WORK/out" 2>&1 || rc=$?
  if [ "$rc" != "$want" ]; then
    cat "$WORK/out" >&2
    fail "expected exit $want, got $rc: $*"
  fi
}

# expect_out PATTERN: the last command's output matches the extended regex
expect_out() { grep -Eq -- "$1" "$WORK/out" || { cat "$WORK/out" >&2; fail "output lacks /$1/"; }; }

# py EXPR...: run Debian's python3 (it sees python3-h5py and numpy); where
# there is none (a lent GPU machine), the python3 on PATH
py() { if [ -x /usr/bin/python3 ]; then /usr/bin/python3 "$@"; else python3 "$@"; fi; }
