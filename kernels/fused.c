/* fused: how well computation hides communication (Flux, arXiv 2406.06858).
 *
 * Two tensor-parallel patterns, per rank GEMM shape (m tokens, n, k):
 *   rs  C = X . W^T, then C reduce-scattered over the ranks (row-parallel
 *       linear: each rank ends with m / R tokens of the sum);
 *   ag  X all-gathered over the ranks (each holds m / R tokens), then C = X . W^T
 *       (column-parallel linear).
 * Split into c chunks of m / c tokens, the collective of chunk i runs while
 * chunk i + 1 computes (ag: chunk i + 1 gathers while chunk i computes).
 * Variants, interleaved in every iteration after a barrier: gemm (compute
 * only), comm (communication only), seq (compute then communicate), overlap.
 * ECT = time - best non-split GEMM time; E = 1 - ECT_overlap / ECT_seq with
 * ECT_seq that of the non-split sequential run.
 *
 * Progress: on the host the MPI backend's comm thread runs the started
 * collectives with blocking calls beside the CBLAS GEMM (comm_mpi.c); each
 * chunk's GEMM runs in slices with the in-flight collectives tested between
 * them, so a completion (and an injected slow link's stretch of it) is seen
 * within a slice; on cuda the GEMM and NCCL streams progress by themselves
 * (NCCL orders each collective after the compute stream's earlier work with
 * an event).
 * C is row-major tokens x n, computed as the column-major n x tokens product
 * W (n x k) . X^T, so a chunk of tokens is one contiguous slab. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/kernels.h"
#include "fleetprint/log.h"
#include "fleetprint/timer.h"

enum { MAX_LIST = 16, MAX_CHUNKS = 128, HOST_SLICES = 4 };
typedef enum { PAT_RS, PAT_AG, PAT_COUNT } pattern;
typedef enum { V_GEMM, V_COMM, V_SEQ, V_OVERLAP, V_COUNT } variant;
static const char *const pat_name[PAT_COUNT] = {"rs", "ag"};
static const char *const var_name[V_COUNT] = {"gemm", "comm", "seq", "overlap"};

/* One pattern at one m: buffers and the shape. */
typedef struct job {
    pattern p;
    fp_gemm_type type;
    int m, n, k, nranks, rank, slices;
    void *w;        /* n x k column-major */
    void *x;        /* rs: m x k row-major; ag: this rank's m / R tokens */
    void *xg;       /* ag: gathered m x k */
    float *c;       /* m x n row-major (rs: this rank's partial sums) */
    float *recv;    /* rs: m / R x n */
    fp_coll_op ops[MAX_CHUNKS];
    bool done[MAX_CHUNKS];
} job;

/* ---- one chunk of work ------------------------------------------------------------ */

/* Rows [t0, t0 + tokens) of C from the same rows of X (or of the gathered X). */
static fp_status gemm_rows(fp_ctx *ctx, job *j, int t0, int tokens)
{
    size_t es = fp_gemm_in_size(j->type);
    const char *x = j->p == PAT_AG ? j->xg : j->x;
    return ctx->dev_ops->gemm(ctx->dev, j->type, j->n, tokens, j->k, j->w, j->n,
                              x + (size_t)t0 * (size_t)j->k * es, j->k,
                              j->c + (size_t)t0 * (size_t)j->n, j->n);
}

/* Poll the collectives in [from, to) not yet seen complete. */
static fp_status poll(fp_ctx *ctx, job *j, int from, int to)
{
    for (int i = from; i < to; i++)
        if (!j->done[i]) {
            fp_status st = fp_coll_test(ctx, &j->ops[i], &j->done[i]);
            if (st != FP_OK)
                return st;
        }
    return FP_OK;
}

/* Chunk i of c: its GEMM, in slices with polls of ops [from, to) between. */
static fp_status gemm_chunk(fp_ctx *ctx, job *j, int i, int c, int from, int to)
{
    int mc = j->m / c, s = j->slices < mc ? j->slices : mc;
    for (int q = 0; q < s; q++) {
        int a = i * mc + q * mc / s, b = i * mc + (q + 1) * mc / s;
        fp_status st = gemm_rows(ctx, j, a, b - a);
        if (st == FP_OK && to > from)
            st = poll(ctx, j, from, to);
        if (st != FP_OK)
            return st;
    }
    return FP_OK;
}

