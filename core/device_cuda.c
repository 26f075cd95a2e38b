/* The cuda device backend: control code in plain C over the CUDA runtime's C
 * API (streams, events, memory, device properties); the kernels are behind
 * the launchers of cuda_kernels.h. Every call is checked. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/cuda_kernels.h"
#include "fleetprint/device.h"
#include "fleetprint/log.h"

struct fp_device {
    int index;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    unsigned long long *count; /* device counter for count_wrong */
    void *scratch;             /* device fp_mem_check / fp_digest of the checks */
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    void *lt_work;             /* cuBLASLt workspace */
    int cc_major, cc_minor;    /* compute capability */
    cudaGraphExec_t graph;     /* launch: count empty kernels */
    int graph_count;
};

enum { LT_WORKSPACE = 32 << 20 };

#define FP_CHECK_CUBLAS(expr)                                                              \
    do {                                                                                   \
        cublasStatus_t fp__b = (expr);                                                     \
        if (fp__b != CUBLAS_STATUS_SUCCESS) {                                              \
            st = fp__fail(FP_ECUDA, #expr, __FILE__, __LINE__, "cuBLAS status %d", (int)fp__b); \
            goto cleanup;                                                                  \
        }                                                                                  \
    } while (0)

static fp_status cuda_probe(int *count, char *why, size_t len)
{
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        snprintf(why, len, "no CUDA device visible (%s)", cudaGetErrorString(e));
        *count = 0;
        return FP_ENODEV;
    }
    if (*count == 0)
        snprintf(why, len, "no CUDA device visible");
    return *count > 0 ? FP_OK : FP_ENODEV;
}

static void cuda_close(fp_device *d)
{
    if (!d)
        return;
    if (d->graph)
        cudaGraphExecDestroy(d->graph);
    if (d->lt_work)
        cudaFree(d->lt_work);
    if (d->lt)
        cublasLtDestroy(d->lt);
    if (d->blas)
        cublasDestroy(d->blas);
    if (d->count)
        cudaFree(d->count);
    if (d->scratch)
        cudaFree(d->scratch);
    if (d->start)
        cudaEventDestroy(d->start);
    if (d->stop)
        cudaEventDestroy(d->stop);
    if (d->stream)
        cudaStreamDestroy(d->stream);
    free(d);
}

static fp_status cuda_open(fp_device **out, int index, int threads)
{
    fp_status st = FP_OK;
    fp_device *d = calloc(1, sizeof *d);
    FP_CHECK_ALLOC(d);
    d->index = index;
    FP_CHECK_CUDA(cudaSetDevice(index));
    FP_CHECK_CUDA(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    FP_CHECK_CUDA(cudaEventCreate(&d->start));
    FP_CHECK_CUDA(cudaEventCreate(&d->stop));
    FP_CHECK_CUDA(cudaMalloc((void **)&d->count, sizeof *d->count));
    FP_CHECK_CUDA(cudaMalloc(&d->scratch, sizeof(fp_digest) > sizeof(fp_mem_check)
                                              ? sizeof(fp_digest)
                                              : sizeof(fp_mem_check)));
    FP_CHECK_CUDA(cudaDeviceGetAttribute(&d->cc_major, cudaDevAttrComputeCapabilityMajor, index));
    FP_CHECK_CUDA(cudaDeviceGetAttribute(&d->cc_minor, cudaDevAttrComputeCapabilityMinor, index));
    FP_CHECK_CUBLAS(cublasCreate(&d->blas));
    FP_CHECK_CUBLAS(cublasSetStream(d->blas, d->stream));
    FP_CHECK_CUBLAS(cublasLtCreate(&d->lt));
    FP_CHECK_CUDA(cudaMalloc(&d->lt_work, LT_WORKSPACE));
cleanup:
    if (st != FP_OK) {
        cuda_close(d);
        d = NULL;
    }
    *out = d;
    return st;
}

/* The driver's version as NVML reports it ("580.159.04"); false where NVML
 * cannot be loaded. */
static bool nvml_driver_version(char *out, size_t len)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return false;
    int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
    int (*shutdown)(void) = (int (*)(void))dlsym(h, "nvmlShutdown");
    int (*version)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion");
    bool ok = init && shutdown && version && init() == 0;
    if (ok) {
        ok = version(out, (unsigned)len) == 0 && out[0];
        shutdown();
    }
    dlclose(h);
    return ok;
}

