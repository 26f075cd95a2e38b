/* Control code of the fused-kernel path (GEMM epilogue writing into peers'
 * receive buffers): capability checks, CUDA IPC exchange of the receive
 * buffers among the ranks of the node, launch, timing, verification. Plain
 * C over cuda_runtime_api.h; compiled only with CUDA. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "fleetprint/cuda_kernels.h"
#include "fleetprint/kernels.h"
#include "fleetprint/log.h"

static const fp_metric time_metric = {"rs_p2p_fused_time", "ms", FP_BETTER_LOWER};
static const fp_metric wrong_metric = {"rs_p2p_fused_wrong", "count", FP_BETTER_LOWER};

/* Whether this rank can run the path; why says why not. The same answer on
 * every rank (agreed). */
static fp_status capable(fp_ctx *ctx, int m, char *why, size_t len)
{
    fp_status st = FP_OK;
    int R = ctx->nranks, mine = ctx->dev_info.index;
    int *devs = calloc((size_t)R, sizeof *devs);
    FP_CHECK_ALLOC(devs);
    if (ctx->dev_ops != &fp_device_cuda) {
        snprintf(why, len, "needs --device cuda");
        st = FP_EUNSUPPORTED;
    } else if (fp_world_nnodes(ctx->world) != 1) {
        snprintf(why, len, "ranks span %d nodes (peer pointers reach one node)",
                 fp_world_nnodes(ctx->world));
        st = FP_EUNSUPPORTED;
    } else if (m % R) {
        snprintf(why, len, "m=%d is not a multiple of %d ranks", m, R);
        st = FP_EUNSUPPORTED;
    }
    if (st == FP_OK)
        FP_CHECK(fp_world_allgather(ctx->world, &mine, devs, (int)sizeof mine, "fused p2p devices"));
    for (int r = 0; st == FP_OK && r < R; r++) {
        int ok = 1;
        if (devs[r] != mine)
            FP_CHECK_CUDA(cudaDeviceCanAccessPeer(&ok, mine, devs[r]));
        if (!ok) {
            snprintf(why, len, "device %d cannot access device %d (cudaDeviceCanAccessPeer)", mine,
                     devs[r]);
            st = FP_EUNSUPPORTED;
        }
    }
cleanup:
    free(devs);
    fp_status all = fp_world_agree(ctx->world, st);
    if (all == FP_EUNSUPPORTED && st == FP_OK)
        snprintf(why, len, "another rank lacks peer access");
    return all;
}

