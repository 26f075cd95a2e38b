/* gemm: matrix-multiply throughput per device and precision (host: CBLAS
 * f64 and f32; cuda: cuBLAS f64, f32, tf32, f16, bf16 and cuBLASLt fp8),
 * timed on random-valued operands made on the device (as workloads see:
 * small integers draw less power and read ~10% fast on GPUs), and each
 * precision verified every run on a small non-square problem of exact
 * small-integer inputs against an exact host reference, with the per-type
 * bound of fp_gemm_elem_wrong.
 * An injected bitflip (--inject bitflip:rank=R) corrupts one element of R's
 * verified result, which the check must catch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/kernels.h"
#include "fleetprint/log.h"

static const fp_metric flops_metric[FP_GEMM_TYPE_COUNT] = {
    {"f64_flops", "GFLOP/s", FP_BETTER_HIGHER},  {"f32_flops", "GFLOP/s", FP_BETTER_HIGHER},
    {"tf32_flops", "GFLOP/s", FP_BETTER_HIGHER}, {"f16_flops", "GFLOP/s", FP_BETTER_HIGHER},
    {"bf16_flops", "GFLOP/s", FP_BETTER_HIGHER}, {"fp8_flops", "GFLOP/s", FP_BETTER_HIGHER},
};
static const fp_metric wrong_metric[FP_GEMM_TYPE_COUNT] = {
    {"f64_wrong", "count", FP_BETTER_LOWER},  {"f32_wrong", "count", FP_BETTER_LOWER},
    {"tf32_wrong", "count", FP_BETTER_LOWER}, {"f16_wrong", "count", FP_BETTER_LOWER},
    {"bf16_wrong", "count", FP_BETTER_LOWER}, {"fp8_wrong", "count", FP_BETTER_LOWER},
};

/* The verification problem: small, non-square, so a transposed operand or a
 * wrong leading dimension shows. */
enum { VM = 96, VN = 80, VK = 128 };

/* Flip the top exponent bit of element i of a device result: whatever the
 * value, it becomes wildly wrong (0 -> 2, |x| >= 2 -> tiny, else huge). */
static fp_status flip_result(fp_ctx *ctx, fp_gemm_type t, void *c, size_t i)
{
    fp_status st = FP_OK;
    size_t es = fp_gemm_out_size(t);
    unsigned char v[8];
    char *p = (char *)c + i * es;
    FP_CHECK(ctx->dev_ops->copy(ctx->dev, v, p, es, FP_COPY_D2H));
    v[es - 1] ^= 0x40; /* little-endian: bit 62 of a double, bit 30 of a float */
    FP_CHECK(ctx->dev_ops->copy(ctx->dev, p, v, es, FP_COPY_H2D));
    fp_warn("gemm %s: injected bitflip in result element %zu", fp_gemm_type_name(t), i);
cleanup:
    return st;
}

/* Run the verification problem for type t; adds the wrong elements to *wrong. */
static fp_status verify(fp_ctx *ctx, fp_gemm_type t, size_t *wrong)
{
    fp_status st = FP_OK;
    const fp_device_ops *d = ctx->dev_ops;
    size_t na = (size_t)VM * VK, nb = (size_t)VK * VN, nc = (size_t)VM * VN;
    double *ha = malloc(na * sizeof *ha), *hb = malloc(nb * sizeof *hb);
    void *hc = malloc(nc * fp_gemm_out_size(t)), *ta = malloc(na * 8), *tb = malloc(nb * 8);
    void *da = NULL, *db = NULL, *dc = NULL;
    FP_CHECK_ALLOC(ha);
    FP_CHECK_ALLOC(hb);
    FP_CHECK_ALLOC(hc);
    FP_CHECK_ALLOC(ta);
    FP_CHECK_ALLOC(tb);
    /* A (m x k) column-major; for fp8 the device takes it transposed */
    for (size_t i = 0; i < na; i++) {
        size_t row = i % VM, col = i / VM;
        ha[t == FP_GEMM_FP8 ? row * VK + col : i] = fp_gemm_input(11, i);
    }
    for (size_t i = 0; i < nb; i++)
        hb[i] = fp_gemm_input(23, i);
    FP_CHECK(d->alloc(ctx->dev, na * fp_gemm_in_size(t), &da));
    FP_CHECK(d->alloc(ctx->dev, nb * fp_gemm_in_size(t), &db));
    FP_CHECK(d->alloc(ctx->dev, nc * fp_gemm_out_size(t), &dc));
    FP_CHECK(fp_gemm_upload(ctx, t, ha, na, da));
    FP_CHECK(fp_gemm_upload(ctx, t, hb, nb, db));
    FP_CHECK(d->gemm(ctx->dev, t, VM, VN, VK, da, t == FP_GEMM_FP8 ? VK : VM, db, VK, dc, VM));
    FP_CHECK(d->sync(ctx->dev));
    if (fp_inject_bitflip(ctx->inject, ctx->rank, fp_world_now(ctx->world)))
        FP_CHECK(flip_result(ctx, t, dc, nc / 2 + VM / 3));
    FP_CHECK(d->copy(ctx->dev, hc, dc, nc * fp_gemm_out_size(t), FP_COPY_D2H));
    /* the reference multiplies the values the device was given, exactly */
    fp_gemm_pack(t, ha, ta, na);
    fp_gemm_pack(t, hb, tb, nb);
    size_t bad = 0;
    for (int j = 0; j < VN; j++)
        for (int i = 0; i < VM; i++) {
            double ref = 0, sumabs = 0;
            for (int l = 0; l < VK; l++) {
                size_t ai = t == FP_GEMM_FP8 ? (size_t)i * VK + (size_t)l : (size_t)l * VM + (size_t)i;
                double a = fp_gemm_unpack(t, ta, ai);
                double b = fp_gemm_unpack(t, tb, (size_t)j * VK + (size_t)l);
                ref += a * b;
                sumabs += fabs(a * b);
            }
            size_t at = (size_t)j * VM + (size_t)i;
            double c = t == FP_GEMM_F64 ? ((double *)hc)[at] : ((float *)hc)[at];
            bad += (size_t)fp_gemm_elem_wrong(c, ref, sumabs, VK, (int)t);
        }
    if (bad)
        fp_error("gemm %s: %zu of %zu result elements wrong (%dx%dx%d check)",
                 fp_gemm_type_name(t), bad, nc, VM, VN, VK);
    *wrong += bad;
cleanup:
    if (da)
        d->free(ctx->dev, da);
    if (db)
        d->free(ctx->dev, db);
    if (dc)
        d->free(ctx->dev, dc);
    free(ha);
    free(hb);
    free(hc);
    free(ta);
    free(tb);
    return st;
}

