/* Emulation twin of kernels/fused_p2p.cu: the slot sum, run by
 * fpemu_launch in stream order. Built only in the emulated build. */
#include "fleetprint/cuda_kernels.h"
#include "fpemu.h"

struct sum_args {
    float *dst;
    const float *slots;
    int nslots;
    size_t count;
};

static void sum_slots_body(void *v)
{
    const struct sum_args *a = v;
    for (size_t i = 0; i < a->count; i++) {
        float acc = 0;
        for (int s = 0; s < a->nslots; s++)
            acc += a->slots[(size_t)s * a->count + i];
        a->dst[i] = acc;
    }
}

fp_status fp_k_sum_slots(float *dst, const float *slots, int nslots, size_t count,
                         cudaStream_t stream)
{
    struct sum_args a = {dst, slots, nslots, count};
    cudaError_t e = FPEMU_LAUNCH(stream, sum_slots_body, a, "sum_slots_kernel");
    return FP_K_STATUS(e, "sum_slots_kernel");
}