static fp_status cuda_query(fp_device *d, fp_device_info *info)
{
    fp_status st = FP_OK;
    struct cudaDeviceProp p;
    int rt = 0, drv = 0;
    memset(info, 0, sizeof *info);
    FP_CHECK_CUDA(cudaGetDeviceProperties(&p, d->index));
    FP_CHECK_CUDA(cudaRuntimeGetVersion(&rt));
    FP_CHECK_CUDA(cudaDriverGetVersion(&drv));
    info->index = d->index;
    snprintf(info->model, sizeof info->model, "%.63s", p.name);
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    snprintf(info->uuid, sizeof info->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    snprintf(info->pci_bus, sizeof info->pci_bus, "%08x:%02x:%02x.0", (unsigned)p.pciDomainID,
             (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
    info->memory = p.totalGlobalMem;
    info->sm_count = p.multiProcessorCount;
    snprintf(info->runtime_version, sizeof info->runtime_version, "%d.%d", rt / 1000,
             rt % 1000 / 10);
    if (!nvml_driver_version(info->driver_version, sizeof info->driver_version))
        snprintf(info->driver_version, sizeof info->driver_version, "%d.%d (CUDA driver API)",
                 drv / 1000, drv % 1000 / 10);
    snprintf(info->driver_api_version, sizeof info->driver_api_version, "%d.%d", drv / 1000,
             drv % 1000 / 10);
    int blas = 0;
    if (cublasGetVersion(d->blas, &blas) == CUBLAS_STATUS_SUCCESS)
        snprintf(info->blas_version, sizeof info->blas_version, "%d.%d.%d", blas / 10000,
                 blas / 100 % 100, blas % 100);
    int nccl = 0;
    if (ncclGetVersion(&nccl) == ncclSuccess)
        snprintf(info->nccl_version, sizeof info->nccl_version, "%d.%d.%d", nccl / 10000,
                 nccl / 100 % 100, nccl % 100);
#ifdef FP_CUDA_EMU
    info->emulated = true; /* the build links fpemu, not the CUDA runtime */
#endif
cleanup:
    return st;
}

static fp_status cuda_alloc(fp_device *d, size_t bytes, void **ptr)
{
    fp_status st = FP_OK;
    *ptr = NULL;
    FP_CHECK_CUDA(cudaMalloc(ptr, bytes ? bytes : 1));
cleanup:
    return st;
}

static void cuda_free_mem(fp_device *d, void *ptr)
{
    cudaError_t e = cudaFree(ptr);
    if (e != cudaSuccess)
        fp_warn("cudaFree: %s", cudaGetErrorString(e));
}

static fp_status cuda_copy(fp_device *d, void *dst, const void *src, size_t bytes, fp_copy_kind k)
{
    static const enum cudaMemcpyKind kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                                cudaMemcpyDeviceToDevice};
    fp_status st = FP_OK;
    FP_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, kinds[k], d->stream));
    FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
cleanup:
    return st;
}

static fp_status cuda_sync(fp_device *d)
{
    fp_status st = FP_OK;
    FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
cleanup:
    return st;
}

static fp_status cuda_timer_start(fp_device *d)
{
    fp_status st = FP_OK;
    FP_CHECK_CUDA(cudaEventRecord(d->start, d->stream));
cleanup:
    return st;
}

static fp_status cuda_timer_stop(fp_device *d, double *seconds)
{
    fp_status st = FP_OK;
    float ms = 0;
    FP_CHECK_CUDA(cudaEventRecord(d->stop, d->stream));
    FP_CHECK_CUDA(cudaEventSynchronize(d->stop));
    FP_CHECK_CUDA(cudaEventElapsedTime(&ms, d->start, d->stop));
    *seconds = ms * 1e-3;
cleanup:
    return st;
}

