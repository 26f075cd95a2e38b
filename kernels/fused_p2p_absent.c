/* Linked instead of fused_p2p_cuda.c when fleetprint is built without CUDA:
 * the fused-kernel path exists and says why it cannot run. */
#include <stdio.h>

#include "fleetprint/kernels.h"

fp_status fp_fused_p2p(fp_ctx *ctx, const fp_test *t, int m, int n, int k, char *why, size_t len)
{
    snprintf(why, len, "this fleetprint was built without CUDA (FLEETPRINT_CUDA=OFF)");
    return FP_EUNSUPPORTED;
}
