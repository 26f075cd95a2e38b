/* Emulation twin of core/k_results.cu: GEMM operands and result
 * digests with the same FP_HD element functions, run by fpemu_launch in
 * stream order. Built only in the emulated build (-DFLEETPRINT_EMU=ON). */
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/device.h"
#include "fleetprint/hd.h"
#include "fpemu.h"

struct fill_args {
    int type;
    void *dst;
    size_t n;
    uint64_t seed;
    int exact;
};

static void fill_gemm_body(void *v)
{
    const struct fill_args *a = v;
    for (size_t i = 0; i < a->n; i++)
        fp_gemm_store(a->type, a->dst, i, fp_gemm_operand(a->seed, i, a->exact));
}

fp_status fp_k_fill_gemm(int type, void *dst, size_t n, uint64_t seed, int exact,
                         cudaStream_t stream)
{
    struct fill_args a = {type, dst, n, seed, exact};
    cudaError_t e = FPEMU_LAUNCH(stream, fill_gemm_body, a, "fill_gemm_kernel");
    return FP_K_STATUS(e, "fill_gemm_kernel");
}

struct digest_args {
    const void *c, *ref;
    size_t n;
    int es;
    double tol;
    fp_digest *out;
};

/* The host backend's reference digest (the caller zeroed out, as the
 * kernel's atomics add to it). */
static void digest_body(void *v)
{
    const struct digest_args *a = v;
    fp_digest_host(a->c, a->ref, a->n, (size_t)a->es, a->tol, a->out);
}

fp_status fp_k_digest(const void *c, const void *ref, size_t n, int es, double tol,
                      fp_digest *out, cudaStream_t stream)
{
    struct digest_args a = {c, ref, n, es, tol, out};
    cudaError_t e = FPEMU_LAUNCH(stream, digest_body, a, "digest_kernel");
    return FP_K_STATUS(e, "digest_kernel");
}