static fp_status cuda_fill(fp_device *d, double *x, size_t n, double v)
{
    return fp_k_fill(x, n, v, d->stream);
}

static fp_status cuda_stream_op(fp_device *d, fp_stream_op op, double *dst, const double *x,
                                const double *y, double s, size_t n)
{
    return fp_k_stream((int)op, dst, x, y, s, n, d->stream);
}

static fp_status cuda_count_wrong(fp_device *d, const double *x, size_t n, double expect,
                                  double tol, size_t *wrong)
{
    fp_status st = FP_OK;
    unsigned long long count = 0;
    FP_CHECK_CUDA(cudaMemsetAsync(d->count, 0, sizeof *d->count, d->stream));
    FP_CHECK(fp_k_count_wrong(x, n, expect, tol, d->count, d->stream));
    FP_CHECK_CUDA(cudaMemcpyAsync(&count, d->count, sizeof count, cudaMemcpyDeviceToHost,
                                  d->stream));
    FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
    *wrong = (size_t)count;
cleanup:
    return st;
}

/* ---- compute suite: GEMM through cuBLAS and cuBLASLt ----------------------------------- */

/* ---- memory test and result checks --------------------------------------------- */

static fp_status cuda_mem_write(fp_device *d, int p, void *region, size_t bytes, uint64_t seed)
{
    return fp_k_mem_write(p, region, bytes / 8, seed, d->stream);
}

static fp_status cuda_mem_verify(fp_device *d, int p, const void *region, size_t bytes,
                                 uint64_t seed, fp_mem_check *out)
{
    fp_status st = FP_OK;
    fp_mem_check *dev = d->scratch;
    FP_CHECK_CUDA(cudaMemsetAsync(dev, 0, sizeof *dev, d->stream));
    FP_CHECK(fp_k_mem_verify(p, region, bytes / 8, seed, dev, d->stream));
    FP_CHECK_CUDA(cudaMemcpyAsync(out, dev, sizeof *out, cudaMemcpyDeviceToHost, d->stream));
    FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
    if (out->naddr > FP_MEM_ADDRS)
        out->naddr = FP_MEM_ADDRS;
cleanup:
    return st;
}

static fp_status cuda_digest(fp_device *d, const void *c, const void *ref, size_t n, size_t es,
                             double tol, fp_digest *out)
{
    fp_status st = FP_OK;
    fp_digest *dev = d->scratch;
    FP_CHECK_CUDA(cudaMemsetAsync(dev, 0, sizeof *dev, d->stream));
    FP_CHECK(fp_k_digest(c, ref, n, (int)es, tol, dev, d->stream));
    FP_CHECK_CUDA(cudaMemcpyAsync(out, dev, sizeof *out, cudaMemcpyDeviceToHost, d->stream));
    FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
cleanup:
    return st;
}

static fp_status cuda_fill_gemm(fp_device *d, fp_gemm_type t, void *dst, size_t n,
                                uint64_t seed, bool exact)
{
    return fp_k_fill_gemm((int)t, dst, n, seed, exact, d->stream);
}

static bool cuda_gemm_supports(fp_device *d, fp_gemm_type t)
{
    int cc = d->cc_major * 10 + d->cc_minor;
    switch (t) {
    case FP_GEMM_F64:
    case FP_GEMM_F32: return true;
    case FP_GEMM_TF32:
    case FP_GEMM_BF16: return cc >= 80;
    case FP_GEMM_F16: return cc >= 70;
    case FP_GEMM_FP8: return cc >= 89; /* Ada and Hopper tensor cores */
    default: return false;
    }
}

/* fp8 e4m3 through cuBLASLt, whose fp8 kernels take only the "TN" layout:
 * A arrives transposed (k x m, lda >= k), as device.h's contract says. */
