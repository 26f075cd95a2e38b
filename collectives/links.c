/* links: the pairwise link sweep. Every selected pair of nodes (through
 * their leader ranks) and every pair of ranks inside a node exchanges a large
 * message in both directions at once; pairs run in concurrent rounds of
 * disjoint pairs (a round-robin tournament for --pairs all), so the sweep
 * costs O(N) rounds. Each link is measured in several passes over all rounds;
 * its figures are medians over every exchange. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/collectives.h"
#include "fleetprint/log.h"

enum {
    PASSES = 3,      /* passes over all rounds: a link's samples span the whole sweep */
    LAT_ITERS = 10,  /* small exchanges per link and pass, for latency */
    LAT_ELEMS = 2,   /* floats in a latency exchange */
    RANDOM_SEED = 20240601,
};

/* ---- planning ---------------------------------------------------------------------- */

void fp_link_plan_free(fp_link_plan *plan)
{
    free(plan->pair);
    free(plan->round);
    memset(plan, 0, sizeof *plan);
}

static fp_status plan_alloc(fp_link_plan *p, int n, int cap)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->pair = calloc((size_t)(cap > 0 ? cap : 1), sizeof *p->pair);
    p->round = calloc((size_t)(cap > 0 ? cap : 1), sizeof *p->round);
    if (!p->pair || !p->round) {
        fp_link_plan_free(p);
        return FP_ENOMEM;
    }
    return FP_OK;
}

static void add_pair(fp_link_plan *p, int a, int b, int round)
{
    p->pair[p->npairs][0] = a < b ? a : b;
    p->pair[p->npairs][1] = a < b ? b : a;
    p->round[p->npairs++] = round;
    p->nrounds = round + 1 > p->nrounds ? round + 1 : p->nrounds;
}

/* Circle method: fix the last slot, rotate the others; an odd n gets a
 * resting slot (n), whose partner sits the round out. */
static void tournament(fp_link_plan *p, int n)
{
    int m = n % 2 ? n + 1 : n;
    for (int r = 0; r < m - 1; r++) {
        for (int i = 0; i < m / 2; i++) {
            int a = i == 0 ? m - 1 : (r + i) % (m - 1);
            int b = (r - i + m - 1) % (m - 1);
            if (a < n && b < n)
                add_pair(p, a, b, r);
        }
    }
}

static bool has_pair(const int (*pairs)[2], int np, int a, int b)
{
    for (int i = 0; i < np; i++)
        if ((pairs[i][0] == a && pairs[i][1] == b) || (pairs[i][0] == b && pairs[i][1] == a))
            return true;
    return false;
}

/* Pack a list of distinct pairs greedily into rounds of disjoint pairs. */
static fp_status pack(fp_link_plan *p, const int (*pairs)[2], int np)
{
    int *busy_until = calloc((size_t)np * (size_t)p->n + 1, sizeof *busy_until);
    bool *placed = calloc((size_t)np + 1, sizeof *placed);
    if (!busy_until || !placed) {
        free(busy_until);
        free(placed);
        return FP_ENOMEM;
    }
    /* busy_until[round * n + endpoint]: used in that round */
    int left = np;
    for (int round = 0; left > 0; round++) {
        for (int i = 0; i < np; i++) {
            int a = pairs[i][0], b = pairs[i][1];
            int *used = busy_until + (size_t)round * (size_t)p->n;
            if (placed[i] || used[a] || used[b])
                continue;
            used[a] = used[b] = 1;
            placed[i] = true;
            add_pair(p, a, b, round);
            left--;
        }
    }
    free(busy_until);
    free(placed);
    return FP_OK;
}

/* xorshift64*: the same draws on every rank. */
static uint64_t next_random(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545f4914f6cdd1dULL;
}