fp_status fp_fused_p2p(fp_ctx *ctx, const fp_test *t, int m, int n, int k, char *why, size_t len)
{
    fp_status st = capable(ctx, m, why, len);
    if (st != FP_OK)
        return st;
    const fp_device_ops *d = ctx->dev_ops;
    int R = ctx->nranks, rows = m / R;
    cudaStream_t stream = (cudaStream_t)d->native_stream(ctx->dev);
    float *w = NULL, *x = NULL, *recv = NULL, **table = NULL, *host = NULL;
    float **peers = calloc((size_t)R, sizeof *peers);
    cudaIpcMemHandle_t mine, *all = calloc((size_t)R, sizeof *all);
    double *h = malloc((size_t)(m > n ? m : n) * (size_t)k * sizeof *h);
    FP_CHECK_ALLOC(peers);
    FP_CHECK_ALLOC(all);
    FP_CHECK_ALLOC(h);
    FP_CHECK(d->alloc(ctx->dev, (size_t)n * k * sizeof *w, (void **)&w));
    FP_CHECK(d->alloc(ctx->dev, (size_t)m * k * sizeof *x, (void **)&x));
    FP_CHECK(d->alloc(ctx->dev, (size_t)rows * n * sizeof *recv, (void **)&recv));
    FP_CHECK(d->alloc(ctx->dev, (size_t)R * sizeof *table, (void **)&table));
    for (size_t l = 0; l < (size_t)k; l++)
        for (size_t j = 0; j < (size_t)n; j++)
            h[l * (size_t)n + j] = fp_fused_w(j);
    FP_CHECK(fp_gemm_upload(ctx, FP_GEMM_F32, h, (size_t)n * k, w));
    for (size_t r = 0; r < (size_t)m; r++)
        for (size_t l = 0; l < (size_t)k; l++)
            h[r * (size_t)k + l] = fp_fused_x(r) * (ctx->rank + 1);
    FP_CHECK(fp_gemm_upload(ctx, FP_GEMM_F32, h, (size_t)m * k, x));
    /* every rank's receive buffer, mapped into this process */
    FP_CHECK_CUDA(cudaIpcGetMemHandle(&mine, recv));
    FP_CHECK(fp_world_allgather(ctx->world, &mine, all, (int)sizeof mine, "fused p2p handles"));
    for (int r = 0; r < R; r++) {
        if (r == ctx->rank)
            peers[r] = recv;
        else
            FP_CHECK_CUDA(cudaIpcOpenMemHandle((void **)&peers[r], all[r],
                                               cudaIpcMemLazyEnablePeerAccess));
    }
    FP_CHECK(d->copy(ctx->dev, table, peers, (size_t)R * sizeof *peers, FP_COPY_H2D));
    double best = 1e30;
    for (int it = 0; it < ctx->cfg->warmup + ctx->cfg->iters; it++) {
        double sec;
        FP_CHECK_CUDA(cudaMemsetAsync(recv, 0, (size_t)rows * n * sizeof *recv, stream));
        FP_CHECK(d->sync(ctx->dev));
        FP_CHECK(fp_ctx_barrier(ctx, "fused p2p")); /* every buffer is zero */
        FP_CHECK(fp_timed_start(ctx));
        FP_CHECK(fp_k_gemm_rs_p2p(x, w, m, n, k, m, table, R, stream));
        FP_CHECK(fp_timed_stop(ctx, &sec));
        FP_CHECK(fp_ctx_barrier(ctx, "fused p2p")); /* every rank's writes landed */
        if (it < ctx->cfg->warmup)
            continue;
        best = sec < best ? sec : best;
        FP_CHECK(fp_emit(ctx, t, &time_metric, &ctx->self, (size_t)m * n * sizeof(float),
                         it - ctx->cfg->warmup, sec * 1e3));
    }
    FP_CHECK(fp_emit(ctx, t, &time_metric, &ctx->self, (size_t)m * n * sizeof(float), -1,
                     best * 1e3));
    if (ctx->cfg->check) {
        size_t bad = 0;
        host = malloc((size_t)rows * n * sizeof *host);
        FP_CHECK_ALLOC(host);
        FP_CHECK(d->copy(ctx->dev, host, recv, (size_t)rows * n * sizeof *host, FP_COPY_D2H));
        for (size_t r = 0; r < (size_t)rows; r++)
            for (size_t j = 0; j < (size_t)n; j++)
                bad += (size_t)fp_elem_wrong(host[r * n + j],
                                             fp_fused_expect((size_t)ctx->rank * rows + r, j, k,
                                                             R * (R + 1) / 2.0),
                                             1e-5);
        if (bad)
            fp_error("fused p2p: %zu wrong elements", bad);
        ctx->wrong += (long long)bad;
        FP_CHECK(fp_emit(ctx, t, &wrong_metric, &ctx->self, (size_t)m * n * sizeof(float), -1,
                         (double)bad));
    }
cleanup:
    for (int r = 0; peers && r < R; r++)
        if (peers[r] && r != ctx->rank)
            cudaIpcCloseMemHandle(peers[r]);
    if (w)
        d->free(ctx->dev, w);
    if (x)
        d->free(ctx->dev, x);
    if (recv)
        d->free(ctx->dev, recv);
    if (table)
        d->free(ctx->dev, table);
    free(peers);
    free(all);
    free(h);
    free(host);
    return st;
}
