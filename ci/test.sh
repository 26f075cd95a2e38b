#!/usr/bin/env bash
# Set up, build and run the test suite (everything but the gpu label), then
# the cuda and nccl backends on the emulated GPU (build-emu, ctest -L emu).
# This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
cmake -S . -B build -DFLEETPRINT_CUDA=OFF -DFLEETPRINT_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
# every include and link goes downward (docs/architecture.md)
bash ci/check-layers.sh build
ctest --test-dir build -LE gpu --output-on-failure -j2
# the GPU backends' control flow without a GPU: against the real CUDA and
# NCCL headers, linked to fpemu (emu/); needs only the headers
if [ -e "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime_api.h" ]; then
  cmake -S . -B build-emu -DFLEETPRINT_EMU=ON -DFLEETPRINT_CUDA=OFF -DFLEETPRINT_WERROR=ON >/dev/null
  cmake --build build-emu -j"$(nproc)"
  ctest --test-dir build-emu -L emu --output-on-failure -j1
else
  echo "emu: skipped (no CUDA headers under ${CUDA_HOME:-/usr/local/cuda}/include)"
fi
