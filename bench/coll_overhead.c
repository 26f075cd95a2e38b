/* coll_overhead: does the harness cost anything? In one run and one process
 * count, times a bare MPI_Allreduce loop and fleetprint's allreduce test
 * (float, sum, out of place: the same call through the comm backend, per-call
 * timing, injection points, deadlines) at the same sizes and iterations, and
 * prints fleetprint busbw / bare-loop busbw per size.
 *
 *   mpirun -np 4 build/bench/coll_overhead -b 1M -e 16M [-n 10 -w 5] [--reps 25]
 *
 * The two run back to back per size and repetition (alternating which goes
 * first); the ratio is the median over repetitions of each pair's time ratio,
 * so load from other processes on a shared machine hits both alike. Both
 * times are loop time / iterations, max over ranks; busbw is bytes / median
 * time x nccl-tests' allreduce factor 2(n-1)/n. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/collectives.h"
#include "fleetprint/log.h"
#include "fleetprint/timer.h"

enum { MAX_SIZES = 64, MAX_REPS = 101 };

typedef struct bench_cfg {
    fp_config base; /* first: FP_SUITE_OPTS' offsets hold */
    int reps;
} bench_cfg;

static const fp_opt opts[] = {
    FP_SUITE_OPTS,
    {"reps", 0, FP_OPT_INT, offsetof(bench_cfg, reps), "25", "repetitions of each size"},
    {0},
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Bare loop: warm-up, barrier, iters blocking allreduces; loop time / iters,
 * max over ranks. */
static double bare_loop(MPI_Comm comm, const float *send, float *recv, size_t count, int warmup,
                        int iters)
{
    for (int i = 0; i < warmup; i++)
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, comm);
    MPI_Barrier(comm);
    double t0 = fp_clock();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, comm);
    double t = (fp_clock() - t0) / iters, tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    return tmax;
}

/* fleetprint's allreduce test at one size; its time_max sample (s) on rank 0. */
static fp_status fleetprint_loop(fp_ctx *ctx, const fp_config *base, uint64_t size, double *t)
{
    fp_config one = *base;
    one.min_bytes = one.max_bytes = size;
    ctx->cfg = &one;
    ctx->local->nsamples = 0;
    fp_coll_variant only = {FP_F32, FP_SUM, false};
    fp_status st = fp_coll_sweep(ctx, &fp_test_allreduce, &only);
    ctx->cfg = base;
    *t = 0;
    for (size_t i = 0; st == FP_OK && i < ctx->local->nsamples; i++)
        if (strcmp(ctx->local->samples[i].metric, "time_max_f32_sum_oop") == 0)
            *t = ctx->local->samples[i].value * 1e-6;
    return st;
}

int main(int argc, char **argv)
{
    bench_cfg cfg;
    char err[512];
    memset(&cfg, 0, sizeof cfg);
    if (fp_opts_parse(opts, argc - 1, argv + 1, &cfg, err, sizeof err) != FP_OK) {
        if (err[0])
            fprintf(stderr, "coll_overhead: %s\n", err);
        else
            fp_opts_usage(stdout, "coll_overhead", "bare MPI_Allreduce vs fleetprint", opts);
        return err[0] ? 2 : 0;
    }
    fp_world *w = NULL;
    fp_inject_set inject;
    fp_run local;
    fp_ctx ctx;
    fp_run_init(&local);
    memset(&ctx, 0, sizeof ctx);
    fp_status st = fp_world_open(&w, &argc, &argv);
    float *send = NULL, *recv = NULL;
    static double bare[MAX_SIZES][MAX_REPS], mine[MAX_SIZES][MAX_REPS];
    uint64_t sizes[MAX_SIZES];
    int nsizes = 0, reps = cfg.reps;
    if (st == FP_OK)
        st = fp_ctx_open(&ctx, &cfg.base, w, &inject, &local);
    if (st == FP_OK && (reps < 1 || reps > MAX_REPS)) {
        fp_error("--reps must be 1 to %d", MAX_REPS);
        st = FP_EUSAGE;
    }
    if (st == FP_OK) {
        st = fp_coll_sizes(cfg.base.min_bytes, cfg.base.max_bytes, cfg.base.step_factor, sizes,
                           MAX_SIZES, &nsizes, err, sizeof err);
        if (st != FP_OK)
            fp_error("%s", err);
    }
    size_t maxcount = nsizes ? (size_t)(sizes[nsizes - 1] / sizeof(float)) : 0;
    if (st == FP_OK) {
        send = calloc(maxcount + 1, sizeof *send);
        recv = calloc(maxcount + 1, sizeof *recv);
        if (!send || !recv)
            st = FP_ENOMEM;
        for (size_t i = 0; send && i < maxcount; i++)
            send[i] = 1.0f;
    }
    MPI_Comm comm = w ? fp_world_comm(w) : MPI_COMM_WORLD;
    for (int rep = 0; st == FP_OK && rep < reps; rep++) {
        for (int s = 0; st == FP_OK && s < nsizes; s++) {
            size_t count = (size_t)(sizes[s] / sizeof(float));
            for (int k = 0; st == FP_OK && k < 2; k++) {
                if ((k + rep) % 2 == 0)
                    bare[s][rep] = bare_loop(comm, send, recv, count, cfg.base.warmup,
                                             cfg.base.iters);
                else
                    st = fleetprint_loop(&ctx, &cfg.base, sizes[s], &mine[s][rep]);
            }
        }
        if (st == FP_OK)
            fp_info("repetition %d of %d done", rep + 1, reps);
    }
    if (st == FP_OK && fp_world_rank(w) == 0) {
        int n = fp_world_size(w);
        double factor = fp_coll_bus_factor(FP_ALLREDUCE, n), worst = 1e30;
        printf("# allreduce float sum out-of-place, %d ranks, %d iterations, %d repetitions; "
               "busbw = bytes / median(time) x %.3f; ratio: median over repetitions of the "
               "back-to-back pair's bare time / fleetprint time\n",
               n, cfg.base.iters, reps, factor);
        printf("# %10s %14s %14s %14s %8s %8s %8s\n", "size (B)", "bare (GB/s)", "fleetprint",
               "bare time us", "ratio", "min", "max");
        for (int s = 0; s < nsizes; s++) {
            uint64_t bytes = sizes[s] / sizeof(float) * sizeof(float);
            double pair[MAX_REPS];
            for (int r = 0; r < reps; r++)
                pair[r] = bare[s][r] / mine[s][r];
            double ratio = median(pair, reps), lo = pair[0], hi = pair[reps - 1];
            double tb = median(bare[s], reps), tf = median(mine[s], reps);
            double bb = (double)bytes / tb * 1e-9 * factor, bf = (double)bytes / tf * 1e-9 * factor;
            worst = ratio < worst ? ratio : worst;
            printf("  %10llu %14.3f %14.3f %14.1f %8.3f %8.3f %8.3f\n", (unsigned long long)bytes,
                   bb, bf, tb * 1e6, ratio, lo, hi);
        }
        printf("# fleetprint busbw / bare-loop busbw: worst %.3f (%s 0.97 at every size)\n", worst,
               worst >= 0.97 ? ">=" : "NOT >=");
    }
    free(send);
    free(recv);
    fp_ctx_close(&ctx);
    fp_run_free(&local);
    int code = fp_status_exit_code(st);
    if (fp_world_close(w, st))
        MPI_Abort(MPI_COMM_WORLD, code);
    return code;
}
