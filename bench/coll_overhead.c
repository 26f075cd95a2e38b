/* coll_overhead: does the harness cost anything? In one run and one process
 * count, times bare blocking MPI collective loops and fleetprint's collective
 * tests (float, sum where the collective reduces, out of place but broadcast:
 * the same call through the comm backend with per-call stamps, injection
 * points and the watchdog's deadline) at the same sizes and iterations, and prints
 * bare time / fleetprint time (= fleetprint busbw / bare busbw) per size.
 *
 *   mpirun -np <cores> build/bench/coll_overhead -b 1M -e 16M [-n 20 -w 5] [--reps 25]
 *
 * Three tables:
 *   1. allreduce over the -b..-e sweep at the launched ranks (launch one rank
 *      per core: 2 on a 2-core machine);
 *   2. allreduce, allgather, reduce_scatter, alltoall, broadcast and reduce
 *      at the smallest and largest size of the sweep, same ranks;
 *   3. table 1 again at --oversub x the launched ranks: the launched ranks
 *      spawn the others (MPI_Comm_spawn) and both run on the merged
 *      communicator (--oversub 1: skipped). An oversubscribed ratio alone
 *      proves nothing: waiting ranks yield the core, so noise hides overhead.
 *
 * Per size and repetition the two loops run back to back (alternating which
 * goes first); the ratio is the median over repetitions of each pair's time
 * ratio, so load from other processes on a shared machine hits both alike.
 * Both times are loop time / iterations, max over ranks; busbw is bytes /
 * median time x nccl-tests' bus factor. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/collectives.h"
#include "fleetprint/log.h"
#include "fleetprint/timer.h"

enum { MAX_SIZES = 64, MAX_REPS = 101, NCOLLS = 6 };

typedef struct bench_cfg {
    fp_coll_config coll; /* the collective tests' config */
    int reps;
    int oversub;
} bench_cfg;

/* the options run takes that this reads, and its own */
static const fp_opt opts[] = {
    FP_OPTS_BACKENDS(bench_cfg, coll.base),
    FP_OPTS_SWEEP(bench_cfg, coll.sweep),
    FP_OPTS_DEADLINE(bench_cfg, coll.base),
    FP_OPTS_LOGGING(bench_cfg, coll.base),
    {"reps", 0, FP_OPT_INT, offsetof(bench_cfg, reps), "25", "repetitions of each size"},
    {"oversub", 0, FP_OPT_INT, offsetof(bench_cfg, oversub), "2",
     "table 3 at this many times the launched ranks (1: no table 3)"},
    {0},
};

/* The collectives of table 2, in its order; table 1 and 3 use the first.
 * Broadcast runs in place: MPI_Bcast has no out-of-place form (fleetprint's
 * out-of-place broadcast on MPI also copies the root's send into its recv). */
static const struct {
    fp_coll coll;
    const fp_test *test;
    bool reduces, in_place;
} colls[NCOLLS] = {
    {FP_ALLREDUCE, &fp_test_allreduce, true, false},
    {FP_ALLGATHER, &fp_test_allgather, false, false},
    {FP_REDUCE_SCATTER, &fp_test_reduce_scatter, true, false},
    {FP_ALLTOALL, &fp_test_alltoall, false, false},
    {FP_BROADCAST, &fp_test_broadcast, false, true},
    {FP_REDUCE, &fp_test_reduce, true, false},
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

/* ---- the two loops -------------------------------------------------------------- */

/* The reference: one bare blocking MPI call of fleetprint's shape (comm.h
 * counts, root 0), written against MPI alone. */
static void bare_call(fp_coll c, MPI_Comm comm, const float *send, float *recv, int n)
{
    switch (c) {
    case FP_ALLREDUCE: MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, comm); break;
    case FP_ALLGATHER: MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, comm); break;
    case FP_REDUCE_SCATTER:
        MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, comm);
        break;
    case FP_ALLTOALL: MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, comm); break;
    case FP_BROADCAST: MPI_Bcast(recv, n, MPI_FLOAT, 0, comm); break;
    default: MPI_Reduce(send, recv, n, MPI_FLOAT, MPI_SUM, 0, comm); break;
    }
}

