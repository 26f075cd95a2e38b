#!/usr/bin/env bash
# Set up, build and run the test suite (everything but the gpu label), then
# the cuda and nccl backends on the emulated GPU (build-emu, ctest -L emu).
# This is the README's test command; .ci/run calls it on a bare clone.
# Each part runs even when one before it failed, so one failure does not hide
# the others; the exit status is that of the first part that failed (0 when
# every part passed), and the last line names the parts that failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh || exit $?

failed=()
flaky=()
rc=0
# part NAME COMMAND...: run one part, remember it when it fails
part() {
  local name=$1 r=0
  shift
  "$@" || r=$?
  if [ "$r" -ne 0 ]; then
    echo "test.sh: $name failed (exit $r)" >&2
    failed+=("$name")
    [ "$rc" -ne 0 ] || rc=$r
  fi
  return "$r"
}

# suite DIR ARGS...: ctest in DIR; the tests that failed run once more, alone.
# Many tests judge timings of emulated nodes sharing this machine's cores, and
# a busy minute can fail one; a test that fails again fails the part, one
# that passes is named at the end as flaky (its first failure's output is in
# the log above)
suite() {
  local dir=$1; shift
  ctest --test-dir "$dir" --output-on-failure "$@" && return 0
  local list=$dir/Testing/Temporary/LastTestsFailed.log
  [ -s "$list" ] || return 1
  local -a names
  mapfile -t names < <(sed 's/^[0-9]*://' "$list")
  echo "test.sh: re-running once, alone: ${names[*]}"
  ctest --test-dir "$dir" --output-on-failure --rerun-failed -j1 || return 1
  flaky+=("${names[@]}")
}

if part configure cmake -S . -B build -DFLEETPRINT_CUDA=OFF -DFLEETPRINT_WERROR=ON >/dev/null &&
   part build cmake --build build -j"$(nproc)"; then
  # every include and link goes downward (docs/architecture.md)
  part layers bash ci/check-layers.sh build
  part ctest suite build -LE gpu -j2
fi
# the GPU backends' control flow without a GPU: against the real CUDA and
# NCCL headers, linked to fpemu (emu/); needs only the headers
if [ -e "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime_api.h" ]; then
  part emu-configure cmake -S . -B build-emu -DFLEETPRINT_EMU=ON -DFLEETPRINT_CUDA=OFF \
      -DFLEETPRINT_WERROR=ON >/dev/null &&
    part emu-build cmake --build build-emu -j"$(nproc)" &&
    part emu suite build-emu -L emu -j1
else
  echo "emu: skipped (no CUDA headers under ${CUDA_HOME:-/usr/local/cuda}/include)"
fi

[ "${#flaky[@]}" -eq 0 ] || echo "test.sh: failed once, passed when run again: ${flaky[*]}" >&2
if [ "$rc" -ne 0 ]; then
  echo "test.sh: FAILED: ${failed[*]}" >&2
else
  echo "test.sh: passed"
fi
exit "$rc"
