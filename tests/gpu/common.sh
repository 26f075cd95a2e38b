# Shared by the gpu tests (ctest -L gpu, on a GPU runner only): each checks one
# of issue 12's "Must show 2" items on the real device.
. "$FP_TESTS/lib.sh"
# within SECONDS cmd...: run cmd with a wall-clock limit; exit code as expect_rc sees it
within() { local s=$1; shift; timeout --kill-after=10 "$s" "$@"; }