/* Bare loop: warm-up, barrier, iters calls; loop time / iters, max over ranks. */
static double bare_loop(fp_coll c, MPI_Comm comm, const float *send, float *recv, size_t count,
                        int warmup, int iters)
{
    for (int i = 0; i < warmup; i++)
        bare_call(c, comm, send, recv, (int)count);
    MPI_Barrier(comm);
    double t0 = fp_clock();
    for (int i = 0; i < iters; i++)
        bare_call(c, comm, send, recv, (int)count);
    double t = (fp_clock() - t0) / iters, tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    return tmax;
}

/* fleetprint's test of collective k at one size: its time_max sample (s,
 * on rank 0; 0 elsewhere). */
static fp_status fleetprint_loop(fp_ctx *ctx, const fp_coll_config *cfg, int k, uint64_t size,
                                 double *t)
{
    fp_coll_config one = *cfg;
    one.sweep.min_bytes = one.sweep.max_bytes = size;
    ctx->cfg = &one.base;
    ctx->local->nsamples = 0;
    fp_coll_variant only = {FP_F32, colls[k].reduces ? FP_SUM : FP_REDOP_COUNT,
                            colls[k].in_place};
    char want[32];
    fp_coll_metric_name(want, sizeof want, "time_max", &only);
    fp_status st = fp_coll_sweep(ctx, colls[k].test, &only);
    ctx->cfg = &cfg->base;
    *t = 0;
    for (size_t i = 0; st == FP_OK && i < ctx->local->nsamples; i++)
        if (strcmp(ctx->local->samples[i].metric, want) == 0)
            *t = ctx->local->samples[i].value * 1e-6;
    return st;
}

/* ---- one table ------------------------------------------------------------------- */

typedef struct table {
    const char *title;
    int ks[NCOLLS], nk;          /* collectives (indices into colls) */
    uint64_t sizes[MAX_SIZES];
    int nsizes;
    double bare[NCOLLS][MAX_SIZES][MAX_REPS], mine[NCOLLS][MAX_SIZES][MAX_REPS];
} table;

/* Measure every collective and size of tab, paired, reps times. */
static fp_status measure(fp_ctx *ctx, const fp_coll_config *cfg, int reps, table *tab)
{
    fp_status st = FP_OK;
    int n = ctx->nranks;
    size_t most = 1;
    for (int s = 0; s < tab->nsizes; s++)
        for (int i = 0; i < tab->nk; i++) {
            fp_coll_geom g =
                fp_coll_geometry(colls[tab->ks[i]].coll, tab->sizes[s], sizeof(float), n);
            most = g.send_elems > most ? g.send_elems : most;
            most = g.recv_elems > most ? g.recv_elems : most;
        }
    float *send = calloc(most, sizeof *send), *recv = calloc(most, sizeof *recv);
    FP_CHECK_ALLOC(send);
    FP_CHECK_ALLOC(recv);
    for (size_t i = 0; i < most; i++)
        send[i] = 1.0f;
    MPI_Comm comm = fp_world_comm(ctx->world);
    for (int rep = 0; rep < reps; rep++) {
        for (int i = 0; i < tab->nk; i++)
            for (int s = 0; s < tab->nsizes; s++) {
                int k = tab->ks[i];
                fp_coll_geom g = fp_coll_geometry(colls[k].coll, tab->sizes[s], sizeof(float), n);
                double *bare = &tab->bare[i][s][rep], *mine = &tab->mine[i][s][rep];
                for (int order = 0; order < 2; order++) {
                    if ((order + rep) % 2 == 0)
                        *bare = bare_loop(colls[k].coll, comm, send, recv, g.count,
                                          cfg->sweep.warmup, cfg->sweep.iters);
                    else
                        FP_CHECK(fleetprint_loop(ctx, cfg, k, tab->sizes[s], mine));
                }
            }
        fp_info("%s: repetition %d of %d done", tab->title, rep + 1, reps);
    }
cleanup:
    free(send);
    free(recv);
    return st;
}

