# Shared by the collective suite's MPI tests (sourced): a scratch directory,
# fail(), and mpirun with emulated nodes (tests/fpnode: rank r is node n<r>).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../measure.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
# fprun NP ARGS...: fleetprint on NP ranks, one emulated node each, bounded in time
fprun() {
    local np=$1
    shift
    timeout 300 "$MPIEXEC" --oversubscribe -np "$np" "$FP_TESTS/fpnode" "$FLEETPRINT" "$@"
}
PY=/usr/bin/python3
