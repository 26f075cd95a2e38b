/* Emulated twin of core/k_launch.cu: the empty kernel. */
#include "fleetprint/cuda_kernels.h"
#include "fpemu.h"

static void empty_body(void *p)
{
    (void)p;
}

fp_status fp_k_empty(cudaStream_t stream)
{
    char none = 0;
    cudaError_t e = FPEMU_LAUNCH(stream, empty_body, none, "empty_kernel");
    return FP_K_STATUS(e, "empty_kernel");
}