/* Rank 0 prints tab; returns the worst ratio. */
static double print_table(const table *tab, int n, int cores, int iters, int reps)
{
    double worst = 1e30;
    printf("\n# %s: %d ranks on %d cores, float, sum where it reduces, out of place (broadcast "
           "in place), %d iterations, %d repetitions\n# ratio: median over repetitions of the "
           "back-to-back pair's bare time / fleetprint time (= fleetprint busbw / bare busbw)\n",
           tab->title, n, cores, iters, reps);
    printf("# %-14s %10s %12s %12s %12s %8s %8s %8s\n", "collective", "size (B)", "bare GB/s",
           "fleetprint", "bare time us", "ratio", "min", "max");
    for (int i = 0; i < tab->nk; i++) {
        fp_coll c = colls[tab->ks[i]].coll;
        for (int s = 0; s < tab->nsizes; s++) {
            fp_coll_geom g = fp_coll_geometry(c, tab->sizes[s], sizeof(float), n);
            double pair[MAX_REPS], tb[MAX_REPS], tf[MAX_REPS];
            for (int r = 0; r < reps; r++) {
                tb[r] = tab->bare[i][s][r];
                tf[r] = tab->mine[i][s][r];
                pair[r] = tf[r] > 0 ? tb[r] / tf[r] : 0;
            }
            double ratio = median(pair, reps), mb = median(tb, reps), mf = median(tf, reps);
            double f = fp_coll_bus_factor(c, n) * 1e-9 * (double)g.bytes;
            worst = ratio < worst ? ratio : worst;
            printf("  %-14s %10llu %12.3f %12.3f %12.1f %8.3f %8.3f %8.3f\n", fp_coll_name(c),
                   (unsigned long long)g.bytes, f / mb, f / mf, mb * 1e6, ratio, pair[0],
                   pair[reps - 1]);
        }
    }
    printf("# %s: worst ratio %.3f (%s 0.97 at every row)\n", tab->title, worst,
           worst >= 0.97 ? ">=" : "NOT >=");
    fflush(stdout);
    return worst;
}

/* Measure tab on world w (a context of its own) and print it on rank 0. */
static fp_status run_table(fp_world *w, const bench_cfg *cfg, table *tab)
{
    fp_inject_set inject;
    fp_run local;
    fp_ctx ctx;
    fp_run_init(&local);
    fp_status st = fp_ctx_open(&ctx, &cfg->coll.base, w, &inject, &local);
    if (st == FP_OK)
        st = measure(&ctx, &cfg->coll, cfg->reps, tab);
    st = st == FP_OK ? fp_world_agree(w, st) : st;
    if (st == FP_OK && ctx.rank == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        print_table(tab, ctx.nranks, (int)cores, cfg->coll.sweep.iters, cfg->reps);
    }
    fp_ctx_close(&ctx);
    fp_run_free(&local);
    return st;
}

/* ---- the oversubscribed world ------------------------------------------------------ */

/* Table 3's world: the launched ranks (parent == MPI_COMM_NULL) spawn
 * (oversub - 1) x their number more, the spawned ones join; all merge. */
