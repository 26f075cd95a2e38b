/* Control code of the fused-kernel path (GEMM output written straight into
 * peers' buffers): capability checks, CUDA IPC exchange of the staging
 * buffers among the ranks of the node, the per-owner cuBLAS GEMMs into them
 * and the slot sum, timing against the plain GEMM, verification. Plain C
 * over cuda_runtime_api.h; compiled only with CUDA. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fleetprint/cuda_kernels.h"
#include "fleetprint/kernels.h"
#include "fleetprint/log.h"

static const fp_metric time_metric = {"rs_p2p_fused_time", "ms", FP_BETTER_LOWER};
static const fp_metric wrong_metric = {"rs_p2p_fused_wrong", "count", FP_BETTER_LOWER};
static const fp_metric gemm_metric = {"rs_p2p_gemm_time", "ms", FP_BETTER_LOWER};
static const fp_metric ratio_metric = {"rs_p2p_fused_over_gemm", "ratio", FP_BETTER_LOWER};

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

/* Buffers of the path; NULL until allocated. */
typedef struct p2p {
    void *w, *x;          /* n x k and m x k operands */
    float *stage;         /* R slots of rows x n: what every rank computed for this one */
    float *recv;          /* rows x n: the sum */
    float *c;             /* m x n: the plain GEMM's result */
    float **peers;        /* every rank's stage, mapped here */
} p2p;

/* One iteration of the path: the GEMM of every owner's tokens into its
 * stage (owners in turn from this rank, so links are loaded evenly), wait
 * for every rank's writes, sum the slots. Timed from before the GEMMs to the
 * end of the sum. */
static fp_status p2p_once(fp_ctx *ctx, const p2p *b, fp_gemm_type type, int m, int n, int k,
                          double *sec)
{
    fp_status st = FP_OK;
    const fp_device_ops *d = ctx->dev_ops;
    int R = ctx->nranks, rows = m / R;
    size_t es = fp_gemm_in_size(type), slot = (size_t)rows * (size_t)n;
    FP_CHECK(fp_ctx_barrier(ctx, "fused p2p")); /* every rank summed its last slots */
    FP_CHECK(fp_timed_start(ctx));
    for (int i = 0; i < R; i++) {
        int owner = (ctx->rank + i) % R;
        const char *xo = (const char *)b->x + (size_t)owner * rows * (size_t)k * es;
        FP_CHECK(d->gemm(ctx->dev, type, n, rows, k, b->w, n, xo, k,
                         b->peers[owner] + (size_t)ctx->rank * slot, n));
    }
    FP_CHECK(d->sync(ctx->dev));
    FP_CHECK(fp_ctx_barrier(ctx, "fused p2p")); /* every rank's tiles landed here */
    FP_CHECK(fp_k_sum_slots(b->recv, b->stage, R, slot, (cudaStream_t)d->native_stream(ctx->dev)));
    FP_CHECK(fp_timed_stop(ctx, sec));
cleanup:
    return st;
}

/* Wrong elements of this rank's sum: rows of tokens rank * rows.. of the
 * closed form, every rank's X having been scaled by its rank + 1. */
static fp_status p2p_check(fp_ctx *ctx, const p2p *b, int m, int n, int k, size_t *bad)
{
    fp_status st = FP_OK;
    int R = ctx->nranks, rows = m / R;
    float *host = malloc((size_t)rows * n * sizeof *host);
    FP_CHECK_ALLOC(host);
    FP_CHECK(ctx->dev_ops->copy(ctx->dev, host, b->recv, (size_t)rows * n * sizeof *host,
                                FP_COPY_D2H));
    *bad = 0;
    for (size_t r = 0; r < (size_t)rows; r++)
        for (size_t j = 0; j < (size_t)n; j++)
            *bad += (size_t)fp_elem_wrong(
                host[r * n + j],
                fp_fused_expect((size_t)ctx->rank * rows + r, j, k, R * (R + 1) / 2.0), 1e-5);
cleanup:
    free(host);
    return st;
}