static fp_status coll_start(fp_ctx *ctx, job *j, int i, int c)
{
    int mc = j->m / c, rows = mc / j->nranks;
    fp_coll_args a = {.dtype = FP_F32, .op = FP_SUM};
    if (j->p == PAT_RS) {
        a.coll = FP_REDUCE_SCATTER;
        a.send = j->c + (size_t)i * mc * j->n;
        a.recv = j->recv + (size_t)i * rows * j->n;
        a.count = (size_t)rows * j->n;
    } else {
        /* the gathered X travels as raw elements: count in floats */
        size_t es = fp_gemm_in_size(j->type), bytes = (size_t)rows * j->k * es;
        a.coll = FP_ALLGATHER;
        a.send = (const char *)j->x + (size_t)i * bytes;
        a.recv = (char *)j->xg + (size_t)i * j->nranks * bytes;
        a.count = bytes / sizeof(float);
    }
    j->done[i] = false;
    return fp_coll_start(ctx, &a, &j->ops[i]);
}

/* ---- the four variants ----------------------------------------------------------- */

static fp_status run_variant(fp_ctx *ctx, job *j, variant v, int c, double *sec)
{
    fp_status st = FP_OK;
    FP_CHECK(fp_ctx_barrier(ctx, "fused"));
    FP_CHECK(fp_timed_start(ctx));
    bool rs = j->p == PAT_RS;
    switch (v) {
    case V_GEMM:
        for (int i = 0; i < c; i++)
            FP_CHECK(gemm_chunk(ctx, j, i, c, 0, 0));
        break;
    case V_COMM:
        for (int i = 0; i < c; i++) {
            FP_CHECK(coll_start(ctx, j, i, c));
            FP_CHECK(fp_coll_wait(ctx, &j->ops[i], "fused communication"));
        }
        break;
    case V_SEQ:
        for (int i = 0; i < c && rs; i++)
            FP_CHECK(gemm_chunk(ctx, j, i, c, 0, 0));
        for (int i = 0; i < c; i++) {
            FP_CHECK(coll_start(ctx, j, i, c));
            FP_CHECK(fp_coll_wait(ctx, &j->ops[i], "fused communication"));
        }
        for (int i = 0; i < c && !rs; i++)
            FP_CHECK(gemm_chunk(ctx, j, i, c, 0, 0));
        break;
    case V_OVERLAP:
        if (rs) {
            /* chunk i computes while the reduce-scatters of chunks < i run */
            for (int i = 0; i < c; i++) {
                FP_CHECK(gemm_chunk(ctx, j, i, c, 0, i));
                FP_CHECK(coll_start(ctx, j, i, c));
            }
            for (int i = 0; i < c; i++)
                FP_CHECK(fp_coll_wait(ctx, &j->ops[i], "fused overlap"));
        } else {
            /* chunk i + 1 gathers while chunk i computes */
            FP_CHECK(coll_start(ctx, j, 0, c));
            for (int i = 0; i < c; i++) {
                FP_CHECK(fp_coll_wait(ctx, &j->ops[i], "fused overlap"));
                if (i + 1 < c)
                    FP_CHECK(coll_start(ctx, j, i + 1, c));
                FP_CHECK(gemm_chunk(ctx, j, i, c, i + 1, i + 1 < c ? i + 2 : i + 1));
            }
        }
        break;
    default:
        break;
    }
    FP_CHECK(fp_timed_stop(ctx, sec));
cleanup:
    return st;
}

/* ---- buffers, patterns and the check ------------------------------------------------ */

static void job_free(fp_ctx *ctx, job *j)
{
    void *bufs[] = {j->w, j->x, j->xg, j->c, j->recv};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i])
            ctx->dev_ops->free(ctx->dev, bufs[i]);
    j->w = j->x = j->xg = NULL;
    j->c = j->recv = NULL;
}

/* Token rows of X repeat every FUSED_X_PERIOD (fp_fused_x). */
#define FUSED_X_PERIOD 7

