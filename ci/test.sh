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

if part configure cmake -S . -B build -DFLEETPRINT_CUDA=OFF -DFLEETPRINT_WERROR=ON >/dev/null &&
   part build cmake --build build -j"$(nproc)"; then
  # every include and link goes downward (docs/architecture.md)
  part layers bash ci/check-layers.sh build
  part ctest ctest --test-dir build -LE gpu --output-on-failure -j2
fi
# the GPU backends' control flow without a GPU: against the real CUDA and
# NCCL headers, linked to fpemu (emu/); needs only the headers
if [ -e "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime_api.h" ]; then
  part emu-configure cmake -S . -B build-emu -DFLEETPRINT_EMU=ON -DFLEETPRINT_CUDA=OFF \
      -DFLEETPRINT_WERROR=ON >/dev/null &&
    part emu-build cmake --build build-emu -j"$(nproc)" &&
    part emu ctest --test-dir build-emu -L emu --output-on-failure -j1
else
  echo "emu: skipped (no CUDA headers under ${CUDA_HOME:-/usr/local/cuda}/include)"
fi

if [ "$rc" -ne 0 ]; then
  echo "test.sh: FAILED: ${failed[*]}" >&2
else
  echo "test.sh: passed"
fi
exit "$rc"