static fp_status lt_fp8(fp_device *d, int m, int n, int k, const void *a, int lda, const void *b,
                        int ldb, void *c, int ldc)
{
    fp_status st = FP_OK;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    float alpha = 1, beta = 0;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    size_t ws = LT_WORKSPACE;
    FP_CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    FP_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    FP_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    FP_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, (uint64_t)k, (uint64_t)m, lda));
    FP_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, (uint64_t)k, (uint64_t)n, ldb));
    FP_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, (uint64_t)m, (uint64_t)n, ldc));
    FP_CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    FP_CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    FP_CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(d->lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
    if (found == 0)
        FP_FAIL(FP_EUNSUPPORTED, "cuBLASLt has no fp8 algorithm for %dx%dx%d", m, n, k);
    FP_CHECK_CUBLAS(cublasLtMatmul(d->lt, op, &alpha, a, la, b, lb, &beta, c, lc, c, lc,
                                   &heur.algo, d->lt_work, ws, d->stream));
cleanup:
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    if (la)
        cublasLtMatrixLayoutDestroy(la);
    if (lb)
        cublasLtMatrixLayoutDestroy(lb);
    if (lc)
        cublasLtMatrixLayoutDestroy(lc);
    if (op)
        cublasLtMatmulDescDestroy(op);
    return st;
}

static fp_status cuda_gemm(fp_device *d, fp_gemm_type t, int m, int n, int k, const void *a,
                           int lda, const void *b, int ldb, void *c, int ldc)
{
    fp_status st = FP_OK;
    if (!cuda_gemm_supports(d, t))
        return FP_EUNSUPPORTED;
    if (t == FP_GEMM_FP8)
        return lt_fp8(d, m, n, k, a, lda, b, ldb, c, ldc);
    static const cudaDataType_t in[] = {[FP_GEMM_F64] = CUDA_R_64F, [FP_GEMM_F32] = CUDA_R_32F,
                                        [FP_GEMM_TF32] = CUDA_R_32F, [FP_GEMM_F16] = CUDA_R_16F,
                                        [FP_GEMM_BF16] = CUDA_R_16BF};
    cublasComputeType_t ct = t == FP_GEMM_F64    ? CUBLAS_COMPUTE_64F
                             : t == FP_GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                 : CUBLAS_COMPUTE_32F;
    double a64 = 1, b64 = 0;
    float a32 = 1, b32 = 0;
    const void *alpha = t == FP_GEMM_F64 ? (const void *)&a64 : (const void *)&a32;
    const void *beta = t == FP_GEMM_F64 ? (const void *)&b64 : (const void *)&b32;
    cudaDataType_t out = t == FP_GEMM_F64 ? CUDA_R_64F : CUDA_R_32F;
    FP_CHECK_CUBLAS(cublasGemmEx(d->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, in[t], lda,
                                 b, in[t], ldb, beta, c, out, ldc, ct, CUBLAS_GEMM_DEFAULT));
cleanup:
    return st;
}

/* ---- compute suite: launches, host memory, peers --------------------------------------- */