fp_status fp_link_plan_make(const char *mode, int n, fp_link_plan *plan, char *err, size_t len)
{
    int k = 0;
    char tail;
    bool all = strcmp(mode, "all") == 0, ring = strcmp(mode, "ring") == 0;
    bool near = sscanf(mode, "k=%d%c", &k, &tail) == 1;
    bool rnd = sscanf(mode, "random=%d%c", &k, &tail) == 1;
    memset(plan, 0, sizeof *plan);
    if (!all && !ring && !near && !rnd) {
        snprintf(err, len, "--pairs '%s': expected all, ring, k=K or random=K", mode);
        return FP_EUSAGE;
    }
    if ((near || rnd) && k < 1) {
        snprintf(err, len, "--pairs '%s': K must be at least 1", mode);
        return FP_EUSAGE;
    }
    if (n < 1) {
        snprintf(err, len, "--pairs: no endpoints");
        return FP_EUSAGE;
    }
    long long most = (long long)n * (n - 1) / 2;
    if (all) {
        if (plan_alloc(plan, n, (int)most) != FP_OK)
            return FP_ENOMEM;
        tournament(plan, n);
        return FP_OK;
    }
    int per = ring ? 1 : k;
    per = per < n - 1 ? per : n - 1;
    long long cap = (long long)n * per;
    cap = cap < most ? cap : most;
    int (*pairs)[2] = calloc((size_t)cap + 1, sizeof *pairs);
    if (!pairs || plan_alloc(plan, n, (int)cap) != FP_OK) {
        free(pairs);
        return FP_ENOMEM;
    }
    int np = 0;
    uint64_t state = RANDOM_SEED;
    for (int i = 0; i < n; i++) {
        for (int d = 1; d <= per && np < cap; d++) {
            int j = (i + d) % n;
            if (rnd) /* a partner other than i, uniformly */
                j = (i + 1 + (int)(next_random(&state) % (uint64_t)(n - 1))) % n;
            if (j != i && !has_pair((const int (*)[2])pairs, np, i, j)) {
                pairs[np][0] = i < j ? i : j;
                pairs[np][1] = i < j ? j : i;
                np++;
            }
        }
    }
    fp_status st = pack(plan, (const int (*)[2])pairs, np);
    free(pairs);
    if (st != FP_OK)
        fp_link_plan_free(plan);
    return st;
}

/* ---- the sweep ------------------------------------------------------------------------ */

static const fp_metric m_bw_inter = {"bw_inter", "GB/s", FP_BETTER_HIGHER};
static const fp_metric m_bw_intra = {"bw_intra", "GB/s", FP_BETTER_HIGHER};
static const fp_metric m_lat_inter = {"lat_inter", "us", FP_BETTER_LOWER};
static const fp_metric m_lat_intra = {"lat_intra", "us", FP_BETTER_LOWER};
static const fp_metric m_rounds = {"rounds", "count", FP_BETTER_LOWER};
static const fp_metric m_pairs = {"pairs", "count", FP_BETTER_HIGHER};
static const fp_metric m_wrong = {"wrong", "count", FP_BETTER_LOWER};

/* One link of this rank: its partner and what was measured on it. */
typedef struct my_link {
    int partner;
    bool intra;
    int round;         /* global round index */
    int nbw, nlat;
    double *bw;        /* GB/s, both directions together */
    double *lat;       /* s */
} my_link;

typedef struct links_state {
    fp_ctx *ctx;
    const fp_test *t;
    int nrounds;       /* inter-node rounds, then intra-node rounds */
    int nlinks;
    my_link *link;     /* this rank's links, by round */
    void *send, *recv, *stage;
    bool on_device;
    size_t count;      /* floats per direction */
    long long wrong;
} links_state;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Find this rank's partner in every round: inter-node pairs through node
 * leaders, then intra-node pairs of local ranks (all nodes at once). */
static fp_status plan_links(links_state *s, int *total_pairs)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    fp_world *w = ctx->world;
    int nn = fp_world_nnodes(w), me = ctx->rank, mynode = fp_world_node_of(w, me);
    int maxlocal = 1;
    for (int i = 0; i < nn; i++)
        maxlocal = fp_world_node_size(w, i) > maxlocal ? fp_world_node_size(w, i) : maxlocal;
    fp_link_plan inter = {0}, intra = {0};
    char err[160];
    st = fp_link_plan_make(ctx->cfg->pairs, nn, &inter, err, sizeof err);
    if (st == FP_EUSAGE && me == 0)
        fp_error("%s", err);
    if (st == FP_OK)
        st = fp_link_plan_make("all", maxlocal, &intra, err, sizeof err);
    if (st != FP_OK)
        goto cleanup;
    s->nrounds = inter.nrounds + intra.nrounds;
    s->link = calloc((size_t)s->nrounds + 1, sizeof *s->link);
    FP_CHECK_ALLOC(s->link);
    *total_pairs = inter.npairs;
    /* ranks of each node in rank order: local index -> rank */
    int *local_to_rank = calloc((size_t)maxlocal, sizeof *local_to_rank);
    FP_CHECK_ALLOC(local_to_rank);
    for (int r = 0, k = 0; r < ctx->nranks; r++)
        if (fp_world_node_of(w, r) == mynode)
            local_to_rank[k++] = r;
    int mysize = fp_world_node_size(w, mynode);
    for (int i = 0; i < inter.npairs; i++) {
        int a = fp_world_node_leader(w, inter.pair[i][0]);
        int b = fp_world_node_leader(w, inter.pair[i][1]);
        if (a == me || b == me)
            s->link[s->nlinks++] = (my_link){.partner = a == me ? b : a, .round = inter.round[i]};
    }
    for (int i = 0; i < intra.npairs; i++) {
        int a = intra.pair[i][0], b = intra.pair[i][1];
        if (b >= mysize)
            continue;
        int ra = local_to_rank[a], rb = local_to_rank[b];
        if (ra == me || rb == me)
            s->link[s->nlinks++] = (my_link){.partner = ra == me ? rb : ra, .intra = true,
                                             .round = inter.nrounds + intra.round[i]};
    }
    for (int node = 0; node < nn; node++) {
        int sz = fp_world_node_size(w, node);
        *total_pairs += sz * (sz - 1) / 2;
    }
    free(local_to_rank);
    int per = PASSES * ctx->cfg->iters;
    for (int i = 0; i < s->nlinks; i++) {
        s->link[i].bw = calloc((size_t)per, sizeof(double));
        s->link[i].lat = calloc((size_t)PASSES * LAT_ITERS, sizeof(double));
        FP_CHECK_ALLOC(s->link[i].bw);
        FP_CHECK_ALLOC(s->link[i].lat);
    }
