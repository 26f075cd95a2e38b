#!/usr/bin/env bash
# compute-sanitizer memcheck finds no error in a kernels run, single-rank
# nccl collectives and a 20 s burn-in (issue 12 item 8: 8 errors with nccl).
# Those 8 were CUDA API errors inside NCCL's own start-up, not memory errors:
# ncclInitKernelsForDevice probes kernels the GPU has no image for
# (cudaErrorNoKernelImageForDevice from cudaFuncGetAttributes, then cleared
# with cudaGetLastError; seen on an H200, NCCL 2.28). fleetprint checks every
# CUDA call it makes itself, so API errors are not reported here: memcheck's
# memory-access errors are.
. "$FP_TESTS/gpu/common.sh"
command -v compute-sanitizer >/dev/null || { echo "skip: no compute-sanitizer"; exit 77; }
san() { expect_rc 0 within 600 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 "$FLEETPRINT" "$@"
        expect_out "ERROR SUMMARY: 0 errors"; }
san run --device cuda --suite kernels -n 2 -w 1 --gemm-size 1024 --fused-m 1024 --chunks 1,2
san run --device cuda --comm nccl --suite collectives -n 2 -w 1
san burnin --device cuda --duration 20s
echo "ok: memcheck clean"
