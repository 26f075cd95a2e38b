/* membw: STREAM's four kernels (copy, scale, add, triad) on the device's
 * memory, bytes counted as STREAM counts them (arrays read + written), best
 * and per-iteration bandwidth, results verified in closed form. */
#include <math.h>

#include "fleetprint/kernels.h"
#include "fleetprint/log.h"

enum { NOPS = 4 };

static const fp_metric bw_metric[NOPS] = {
    {"copy_bw", "GB/s", FP_BETTER_HIGHER},
    {"scale_bw", "GB/s", FP_BETTER_HIGHER},
    {"add_bw", "GB/s", FP_BETTER_HIGHER},
    {"triad_bw", "GB/s", FP_BETTER_HIGHER},
};
static const fp_metric wrong_metric = {"wrong", "count", FP_BETTER_LOWER};

/* The STREAM scalar (3.0), chosen so the arrays stay exact in binary. */
static const double scalar = 3.0;

static fp_status membw_run(fp_ctx *ctx, const fp_test *t)
{
    fp_status st = FP_OK;
    const fp_device_ops *d = ctx->dev_ops;
    const fp_kernels_config *kc = FP_SUITE_CFG(fp_kernels_config, ctx);
    const fp_sweep *sw = &kc->sweep;
    size_t n = (size_t)(kc->array_bytes / sizeof(double));
    double *a = NULL, *b = NULL, *c = NULL;
    if (n < 1024)
        FP_FAIL(FP_EUSAGE, "membw: --array-size must be at least 8K");
    FP_CHECK(d->alloc(ctx->dev, n * sizeof(double), (void **)&a));
    FP_CHECK(d->alloc(ctx->dev, n * sizeof(double), (void **)&b));
    FP_CHECK(d->alloc(ctx->dev, n * sizeof(double), (void **)&c));
    FP_CHECK(d->fill(ctx->dev, a, n, 1.0));
    FP_CHECK(d->fill(ctx->dev, b, n, 2.0));
    FP_CHECK(d->fill(ctx->dev, c, n, 0.0));

    /* the four kernels in STREAM order: c=a; b=s*c; c=a+b; a=b+s*c */
    struct { fp_stream_op op; double *dst; const double *x, *y; } k[NOPS] = {
        {FP_STREAM_COPY, c, a, NULL},
        {FP_STREAM_SCALE, b, c, NULL},
        {FP_STREAM_ADD, c, a, b},
        {FP_STREAM_TRIAD, a, b, c},
    };
    double ea = 1.0, eb = 2.0, ec = 0.0; /* the values every element must hold */
    double best[NOPS] = {0};
    int total = sw->warmup + sw->iters;
    for (int it = 0; it < total; it++) {
        bool timed = it >= sw->warmup;
        for (int o = 0; o < NOPS; o++) {
            FP_CHECK(fp_ctx_barrier(ctx, "membw"));
            double sec;
            FP_CHECK(fp_timed_start(ctx));
            FP_CHECK(d->stream(ctx->dev, k[o].op, k[o].dst, k[o].x, k[o].y, scalar, n));
            FP_CHECK(fp_timed_stop(ctx, &sec));
            if (!timed)
                continue;
            double bytes = (double)fp_stream_arrays(k[o].op) * (double)n * sizeof(double);
            double gbs = bytes / sec * 1e-9;
            best[o] = gbs > best[o] ? gbs : best[o];
            FP_CHECK(fp_emit(ctx, t, &bw_metric[o], &ctx->self, kc->array_bytes,
                             it - sw->warmup, gbs));
        }
        ec = ea;
        eb = scalar * ec;
        ec = ea + eb;
        ea = eb + scalar * ec;
    }
    for (int o = 0; o < NOPS; o++)
        FP_CHECK(fp_emit(ctx, t, &bw_metric[o], &ctx->self, kc->array_bytes, -1, best[o]));
    if (sw->check) {
        size_t wa = 0, wb = 0, wc = 0;
        FP_CHECK(d->count_wrong(ctx->dev, a, n, ea, 1e-13, &wa));
        FP_CHECK(d->count_wrong(ctx->dev, b, n, eb, 1e-13, &wb));
        FP_CHECK(d->count_wrong(ctx->dev, c, n, ec, 1e-13, &wc));
        size_t wrong = wa + wb + wc;
        ctx->wrong += (long long)wrong;
        if (wrong)
            fp_error("membw: %zu wrong elements after %d iterations", wrong, total);
        FP_CHECK(fp_emit(ctx, t, &wrong_metric, &ctx->self, kc->array_bytes, -1,
                         (double)wrong));
    }
cleanup:
    if (a)
        d->free(ctx->dev, a);
    if (b)
        d->free(ctx->dev, b);
    if (c)
        d->free(ctx->dev, c);
    return st;
}

const fp_test fp_test_membw = {
    .suite = "kernels",
    .name = "membw",
    .summary = "memory bandwidth: STREAM copy, scale, add, triad",
    .run = membw_run,
};