cleanup:
    fp_link_plan_free(&inter);
    fp_link_plan_free(&intra);
    return st;
}

/* Data of endpoint r: float j is j % 251 + r % 4 (exact in float). */
static double link_value(int r, size_t j)
{
    return (double)(j % 251) + (double)(r % 4);
}

static fp_status link_buffers(links_state *s)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    size_t bytes = s->count * sizeof(float);
    s->on_device = ctx->comm_ops->device_buffers;
    float *h = malloc(bytes ? bytes : 1);
    FP_CHECK_ALLOC(h);
    for (size_t j = 0; j < s->count; j++)
        h[j] = (float)link_value(ctx->rank, j);
    if (s->on_device) {
        s->stage = h;
        FP_CHECK(ctx->dev_ops->alloc(ctx->dev, bytes, &s->send));
        FP_CHECK(ctx->dev_ops->alloc(ctx->dev, bytes, &s->recv));
        FP_CHECK(ctx->dev_ops->copy(ctx->dev, s->send, h, bytes, FP_COPY_H2D));
    } else {
        s->send = h;
        s->recv = malloc(bytes ? bytes : 1);
        FP_CHECK_ALLOC(s->recv);
    }
cleanup:
    return st;
}

/* Check the last message received from partner. */
static fp_status check_recv(links_state *s, int partner)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    const float *h = s->recv;
    if (s->on_device) {
        float *stage = s->stage;
        /* the staging area held our send data: it is uploaded already */
        FP_CHECK(ctx->dev_ops->copy(ctx->dev, stage, s->recv, s->count * sizeof(float),
                                    FP_COPY_D2H));
        h = stage;
    }
    long long bad = 0;
    for (size_t j = 0; j < s->count; j++)
        bad += h[j] != (float)link_value(partner, j);
    s->wrong += bad;
cleanup:
    return st;
}

/* Warm-up, timed exchanges and latency exchanges with one partner. */
static fp_status exchange(links_state *s, my_link *l, int pass)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    const fp_config *cfg = ctx->cfg;
    char what[96];
    snprintf(what, sizeof what, "links: exchange of rank %d with rank %d", ctx->rank, l->partner);
    fp_coll_args a = {.coll = FP_SENDRECV, .send = s->send, .recv = s->recv, .count = s->count,
                      .dtype = FP_F32, .peer = l->partner, .recv_peer = l->partner};
    double typical = 0, enter, exit;
    for (int w = 0; w < cfg->warmup; w++) {
        FP_CHECK(fp_collective_timed(ctx, &a, what, typical, &enter, &exit));
        typical = exit - enter;
    }
    for (int it = 0; it < cfg->iters; it++) {
        FP_CHECK(fp_collective_timed(ctx, &a, what, typical, &enter, &exit));
        typical = exit - enter;
        double bytes = 2.0 * (double)s->count * sizeof(float);
        l->bw[l->nbw++] = typical > 0 ? bytes / typical * 1e-9 : 0;
    }
    if (cfg->check)
        FP_CHECK(check_recv(s, l->partner));
    a.count = s->count < LAT_ELEMS ? s->count : LAT_ELEMS;
    typical = 0;
    for (int it = 0; it < LAT_ITERS; it++) {
        FP_CHECK(fp_collective_timed(ctx, &a, what, typical, &enter, &exit));
        typical = exit - enter;
        l->lat[l->nlat++] = typical;
    }