static fp_status cuda_launch(fp_device *d, bool graph, int count)
{
    fp_status st = FP_OK;
    cudaGraph_t g = NULL;
    if (!graph) {
        for (int i = 0; i < count; i++)
            FP_CHECK(fp_k_empty(d->stream));
        return FP_OK;
    }
    if (!d->graph || d->graph_count != count) {
        if (d->graph)
            cudaGraphExecDestroy(d->graph);
        d->graph = NULL;
        FP_CHECK_CUDA(cudaStreamBeginCapture(d->stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < count && st == FP_OK; i++)
            st = fp_k_empty(d->stream);
        cudaError_t e = cudaStreamEndCapture(d->stream, &g);
        FP_CHECK(st);
        FP_CHECK_CUDA(e);
        FP_CHECK_CUDA(cudaGraphInstantiate(&d->graph, g, 0));
        d->graph_count = count;
    }
    FP_CHECK_CUDA(cudaGraphLaunch(d->graph, d->stream));
cleanup:
    if (g)
        cudaGraphDestroy(g);
    return st;
}

static fp_status cuda_host_alloc(fp_device *d, size_t bytes, bool pinned, void **ptr)
{
    fp_status st = FP_OK;
    *ptr = NULL;
    if (pinned) {
        FP_CHECK_CUDA(cudaMallocHost(ptr, bytes ? bytes : 1));
    } else {
        *ptr = malloc(bytes ? bytes : 1);
        FP_CHECK_ALLOC(*ptr);
    }
cleanup:
    return st;
}

static void cuda_host_free(fp_device *d, void *ptr, bool pinned)
{
    if (pinned)
        cudaFreeHost(ptr);
    else
        free(ptr);
}

static fp_status cuda_peer_copy(fp_device *d, int src, int dst, size_t bytes, bool bidir,
                                int iters, double *seconds)
{
    fp_status st = FP_OK;
    int ok = 0, back = 0;
    void *bs = NULL, *bd = NULL, *bs2 = NULL, *bd2 = NULL;
    cudaStream_t s2 = NULL;
    FP_CHECK_CUDA(cudaDeviceCanAccessPeer(&ok, src, dst));
    FP_CHECK_CUDA(cudaDeviceCanAccessPeer(&back, dst, src));
    if (!ok || (bidir && !back))
        return FP_EUNSUPPORTED;
    FP_CHECK_CUDA(cudaSetDevice(src));
    FP_CHECK_CUDA(cudaMalloc(&bs, bytes));
    FP_CHECK_CUDA(cudaMalloc(&bs2, bytes));
    cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
        FP_CHECK_CUDA(e);
    cudaGetLastError(); /* clear an "already enabled" */
    FP_CHECK_CUDA(cudaSetDevice(dst));
    FP_CHECK_CUDA(cudaMalloc(&bd, bytes));
    FP_CHECK_CUDA(cudaMalloc(&bd2, bytes));
    e = cudaDeviceEnablePeerAccess(src, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
        FP_CHECK_CUDA(e);
    cudaGetLastError();
    FP_CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    FP_CHECK_CUDA(cudaSetDevice(d->index));
    for (int i = 0; i <= iters; i++) {
        if (i == 1) { /* after the warm-up */
            FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
            FP_CHECK_CUDA(cudaStreamSynchronize(s2));
            FP_CHECK_CUDA(cudaEventRecord(d->start, d->stream));
        }
        FP_CHECK_CUDA(cudaMemcpyPeerAsync(bd, dst, bs, src, bytes, d->stream));
        if (bidir)
            FP_CHECK_CUDA(cudaMemcpyPeerAsync(bs2, src, bd2, dst, bytes, s2));
    }
    FP_CHECK_CUDA(cudaStreamSynchronize(s2)); /* the reverse copies end before the stop */
    FP_CHECK_CUDA(cudaEventRecord(d->stop, d->stream));
    FP_CHECK_CUDA(cudaEventSynchronize(d->stop));
    float ms = 0;
    FP_CHECK_CUDA(cudaEventElapsedTime(&ms, d->start, d->stop));
    *seconds = ms * 1e-3;
cleanup:
    if (s2)
        cudaStreamDestroy(s2);
    if (bs)
        cudaFree(bs);
    if (bs2)
        cudaFree(bs2);
    if (bd)
        cudaFree(bd);
    if (bd2)
        cudaFree(bd2);
    cudaSetDevice(d->index);
    return st;
}

static void *cuda_native_stream(fp_device *d)
{
    return d->stream;
}

const fp_device_ops fp_device_cuda = {
    .name = "cuda",
    .probe = cuda_probe,
    .open = cuda_open,
    .close = cuda_close,
    .query = cuda_query,
    .alloc = cuda_alloc,
    .free = cuda_free_mem,
    .copy = cuda_copy,
    .sync = cuda_sync,
    .timer_start = cuda_timer_start,
    .timer_stop = cuda_timer_stop,
    .fill = cuda_fill,
    .stream = cuda_stream_op,
    .count_wrong = cuda_count_wrong,
    .mem_write = cuda_mem_write,
    .mem_verify = cuda_mem_verify,
    .digest = cuda_digest,
    .fill_gemm = cuda_fill_gemm,
    .gemm_supports = cuda_gemm_supports,
    .gemm = cuda_gemm,
    .launch = cuda_launch,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .peer_copy = cuda_peer_copy,
    .native_stream = cuda_native_stream,
};
