/* Emulated twins of core/k_membw.cu: the same FP_HD element functions in a
 * loop, launched in stream order through fpemu_launch. */
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/hd.h"
#include "fpemu.h"

struct fill_args {
    double *x;
    size_t n;
    double v;
};

static void fill_body(void *p)
{
    struct fill_args *a = p;
    for (size_t i = 0; i < a->n; i++)
        a->x[i] = a->v;
}

fp_status fp_k_fill(double *x, size_t n, double v, cudaStream_t stream)
{
    struct fill_args a = {x, n, v};
    cudaError_t e = FPEMU_LAUNCH(stream, fill_body, a, "fill_kernel");
    return FP_K_STATUS(e, "fill_kernel");
}

struct stream_args {
    int op;
    double *dst;
    const double *x, *y;
    double s;
    size_t n;
};

static void stream_body(void *p)
{
    struct stream_args *a = p;
    for (size_t i = 0; i < a->n; i++)
        a->dst[i] = fp_stream_elem(a->op, a->x[i], a->y ? a->y[i] : 0.0, a->s);
}

fp_status fp_k_stream(int op, double *dst, const double *x, const double *y, double s, size_t n,
                      cudaStream_t stream)
{
    struct stream_args a = {op, dst, x, y, s, n};
    cudaError_t e = FPEMU_LAUNCH(stream, stream_body, a, "stream_kernel");
    return FP_K_STATUS(e, "stream_kernel");
}

struct count_args {
    const double *x;
    size_t n;
    double expect, tol;
    unsigned long long *count;
};

static void count_body(void *p)
{
    struct count_args *a = p;
    unsigned long long bad = 0;
    for (size_t i = 0; i < a->n; i++)
        bad += (unsigned long long)fp_elem_wrong(a->x[i], a->expect, a->tol);
    fpemu_atomic_add_u64(a->count, bad);
}

fp_status fp_k_count_wrong(const double *x, size_t n, double expect, double tol,
                           unsigned long long *count, cudaStream_t stream)
{
    struct count_args a = {x, n, expect, tol, count};
    cudaError_t e = FPEMU_LAUNCH(stream, count_body, a, "count_wrong_kernel");
    return FP_K_STATUS(e, "count_wrong_kernel");
}
