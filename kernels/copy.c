/* copy: copy bandwidth over the size sweep (-b .. -e, -f). cuda: H2D and
 * D2H from pinned and pageable host memory, and D2D; host backend: memcpy.
 * Every destination is checked against the source pattern afterwards. */
#include <stdlib.h>
#include <string.h>

#include "fleetprint/kernels.h"
#include "fleetprint/log.h"

typedef struct route {
    fp_metric metric;
    fp_copy_kind kind;
    int host_side;   /* 0 none (D2D), 1 pinned, 2 pageable */
} route;

static const route dev_routes[] = {
    {{"h2d_pinned_bw", "GB/s", FP_BETTER_HIGHER}, FP_COPY_H2D, 1},
    {{"h2d_pageable_bw", "GB/s", FP_BETTER_HIGHER}, FP_COPY_H2D, 2},
    {{"d2h_pinned_bw", "GB/s", FP_BETTER_HIGHER}, FP_COPY_D2H, 1},
    {{"d2h_pageable_bw", "GB/s", FP_BETTER_HIGHER}, FP_COPY_D2H, 2},
    {{"d2d_bw", "GB/s", FP_BETTER_HIGHER}, FP_COPY_D2D, 0},
};
static const route host_routes[] = {
    {{"memcpy_bw", "GB/s", FP_BETTER_HIGHER}, FP_COPY_D2D, 0},
};
static const fp_metric wrong_metric = {"wrong", "count", FP_BETTER_LOWER};

static fp_status copy_run(fp_ctx *ctx, const fp_test *t)
{
    fp_status st = FP_OK;
    const fp_device_ops *d = ctx->dev_ops;
    const fp_sweep *sw = &FP_SUITE_CFG(fp_kernels_config, ctx)->sweep;
    bool has_host = d->host_alloc != NULL;
    const route *routes = has_host ? dev_routes : host_routes;
    int nroutes = has_host ? 5 : 1;
    size_t maxb = (size_t)sw->max_bytes & ~(size_t)7, wrong = 0;
    void *src = NULL, *dst = NULL, *pinned = NULL, *pageable = NULL, *check = NULL;
    if (maxb < 8 || sw->min_bytes > sw->max_bytes || sw->step_factor <= 1)
        FP_FAIL(FP_EUSAGE, "copy: need 8 <= --min-bytes <= --max-bytes and --step-factor > 1");
    size_t n = maxb / 8;
    check = malloc(maxb);
    FP_CHECK_ALLOC(check);
    for (size_t i = 0; i < n; i++)
        ((double *)check)[i] = fp_pattern_elem(77, i);
    FP_CHECK(d->alloc(ctx->dev, maxb, &src));
    FP_CHECK(d->alloc(ctx->dev, maxb, &dst));
    FP_CHECK(d->copy(ctx->dev, src, check, maxb, FP_COPY_H2D));
    FP_CHECK(d->fill(ctx->dev, dst, n, 0.0));
    if (has_host) {
        FP_CHECK(d->host_alloc(ctx->dev, maxb, true, &pinned));
        FP_CHECK(d->host_alloc(ctx->dev, maxb, false, &pageable));
        memcpy(pinned, check, maxb);
        memcpy(pageable, check, maxb);
    }
    for (int r = 0; r < nroutes; r++) {
        const route *ro = &routes[r];
        void *host = ro->host_side == 1 ? pinned : pageable;
        void *to = ro->kind == FP_COPY_D2H ? host : dst;
        const void *from = ro->kind == FP_COPY_H2D ? host : src;
        if (ro->kind == FP_COPY_D2H) /* the check must not find the pattern there already */
            memset(host, 0, maxb);
        for (double b = (double)(sw->min_bytes < 8 ? 8 : sw->min_bytes); b <= (double)maxb;
             b *= sw->step_factor) {
            size_t bytes = (size_t)b & ~(size_t)7;
            double best = 0;
            for (int it = 0; it < sw->warmup + sw->iters; it++) {
                double sec;
                FP_CHECK(fp_ctx_barrier(ctx, "copy"));
                FP_CHECK(fp_timed_start(ctx));
                FP_CHECK(d->copy(ctx->dev, to, from, bytes, ro->kind));
                FP_CHECK(fp_timed_stop(ctx, &sec));
                if (it < sw->warmup)
                    continue;
                double gbs = (double)bytes / sec * 1e-9;
                best = gbs > best ? gbs : best;
                FP_CHECK(fp_emit(ctx, t, &ro->metric, &ctx->self, bytes, it - sw->warmup, gbs));
            }
            FP_CHECK(fp_emit(ctx, t, &ro->metric, &ctx->self, bytes, -1, best));
        }
        if (!sw->check)
            continue;
        /* the largest copy left the whole pattern at its destination */
        size_t bytes = (size_t)((double)(sw->min_bytes < 8 ? 8 : sw->min_bytes));
        while ((double)bytes * sw->step_factor <= (double)maxb)
            bytes = (size_t)((double)bytes * sw->step_factor);
        bytes &= ~(size_t)7;
        void *back = malloc(bytes);
        FP_CHECK_ALLOC(back);
        if (ro->kind == FP_COPY_D2H)
            memcpy(back, host, bytes);
        else
            st = d->copy(ctx->dev, back, dst, bytes, FP_COPY_D2H);
        for (size_t i = 0; st == FP_OK && i < bytes / 8; i++)
            wrong += ((double *)back)[i] != ((double *)check)[i];
        free(back);
        FP_CHECK(st);
        if (ro->kind != FP_COPY_D2H)
            FP_CHECK(d->fill(ctx->dev, dst, n, 0.0));
    }
    if (sw->check) {
        if (wrong)
            fp_error("copy: %zu wrong elements", wrong);
        ctx->wrong += (long long)wrong;
        FP_CHECK(fp_emit(ctx, t, &wrong_metric, &ctx->self, maxb, -1, (double)wrong));
    }
cleanup:
    if (src)
        d->free(ctx->dev, src);
    if (dst)
        d->free(ctx->dev, dst);
    if (pinned)
        d->host_free(ctx->dev, pinned, true);
    if (pageable)
        d->host_free(ctx->dev, pageable, false);
    free(check);
    return st;
}

const fp_test fp_test_copy = {
    .suite = "kernels",
    .name = "copy",
    .summary = "copy bandwidth: H2D, D2H (pinned, pageable), D2D; memcpy on host",
    .run = copy_run,
};
