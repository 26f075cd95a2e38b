// Fused GEMM + reduce-scatter: a shared-memory tiled fp32 GEMM whose
// epilogue adds each output element straight into its owner's receive
// buffer over peer pointers (NVLink / PCIe P2P), so no separate collective
// runs. The routing is fp_rs_route, which the host tests check against the
// chunked reduce-scatter's layout.
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/kernels.h"

namespace {

const int kTile = 16;

// C[t][j] = sum_l X[t][l] * W[j + l * n]; block (bx, by) computes tokens
// by*16.., columns bx*16..
__global__ void gemm_rs_p2p_kernel(const float *__restrict__ x, const float *__restrict__ w, int m,
                                   int n, int k, int mc, float *const *peers, int nranks)
{
    __shared__ float xs[kTile][kTile + 1];
    __shared__ float ws[kTile][kTile + 1];
    int t = blockIdx.y * kTile + threadIdx.y;
    int j = blockIdx.x * kTile + threadIdx.x;
    float acc = 0;
    for (int l0 = 0; l0 < k; l0 += kTile) {
        int lx = l0 + threadIdx.x, lw = l0 + threadIdx.y;
        int tw = blockIdx.y * kTile + threadIdx.y; // this thread loads x row t, w column j
        xs[threadIdx.y][threadIdx.x] = tw < m && lx < k ? x[(size_t)tw * k + lx] : 0.0f;
        ws[threadIdx.y][threadIdx.x] = j < n && lw < k ? w[(size_t)lw * n + j] : 0.0f;
        __syncthreads();
        for (int q = 0; q < kTile; q++)
            acc += xs[threadIdx.y][q] * ws[q][threadIdx.x];
        __syncthreads();
    }
    if (t >= m || j >= n)
        return;
    // epilogue: straight into the owner's receive buffer
    int owner;
    uint64_t off;
    fp_rs_route((uint64_t)t, (uint64_t)j, (uint64_t)n, (uint64_t)mc, nranks, &owner, &off);
    atomicAdd(peers[owner] + off, acc);
}

} // namespace

extern "C" fp_status fp_k_gemm_rs_p2p(const float *x, const float *w, int m, int n, int k, int mc,
                                      float *const *peers, int nranks, cudaStream_t stream)
{
    dim3 block(kTile, kTile);
    dim3 grid((unsigned)((n + kTile - 1) / kTile), (unsigned)((m + kTile - 1) / kTile));
    gemm_rs_p2p_kernel<<<grid, block, 0, stream>>>(x, w, m, n, k, mc, peers, nranks);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return FP_OK;
    return fp__fail(FP_ECUDA, "gemm_rs_p2p_kernel", __FILE__, __LINE__, "%s",
                    cudaGetErrorString(e));
}