static fp_status job_open(fp_ctx *ctx, job *j)
{
    fp_status st = FP_OK;
    const fp_device_ops *d = ctx->dev_ops;
    size_t es = fp_gemm_in_size(j->type), m = (size_t)j->m, n = (size_t)j->n, k = (size_t)j->k;
    size_t R = (size_t)j->nranks, xrows = j->p == PAT_RS ? m : m / R;
    double *h = malloc((n > FUSED_X_PERIOD * k ? n : FUSED_X_PERIOD * k) * sizeof *h);
    FP_CHECK_ALLOC(h);
    FP_CHECK(d->alloc(ctx->dev, n * k * es, &j->w));
    FP_CHECK(d->alloc(ctx->dev, xrows * k * es, &j->x));
    FP_CHECK(d->alloc(ctx->dev, m * n * sizeof(float), (void **)&j->c));
    if (j->p == PAT_RS)
        FP_CHECK(d->alloc(ctx->dev, m / R * n * sizeof(float), (void **)&j->recv));
    else
        FP_CHECK(d->alloc(ctx->dev, m * k * es, &j->xg));
    /* W (n x k column-major): every column is the same n values */
    for (size_t r = 0; r < n; r++)
        h[r] = fp_fused_w(r);
    FP_CHECK(fp_gemm_upload_periodic(ctx, j->type, h, n, n * k, j->w));
    /* rs: every rank has all m tokens, scaled by rank + 1 so the sum tells
     * the contributions apart; ag: this rank's m / R tokens. Rows repeat
     * every FUSED_X_PERIOD tokens. */
    double scale = j->p == PAT_RS ? j->rank + 1 : 1;
    size_t first = j->p == PAT_RS ? 0 : (size_t)j->rank * xrows;
    for (size_t t = 0; t < FUSED_X_PERIOD; t++)
        for (size_t l = 0; l < k; l++)
            h[t * k + l] = fp_fused_x(first + t) * scale;
    FP_CHECK(fp_gemm_upload_periodic(ctx, j->type, h, FUSED_X_PERIOD * k, xrows * k, j->x));
cleanup:
    free(h);
    return st;
}

/* Count wrong elements of the result the last variant with c chunks left. */
static fp_status check(fp_ctx *ctx, job *j, int c, size_t *wrong)
{
    fp_status st = FP_OK;
    size_t m = (size_t)j->m, n = (size_t)j->n, R = (size_t)j->nranks, mc = m / (size_t)c;
    size_t rows = j->p == PAT_RS ? m / R : m;
    float *h = malloc(rows * n * sizeof *h);
    FP_CHECK_ALLOC(h);
    FP_CHECK(ctx->dev_ops->copy(ctx->dev, h, j->p == PAT_RS ? j->recv : j->c,
                                rows * n * sizeof *h, FP_COPY_D2H));
    size_t bad = 0;
    double total = (double)(R * (R + 1) / 2);
    for (size_t r = 0; r < rows; r++) {
        size_t t;
        if (j->p == PAT_RS) /* row r: chunk r / (mc/R), this rank's block */
            t = r / (mc / R) * mc + (size_t)j->rank * (mc / R) + r % (mc / R);
        else
            t = fp_ag_source(r, mc, j->nranks, m);
        for (size_t col = 0; col < n; col++) {
            double e = fp_fused_expect(t, col, j->k, j->p == PAT_RS ? total : 1);
            bad += (size_t)fp_elem_wrong(h[r * n + col], e, 1e-5);
        }
    }
    if (bad)
        fp_error("fused %s m=%d chunks=%d: %zu wrong result elements", pat_name[j->p], j->m, c,
                 bad);
    *wrong += bad;
cleanup:
    free(h);
    return st;
}

/* ---- samples ---------------------------------------------------------------------- */

static fp_status emit(fp_ctx *ctx, const fp_test *t, const job *j, const char *what,
                      const char *unit, fp_better better, int iter, double v)
{
    char name[32];
    snprintf(name, sizeof name, "%s_m%d_%s", pat_name[j->p], j->m, what);
    fp_metric met = {name, unit, better};
    size_t bytes = (size_t)j->m * (size_t)(j->p == PAT_RS ? j->n * sizeof(float)
                                                          : j->k * fp_gemm_in_size(j->type));
    return fp_emit(ctx, t, &met, &ctx->self, bytes, iter, v);
}

/* ---- the test --------------------------------------------------------------------- */

typedef struct plan {
    int ms[MAX_LIST], nm;
    int cs[MAX_LIST], nc;  /* chunk counts, 1 first */
    int n[PAT_COUNT], k[PAT_COUNT];
} plan;

