#ifndef FLEETPRINT_KERNELS_H
#define FLEETPRINT_KERNELS_H
/* The kernels suite (gemm, launch, copy, p2p, fused): the per-element logic
 * its host code and CUDA kernels share through FP_HD (input patterns, number
 * formats, result bounds, the fused epilogue's tile routing), and the plain C
 * helpers of the overlap figures. Everything above the C-only section is
 * usable from .cu files. */
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/hd.h"

/* ---- GEMM inputs and result bounds --------------------------------------------- */

/* Unit roundoff of the arithmetic a GEMM type accumulates in (fp32 for every
 * type but f64) and of its input format; type is an fp_gemm_type value. */
static inline FP_HD double fp_gemm_acc_unit(int type)
{
    return type == 0 ? 0x1p-53 : 0x1p-24;
}
static inline FP_HD double fp_gemm_in_unit(int type)
{
    switch (type) {
    case 0: return 0x1p-53;  /* f64 */
    case 1: return 0x1p-24;  /* f32 */
    case 2: return 0x1p-11;  /* tf32: 10 stored mantissa bits */
    case 3: return 0x1p-11;  /* f16 */
    case 4: return 0x1p-8;   /* bf16 */
    default: return 0x1p-4;  /* fp8 e4m3 */
    }
}

/* A GEMM result element c is wrong when it is not finite or differs from the
 * exact reference ref by more than the classic dot-product bound
 *   (2 u_in + k u_acc) * sum_l |a_il| |b_lj|      (sumabs is that sum),
 * u_in covering the rounding of the inputs, k u_acc the accumulation. */
static inline FP_HD int fp_gemm_elem_wrong(double c, double ref, double sumabs, int k, int type)
{
    double tol = (2.0 * fp_gemm_in_unit(type) + (double)k * fp_gemm_acc_unit(type)) * sumabs;
    double d = c - ref;
    return !(d <= tol && -d <= tol);
}

/* ---- fused GEMM + collective: patterns and tile routing ------------------------- */
/* The fused test computes, per chunk of mc tokens, the row-major product
 * C (tokens x n) = X (tokens x k) . W^T with W[j][l] = fp_fused_w(j) and
 * X[t][l] = fp_fused_x(t) * scale: every element has a closed form, so a
 * chunk that lands in the wrong place is caught. */

static inline FP_HD double fp_fused_w(uint64_t j)
{
    return (double)(j % 5 + 1);
}

static inline FP_HD double fp_fused_x(uint64_t t)
{
    return (double)((int)(t % 7) - 3);
}

/* Element (t, j) of C when X was scaled by scale (exact for |C| < 2^24). */
static inline FP_HD double fp_fused_expect(uint64_t t, uint64_t j, int k, double scale)
{
    return (double)k * fp_fused_w(j) * fp_fused_x(t) * scale;
}

/* Where the GEMM + reduce-scatter epilogue sends output element (t, j) of an
 * m x n row-major C split into chunks of mc tokens, reduce-scattered chunk by
 * chunk over nranks ranks (mc a multiple of nranks): rank *owner, at *offset
 * of its receive buffer, which holds its mc / nranks rows of every chunk in
 * chunk order -- the layout the chunked reduce-scatter produces. */
static inline FP_HD void fp_rs_route(uint64_t t, uint64_t j, uint64_t n, uint64_t mc, int nranks,
                                     int *owner, uint64_t *offset)
{
    uint64_t rows = mc / (uint64_t)nranks;
    uint64_t chunk = t / mc, tc = t % mc;
    *owner = (int)(tc / rows);
    *offset = (chunk * rows + tc % rows) * n + j;
}

/* The all-gather + GEMM pattern: rank r holds tokens r * m / nranks ... of
 * an m-token X; gathered chunk by chunk (chunks of mc tokens, each rank
 * contributing its next mc / nranks), position t of the gathered X holds
 * the token this returns. */
static inline FP_HD uint64_t fp_ag_source(uint64_t t, uint64_t mc, int nranks, uint64_t m)
{
    uint64_t rows = mc / (uint64_t)nranks;
    uint64_t chunk = t / mc, tc = t % mc;
    uint64_t owner = tc / rows;
    return owner * (m / (uint64_t)nranks) + chunk * rows + tc % rows;
}

/* ---- C API (not for .cu files) --------------------------------------------------- */
#ifndef __CUDACC__
#include <stdbool.h>

#include "fleetprint/suite.h"
#include "fleetprint/stats.h"

/* ---- the suite's settings ------------------------------------------------------- */

/* The kernels suite's config: the runtime's settings first (fp_ctx_open reads
 * them), the sweep, then the tests' own. A kernels test reads it as
 * FP_SUITE_CFG(fp_kernels_config, ctx). */
