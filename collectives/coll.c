/* The collective suite: one const descriptor per collective and one driver
 * loop over data types x reductions x sizes x placement. Each call is timed
 * per rank on the common clock (enter, exit), from which the driver derives
 * nccl-tests' figures, the late rank of every call and every rank's lateness.
 * Results are verified with inputs whose result is known exactly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/collectives.h"
#include "fleetprint/log.h"
#include "fleetprint/stats.h"

enum { MAX_SIZES = 256 };

/* ---- descriptors ------------------------------------------------------------------ */

typedef struct coll_desc {
    const fp_test *test;
    fp_coll coll;
    bool reduces;   /* takes a reduction */
    bool in_place;  /* has an in-place variant */
} coll_desc;

static fp_status coll_run(fp_ctx *ctx, const fp_test *t);

#define COLL_TEST(id, text)                                                                \
    const fp_test fp_test_##id = {                                                         \
        .suite = "collectives", .name = #id, .summary = text, .run = coll_run}

COLL_TEST(allreduce, "allreduce: every rank gets the reduction of all inputs");
COLL_TEST(allgather, "allgather: every rank gets every rank's block");
COLL_TEST(reduce_scatter, "reduce_scatter: rank r gets block r of the reduction");
COLL_TEST(alltoall, "alltoall: block p of rank r goes to rank p");
COLL_TEST(broadcast, "broadcast: rank 0's buffer to every rank");
COLL_TEST(reduce, "reduce: the reduction of all inputs at rank 0");
COLL_TEST(sendrecv, "sendrecv: ring neighbour exchange (send to r+1, receive from r-1)");

static const coll_desc descs[] = {
    {&fp_test_allreduce, FP_ALLREDUCE, true, true},
    {&fp_test_allgather, FP_ALLGATHER, false, true},
    {&fp_test_reduce_scatter, FP_REDUCE_SCATTER, true, true},
    /* in place would have NCCL's grouped send and receive race on one block */
    {&fp_test_alltoall, FP_ALLTOALL, false, false},
    {&fp_test_broadcast, FP_BROADCAST, false, true},
    {&fp_test_reduce, FP_REDUCE, true, true},
    {&fp_test_sendrecv, FP_SENDRECV, false, false},
};
static const int ROOT = 0;

/* The data types tried, in table order; each runs where the backend supports it. */
static const fp_dtype dtypes[] = {FP_F32, FP_F64, FP_F16, FP_BF16};
static const fp_redop redops[] = {FP_SUM, FP_MAX, FP_MIN};

static const fp_metric m_time = {"time", "us", FP_BETTER_LOWER};
static const fp_metric m_time_max = {"time_max", "us", FP_BETTER_LOWER};
static const fp_metric m_algbw = {"algbw", "GB/s", FP_BETTER_HIGHER};
static const fp_metric m_busbw = {"busbw", "GB/s", FP_BETTER_HIGHER};
static const fp_metric m_wrong = {"wrong", "count", FP_BETTER_LOWER};
static const fp_metric m_lateness = {"lateness", "us", FP_BETTER_LOWER};
static const fp_metric m_late_rank = {"late_rank", "rank", FP_BETTER_LOWER};

/* ---- known inputs and results -------------------------------------------------------
 * Element j of rank r's input is A(j) + B(r): small integers, so every sum is
 * exact in float and double (and in the 16-bit types while 5n fits their
 * mantissa), and the reduction over ranks has a closed form per element. */

static const double SENTINEL = -9; /* never a single input value: shows unwritten output */

static double pat_a(uint64_t j)
{
    return (double)(int)((((j + 1) * 0x9e3779b97f4a7c15ULL) >> 40) % 5) - 2;
}

static double pat_b(int r)
{
    return (double)(r % 4);
}

/* Reduction over n ranks of A + B(r). */
static double reduced(fp_redop op, double a, int n)
{
    double sum = 0, hi = pat_b(0), lo = pat_b(0);
    for (int r = 0; r < n && r < 4; r++) {
        hi = pat_b(r) > hi ? pat_b(r) : hi;
        lo = pat_b(r) < lo ? pat_b(r) : lo;
    }
    for (int r = 0; r < 4; r++) /* B cycles with period 4 */
        sum += pat_b(r) * (double)(n / 4 + (r < n % 4));
    return op == FP_MAX ? a + hi : op == FP_MIN ? a + lo : n * a + sum;
}

