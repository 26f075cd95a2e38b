#ifndef FLEETPRINT_CUDA_KERNELS_H
#define FLEETPRINT_CUDA_KERNELS_H
/* C-callable launchers of fleetprint's CUDA kernels (the .cu files in kernels/). Each
 * launches one kernel built from the FP_HD element functions in hd.h on the
 * given stream, checks the launch, and returns a status. Plain C. */
#include <cuda_runtime_api.h>
#include <stddef.h>

#include "fleetprint/hd.h"
#include "fleetprint/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x[i] = v for i < n. */
fp_status fp_k_fill(double *x, size_t n, double v, cudaStream_t stream);

/* dst[i] = fp_stream_elem(op, x[i], y[i], s) for i < n (y may be NULL for copy, scale). */
fp_status fp_k_stream(int op, double *dst, const double *x, const double *y, double s, size_t n,
                      cudaStream_t stream);

/* *count (device memory, not zeroed here) += number of i < n with
 * fp_elem_wrong(x[i], expect, tol). */
fp_status fp_k_count_wrong(const double *x, size_t n, double expect, double tol,
                           unsigned long long *count, cudaStream_t stream);

/* One empty kernel (launch latency). */
fp_status fp_k_empty(cudaStream_t stream);

/* Memory test passes (core/k_memtest.cu) over words 8-byte words at region
 * (16-byte aligned, words even): write puts fp_mem_word(p, region, i, seed)
 * in word i; verify compares every word with it, adding the wrong ones to
 * out->errors and keeping the first found in out (device memory, zeroed by
 * the caller; naddr may count past FP_MEM_ADDRS). */
fp_status fp_k_mem_write(int p, uint64_t *region, size_t words, uint64_t seed,
                         cudaStream_t stream);
fp_status fp_k_mem_verify(int p, const uint64_t *region, size_t words, uint64_t seed,
                          fp_mem_check *out, cudaStream_t stream);

/* GEMM data on the device (core/k_results.cu). Element i < n of dst gets
 * fp_gemm_operand(seed, i, exact) stored by fp_gemm_store(type). */
fp_status fp_k_fill_gemm(int type, void *dst, size_t n, uint64_t seed, int exact,
                         cudaStream_t stream);
/* Adds the fp_digest of n elements of es bytes at c, against ref (NULL:
 * no mismatch count), to out (device memory, zeroed by the caller). */
fp_status fp_k_digest(const void *c, const void *ref, size_t n, int es, double tol,
                      fp_digest *out, cudaStream_t stream);

/* The reduction of the fused GEMM + reduce-scatter (kernels/fused_p2p.cu):
 * dst[i] = sum over s < nslots of slots[s * count + i], in slot order (the
 * slots are what each rank's GEMM wrote into this rank's staging buffer). */
fp_status fp_k_sum_slots(float *dst, const float *slots, int nslots, size_t count,
                         cudaStream_t stream);

#ifdef __cplusplus
}
#endif

/* For launchers, the status of launching kernel what that gave e: FP_OK, or
 * FP_ECUDA logged with what, the CUDA error string and file:line. The
 * emulated twins (core/k_<name>_emu.c, kernels/<name>_emu.c) pass what
 * fpemu's launch returned. */
static inline fp_status fp_k_status(cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return FP_OK;
    return fp__fail(FP_ECUDA, what, file, line, "%s", cudaGetErrorString(e));
}
#define FP_K_STATUS(e, what) fp_k_status((e), (what), __FILE__, __LINE__)

/* For launchers, right after a <<<>>> launch: fp_k_status of cudaGetLastError(). */
static inline fp_status fp_k_launched(const char *what, const char *file, int line)
{
    return fp_k_status(cudaGetLastError(), what, file, line);
}
#define FP_K_LAUNCHED(what) fp_k_launched((what), __FILE__, __LINE__)

/* Check a CUDA runtime call: log expression, error string, node, rank and
 * file:line, set st and goto cleanup. */
#define FP_CHECK_CUDA(expr)                                                                \
    do {                                                                                   \
        cudaError_t fp__e = (expr);                                                        \
        if (fp__e != cudaSuccess) {                                                        \
            st = fp__fail(FP_ECUDA, #expr, __FILE__, __LINE__, "%s", cudaGetErrorString(fp__e)); \
            goto cleanup;                                                                  \
        }                                                                                  \
    } while (0)

#endif