cleanup:
    return st;
}

static fp_status emit_links(links_state *s, int total_pairs)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    fp_world *w = ctx->world;
    uint64_t bytes = s->count * sizeof(float);
    for (int i = 0; i < s->nlinks; i++) {
        my_link *l = &s->link[i];
        if (l->partner < ctx->rank)
            continue; /* the lower rank of a pair reports it */
        const char *na = fp_world_my_node(w);
        const char *nb = fp_world_node_name(w, fp_world_node_of(w, l->partner));
        fp_entity e = fp_entity_link(na, -1, nb, -1);
        if (l->intra) {
            /* device index = local index: ranks of a node in rank order */
            int idx = 0;
            for (int r = 0; r < l->partner; r++)
                idx += fp_world_node_of(w, r) == fp_world_node_of(w, l->partner);
            e = fp_entity_link(na, fp_world_local_rank(w), nb, idx);
        }
        const fp_metric *bw = l->intra ? &m_bw_intra : &m_bw_inter;
        for (int k = 0; k < l->nbw; k++)
            FP_CHECK(fp_emit(ctx, s->t, bw, &e, bytes, k, l->bw[k]));
        FP_CHECK(fp_emit(ctx, s->t, bw, &e, bytes, -1, median(l->bw, l->nbw)));
        FP_CHECK(fp_emit(ctx, s->t, l->intra ? &m_lat_intra : &m_lat_inter, &e, LAT_ELEMS * 4, -1,
                         median(l->lat, l->nlat) * 1e6));
    }
    if (ctx->cfg->check)
        FP_CHECK(fp_emit(ctx, s->t, &m_wrong, &ctx->self, bytes, -1, (double)s->wrong));
    if (ctx->rank == 0) {
        fp_entity world = fp_entity_group("world");
        FP_CHECK(fp_emit(ctx, s->t, &m_rounds, &world, 0, -1, s->nrounds));
        FP_CHECK(fp_emit(ctx, s->t, &m_pairs, &world, 0, -1, total_pairs));
    }
cleanup:
    return st;
}

static fp_status links_run(fp_ctx *ctx, const fp_test *t)
{
    fp_status st = FP_OK;
    links_state s = {.ctx = ctx, .t = t};
    int total_pairs = 0;
    s.count = (size_t)(ctx->cfg->max_bytes / sizeof(float));
    st = plan_links(&s, &total_pairs);
    if (st == FP_OK)
        st = link_buffers(&s);
    if (st == FP_ENOMEM)
        fp_error("links: cannot allocate two buffers of %llu bytes: lower --max-bytes",
                 (unsigned long long)ctx->cfg->max_bytes);
    FP_CHECK(fp_world_agree(ctx->world, st));
    if (s.nrounds == 0) {
        if (ctx->rank == 0)
            fp_warn("links: one node with one rank: no link to measure");
        goto cleanup;
    }
    fp_info("links: %d link%s in %d round%s (%d passes), %llu bytes each way", total_pairs,
            total_pairs == 1 ? "" : "s", s.nrounds, s.nrounds == 1 ? "" : "s", PASSES,
            (unsigned long long)ctx->cfg->max_bytes);
    for (int pass = 0; pass < PASSES; pass++) {
        for (int round = 0, i = 0; round < s.nrounds; round++) {
            FP_CHECK(fp_ctx_barrier(ctx, "links round"));
            while (i < s.nlinks && s.link[i].round < round)
                i++;
            if (i < s.nlinks && s.link[i].round == round)
                FP_CHECK(exchange(&s, &s.link[i], pass));
        }
    }
    FP_CHECK(fp_ctx_barrier(ctx, "links end"));
    if (s.wrong)
        fp_error("links: %lld wrong elements received", s.wrong);
    ctx->wrong += s.wrong;
    FP_CHECK(emit_links(&s, total_pairs));
cleanup:
    if (s.link)
        for (int i = 0; i < s.nlinks; i++) {
            free(s.link[i].bw);
            free(s.link[i].lat);
        }
    free(s.link);
    if (s.on_device) {
        if (s.send)
            ctx->dev_ops->free(ctx->dev, s.send);
        if (s.recv)
            ctx->dev_ops->free(ctx->dev, s.recv);
        free(s.stage);
    } else {
        free(s.send);
        free(s.recv);
    }
    return st;
}

const fp_test fp_test_links = {
    .suite = "collectives",
    .name = "links",
    .summary = "pairwise link sweep: bandwidth and latency of every selected pair",
    .run = links_run,
};