/* Tolerance of a result element: exact unless 16-bit sums outgrow the mantissa. */
static double tolerance(fp_dtype t, int n)
{
    double top = 5.0 * n, exact = t == FP_BF16 ? 256 : t == FP_F16 ? 2048 : 1e15;
    if (top <= exact)
        return 0;
    return top * (t == FP_BF16 ? 0x1p-8 : 0x1p-11) * (log2(n) + 1);
}

static double load(const void *p, fp_dtype t, size_t i)
{
    switch (t) {
    case FP_F64: return ((const double *)p)[i];
    case FP_F16: return fp_half_to_double(((const uint16_t *)p)[i]);
    case FP_BF16: return fp_bf16_to_double(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static void store(void *p, fp_dtype t, size_t i, double v)
{
    switch (t) {
    case FP_F64: ((double *)p)[i] = v; break;
    case FP_F16: ((uint16_t *)p)[i] = fp_half_from_double(v); break;
    case FP_BF16: ((uint16_t *)p)[i] = fp_bf16_from_double(v); break;
    default: ((float *)p)[i] = (float)v; break;
    }
}

/* Element j of rank me's input. */
static double input(fp_coll c, int me, size_t count, size_t j)
{
    if (c == FP_ALLGATHER)
        return pat_a((uint64_t)me * count + j) + pat_b(me);
    if (c == FP_BROADCAST)
        return me == ROOT ? pat_a(j) + pat_b(ROOT) : SENTINEL;
    return pat_a(j) + pat_b(me);
}

/* Element k of rank me's result region. */
static double expected(fp_coll c, fp_redop op, int me, int n, size_t count, size_t k)
{
    switch (c) {
    case FP_ALLREDUCE:
    case FP_REDUCE:
        return reduced(op, pat_a(k), n);
    case FP_REDUCE_SCATTER:
        return reduced(op, pat_a((uint64_t)me * count + k), n);
    case FP_ALLGATHER:
        return pat_a(k) + pat_b((int)(k / count));
    case FP_ALLTOALL:
        return pat_a((uint64_t)me * count + k % count) + pat_b((int)(k / count));
    case FP_BROADCAST:
        return pat_a(k) + pat_b(ROOT);
    default: /* sendrecv: from the previous rank of the ring */
        return pat_a(k) + pat_b((me - 1 + n) % n);
    }
}

/* ---- buffers ---------------------------------------------------------------------- */

/* Send and receive buffers where the comm backend wants them, and a host
 * staging buffer when that is device memory. */
typedef struct coll_bufs {
    void *send, *recv, *stage;
    size_t send_bytes, recv_bytes;
    bool on_device;
} coll_bufs;

static void bufs_free(fp_ctx *ctx, coll_bufs *b)
{
    if (b->on_device) {
        if (b->send)
            ctx->dev_ops->free(ctx->dev, b->send);
        if (b->recv)
            ctx->dev_ops->free(ctx->dev, b->recv);
    } else {
        free(b->send);
        free(b->recv);
    }
    free(b->stage);
    memset(b, 0, sizeof *b);
}

static fp_status bufs_alloc(fp_ctx *ctx, coll_bufs *b, size_t send_bytes, size_t recv_bytes)
{
    fp_status st = FP_OK;
    memset(b, 0, sizeof *b);
    b->on_device = ctx->comm_ops->device_buffers;
    b->send_bytes = send_bytes;
    b->recv_bytes = recv_bytes;
    if (b->on_device) {
        FP_CHECK(ctx->dev_ops->alloc(ctx->dev, send_bytes, &b->send));
        FP_CHECK(ctx->dev_ops->alloc(ctx->dev, recv_bytes, &b->recv));
        b->stage = malloc(send_bytes > recv_bytes ? send_bytes : recv_bytes);
        FP_CHECK_ALLOC(b->stage);
    } else {
        if (posix_memalign(&b->send, 4096, send_bytes ? send_bytes : 1) != 0)
            b->send = NULL;
        FP_CHECK_ALLOC(b->send);
        if (posix_memalign(&b->recv, 4096, recv_bytes ? recv_bytes : 1) != 0)
            b->recv = NULL;
        FP_CHECK_ALLOC(b->recv);
    }
cleanup:
    if (st != FP_OK)
        bufs_free(ctx, b);
    return st;
}

/* Host view of a buffer to fill: the buffer itself or the staging area. */
static void *host_view(coll_bufs *b, void *buf)
{
    return b->on_device ? b->stage : buf;
}

static fp_status upload(fp_ctx *ctx, coll_bufs *b, void *buf, size_t bytes)
{
    if (!b->on_device || bytes == 0)
        return FP_OK;
    return ctx->dev_ops->copy(ctx->dev, buf, b->stage, bytes, FP_COPY_H2D);
}

/* Fill the inputs (and the outputs with the sentinel) of one call. */
static fp_status fill(fp_ctx *ctx, coll_bufs *b, const coll_desc *d, const fp_coll_variant *v,
                      const fp_coll_geom *g)
{
    fp_status st = FP_OK;
    size_t esz = fp_dtype_size(v->dtype);
    int me = ctx->rank;
    if (!v->in_place) {
        void *h = host_view(b, b->send);
        for (size_t j = 0; j < g->send_elems; j++)
            store(h, v->dtype, j, input(d->coll, me, g->count, j));
        FP_CHECK(upload(ctx, b, b->send, g->send_elems * esz));
    }
    void *h = host_view(b, b->recv);
    for (size_t j = 0; j < g->recv_elems; j++) {
        double x = SENTINEL;
        if (v->in_place && d->coll == FP_ALLGATHER && j / g->count == (size_t)me)
            x = input(d->coll, me, g->count, j - (size_t)me * g->count);
        else if (v->in_place && d->coll != FP_ALLGATHER)
            x = input(d->coll, me, g->count, j);
        store(h, v->dtype, j, x);
    }
    FP_CHECK(upload(ctx, b, b->recv, g->recv_elems * esz));
cleanup:
    return st;
}

/* Count wrong elements of this rank's result. */
static fp_status check(fp_ctx *ctx, coll_bufs *b, const coll_desc *d, const fp_coll_variant *v,
                       const fp_coll_geom *g, long long *wrong)
{
    fp_status st = FP_OK;
    int me = ctx->rank, n = ctx->nranks;
    size_t esz = fp_dtype_size(v->dtype), off = 0, cnt = g->count;
    *wrong = 0;
    if (d->coll == FP_ALLGATHER || d->coll == FP_ALLTOALL)
        cnt = g->recv_elems;
    else if (d->coll == FP_REDUCE_SCATTER && v->in_place)
        off = (size_t)me * g->count;
    else if (d->coll == FP_REDUCE && me != ROOT)
        cnt = 0;
    if (cnt == 0)
        goto cleanup;
    const void *h = (const char *)b->recv + off * esz;
    if (b->on_device) {
        FP_CHECK(ctx->dev_ops->copy(ctx->dev, b->stage, h, cnt * esz, FP_COPY_D2H));
        h = b->stage;
    }
    double tol = tolerance(v->dtype, n);
    long long bad = 0;
    for (size_t k = 0; k < cnt; k++) {
        double x = load(h, v->dtype, k), e = expected(d->coll, v->op, me, n, g->count, k);
        bad += !(fabs(x - e) <= tol);
    }
    *wrong = bad;
cleanup:
    return st;
}

/* ---- one row: a size and a variant --------------------------------------------------- */

typedef struct sweep {
    fp_ctx *ctx;
    const fp_sweep *sw; /* the suite's sizes and iterations */
    const fp_test *t;
    const coll_desc *d;
    coll_bufs bufs;
    double *times;     /* this rank: enter, exit of each timed call */
    double *all;       /* every rank's times */
    double *scratch;   /* nranks */
    long long wrong, wrong_rows, rows;
    char first_wrong[128];
} sweep;

static fp_status emit(sweep *s, const fp_metric *m, const fp_coll_variant *v, const fp_entity *e,
                      uint64_t size, int iter, double value)
{
    char name[32];
    fp_metric named = *m;
    named.name = fp_coll_metric_name(name, sizeof name, m->name, v);
    return fp_emit(s->ctx, s->t, &named, e, size, iter, value);
}

static fp_entity rank_entity(fp_ctx *ctx, int r)
{
    return fp_entity_rank(fp_world_node_name(ctx->world, fp_world_node_of(ctx->world, r)), r);
}

/* Figures of one row from every rank's enter and exit times. */
static fp_status figures(sweep *s, const fp_coll_variant *v, const fp_coll_geom *g)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    int n = ctx->nranks, iters = s->sw->iters, me = ctx->rank;
    int block = 2 * iters;
    FP_CHECK(fp_world_allgather(ctx->world, s->times, s->all, block * (int)sizeof(double),
                                s->t->name));
    double tmax = 0;
    for (int r = 0; r < n; r++) {
        const double *tr = s->all + (size_t)r * block;
        double loop = (tr[block - 1] - tr[0]) / iters;
        tmax = loop > tmax ? loop : tmax;
        if (r == me)
            FP_CHECK(emit(s, &m_time, v, &ctx->self, g->bytes, -1, loop * 1e6));
    }
    fp_entity mine = rank_entity(ctx, me);
    for (int it = 0; it < iters; it++) {
        int late = 0;
        for (int r = 0; r < n; r++) {
            s->scratch[r] = s->all[(size_t)r * block + 2 * it];
            if (s->scratch[r] > s->scratch[late])
                late = r;
        }
        double mine_enter = s->scratch[me];
        double med = fp_median(s->scratch, n);
        FP_CHECK(emit(s, &m_lateness, v, &mine, g->bytes, it, (mine_enter - med) * 1e6));
        if (me == 0) {
            fp_entity who = rank_entity(ctx, late);
            FP_CHECK(emit(s, &m_late_rank, v, &who, g->bytes, it, late));
        }
    }
    if (me == 0) {
        fp_entity world = fp_entity_group("world");
        double algbw = tmax > 0 ? (double)g->bytes / tmax * 1e-9 : 0;
        FP_CHECK(emit(s, &m_time_max, v, &world, g->bytes, -1, tmax * 1e6));
        FP_CHECK(emit(s, &m_algbw, v, &world, g->bytes, -1, algbw));
        FP_CHECK(emit(s, &m_busbw, v, &world, g->bytes, -1,
                      algbw * fp_coll_bus_factor(s->d->coll, n)));
    }
cleanup:
    return st;
}

static double shortest(double typical, double t)
{
    return typical <= 0 || t < typical ? t : typical;
}

/* Time warm-up + iters calls of one row, then check one fresh call. */
static fp_status row(sweep *s, const fp_coll_variant *v, uint64_t size)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    const fp_sweep *sw = s->sw;
    const coll_desc *d = s->d;
    size_t esz = fp_dtype_size(v->dtype);
    fp_coll_geom g = fp_coll_geometry(d->coll, size, esz, ctx->nranks);
    char what[128];
    snprintf(what, sizeof what, "%s %s %s %s %llu B", s->t->name, fp_dtype_name(v->dtype),
             v->op < FP_REDOP_COUNT ? fp_redop_name(v->op) : "none",
             v->in_place ? "in-place" : "out-of-place", (unsigned long long)g.bytes);
    fp_coll_args a = {
        .coll = d->coll,
        .send = v->in_place ? s->bufs.recv : s->bufs.send,
        .recv = s->bufs.recv,
        .count = g.count,
        .dtype = v->dtype,
        .op = v->op < FP_REDOP_COUNT ? v->op : FP_SUM,
        .root = ROOT,
        .peer = (ctx->rank + 1) % ctx->nranks,
        .recv_peer = (ctx->rank - 1 + ctx->nranks) % ctx->nranks,
    };
    FP_CHECK(fill(ctx, &s->bufs, d, v, &g));
    FP_CHECK(fp_ctx_barrier(ctx, what));
    /* typical: this rank's shortest call so far. Not the last one: a late
     * rank's calls stretch while peers poll less often, and an injected
     * delay proportional to that would feed on itself. */
    double typical = 0, enter, exit;
    for (int w = 0; w < sw->warmup; w++) {
        FP_CHECK(fp_collective_timed(ctx, &a, what, typical, &enter, &exit));
        typical = shortest(typical, exit - enter);
    }
    FP_CHECK(fp_ctx_sync(ctx, what));
    for (int it = 0; it < sw->iters; it++) {
        double *t = s->times + 2 * it;
        FP_CHECK(fp_collective_timed(ctx, &a, what, typical, &t[0], &t[1]));
        typical = shortest(typical, t[1] - t[0]);
    }
    FP_CHECK(figures(s, v, &g));
    if (sw->check) {
        long long wrong = 0;
        FP_CHECK(fill(ctx, &s->bufs, d, v, &g));
        FP_CHECK(fp_ctx_barrier(ctx, what));
        FP_CHECK(fp_collective_timed(ctx, &a, what, typical, NULL, NULL));
        FP_CHECK(check(ctx, &s->bufs, d, v, &g, &wrong));
        FP_CHECK(emit(s, &m_wrong, v, &ctx->self, g.bytes, -1, (double)wrong));
        if (wrong && !s->wrong_rows)
            snprintf(s->first_wrong, sizeof s->first_wrong, "%s", what);
        s->wrong += wrong;
        s->wrong_rows += wrong > 0;
    }
    s->rows++;
cleanup:
    if (st == FP_EUNSUPPORTED && ctx->rank == 0)
        fp_error("%s: not supported by comm backend %s", what, ctx->comm_ops->name);
    return st;
}

/* ---- the sweep ------------------------------------------------------------------------ */

static const coll_desc *find_desc(const fp_test *t)
{
    for (size_t i = 0; i < sizeof descs / sizeof descs[0]; i++)
        if (descs[i].test == t)
            return &descs[i];
    return NULL;
}

/* Memory this rank may use for buffers: its share of the node's memory when
 * they are host memory, else the device's; 80% of either. */
static double memory_budget(const fp_ctx *ctx)
{
    double total = (double)ctx->dev_info.memory;
    if (!ctx->comm_ops->device_buffers || total <= 0) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        total = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
        total /= fp_world_local_size(ctx->world);
    }
    return 0.8 * total;
}