static fp_status merged_world(fp_world *w, MPI_Comm parent, int oversub, char **child_argv,
                              fp_world **out)
{
    fp_status st = FP_OK;
    MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    *out = NULL;
    if (parent == MPI_COMM_NULL) {
        char self[4096];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0)
            FP_FAIL(FP_EUNSUPPORTED, "cannot find this program's path to spawn table 3's ranks");
        self[len] = 0;
        FP_CHECK_MPI(MPI_Info_create(&info));
        FP_CHECK_MPI(MPI_Info_set(info, "map_by", ":OVERSUBSCRIBE"));
        FP_CHECK_MPI(MPI_Comm_spawn(self, child_argv, (oversub - 1) * fp_world_size(w), info, 0,
                                    fp_world_comm(w), &inter, MPI_ERRCODES_IGNORE));
        FP_CHECK_MPI(MPI_Intercomm_merge(inter, 0, &merged));
    } else {
        FP_CHECK_MPI(MPI_Intercomm_merge(parent, 1, &merged));
    }
    st = fp_world_open_comm(out, merged);
cleanup:
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (merged != MPI_COMM_NULL)
        MPI_Comm_free(&merged);
    if (inter != MPI_COMM_NULL)
        MPI_Comm_free(&inter);
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
            fp_opts_usage(stdout, "coll_overhead", "bare MPI collectives vs fleetprint", opts);
        return err[0] ? 2 : 0;
    }
    /* the spawned ranks get the same options (argv[1..]) */
    char **child_argv = calloc((size_t)argc, sizeof *child_argv);
    for (int i = 1; child_argv && i < argc; i++)
        child_argv[i - 1] = argv[i];
    fp_world *w = NULL, *w2 = NULL;
    static table t1, t2, t3;
    fp_status st = fp_world_open(&w, &argc, &argv);
    MPI_Comm parent = MPI_COMM_NULL;
    if (st == FP_OK)
        MPI_Comm_get_parent(&parent);
    if (st == FP_OK && !child_argv)
        st = FP_ENOMEM;
    if (st == FP_OK && (cfg.reps < 1 || cfg.reps > MAX_REPS || cfg.oversub < 1)) {
        fp_error("--reps must be 1 to %d and --oversub at least 1", MAX_REPS);
        st = FP_EUSAGE;
    }
    if (st == FP_OK) {
        st = fp_coll_sizes(cfg.coll.sweep.min_bytes, cfg.coll.sweep.max_bytes,
                           cfg.coll.sweep.step_factor, t1.sizes, MAX_SIZES, &t1.nsizes, err,
                           sizeof err);
        if (st != FP_OK)
            fp_error("%s", err);
    }
    if (st == FP_OK) {
        t1.title = "table 1, allreduce, one rank per core";
        t1.ks[t1.nk++] = 0;
        t2.title = "table 2, every collective";
        for (int k = 0; k < NCOLLS; k++)
            t2.ks[t2.nk++] = k;
        t2.sizes[t2.nsizes++] = t1.sizes[0];
        if (t1.nsizes > 1)
            t2.sizes[t2.nsizes++] = t1.sizes[t1.nsizes - 1];
        t3 = t1;
        t3.title = "table 3, allreduce, oversubscribed";
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (parent == MPI_COMM_NULL && fp_world_rank(w) == 0 &&
            fp_world_local_size(w) != (int)cores)
            fp_warn("%d ranks on this node of %ld cores: tables 1 and 2 are meant at one rank "
                    "per core (mpirun -np %ld)", fp_world_local_size(w), cores, cores);
    }
    if (st == FP_OK && parent == MPI_COMM_NULL) {
        st = run_table(w, &cfg, &t1);
        if (st == FP_OK)
            st = run_table(w, &cfg, &t2);
    }
    if (st == FP_OK && cfg.oversub > 1) {
        st = merged_world(w, parent, cfg.oversub, child_argv, &w2);
        if (st == FP_OK)
            st = run_table(w2, &cfg, &t3);
        if (fp_world_close(w2, st))
            MPI_Abort(MPI_COMM_WORLD, fp_status_exit_code(st));
    }
    free(child_argv);
    int code = fp_status_exit_code(st);
    if (fp_world_close(w, st))
        MPI_Abort(MPI_COMM_WORLD, code);
    return code;
}
