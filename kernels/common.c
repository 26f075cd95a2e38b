/* Helpers of the kernels suite: the Flux overlap figures, medians and the
 * parsing of integer-list options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/kernels.h"

double fp_flux_ect(double total, double gemm_best)
{
    return total - gemm_best;
}

double fp_flux_efficiency(double ect_overlap, double ect_seq)
{
    if (!(ect_seq > 0))
        return NAN;
    return 1.0 - ect_overlap / ect_seq;
}

fp_status fp_parse_int_list(const fp_strlist *l, const char *opt, const int *defaults, int ndef,
                            int *out, int max, int *n, char *err, size_t len)
{
    *n = 0;
    if (l->n == 0) {
        for (int i = 0; i < ndef && i < max; i++)
            out[(*n)++] = defaults[i];
        return FP_OK;
    }
    int pos = 0;
    for (int i = 0; i < l->n; i++) {
        const char *p = l->item[i];
        for (;;) {
            size_t w = strcspn(p, ",");
            char item[32];
            int v = 0;
            pos++;
            snprintf(item, sizeof item, "%.*s", (int)(w < 31 ? w : 31), p);
            if (w == 0 || w > 31 || !fp_parse_int(item, &v) || v < 1) {
                snprintf(err, len, "--%s '%s': item %d '%.*s' is not a positive integer", opt,
                         l->item[i], pos, (int)w, p);
                return FP_EUSAGE;
            }
            if (*n == max) {
                snprintf(err, len, "--%s: more than %d values", opt, max);
                return FP_EUSAGE;
            }
            out[(*n)++] = v;
            if (!p[w])
                break;
            p += w + 1;
        }
    }
    return FP_OK;
}

/* ---- typed GEMM buffers ------------------------------------------------------------ */

void fp_gemm_pack(fp_gemm_type t, const double *src, void *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fp_gemm_store((int)t, dst, i, src[i]);
}

double fp_gemm_unpack(fp_gemm_type t, const void *src, size_t i)
{
    switch (t) {
    case FP_GEMM_F64: return ((const double *)src)[i];
    case FP_GEMM_F32:
    case FP_GEMM_TF32: return ((const float *)src)[i];
    case FP_GEMM_F16: return fp_minifloat_decode(((const uint16_t *)src)[i], 5, 10);
    case FP_GEMM_BF16: return fp_minifloat_decode(((const uint16_t *)src)[i], 8, 7);
    default: return fp_minifloat_decode(((const uint8_t *)src)[i], 4, 3);
    }
}

fp_status fp_gemm_upload(fp_ctx *ctx, fp_gemm_type t, const double *src, size_t n, void *dst)
{
    fp_status st = FP_OK;
    void *stage = malloc(n * fp_gemm_in_size(t) + 1);
    FP_CHECK_ALLOC(stage);
    fp_gemm_pack(t, src, stage, n);
    FP_CHECK(ctx->dev_ops->copy(ctx->dev, dst, stage, n * fp_gemm_in_size(t), FP_COPY_H2D));
cleanup:
    free(stage);
    return st;
}

fp_status fp_gemm_upload_periodic(fp_ctx *ctx, fp_gemm_type t, const double *period, size_t p,
                                  size_t n, void *dst)
{
    fp_status st = FP_OK;
    size_t es = fp_gemm_in_size(t), have = p < n ? p : n;
    FP_CHECK(fp_gemm_upload(ctx, t, period, have, dst));
    /* [0, have) is filled and a whole number of periods: copy it after itself */
    while (have < n) {
        size_t more = have < n - have ? have : n - have;
        FP_CHECK(ctx->dev_ops->copy(ctx->dev, (char *)dst + have * es, dst, more * es,
                                    FP_COPY_D2D));
        have += more;
    }
cleanup:
    return st;
}