static fp_status make_plan(fp_ctx *ctx, plan *pl)
{
    const fp_kernels_config *cfg = FP_SUITE_CFG(fp_kernels_config, ctx);
    bool host = ctx->dev_ops == &fp_device_host;
    static const int m_host[] = {256, 1024}, m_cuda[] = {1024, 4096, 8192};
    static const int c_def[] = {1, 2, 4, 8};
    char err[256];
    int cs[MAX_LIST], nc = 0;
    fp_status st = fp_parse_int_list(&cfg->fused_m, "fused-m", host ? m_host : m_cuda,
                                     host ? 2 : 3, pl->ms, MAX_LIST, &pl->nm, err, sizeof err);
    if (st == FP_OK)
        st = fp_parse_int_list(&cfg->chunks, "chunks", c_def, 4, cs, MAX_LIST - 1, &nc, err,
                               sizeof err);
    if (st == FP_OK && strcmp(cfg->fused_nk, "auto") == 0) {
        /* Flux's GPT-3 175B shapes on GPUs; small ones on CPUs */
        pl->n[PAT_RS] = host ? 512 : 12288;
        pl->k[PAT_RS] = host ? 512 : 49152;
        pl->n[PAT_AG] = host ? 512 : 49152;
        pl->k[PAT_AG] = host ? 512 : 12288;
    } else if (st == FP_OK) {
        int n = 0, k = 0, used = 0;
        if (sscanf(cfg->fused_nk, "%d,%d%n", &n, &k, &used) != 2 || cfg->fused_nk[used] ||
            n < 1 || k < 1) {
            snprintf(err, sizeof err, "--fused-nk '%s': expected N,K (two positive integers) or auto",
                     cfg->fused_nk);
            st = FP_EUSAGE;
        }
        pl->n[PAT_RS] = pl->n[PAT_AG] = n;
        pl->k[PAT_RS] = pl->k[PAT_AG] = k;
    }
    if (st != FP_OK) {
        if (ctx->rank == 0)
            fp_error("fused: %s", err);
        return st;
    }
    for (int i = 0; i < nc; i++)
        if (cs[i] > MAX_CHUNKS) {
            if (ctx->rank == 0)
                fp_error("fused: --chunks item %d is %d; at most %d chunks", i + 1, cs[i],
                         MAX_CHUNKS);
            return FP_EUSAGE;
        }
    pl->cs[0] = 1;
    pl->nc = 1;
    for (int i = 0; i < nc; i++)
        if (cs[i] != 1)
            pl->cs[pl->nc++] = cs[i];
    for (int i = 0; i < pl->nm; i++)
        for (int c = 0; c < pl->nc; c++)
            if (pl->ms[i] % (pl->cs[c] * ctx->nranks)) {
                if (ctx->rank == 0)
                    fp_error("fused: --fused-m %d must be a multiple of chunks x ranks (%d x %d)",
                             pl->ms[i], pl->cs[c], ctx->nranks);
                return FP_EUSAGE;
            }
    return FP_OK;
}

/* ---- time budget ------------------------------------------------------------------ */

/* On a GPU the whole fused test plans its iterations to end within this
 * many seconds (or 3/4 of --timeout when that is less): the default shapes
 * on one H100 must finish within a minute, set-up included. The host
 * backend's shapes are small; there only --timeout bounds it, so a loaded
 * CPU machine keeps the iterations it was asked for. */
#define FUSED_BUDGET_S 45.0

typedef struct budget {
    double start;   /* fp_world_now when the test began */
    double limit;   /* seconds the test plans to take */
    int jobs_left;  /* jobs not yet finished, this one included (the p2p path counts) */
} budget;

/* FP_ETIMEOUT on every rank once the test has run past --timeout. */
static fp_status deadline(fp_ctx *ctx, const budget *bu)
{
    double ran = fp_world_now(ctx->world) - bu->start;
    fp_status st = ran > ctx->cfg->timeout ? FP_ETIMEOUT : FP_OK;
    st = fp_world_agree(ctx->world, st);
    if (st == FP_ETIMEOUT && ctx->rank == 0)
        fp_error("fused: past its deadline (--timeout %.0f s) after %.1f s; give a longer "
                 "--timeout or smaller --fused-m",
                 ctx->cfg->timeout, ran);
    return st;
}

