/* Emulated twin of kernels/fused_p2p.cu: C = X . W^T in fp32, each element
 * added atomically into the receive buffer fp_rs_route names, through the
 * peer pointer table (device memory holding IPC-mapped pointers). */
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/kernels.h"
#include "fpemu.h"

struct gemm_rs_args {
    const float *x, *w;
    int m, n, k, mc;
    float *const *peers;
    int nranks;
};

static void gemm_rs_body(void *p)
{
    struct gemm_rs_args *a = p;
    for (int t = 0; t < a->m; t++)
        for (int j = 0; j < a->n; j++) {
            float acc = 0;
            for (int l = 0; l < a->k; l++)
                acc += a->x[(size_t)t * a->k + l] * a->w[(size_t)l * a->n + j];
            int owner;
            uint64_t off;
            fp_rs_route((uint64_t)t, (uint64_t)j, (uint64_t)a->n, (uint64_t)a->mc, a->nranks,
                        &owner, &off);
            fpemu_atomic_add_f32(a->peers[owner] + off, acc);
        }
}

fp_status fp_k_gemm_rs_p2p(const float *x, const float *w, int m, int n, int k, int mc,
                           float *const *peers, int nranks, cudaStream_t stream)
{
    struct gemm_rs_args a = {x, w, m, n, k, mc, peers, nranks};
    return FPEMU_LAUNCH(stream, gemm_rs_body, a, "gemm_rs_p2p_kernel");
}
