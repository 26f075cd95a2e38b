// CUDA kernels of the membw test and the result checks: grid-stride loops
// over the FP_HD element functions that the host backend runs too.
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/hd.h"

namespace {

const int kThreads = 256;

unsigned blocks_for(size_t n)
{
    size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
}

__global__ void fill_kernel(double *x, size_t n, double v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = v;
}

__global__ void stream_kernel(int op, double *__restrict__ dst, const double *__restrict__ x,
                              const double *__restrict__ y, double s, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = fp_stream_elem(op, x[i], y ? y[i] : 0.0, s);
}

__global__ void count_wrong_kernel(const double *x, size_t n, double expect, double tol,
                                   unsigned long long *count)
{
    unsigned long long bad = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        bad += (unsigned long long)fp_elem_wrong(x[i], expect, tol);
    if (bad)
        atomicAdd(count, bad);
}

} // namespace

extern "C" fp_status fp_k_fill(double *x, size_t n, double v, cudaStream_t stream)
{
    fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n, v);
    return FP_K_LAUNCHED("fill_kernel");
}

extern "C" fp_status fp_k_stream(int op, double *dst, const double *x, const double *y, double s,
                                 size_t n, cudaStream_t stream)
{
    stream_kernel<<<blocks_for(n), kThreads, 0, stream>>>(op, dst, x, y, s, n);
    return FP_K_LAUNCHED("stream_kernel");
}

extern "C" fp_status fp_k_count_wrong(const double *x, size_t n, double expect, double tol,
                                      unsigned long long *count, cudaStream_t stream)
{
    count_wrong_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n, expect, tol, count);
    return FP_K_LAUNCHED("count_wrong_kernel");
}