/* After the first iteration (one of every variant) took sec on the slowest
 * rank: fewer iterations when the rest would not fit this job's share of
 * what is left of the budget (one warm-up, at least one timed). The same
 * answer on every rank: it rests only on values every rank has, the slowest
 * rank's iteration and time spent (each rank's own clock would give each
 * its own count of iterations, and ranks that run one more collective than
 * the others wait for them until the deadline). */
static fp_status fit_budget(fp_ctx *ctx, const budget *bu, const job *j, double sec, int *warm,
                            int *iters)
{
    fp_status st = FP_OK;
    double mine[2] = {sec, fp_world_now(ctx->world) - bu->start}, ran = mine[1];
    double *all = malloc(2 * (size_t)ctx->nranks * sizeof *all);
    FP_CHECK_ALLOC(all);
    FP_CHECK(fp_world_allgather(ctx->world, mine, all, (int)sizeof mine, "fused budget"));
    for (int r = 0; r < ctx->nranks; r++) {
        sec = all[2 * r] > sec ? all[2 * r] : sec;
        ran = all[2 * r + 1] > ran ? all[2 * r + 1] : ran;
    }
    double left = bu->limit - ran;
    double share = left / (bu->jobs_left > 0 ? bu->jobs_left : 1);
    int fit = sec > 0 ? (int)fmin(share / sec, 1e6) : *warm + *iters; /* after this one */
    if (fit >= *warm + *iters - 1)
        goto cleanup;
    int want = *iters;
    *iters = *warm > 0 ? fit : fit + 1; /* iteration 0 was the warm-up, or timed */
    /* at least one timed iteration after iteration 0, so the check runs */
    int least = *warm > 0 ? 1 : 2;
    *iters = *iters < least ? least : *iters > want ? want : *iters;
    *warm = *warm > 0 ? 1 : 0;
    if (ctx->rank == 0)
        fp_info("fused %s m=%d: %d of %d timed iterations fit its %.1f s of the %.0f s budget",
                pat_name[j->p], j->m, *iters, want, share, bu->limit);
cleanup:
    free(all);
    return st;
}

static fp_status run_job(fp_ctx *ctx, const fp_test *t, const plan *pl, const budget *bu, job *j)
{
    fp_status st = FP_OK;
    const fp_sweep *sw = &FP_SUITE_CFG(fp_kernels_config, ctx)->sweep;
    int cap = sw->iters, warm = sw->warmup, iters = cap;
    double *tm = calloc((size_t)V_COUNT * (size_t)pl->nc * (size_t)cap, sizeof *tm);
    double *tmp = malloc((size_t)cap * sizeof *tmp);
    size_t wrong = 0;
    FP_CHECK_ALLOC(tm);
    FP_CHECK_ALLOC(tmp);
    FP_CHECK(job_open(ctx, j));
#define TM(v, ci, it) tm[((size_t)(v) * (size_t)pl->nc + (size_t)(ci)) * (size_t)cap + (size_t)(it)]
    for (int it = 0; it < warm + iters; it++) {
        double t0 = fp_clock();
        for (int ci = 0; ci < pl->nc; ci++)
            for (int v = 0; v < V_COUNT; v++) {
                double sec;
                FP_CHECK(run_variant(ctx, j, (variant)v, pl->cs[ci], &sec));
                if (it >= warm)
                    TM(v, ci, it - warm) = sec;
                if (it == warm + iters - 1 && v == V_OVERLAP && sw->check)
                    FP_CHECK(check(ctx, j, pl->cs[ci], &wrong));
            }
        FP_CHECK(deadline(ctx, bu));
        if (it == 0)
            FP_CHECK(fit_budget(ctx, bu, j, fp_clock() - t0, &warm, &iters));
    }
    /* best non-split GEMM, and the non-split sequential ECT */
    double gbest = INFINITY;
    for (int it = 0; it < iters; it++)
        gbest = TM(V_GEMM, 0, it) < gbest ? TM(V_GEMM, 0, it) : gbest;
    for (int it = 0; it < iters; it++)
        tmp[it] = TM(V_SEQ, 0, it);
    double ect_seq = fp_flux_ect(fp_median(tmp, iters), gbest);
    FP_CHECK(emit(ctx, t, j, "gemm_best", "ms", FP_BETTER_LOWER, -1, gbest * 1e3));
    FP_CHECK(emit(ctx, t, j, "ect_seq", "ms", FP_BETTER_LOWER, -1, ect_seq * 1e3));
    for (int ci = 0; ci < pl->nc; ci++) {
        char what[24];
        double med[V_COUNT];
        for (int v = 0; v < V_COUNT; v++) {
            snprintf(what, sizeof what, "c%d_%s", pl->cs[ci], var_name[v]);
            for (int it = 0; it < iters; it++) {
                tmp[it] = TM(v, ci, it);
                FP_CHECK(emit(ctx, t, j, what, "ms", FP_BETTER_LOWER, it, tmp[it] * 1e3));
            }
            med[v] = fp_median(tmp, iters);
            FP_CHECK(emit(ctx, t, j, what, "ms", FP_BETTER_LOWER, -1, med[v] * 1e3));
        }
        double ect = fp_flux_ect(med[V_OVERLAP], gbest);
        double e = fp_flux_efficiency(ect, ect_seq);
        snprintf(what, sizeof what, "c%d_ect", pl->cs[ci]);
        FP_CHECK(emit(ctx, t, j, what, "ms", FP_BETTER_LOWER, -1, ect * 1e3));
        snprintf(what, sizeof what, "c%d_E", pl->cs[ci]);
        if (isfinite(e))
            FP_CHECK(emit(ctx, t, j, what, "ratio", FP_BETTER_HIGHER, -1, e));
        else
            fp_warn("fused %s m=%d: no exposed communication even without overlap; E undefined",
                    pat_name[j->p], j->m);
    }
#undef TM
    if (sw->check) {
        ctx->wrong += (long long)wrong;
        FP_CHECK(emit(ctx, t, j, "wrong", "count", FP_BETTER_LOWER, -1, (double)wrong));
    }
cleanup:
    job_free(ctx, j);
    free(tm);
    free(tmp);
    return st;
}