/* Time an n x n x n GEMM of type t on random operands in [-1, 1): warm-up,
 * a barrier before each timed call, per-iteration and best GFLOP/s. */
static fp_status timed(fp_ctx *ctx, const fp_test *test, fp_gemm_type t, int n)
{
    fp_status st = FP_OK;
    const fp_device_ops *d = ctx->dev_ops;
    size_t nn = (size_t)n * (size_t)n;
    void *da = NULL, *db = NULL, *dc = NULL;
    FP_CHECK(d->alloc(ctx->dev, nn * fp_gemm_in_size(t), &da));
    FP_CHECK(d->alloc(ctx->dev, nn * fp_gemm_in_size(t), &db));
    FP_CHECK(d->alloc(ctx->dev, nn * fp_gemm_out_size(t), &dc));
    FP_CHECK(d->fill_gemm(ctx->dev, t, da, nn, 5, false));
    FP_CHECK(d->fill_gemm(ctx->dev, t, db, nn, 6, false));
    double flop = 2.0 * (double)n * (double)n * (double)n, best = 0;
    const fp_sweep *sw = &FP_SUITE_CFG(fp_kernels_config, ctx)->sweep;
    int total = sw->warmup + sw->iters;
    for (int it = 0; it < total; it++) {
        double sec;
        FP_CHECK(fp_ctx_barrier(ctx, "gemm"));
        FP_CHECK(fp_timed_start(ctx));
        FP_CHECK(d->gemm(ctx->dev, t, n, n, n, da, n, db, n, dc, n));
        FP_CHECK(fp_timed_stop(ctx, &sec));
        if (it < sw->warmup)
            continue;
        double g = flop / sec * 1e-9;
        best = g > best ? g : best;
        FP_CHECK(fp_emit(ctx, test, &flops_metric[t], &ctx->self, nn * fp_gemm_in_size(t),
                         it - sw->warmup, g));
    }
    FP_CHECK(fp_emit(ctx, test, &flops_metric[t], &ctx->self, nn * fp_gemm_in_size(t), -1, best));
cleanup:
    if (da)
        d->free(ctx->dev, da);
    if (db)
        d->free(ctx->dev, db);
    if (dc)
        d->free(ctx->dev, dc);
    return st;
}

static fp_status gemm_run(fp_ctx *ctx, const fp_test *t)
{
    fp_status st = FP_OK;
    const fp_device_ops *d = ctx->dev_ops;
    const fp_kernels_config *kc = FP_SUITE_CFG(fp_kernels_config, ctx);
    int n = kc->gemm_size;
    if (n < 0 || n > 65536)
        FP_FAIL(FP_EUSAGE, "gemm: --gemm-size %d out of range (1..65536, 0 = auto)", n);
    if (n == 0)
        n = d == &fp_device_host ? 1024 : 8192;
    /* every rank runs the types all ranks support, so the barriers line up */
    int mine = 0, *all = calloc((size_t)ctx->nranks, sizeof *all);
    FP_CHECK_ALLOC(all);
    for (int ti = 0; ti < FP_GEMM_TYPE_COUNT; ti++)
        mine |= d->gemm_supports(ctx->dev, (fp_gemm_type)ti) ? 1 << ti : 0;
    st = fp_world_allgather(ctx->world, &mine, all, (int)sizeof mine, "gemm types");
    for (int r = 0; r < ctx->nranks; r++)
        mine &= all[r];
    free(all);
    FP_CHECK(st);
    for (int ti = 0; ti < FP_GEMM_TYPE_COUNT; ti++) {
        fp_gemm_type type = (fp_gemm_type)ti;
        if (!(mine & 1 << ti))
            continue;
        FP_CHECK(timed(ctx, t, type, n));
        if (kc->sweep.check) {
            size_t wrong = 0;
            FP_CHECK(verify(ctx, type, &wrong));
            ctx->wrong += (long long)wrong;
            FP_CHECK(fp_emit(ctx, t, &wrong_metric[type], &ctx->self,
                             (size_t)VM * VN * fp_gemm_out_size(type), -1, (double)wrong));
        }
    }
cleanup:
    return st;
}

const fp_test fp_test_gemm = {
    .suite = "kernels",
    .name = "gemm",
    .summary = "GEMM throughput per precision, verified against an exact reference",
    .run = gemm_run,
};
