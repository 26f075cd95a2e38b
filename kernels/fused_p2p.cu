// Fused GEMM + reduce-scatter, the reduction half: cuBLAS writes each rank's
// output tiles straight into their owners' staging buffers (one slot per
// source rank, IPC-mapped over NVLink / PCIe P2P), then every rank sums the
// slots of its own buffer here. The element logic is one addition per slot.
#include "fleetprint/cuda_kernels.h"

namespace {

const int kThreads = 256;

__global__ void sum_slots_kernel(float *__restrict__ dst, const float *__restrict__ slots,
                                 int nslots, size_t count)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        float acc = 0;
        for (int s = 0; s < nslots; s++)
            acc += slots[(size_t)s * count + i];
        dst[i] = acc;
    }
}

} // namespace

extern "C" fp_status fp_k_sum_slots(float *dst, const float *slots, int nslots, size_t count,
                                    cudaStream_t stream)
{
    size_t b = (count + kThreads - 1) / kThreads;
    unsigned blocks = (unsigned)(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
    sum_slots_kernel<<<blocks, kThreads, 0, stream>>>(dst, slots, nslots, count);
    return FP_K_LAUNCHED("sum_slots_kernel");
}