typedef struct fp_kernels_config {
    fp_config base;
    fp_sweep sweep;
    uint64_t array_bytes;       /* membw: bytes per array */
    int gemm_size;              /* gemm: timed problem n = m = k; 0 = per device */
    fp_strlist fused_m;         /* fused: token counts m */
    const char *fused_nk;       /* fused: "N,K" per rank, or auto */
    fp_strlist chunks;          /* fused: chunk counts */
} fp_kernels_config;

/* Option rows of the suite's own settings; type is the command's config
 * struct, member names the fp_kernels_config in it (FP_OPTS_GEMM: any struct
 * with a gemm_size, burn-in's too). */
#define FP_OPTS_ARRAY_SIZE(type, member)                                                   \
    {"array-size", 0, FP_OPT_BYTES, offsetof(type, member.array_bytes), "64M",             \
     "membw: bytes per array"}
#define FP_OPTS_GEMM(type, member)                                                         \
    {"gemm-size", 0, FP_OPT_INT, offsetof(type, member.gemm_size), "0",                    \
     "gemm: timed problem size n=m=k (0: 1024 on host, 8192 on cuda)"}
#define FP_OPTS_FUSED(type, member)                                                        \
    {"fused-m", 0, FP_OPT_LIST, offsetof(type, member.fused_m), NULL,                      \
     "fused: token counts m, e.g. 1024,4096 (default 256,1024 host; 1024,4096,8192 cuda)"}, \
        {"fused-nk", 0, FP_OPT_STRING, offsetof(type, member.fused_nk), "auto",            \
         "fused: per-rank GEMM n,k (auto: 512,512 host; Flux's GPT-3 shapes cuda)"},        \
        {"chunks", 0, FP_OPT_LIST, offsetof(type, member.chunks), NULL,                    \
         "fused: chunk counts, e.g. 1,2,4,8 (the default)"}

/* Flux (arXiv 2406.06858): exposed communication time of a region that took
 * total seconds, against the best non-split GEMM time. */
double fp_flux_ect(double total, double gemm_best);

/* Overlap efficiency E = 1 - ECT_overlap / ECT_sequential; negative when
 * overlapping made things worse. NAN when ect_seq <= 0 (no communication
 * exposed even without overlap: E is undefined). */
double fp_flux_efficiency(double ect_overlap, double ect_seq);

/* Store n doubles as GEMM input elements of type t (f16, bf16, fp8 rounded
 * to nearest even), and read element i back as a double. */
void fp_gemm_pack(fp_gemm_type t, const double *src, void *dst, size_t n);
double fp_gemm_unpack(fp_gemm_type t, const void *src, size_t i);

/* Pack n doubles as type t and copy them to device memory dst (a host
 * staging buffer is allocated and freed here). */
fp_status fp_gemm_upload(fp_ctx *ctx, fp_gemm_type t, const double *src, size_t n, void *dst);

/* Fill n elements of type t at device memory dst with the p values of
 * period repeated (dst[i] = period[i % p]): p are packed and uploaded, then
 * doubled on the device by copies, so a large operand with a short period
 * costs no host memory or host time. */
fp_status fp_gemm_upload_periodic(fp_ctx *ctx, fp_gemm_type t, const double *period, size_t p,
                                  size_t n, void *dst);

/* Parse a list of positive integers given as repeated options and/or
 * comma-separated ("1,2,4") into out (at most max). On bad text returns
 * FP_EUSAGE with err naming the option, the item and its position. Empty
 * list: out gets defaults (ndef of them). */
fp_status fp_parse_int_list(const fp_strlist *l, const char *opt, const int *defaults, int ndef,
                            int *out, int max, int *n, char *err, size_t len);

/* Fused GEMM + reduce-scatter where the GEMM writes its output tiles
 * straight into the peers' buffers (CUDA IPC peer pointers): per owner rank
 * one cuBLAS GEMM of the owner's tokens with its C in the owner's staging
 * slot for this rank, then each rank sums its slots (fp_k_sum_slots). Runs
 * warm-up and timed iterations of an m x n x k problem (bf16 where the
 * device has it, else fp32; fp32 results) on every rank, beside the plain
 * cuBLAS GEMM of the same shape, verifies the result and emits
 * rs_p2p_fused_time, rs_p2p_gemm_time, their ratio and wrong samples. Needs every rank on one
 * node with peer access between all its devices: otherwise returns
 * FP_EUNSUPPORTED on every rank with the reason in why, having done nothing. */
fp_status fp_fused_p2p(fp_ctx *ctx, const fp_test *t, int m, int n, int k, char *why,
                       size_t len);
#endif

#endif
