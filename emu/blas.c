/* fpemu: cuBLAS (cublasGemmEx) and cuBLASLt (cublasLtMatmul) on the host: the
 * GEMM runs as an emulated kernel in stream order, reading its inputs in
 * f64/f32/f16/bf16/fp8-e4m3 and accumulating in double. Small and exact,
 * not fast: tests use small shapes. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "fpemu.h"

struct cublasContext {
    cudaStream_t stream;
};
struct cublasLtContext {
    int unused;
};

typedef struct lt_desc {
    cublasOperation_t ta, tb;
} lt_desc;
typedef struct lt_layout {
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
} lt_layout;
_Static_assert(sizeof(lt_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "desc");
_Static_assert(sizeof(lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout");

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static double e4m3_to_double(uint8_t b)
{
    int e = (b >> 3) & 15, m = b & 7;
    double v = (b & 0x7f) == 0x7f ? NAN : e == 0 ? ldexp(m, -9) : ldexp(m + 8, e - 10);
    return b & 0x80 ? -v : v;
}

static double load(const void *p, cudaDataType_t t, size_t i)
{
    switch (t) {
    case CUDA_R_64F: return ((const double *)p)[i];
    case CUDA_R_32F: return ((const float *)p)[i];
    case CUDA_R_16F: return half_to_double(((const uint16_t *)p)[i]);
    case CUDA_R_16BF: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    case CUDA_R_8F_E4M3: return e4m3_to_double(((const uint8_t *)p)[i]);
    default: return NAN;
    }
}

/* C (m x n, column-major) = alpha op(A) op(B) + beta C */
struct gemm {
    int ta, tb, m, n, k;
    const void *a, *b;
    void *c;
    cudaDataType_t at, bt, ct;
    long lda, ldb, ldc;
    double alpha, beta;
};

static void gemm_body(void *p)
{
    const struct gemm *g = p;
    for (int j = 0; j < g->n; j++)
        for (int i = 0; i < g->m; i++) {
            double acc = 0;
            for (int l = 0; l < g->k; l++) {
                size_t ia = g->ta ? (size_t)i * g->lda + l : (size_t)l * g->lda + i;
                size_t ib = g->tb ? (size_t)l * g->ldb + j : (size_t)j * g->ldb + l;
                acc += load(g->a, g->at, ia) * load(g->b, g->bt, ib);
            }
            size_t ic = (size_t)j * g->ldc + i;
            double old = g->beta != 0 ? load(g->c, g->ct, ic) * g->beta : 0;
            if (g->ct == CUDA_R_64F)
                ((double *)g->c)[ic] = g->alpha * acc + old;
            else
                ((float *)g->c)[ic] = (float)(g->alpha * acc + old);
        }
}

static bool known(cudaDataType_t t)
{
    return t == CUDA_R_64F || t == CUDA_R_32F || t == CUDA_R_16F || t == CUDA_R_16BF ||
           t == CUDA_R_8F_E4M3;
}

static cublasStatus_t run(cudaStream_t s, struct gemm *g)
{
    if (g->m < 0 || g->n < 0 || g->k < 0 || !known(g->at) || !known(g->bt) ||
        (g->ct != CUDA_R_32F && g->ct != CUDA_R_64F))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (g->ldc < g->m || g->lda < (g->ta ? g->k : g->m) || g->ldb < (g->tb ? g->n : g->k))
        return CUBLAS_STATUS_INVALID_VALUE;
    /* every operand must be device memory of the right extent */
    size_t ea = (size_t)g->lda * (size_t)(g->ta ? g->m : g->k);
    size_t eb = (size_t)g->ldb * (size_t)(g->tb ? g->k : g->n);
    size_t ec = (size_t)g->ldc * (size_t)g->n;
    size_t sz[] = {[CUDA_R_64F] = 8, [CUDA_R_32F] = 4, [CUDA_R_16F] = 2, [CUDA_R_16BF] = 2,
                   [CUDA_R_8F_E4M3] = 1};
    if ((ea && !emu_device_range(g->a, ea * sz[g->at], NULL)) ||
        (eb && !emu_device_range(g->b, eb * sz[g->bt], NULL)) ||
        (ec && !emu_device_range(g->c, ec * sz[g->ct], NULL)))
        return CUBLAS_STATUS_INVALID_VALUE;
    return fpemu_launch_named(s, gemm_body, g, sizeof *g, "emulated GEMM") == cudaSuccess
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}

