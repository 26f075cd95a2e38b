// CUDA kernels that make and check GEMM data on the device: exact or random
// operands (fp_gemm_operand stored by fp_gemm_store) and the digest of a
// result against a reference (fp_digest_term, fp_result_differs), so burn-in
// moves a few hundred bytes to the host per window instead of the result.
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/hd.h"

namespace {

const int kThreads = 256;
const unsigned kDigestBlocksX = 64; // CUDA blocks per digest block

__global__ void fill_gemm_kernel(int type, void *dst, size_t n, uint64_t seed, int exact)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        fp_gemm_store(type, dst, i, fp_gemm_operand(seed, i, exact));
}

__device__ unsigned long long warp_sum(unsigned long long v)
{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// blockIdx.y is the digest block b; the CUDA blocks of row b stride over its
// elements; each warp adds its partial sums to out with one atomic per field.
__global__ void digest_kernel(const void *c, const void *ref, size_t n, int es, double tol,
                              fp_digest *out)
{
    uint64_t b = blockIdx.y, lo = fp_digest_lo(b, n), hi = fp_digest_lo(b + 1, n);
    unsigned long long h = 0, nonfinite = 0, mismatch = 0;
    double s = 0, a = 0;
    for (uint64_t i = lo + blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < hi;
         i += (uint64_t)gridDim.x * blockDim.x) {
        double v = fp_result_value(c, i, es);
        h += fp_digest_term(fp_result_bits(c, i, es), i);
        nonfinite += !(v - v == 0);
        mismatch += ref && fp_result_differs(c, ref, i, es, tol);
        s += v;
        a += fabs(v);
    }
    h = warp_sum(h);
    nonfinite = warp_sum(nonfinite);
    mismatch = warp_sum(mismatch);
    s = warp_sum(s);
    a = warp_sum(a);
    if ((threadIdx.x & 31) != 0)
        return;
    atomicAdd((unsigned long long *)&out->hash[b], h);
    atomicAdd(&out->sum[b], s);
    atomicAdd(&out->abssum[b], a);
    if (nonfinite)
        atomicAdd((unsigned long long *)&out->nonfinite, nonfinite);
    if (mismatch)
        atomicAdd((unsigned long long *)&out->mismatch, mismatch);
}

} // namespace

extern "C" fp_status fp_k_fill_gemm(int type, void *dst, size_t n, uint64_t seed, int exact,
                                    cudaStream_t stream)
{
    size_t b = (n + kThreads - 1) / kThreads;
    unsigned blocks = (unsigned)(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
    fill_gemm_kernel<<<blocks, kThreads, 0, stream>>>(type, dst, n, seed, exact);
    return FP_K_LAUNCHED("fill_gemm_kernel");
}

extern "C" fp_status fp_k_digest(const void *c, const void *ref, size_t n, int es, double tol,
                                 fp_digest *out, cudaStream_t stream)
{
    dim3 grid(kDigestBlocksX, FP_DIGEST_BLOCKS);
    digest_kernel<<<grid, kThreads, 0, stream>>>(c, ref, n, es, tol, out);
    return FP_K_LAUNCHED("digest_kernel");
}