/* Buffers for the largest size: one line from the lowest rank that cannot
 * have them, FP_EUSAGE on every rank. */
static fp_status size_buffers(sweep *s, uint64_t max_size, size_t *send_bytes, size_t *recv_bytes)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    double send = 0, recv = 0;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        fp_coll_geom g = fp_coll_geometry(s->d->coll, max_size, fp_dtype_size(dtypes[i]),
                                          ctx->nranks);
        double esz = (double)fp_dtype_size(dtypes[i]);
        send = (double)g.send_elems * esz > send ? (double)g.send_elems * esz : send;
        recv = (double)g.recv_elems * esz > recv ? (double)g.recv_elems * esz : recv;
    }
    double need = send + recv, budget = memory_budget(ctx);
    int ok = need <= budget && need < 0x1p62, *all = calloc((size_t)ctx->nranks, sizeof *all);
    FP_CHECK_ALLOC(all);
    FP_CHECK(fp_world_allgather(ctx->world, &ok, all, (int)sizeof ok, "collective sizes"));
    int first_bad = -1;
    for (int r = 0; r < ctx->nranks && first_bad < 0; r++)
        if (!all[r])
            first_bad = r;
    if (first_bad >= 0) {
        if (first_bad == ctx->rank)
            fp_error("%s: --max-bytes %llu needs %.1f GiB of buffers per rank, more than the "
                     "%.1f GiB this rank may use (80%% of its memory): lower --max-bytes",
                     s->t->name, (unsigned long long)max_size, need / 0x1p30, budget / 0x1p30);
        st = FP_EUSAGE;
        goto cleanup;
    }
    *send_bytes = (size_t)send;
    *recv_bytes = (size_t)recv;
