// The empty kernel of the launch test: nothing to do but be launched.
#include "fleetprint/cuda_kernels.h"

namespace {

__global__ void empty_kernel() {}

} // namespace

extern "C" fp_status fp_k_empty(cudaStream_t stream)
{
    empty_kernel<<<1, 1, 0, stream>>>();
    return FP_K_LAUNCHED("empty_kernel");
}