fp_status fp_fused_p2p(fp_ctx *ctx, const fp_test *t, int m, int n, int k, char *why, size_t len)
{
    fp_status st = capable(ctx, m, why, len);
    if (st != FP_OK)
        return st;
    const fp_device_ops *d = ctx->dev_ops;
    const fp_sweep *sw = &FP_SUITE_CFG(fp_kernels_config, ctx)->sweep;
    int R = ctx->nranks, rows = m / R;
    fp_gemm_type type = d->gemm_supports(ctx->dev, FP_GEMM_BF16) ? FP_GEMM_BF16 : FP_GEMM_F32;
    size_t es = fp_gemm_in_size(type), bytes = (size_t)m * n * sizeof(float);
    p2p b = {0};
    cudaIpcMemHandle_t mine, *all = calloc((size_t)R, sizeof *all);
    double *h = malloc((size_t)(n > 7 * k ? n : 7 * k) * sizeof *h);
    b.peers = calloc((size_t)R, sizeof *b.peers);
    FP_CHECK_ALLOC(b.peers);
    FP_CHECK_ALLOC(all);
    FP_CHECK_ALLOC(h);
    FP_CHECK(d->alloc(ctx->dev, (size_t)n * k * es, &b.w));
    FP_CHECK(d->alloc(ctx->dev, (size_t)m * k * es, &b.x));
    FP_CHECK(d->alloc(ctx->dev, (size_t)R * rows * n * sizeof *b.stage, (void **)&b.stage));
    FP_CHECK(d->alloc(ctx->dev, (size_t)rows * n * sizeof *b.recv, (void **)&b.recv));
    FP_CHECK(d->alloc(ctx->dev, bytes, (void **)&b.c));
    /* the fused test's operands: W's columns alike, X's rows repeat every 7 */
    for (size_t j = 0; j < (size_t)n; j++)
        h[j] = fp_fused_w(j);
    FP_CHECK(fp_gemm_upload_periodic(ctx, type, h, (size_t)n, (size_t)n * k, b.w));
    for (size_t r = 0; r < 7; r++)
        for (size_t l = 0; l < (size_t)k; l++)
            h[r * (size_t)k + l] = fp_fused_x(r) * (ctx->rank + 1);
    FP_CHECK(fp_gemm_upload_periodic(ctx, type, h, 7 * (size_t)k, (size_t)m * k, b.x));
    /* every rank's staging buffer, mapped into this process */
    FP_CHECK_CUDA(cudaIpcGetMemHandle(&mine, b.stage));
    FP_CHECK(fp_world_allgather(ctx->world, &mine, all, (int)sizeof mine, "fused p2p handles"));
    for (int r = 0; r < R; r++) {
        if (r == ctx->rank)
            b.peers[r] = b.stage;
        else
            FP_CHECK_CUDA(cudaIpcOpenMemHandle((void **)&b.peers[r], all[r],
                                               cudaIpcMemLazyEnablePeerAccess));
    }
    double best = INFINITY, gbest = INFINITY;
    for (int it = 0; it < sw->warmup + sw->iters; it++) {
        double sec, gsec;
        FP_CHECK(p2p_once(ctx, &b, type, m, n, k, &sec));
        /* the plain GEMM of the same shape, for the ratio */
        FP_CHECK(fp_ctx_barrier(ctx, "fused p2p gemm"));
        FP_CHECK(fp_timed_start(ctx));
        FP_CHECK(d->gemm(ctx->dev, type, n, m, k, b.w, n, b.x, k, b.c, n));
        FP_CHECK(fp_timed_stop(ctx, &gsec));
        if (it < sw->warmup)
            continue;
        best = sec < best ? sec : best;
        gbest = gsec < gbest ? gsec : gbest;
        FP_CHECK(fp_emit(ctx, t, &time_metric, &ctx->self, bytes, it - sw->warmup,
                         sec * 1e3));
    }
    FP_CHECK(fp_emit(ctx, t, &time_metric, &ctx->self, bytes, -1, best * 1e3));
    FP_CHECK(fp_emit(ctx, t, &gemm_metric, &ctx->self, bytes, -1, gbest * 1e3));
    FP_CHECK(fp_emit(ctx, t, &ratio_metric, &ctx->self, bytes, -1, best / gbest));
    if (sw->check) {
        size_t bad = 0;
        FP_CHECK(p2p_check(ctx, &b, m, n, k, &bad));
        if (bad)
            fp_error("fused p2p: %zu wrong elements", bad);
        ctx->wrong += (long long)bad;
        FP_CHECK(fp_emit(ctx, t, &wrong_metric, &ctx->self, bytes, -1, (double)bad));
    }
cleanup:
    /* no rank may still write into a buffer freed here */
    if (st == FP_OK)
        st = fp_ctx_barrier(ctx, "fused p2p end");
    for (int r = 0; b.peers && r < R; r++)
        if (b.peers[r] && r != ctx->rank)
            cudaIpcCloseMemHandle(b.peers[r]);
    void *bufs[] = {b.w, b.x, b.stage, b.recv, b.c};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i])
            d->free(ctx->dev, bufs[i]);
    free(b.peers);
    free(all);
    free(h);
    return st;
}
