/* kernels_bench: fleetprint's host compute paths against the plain code a
 * user would write, in one run over the same buffers and sizes:
 *   triad   the host backend's stream(TRIAD) vs an OpenMP loop a[i] = b[i] + s*c[i]
 *   dgemm   the host backend's gemm(F64) vs a direct cblas_dgemm call
 * The two variants alternate within every repetition (so drift and noise
 * from other processes hit both alike); each reports its median throughput,
 * and the ratio is the median over repetitions of the back-to-back pair's
 * fleetprint throughput over the reference's (>= 0.95 holds when
 * fleetprint adds no overhead). Exit 1 when a ratio is below 0.95.
 *
 *   kernels_bench [threads [reps]]     (defaults: all cores, 21) */
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fleetprint/device.h"
#include "fleetprint/kernels.h"
#include "fleetprint/timer.h"

static void ref_triad(double *restrict a, const double *restrict b, const double *restrict c,
                      double s, size_t n, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median over repetitions of reference time / fleetprint time, each pair run
 * back to back: load from other processes that drifts over seconds cancels. */
static double paired_ratio(const double *tf, const double *tr, double *tmp, int n)
{
    for (int i = 0; i < n; i++)
        tmp[i] = tr[i] / tf[i];
    return median(tmp, n);
}

int main(int argc, char **argv)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = argc > 1 ? atoi(argv[1]) : (int)(cores > 0 ? cores : 1);
    int reps = argc > 2 ? atoi(argv[2]) : 21;
    if (threads < 1 || reps < 3) {
        fprintf(stderr, "usage: kernels_bench [threads >= 1 [reps >= 3]]\n");
        return 2;
    }
    const fp_device_ops *ops = &fp_device_host;
    fp_device *dev = NULL;
    if (ops->open(&dev, 0, threads) != FP_OK)
        return 4;
    int worst_fail = 0;
    double *tf = malloc((size_t)reps * sizeof *tf), *tr = malloc((size_t)reps * sizeof *tr);
    double *rp = malloc((size_t)reps * sizeof *rp);
    if (!tf || !tr || !rp)
        return 4;

    printf("# kernels_bench: %d threads, %d repetitions, medians\n", threads, reps);
    printf("%-6s %12s %14s %14s %8s\n", "kernel", "size", "fleetprint", "reference", "ratio");
    static const size_t triad_n[] = {1u << 20, 1u << 22, 1u << 24};
    for (size_t si = 0; si < sizeof triad_n / sizeof *triad_n; si++) {
        size_t n = triad_n[si];
        int inner = (int)((1u << 24) / n); /* every timed sample moves >= 384 MB */
        double *a = NULL, *b = NULL, *c = NULL;
        if (ops->alloc(dev, n * 8, (void **)&a) || ops->alloc(dev, n * 8, (void **)&b) ||
            ops->alloc(dev, n * 8, (void **)&c))
            return 4;
        ops->fill(dev, a, n, 0.0);
        ops->fill(dev, b, n, 1.0);
        ops->fill(dev, c, n, 2.0);
        for (int r = -1; r < reps; r++) { /* r = -1 warms both up */
            /* alternate which goes first, so neither always finds warm caches */
            double t0 = fp_clock(), t1, t2, f, g;
            if (r % 2) {
                for (int i = 0; i < inner; i++)
                    ops->stream(dev, FP_STREAM_TRIAD, a, b, c, 3.0, n);
                t1 = fp_clock();
                for (int i = 0; i < inner; i++)
                    ref_triad(a, b, c, 3.0, n, threads);
                t2 = fp_clock();
                f = t1 - t0, g = t2 - t1;
            } else {
                for (int i = 0; i < inner; i++)
                    ref_triad(a, b, c, 3.0, n, threads);
                t1 = fp_clock();
                for (int i = 0; i < inner; i++)
                    ops->stream(dev, FP_STREAM_TRIAD, a, b, c, 3.0, n);
                t2 = fp_clock();
                g = t1 - t0, f = t2 - t1;
            }
            if (r >= 0) {
                tf[r] = f;
                tr[r] = g;
            }
        }
        double ratio = paired_ratio(tf, tr, rp, reps), mf = median(tf, reps), mr = median(tr, reps);
        printf("%-6s %10zuMB %11.2f GB/s %11.2f GB/s %8.3f\n", "triad", n * 24 >> 20,
               24.0 * inner * (double)n / mf * 1e-9, 24.0 * inner * (double)n / mr * 1e-9, ratio);
        worst_fail |= ratio < 0.95;
        ops->free(dev, a);
        ops->free(dev, b);
        ops->free(dev, c);
    }
    static const int gemm_n[] = {256, 512, 1024};
    for (size_t si = 0; si < sizeof gemm_n / sizeof *gemm_n; si++) {
        int n = gemm_n[si];
        size_t nn = (size_t)n * (size_t)n;
        double *a = malloc(nn * 8), *b = malloc(nn * 8), *c = malloc(nn * 8);
        if (!a || !b || !c)
            return 4;
        for (size_t i = 0; i < nn; i++) {
            a[i] = fp_gemm_input(1, i);
            b[i] = fp_gemm_input(2, i);
        }
        for (int r = -1; r < reps; r++) {
            double t[3];
            for (int q = 0; q < 2; q++) { /* alternate the order, as for triad */
                t[q] = fp_clock();
                if ((q + r) % 2)
                    ops->gemm(dev, FP_GEMM_F64, n, n, n, a, n, b, n, c, n);
                else
                    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b,
                                n, 0.0, c, n);
            }
            t[2] = fp_clock();
            if (r >= 0) {
                int fq = r % 2 ? 0 : 1; /* the slot fleetprint ran in */
                tf[r] = t[fq + 1] - t[fq];
                tr[r] = t[2 - fq] - t[1 - fq];
            }
        }
        double ratio = paired_ratio(tf, tr, rp, reps), mf = median(tf, reps), mr = median(tr, reps);
        double flop = 2.0 * n * (double)n * n;
        printf("%-6s %12d %9.2f GFLOP/s %9.2f GFLOP/s %8.3f\n", "dgemm", n, flop / mf * 1e-9,
               flop / mr * 1e-9, ratio);
        worst_fail |= ratio < 0.95;
        free(a);
        free(b);
        free(c);
    }
    printf("# ratio = fleetprint throughput / reference throughput; %s\n",
           worst_fail ? "BELOW 0.95 somewhere" : "all >= 0.95");
    ops->close(dev);
    free(tf);
    free(tr);
    free(rp);
    return worst_fail;
}