cleanup:
    free(all);
    return st;
}

fp_status fp_coll_sweep(fp_ctx *ctx, const fp_test *t, const fp_coll_variant *only)
{
    fp_status st = FP_OK;
    const fp_sweep *sw = &FP_SUITE_CFG(fp_coll_config, ctx)->sweep;
    sweep s = {.ctx = ctx, .sw = sw, .t = t, .d = find_desc(t)};
    uint64_t sizes[MAX_SIZES];
    int nsizes = 0;
    char err[256];
    if (!s.d)
        FP_FAIL(FP_EINTERNAL, "%s is not a collective test", t->name);
    if (sw->warmup < 0) {
        if (ctx->rank == 0)
            fp_error("--warmup-iters must not be negative");
        st = FP_EUSAGE;
        goto cleanup;
    }
    st = fp_coll_sizes(sw->min_bytes, sw->max_bytes, sw->step_factor, sizes, MAX_SIZES,
                       &nsizes, err, sizeof err);
    if (st != FP_OK) {
        if (ctx->rank == 0)
            fp_error("%s", err);
        goto cleanup;
    }
    size_t send_bytes = 0, recv_bytes = 0;
    FP_CHECK(size_buffers(&s, sizes[nsizes - 1], &send_bytes, &recv_bytes));
    st = bufs_alloc(ctx, &s.bufs, send_bytes, recv_bytes);
    s.times = calloc(2 * (size_t)sw->iters, sizeof *s.times);
    s.all = calloc(2 * (size_t)sw->iters * (size_t)ctx->nranks, sizeof *s.all);
    s.scratch = calloc((size_t)ctx->nranks, sizeof *s.scratch);
    if (st == FP_OK && (!s.times || !s.all || !s.scratch))
        st = FP_ENOMEM;
    if (st != FP_OK)
        fp_error("%s: cannot allocate %zu bytes of buffers", t->name, send_bytes + recv_bytes);
    FP_CHECK(fp_world_agree(ctx->world, st));

    /* the one driver loop: data types x reductions x sizes x placement; with a
     * deadline, no variant starts that would end past it */
    int nops = s.d->reduces ? (int)(sizeof redops / sizeof redops[0]) : 1;
    bool go = true;
    for (size_t ti = 0; ti < sizeof dtypes / sizeof dtypes[0] && go; ti++) {
        for (int oi = 0; oi < nops && go; oi++) {
            fp_coll_variant v = {dtypes[ti], s.d->reduces ? redops[oi] : FP_REDOP_COUNT, false};
            if (!ctx->comm_ops->supports(v.dtype, s.d->reduces ? v.op : FP_SUM))
                continue;
            if (only && (only->dtype != v.dtype || only->op != v.op))
                continue;
            double t0 = fp_world_now(ctx->world);
            uint64_t last = UINT64_MAX;
            for (int si = 0; si < nsizes; si++) {
                fp_coll_geom g = fp_coll_geometry(s.d->coll, sizes[si], fp_dtype_size(v.dtype),
                                                  ctx->nranks);
                if (g.bytes == last)
                    continue; /* the same whole-element size as the previous step */
                last = g.bytes;
                for (int place = 0; place < 2; place++) {
                    v.in_place = place == 1;
                    if ((v.in_place && !s.d->in_place) || (only && only->in_place != v.in_place))
                        continue;
                    FP_CHECK(row(&s, &v, sizes[si]));
                }
            }
            FP_CHECK(fp_coll_in_time(ctx, t0, &go));
            if (!go && ctx->rank == 0)
                fp_info("%s: the next variant would end past the deadline: stopped", t->name);
        }
    }
    if (s.wrong)
        fp_error("%s: %lld wrong elements in %lld of %lld rows on this rank (first: %s)",
                 t->name, s.wrong, s.wrong_rows, s.rows, s.first_wrong);
    ctx->wrong += s.wrong;
cleanup:
    bufs_free(ctx, &s.bufs);
    free(s.times);
    free(s.all);
    free(s.scratch);
    return st;
}

static fp_status coll_run(fp_ctx *ctx, const fp_test *t)
{
    return fp_coll_sweep(ctx, t, NULL);
}