static fp_status fused_run(fp_ctx *ctx, const fp_test *t)
{
    fp_status st = FP_OK;
    plan pl;
    job *j = calloc(1, sizeof *j);
    FP_CHECK_ALLOC(j);
    FP_CHECK(make_plan(ctx, &pl));
    budget bu = {.start = fp_world_now(ctx->world),
                 .limit = fmin(ctx->dev_ops == &fp_device_host ? INFINITY : FUSED_BUDGET_S,
                               0.75 * ctx->cfg->timeout),
                 .jobs_left = PAT_COUNT * pl.nm + 1};
    for (int p = 0; p < PAT_COUNT; p++)
        for (int mi = 0; mi < pl.nm; mi++) {
            memset(j, 0, sizeof *j);
            j->p = (pattern)p;
            j->m = pl.ms[mi];
            j->n = pl.n[p];
            j->k = pl.k[p];
            j->nranks = ctx->nranks;
            j->rank = ctx->rank;
            /* bf16 where the device has it (as in training), else fp32 */
            j->type = ctx->dev_ops->gemm_supports(ctx->dev, FP_GEMM_BF16) ? FP_GEMM_BF16
                                                                          : FP_GEMM_F32;
            j->slices = ctx->comm_ops->device_buffers ? 1 : HOST_SLICES;
            if (p == PAT_AG && ((size_t)j->k * fp_gemm_in_size(j->type)) % sizeof(float))
                FP_FAIL(FP_EUSAGE, "fused: k must be even for 16-bit all-gather (got %d)", j->k);
            FP_CHECK(run_job(ctx, t, &pl, &bu, j));
            bu.jobs_left--;
        }
    /* the fused-kernel path, where the hardware allows it */
    char why[160] = "";
    st = fp_fused_p2p(ctx, t, pl.ms[0], pl.n[PAT_RS], pl.k[PAT_RS], why, sizeof why);
    if (st == FP_EUNSUPPORTED) {
        if (ctx->rank == 0)
            fp_info("fused: GEMM epilogue into peer buffers skipped: %s", why);
        st = FP_OK;
    }
cleanup:
    free(j);
    return st;
}

const fp_test fp_test_fused = {
    .suite = "kernels",
    .name = "fused",
    .summary = "GEMM + reduce-scatter and all-gather + GEMM overlap (Flux ECT, E)",
    .run = fused_run,
};