/* ---- cuBLAS -------------------------------------------------------------------------------- */

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *h = calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

/* The version of the headers it was built with: the cuBLAS it stands in for. */
cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *version)
{
    if (!h || !version)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void *alpha, const void *a, cudaDataType at,
                            int lda, const void *b, cudaDataType bt, int ldb, const void *beta,
                            void *c, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo)
{
    bool f64 = compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC;
    struct gemm g = {ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, a, b, c, at, bt, ct, lda, ldb, ldc,
                     f64 ? *(const double *)alpha : *(const float *)alpha,
                     f64 ? *(const double *)beta : *(const float *)beta};
    if (f64 != (ct == CUDA_R_64F))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return run(h->stream, &g);
}

/* ---- cuBLASLt ------------------------------------------------------------------------------ */

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    *h = calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size)
{
    lt_desc *x = (lt_desc *)d;
    if (size != sizeof(cublasOperation_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (attr == CUBLASLT_MATMUL_DESC_TRANSA)
        memcpy(&x->ta, buf, size);
    else if (attr == CUBLASLT_MATMUL_DESC_TRANSB)
        memcpy(&x->tb, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
    *l = calloc(1, sizeof **l);
    if (!*l)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *(lt_layout *)*l = (lt_layout){type, rows, cols, ld};
    return ld < (int64_t)rows ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    *p = calloc(1, sizeof **p);
    return *p ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t size)
{
    return CUBLAS_STATUS_SUCCESS;
}

/* fp8 takes only the "TN" layout on Hopper; the emulator keeps that rule. */
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                              cublasLtMatmulPreference_t p, int want,
                                              cublasLtMatmulHeuristicResult_t *res, int *found)
{
    const lt_desc *x = (const lt_desc *)d;
    const lt_layout *la = (const lt_layout *)a;
    memset(res, 0, sizeof *res * (size_t)(want > 0 ? want : 0));
    bool fp8 = la->type == CUDA_R_8F_E4M3;
    *found = want > 0 && (!fp8 || (x->ta == CUBLAS_OP_T && x->tb == CUBLAS_OP_N));
    return *found ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                              const void *a, cublasLtMatrixLayout_t la, const void *b,
                              cublasLtMatrixLayout_t lb, const void *beta, const void *c,
                              cublasLtMatrixLayout_t lc, void *out, cublasLtMatrixLayout_t lo,
                              const cublasLtMatmulAlgo_t *algo, void *work, size_t work_size,
                              cudaStream_t s)
{
    const lt_desc *x = (const lt_desc *)d;
    const lt_layout *A = (const lt_layout *)la, *B = (const lt_layout *)lb, *C = (const lt_layout *)lo;
    bool ta = x->ta != CUBLAS_OP_N, tb = x->tb != CUBLAS_OP_N;
    int m = (int)C->rows, n = (int)C->cols, k = (int)(ta ? A->rows : A->cols);
    if ((ta ? A->cols : A->rows) != (uint64_t)m || (tb ? B->cols : B->rows) != (uint64_t)k ||
        (tb ? B->rows : B->cols) != (uint64_t)n || c != out)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct gemm g = {ta, tb, m, n, k, a, b, out, A->type, B->type, C->type, (long)A->ld, (long)B->ld,
                     (long)C->ld, *(const float *)alpha, *(const float *)beta};
    return run(s, &g);
}
