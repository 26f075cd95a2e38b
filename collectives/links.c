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
#include "fleetprint/stats.h"

enum {
    PASSES = FP_LINK_PASSES, /* passes over all rounds: a link's samples span the whole sweep */
    LAT_ITERS = 10,  /* small exchanges per link and pass, for latency */
    LAT_ELEMS = 2,   /* floats in a latency exchange */
    RANDOM_SEED = 20240601,
    STAMP_TAG = 31,  /* point-to-point tag of the time-stamp swap */
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
    fp_status st = FP_OK;
    memset(p, 0, sizeof *p);
    p->n = n;
    p->pair = calloc((size_t)(cap > 0 ? cap : 1), sizeof *p->pair);
    p->round = calloc((size_t)(cap > 0 ? cap : 1), sizeof *p->round);
    FP_CHECK_ALLOC(p->pair);
    FP_CHECK_ALLOC(p->round);
cleanup:
    if (st != FP_OK)
        fp_link_plan_free(p);
    return st;
}

static void add_pair(fp_link_plan *p, int a, int b, int round)
{
    p->pair[p->npairs][0] = a < b ? a : b;
    p->pair[p->npairs][1] = a < b ? b : a;
    p->round[p->npairs++] = round;
    p->nrounds = round + 1 > p->nrounds ? round + 1 : p->nrounds;
}

/* xorshift64*: the same draws on every rank. */
static uint64_t next_random(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545f4914f6cdd1dULL;
}

/* Fisher-Yates shuffle of n ints with the draws of seed. */
static void shuffle(int *v, int n, uint64_t seed)
{
    uint64_t state = seed;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(next_random(&state) % (uint64_t)(i + 1)), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* Circle method: fix the last slot, rotate the others; an odd n gets a
 * resting slot (n), whose partner sits the round out. Slot i holds endpoint
 * label[i]. */
static void tournament(fp_link_plan *p, int n, const int *label)
{
    int m = n % 2 ? n + 1 : n;
    for (int r = 0; r < m - 1; r++) {
        for (int i = 0; i < m / 2; i++) {
            int a = i == 0 ? m - 1 : (r + i) % (m - 1);
            int b = (r - i + m - 1) % (m - 1);
            if (a < n && b < n)
                add_pair(p, label[a], label[b], r);
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
    fp_status st = FP_OK;
    int *busy_until = calloc((size_t)np * (size_t)p->n + 1, sizeof *busy_until);
    bool *placed = calloc((size_t)np + 1, sizeof *placed);
    FP_CHECK_ALLOC(busy_until);
    FP_CHECK_ALLOC(placed);
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
cleanup:
    free(busy_until);
    free(placed);
    return st;
}

fp_status fp_link_plan_make(const char *mode, int n, int pass, fp_link_plan *plan, char *err,
                            size_t len)
{
    fp_status st = FP_OK;
    int k = 0, np = 0, *label = NULL, *order = NULL, (*pairs)[2] = NULL, (*shuffled)[2] = NULL;
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
        label = malloc((size_t)n * sizeof *label);
        FP_CHECK_ALLOC(label);
        FP_CHECK(plan_alloc(plan, n, (int)most));
        for (int i = 0; i < n; i++)
            label[i] = i;
        if (pass > 0)
            shuffle(label, n, RANDOM_SEED + (uint64_t)pass);
        tournament(plan, n, label);
        goto cleanup;
    }
    int per = ring ? 1 : k;
    per = per < n - 1 ? per : n - 1;
    long long cap = (long long)n * per;
    cap = cap < most ? cap : most;
    pairs = calloc((size_t)cap + 1, sizeof *pairs);
    FP_CHECK_ALLOC(pairs);
    FP_CHECK(plan_alloc(plan, n, (int)cap));
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
    if (pass > 0) { /* the same pairs, packed from another order */
        order = malloc((size_t)np * sizeof *order + 1);
        shuffled = calloc((size_t)np + 1, sizeof *shuffled);
        FP_CHECK_ALLOC(order);
        FP_CHECK_ALLOC(shuffled);
        for (int i = 0; i < np; i++)
            order[i] = i;
        shuffle(order, np, RANDOM_SEED + (uint64_t)pass);
        for (int i = 0; i < np; i++)
            memcpy(shuffled[i], pairs[order[i]], sizeof shuffled[i]);
        free(pairs);
        pairs = shuffled;
        shuffled = NULL;
    }
    st = pack(plan, (const int (*)[2])pairs, np);
cleanup:
    free(label);
    free(order);
    free(shuffled);
    free(pairs);
    if (st != FP_OK)
        fp_link_plan_free(plan);
    return st;
}

/* ---- a list of pairs ------------------------------------------------------------------- */

/* Pair up the spare endpoints each round of p leaves idle (see
 * fp_link_plan_pairs): the same pairs in every round where both are idle
 * (spare endpoints matched in order: the 1st with the 2nd, the 3rd with the
 * 4th, ...), then those whose mate is busy among themselves. A reference
 * link is so measured in most rounds of a pass: its figure, a median over
 * them, is not that of the one round a slow link shares with it (on shared
 * cores a slow pair leaves the others more of the machine). */
static fp_status add_spare_pairs(fp_link_plan *p, const bool *spare)
{
    fp_status st = FP_OK;
    int n = p->n, rounds = p->nrounds, listed = p->npairs, nspare = 0;
    int *order = malloc((2 * (size_t)n + 1) * sizeof *order), *busy = order + n;
    FP_CHECK_ALLOC(order);
    for (int e = 0; e < n; e++)
        if (spare[e])
            order[nspare++] = e;
    for (int r = 0; r < rounds; r++) {
        memset(busy, 0, (size_t)n * sizeof *busy);
        for (int i = 0; i < listed; i++)
            if (p->round[i] == r)
                busy[p->pair[i][0]] = busy[p->pair[i][1]] = 1;
        for (int k = 0; k + 1 < nspare; k += 2)
            if (!busy[order[k]] && !busy[order[k + 1]]) {
                busy[order[k]] = busy[order[k + 1]] = 1;
                add_pair(p, order[k], order[k + 1], r);
            }
        for (int k = 0, waiting = -1; k < nspare; k++) {
            if (busy[order[k]])
                continue;
            if (waiting < 0) {
                waiting = order[k];
            } else {
                busy[waiting] = busy[order[k]] = 1;
                add_pair(p, waiting, order[k], r);
                waiting = -1;
            }
        }
    }
cleanup:
    free(order); /* and busy, its second half */
    return st;
}

/* Put p's pairs in round order again after spare pairs were appended (a
 * stable counting sort: within a round, listed pairs stay first). */
static fp_status sort_by_round(fp_link_plan *p)
{
    fp_status st = FP_OK;
    int n = p->npairs, *count = calloc((size_t)p->nrounds + 2, sizeof *count);
    int (*pair)[2] = malloc(((size_t)n + 1) * sizeof *pair);
    int *round = malloc(((size_t)n + 1) * sizeof *round);
    FP_CHECK_ALLOC(count);
    FP_CHECK_ALLOC(pair);
    FP_CHECK_ALLOC(round);
    for (int i = 0; i < n; i++)
        count[p->round[i] + 1]++;
    for (int r = 0; r < p->nrounds; r++)
        count[r + 1] += count[r];
    for (int i = 0; i < n; i++) {
        int at = count[p->round[i]]++;
        memcpy(pair[at], p->pair[i], sizeof pair[at]);
        round[at] = p->round[i];
    }
    memcpy(p->pair, pair, (size_t)n * sizeof *pair);
    memcpy(p->round, round, (size_t)n * sizeof *round);
cleanup:
    free(count);
    free(pair);
    free(round);
    return st;
}

fp_status fp_link_plan_pairs(const int (*pairs)[2], int np, int n, const bool *spare,
                             fp_link_plan *plan, char *err, size_t len)
{
    fp_status st = FP_OK;
    memset(plan, 0, sizeof *plan);
    for (int i = 0; i < np; i++) {
        int a = pairs[i][0], b = pairs[i][1];
        if (a < 0 || b < 0 || a >= n || b >= n || a == b) {
            snprintf(err, len, "--pairs: pair %d~%d is not two of the %d endpoints", a, b, n);
            return FP_EUSAGE;
        }
    }
    /* each round pairs an endpoint once: at most n / 2 spare pairs a round,
     * and no more rounds than listed pairs */
    long long cap = (long long)np + (spare ? (long long)np * (n / 2) : 0);
    FP_CHECK(plan_alloc(plan, n, (int)(cap > 0 ? cap : 1)));
    FP_CHECK(pack(plan, pairs, np));
    if (spare && np > 0) {
        FP_CHECK(add_spare_pairs(plan, spare));
        FP_CHECK(sort_by_round(plan));
    }
cleanup:
    if (st != FP_OK)
        fp_link_plan_free(plan);
    return st;
}

bool fp_link_pairs_is_list(const char *mode)
{
    return strcmp(mode, "all") != 0 && strcmp(mode, "ring") != 0 && !strchr(mode, '=');
}

/* The index of node name[0..len) among names, or -1. */
static int node_named(const char *const *names, int nn, const char *name, size_t len)
{
    for (int i = 0; i < nn; i++)
        if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0)
            return i;
    return -1;
}

fp_status fp_link_pairs_parse(const char *list, const char *const *names, int nn,
                              int (**pairs)[2], int *np, bool *inside, char *err, size_t len)
{
    fp_status st = FP_OK;
    size_t cap = 1;
    for (const char *c = list; *c; c++)
        cap += *c == ',';
    int (*out)[2] = calloc(cap, sizeof *out);
    int n = 0;
    *pairs = NULL;
    *np = 0;
    FP_CHECK_ALLOC(out);
    memset(inside, 0, (size_t)nn * sizeof *inside);
    for (const char *p = list;; p++) {
        size_t m = strcspn(p, ","), tl = strcspn(p, "~");
        if (m == 0) {
            snprintf(err, len, "--pairs '%.60s': an empty entry", list);
            st = FP_EUSAGE; /* err says why; the caller logs it */
            goto cleanup;
        }
        bool pair = tl < m;
        int a = node_named(names, nn, p, pair ? tl : m);
        int b = pair ? node_named(names, nn, p + tl + 1, m - tl - 1) : -1;
        if (a < 0 || (pair && b < 0)) {
            const char *bad = a < 0 ? p : p + tl + 1;
            size_t bl = a < 0 ? (pair ? tl : m) : m - tl - 1;
            snprintf(err, len, "--pairs: no node '%.*s' in this run (entries: A~B, a pair of "
                     "nodes, or A, the links inside node A)", (int)(bl < 64 ? bl : 64), bad);
            st = FP_EUSAGE; /* err says why; the caller logs it */
            goto cleanup;
        }
        /* a pair given again is measured again, in a later round */
        if (pair ? a == b : inside[a]) {
            snprintf(err, len, "--pairs: '%.*s' %s", (int)(m < 80 ? m : 80), p,
                     pair ? "pairs a node with itself" : "is given twice");
            st = FP_EUSAGE; /* err says why; the caller logs it */
            goto cleanup;
        }
        if (pair) {
            out[n][0] = a;
            out[n][1] = b;
            n++;
        } else {
            inside[a] = true;
        }
        p += m;
        if (!*p)
            break;
    }
    *pairs = out;
    *np = n;
    out = NULL;
cleanup:
    free(out);
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
    int per_pass;      /* rounds of a pass it is measured in (a list may repeat a pair) */
    int in_pass;       /* of the pass being planned */
    int nbw, nlat;
    double *bw;        /* GB/s, both directions together */
    double *lat;       /* s */
} my_link;

typedef struct links_state {
    fp_ctx *ctx;
    const fp_coll_config *cfg;
    const fp_test *t;
    int passes;         /* passes over all rounds (the config's, at most PASSES) */
    int rounds[PASSES]; /* rounds of each pass: inter-node, then intra-node */
    int maxrounds;
    int *sched;         /* [pass][round]: index into link, or -1 */
    int *link_of;       /* per rank: index into link, or -1 */
    int nlinks;
    my_link *link;      /* this rank's links */
    int inter_rounds0, inter_pairs0; /* pass 0, recorded as samples */
    bool list;          /* --pairs names node pairs: only those, and the inner links
                           of the nodes it names alone (inside) */
    int (*listed)[2];
    int nlisted;
    bool *inside;       /* per node (list only): measure its inner links */
    void *send, *recv, *stage;
    bool on_device;
    size_t count;       /* floats per direction */
    long long wrong;
} links_state;

/* This rank's partner, if any, in each round of one pass: inter-node pairs
 * through node leaders, then intra-node pairs of local ranks (all nodes at
 * once). With sched NULL only counts the pass's rounds. */
static fp_status plan_pass(links_state *s, int pass, int *sched)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    fp_world *w = ctx->world;
    int nn = fp_world_nnodes(w), me = ctx->rank, mynode = fp_world_node_of(w, me);
    int maxlocal = 1, *local_to_rank = NULL;
    for (int i = 0; i < nn; i++)
        if (!s->list || s->inside[i])
            maxlocal = fp_world_node_size(w, i) > maxlocal ? fp_world_node_size(w, i) : maxlocal;
    fp_link_plan inter = {0}, intra = {0};
    char err[160];
    if (s->list)
        st = fp_link_plan_pairs((const int (*)[2])s->listed, s->nlisted, nn, NULL, &inter, err,
                                sizeof err);
    else
        st = fp_link_plan_make(s->cfg->pairs, nn, pass, &inter, err, sizeof err);
    if (st == FP_EUSAGE && me == 0)
        fp_error("%s", err);
    if (st == FP_OK)
        st = fp_link_plan_make("all", maxlocal, pass, &intra, err, sizeof err);
    if (st != FP_OK)
        goto cleanup;
    s->rounds[pass] = inter.nrounds + intra.nrounds;
    if (pass == 0) {
        s->inter_rounds0 = inter.nrounds;
        s->inter_pairs0 = inter.npairs;
    }
    if (!sched)
        goto cleanup;
    local_to_rank = calloc((size_t)maxlocal, sizeof *local_to_rank);
    FP_CHECK_ALLOC(local_to_rank);
    for (int r = 0, k = 0; r < ctx->nranks && k < maxlocal; r++)
        if (fp_world_node_of(w, r) == mynode)
            local_to_rank[k++] = r;
    int mysize = s->list && !s->inside[mynode] ? 0 : fp_world_node_size(w, mynode);
    for (int i = 0; i < inter.npairs + intra.npairs; i++) {
        bool in = i >= inter.npairs;
        const int *pr = in ? intra.pair[i - inter.npairs] : inter.pair[i];
        int a, b, round = in ? inter.nrounds + intra.round[i - inter.npairs] : inter.round[i];
        if (in && pr[1] >= mysize)
            continue;
        a = in ? local_to_rank[pr[0]] : fp_world_node_leader(w, pr[0]);
        b = in ? local_to_rank[pr[1]] : fp_world_node_leader(w, pr[1]);
        if (a != me && b != me)
            continue;
        int partner = a == me ? b : a;
        if (s->link_of[partner] < 0) {
            s->link_of[partner] = s->nlinks;
            s->link[s->nlinks++] = (my_link){.partner = partner, .intra = in};
        }
        my_link *l = &s->link[s->link_of[partner]];
        l->per_pass = ++l->in_pass > l->per_pass ? l->in_pass : l->per_pass;
        sched[round] = s->link_of[partner];
    }
cleanup:
    free(local_to_rank);
    fp_link_plan_free(&inter);
    fp_link_plan_free(&intra);
    return st;
}

/* A --pairs list: its node pairs and the nodes whose inner links it names. */
static fp_status parse_list(links_state *s)
{
    fp_status st = FP_OK;
    fp_world *w = s->ctx->world;
    int nn = fp_world_nnodes(w);
    const char **names = malloc((size_t)nn * sizeof *names + 1);
    char err[200];
    s->inside = calloc((size_t)nn + 1, sizeof *s->inside);
    FP_CHECK_ALLOC(names);
    FP_CHECK_ALLOC(s->inside);
    for (int i = 0; i < nn; i++)
        names[i] = fp_world_node_name(w, i);
    st = fp_link_pairs_parse(s->cfg->pairs, names, nn, &s->listed, &s->nlisted, s->inside, err,
                             sizeof err);
    if (st == FP_EUSAGE && s->ctx->rank == 0)
        fp_error("%s", err);
cleanup:
    free(names);
    return st;
}

/* Plan every pass (all ranks compute the same plans) and size the records. */
static fp_status plan_links(links_state *s, int *total_pairs)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    fp_world *w = ctx->world;
    s->list = fp_link_pairs_is_list(s->cfg->pairs);
    if (s->list)
        FP_CHECK(parse_list(s));
    for (int pass = 0; pass < s->passes; pass++) {
        FP_CHECK(plan_pass(s, pass, NULL));
        s->maxrounds = s->rounds[pass] > s->maxrounds ? s->rounds[pass] : s->maxrounds;
    }
    s->sched = malloc((size_t)s->passes * (size_t)s->maxrounds * sizeof *s->sched + 1);
    s->link_of = malloc((size_t)ctx->nranks * sizeof *s->link_of);
    s->link = calloc((size_t)ctx->nranks, sizeof *s->link);
    FP_CHECK_ALLOC(s->sched);
    FP_CHECK_ALLOC(s->link_of);
    FP_CHECK_ALLOC(s->link);
    for (int i = 0; i < s->passes * s->maxrounds; i++)
        s->sched[i] = -1;
    for (int r = 0; r < ctx->nranks; r++)
        s->link_of[r] = -1;
    for (int pass = 0; pass < s->passes; pass++) {
        for (int i = 0; i < s->nlinks; i++)
            s->link[i].in_pass = 0;
        FP_CHECK(plan_pass(s, pass, s->sched + (size_t)pass * (size_t)s->maxrounds));
    }
    *total_pairs = s->inter_pairs0;
    for (int node = 0; node < fp_world_nnodes(w); node++) {
        int sz = s->list && !s->inside[node] ? 0 : fp_world_node_size(w, node);
        *total_pairs += sz * (sz - 1) / 2;
    }
    for (int i = 0; i < s->nlinks; i++) {
        size_t times = (size_t)s->passes * (size_t)s->link[i].per_pass;
        s->link[i].bw = calloc(times * (size_t)s->cfg->sweep.iters + 1, sizeof(double));
        s->link[i].lat = calloc(times * LAT_ITERS, sizeof(double));
        FP_CHECK_ALLOC(s->link[i].bw);
        FP_CHECK_ALLOC(s->link[i].lat);
    }
cleanup:
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

static double shortest(double typical, double t)
{
    return typical <= 0 || t < typical ? t : typical;
}

/* Both endpoints' entry stamps of a series of exchanges: ours out, the
 * partner's into theirs (n doubles each way, plain MPI on the world). */
static fp_status swap_stamps(links_state *s, int partner, const double *ours, double *theirs,
                             int n)
{
    fp_status st = FP_OK;
    MPI_Comm comm = fp_world_comm(s->ctx->world);
    MPI_Request req[2];
    FP_CHECK_MPI(MPI_Irecv(theirs, n, MPI_DOUBLE, partner, STAMP_TAG, comm, &req[0]));
    FP_CHECK_MPI(MPI_Isend(ours, n, MPI_DOUBLE, partner, STAMP_TAG, comm, &req[1]));
    FP_CHECK(fp_world_wait(s->ctx->world, req, 2, "links: exchange of time stamps"));
cleanup:
    return st;
}

/* Warm-up, timed exchanges and latency exchanges with one partner. An
 * exchange's time is its transfer time: our exit minus the later of the two
 * entries (common clock), so a partner still busy with its previous step
 * does not count against the link. */
static fp_status exchange(links_state *s, my_link *l)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    const fp_sweep *sw = &s->cfg->sweep;
    int nb = sw->iters, n = nb + LAT_ITERS;
    double *enter = calloc(2 * (size_t)n, sizeof *enter), *exit = calloc((size_t)n, sizeof *exit);
    char what[96];
    snprintf(what, sizeof what, "links: exchange of rank %d with rank %d", ctx->rank, l->partner);
    fp_coll_args a = {.coll = FP_SENDRECV, .send = s->send, .recv = s->recv, .count = s->count,
                      .dtype = FP_F32, .peer = l->partner, .recv_peer = l->partner};
    FP_CHECK_ALLOC(enter);
    FP_CHECK_ALLOC(exit);
    /* typical: the shortest exchange so far (see fp_collective_timed) */
    double typical = 0;
    for (int w = 0; w < sw->warmup; w++) {
        FP_CHECK(fp_collective_timed(ctx, &a, what, typical, &enter[0], &exit[0]));
        typical = shortest(typical, exit[0] - enter[0]);
    }
    for (int it = 0; it < n; it++) {
        if (it == nb) {
            if (sw->check)
                FP_CHECK(check_recv(s, l->partner));
            a.count = s->count < LAT_ELEMS ? s->count : LAT_ELEMS;
            typical = 0;
        }
        FP_CHECK(fp_collective_timed(ctx, &a, what, typical, &enter[it], &exit[it]));
        typical = shortest(typical, exit[it] - enter[it]);
    }
    double *theirs = enter + n;
    FP_CHECK(swap_stamps(s, l->partner, enter, theirs, n));
    double bytes = 2.0 * (double)s->count * sizeof(float);
    for (int it = 0; it < n; it++) {
        double t = exit[it] - (enter[it] > theirs[it] ? enter[it] : theirs[it]);
        if (it < nb)
            l->bw[l->nbw++] = t > 0 ? bytes / t * 1e-9 : 0;
        else
            l->lat[l->nlat++] = t;
    }
cleanup:
    free(enter);
    free(exit);
    return st;
}

/* End of a round: a pair done with its measured exchanges keeps its link
 * busy with unmeasured ones until every pair of the round is done, so every
 * pair is measured under the same concurrent load (on a shared or
 * oversubscribed machine a pair alone at the end of a round would look
 * faster). Done = a non-blocking barrier every rank joins after its measured
 * part; partners swap whether they saw it complete before each extra
 * exchange, so both stop after the same one. */
static fp_status end_round(links_state *s, const my_link *l)
{
    fp_status st = FP_OK;
    fp_ctx *ctx = s->ctx;
    MPI_Comm comm = fp_world_comm(ctx->world);
    MPI_Request done_req;
    FP_CHECK_MPI(MPI_Ibarrier(comm, &done_req));
    fp_coll_args a = {.coll = FP_SENDRECV, .send = s->send, .recv = s->recv, .count = s->count,
                      .dtype = FP_F32, .peer = l ? l->partner : 0, .recv_peer = l ? l->partner : 0};
    for (int mine = 0, theirs = 0; l;) {
        FP_CHECK_MPI(MPI_Test(&done_req, &mine, MPI_STATUS_IGNORE));
        MPI_Request req[2];
        FP_CHECK_MPI(MPI_Irecv(&theirs, 1, MPI_INT, l->partner, STAMP_TAG, comm, &req[0]));
        FP_CHECK_MPI(MPI_Isend(&mine, 1, MPI_INT, l->partner, STAMP_TAG, comm, &req[1]));
        FP_CHECK(fp_world_wait(ctx->world, req, 2, "links: end of round"));
        if (mine || theirs)
            break;
        FP_CHECK(fp_collective(ctx, &a, "links: load until the round ends"));
    }
    FP_CHECK(fp_world_wait(ctx->world, &done_req, 1, "links: end of round"));
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
        /* the median, not an upper quantile: beside a CPU hog a healthy
         * exchange is mostly a wait for the scheduler (~20 ms for 1 MiB),
         * while a slow link's transfers may all run within one time slice,
         * so its upper quartile read 0.76x the lowest healthy link where
         * its median read 0.02x */
        FP_CHECK(fp_emit(ctx, s->t, bw, &e, bytes, -1, fp_median(l->bw, l->nbw)));
        FP_CHECK(fp_emit(ctx, s->t, l->intra ? &m_lat_intra : &m_lat_inter, &e, LAT_ELEMS * 4, -1,
                         fp_median(l->lat, l->nlat) * 1e6));
    }
    if (s->cfg->sweep.check)
        FP_CHECK(fp_emit(ctx, s->t, &m_wrong, &ctx->self, bytes, -1, (double)s->wrong));
    if (ctx->rank == 0) {
        fp_entity world = fp_entity_group("world");
        FP_CHECK(fp_emit(ctx, s->t, &m_rounds, &world, 0, -1, s->rounds[0]));
        FP_CHECK(fp_emit(ctx, s->t, &m_pairs, &world, 0, -1, total_pairs));
    }
cleanup:
    return st;
}

static fp_status links_run(fp_ctx *ctx, const fp_test *t)
{
    fp_status st = FP_OK;
    links_state s = {.ctx = ctx, .cfg = FP_SUITE_CFG(fp_coll_config, ctx), .t = t};
    const fp_sweep *sw = &s.cfg->sweep;
    s.passes = s.cfg->link_passes > 0 && s.cfg->link_passes < PASSES ? s.cfg->link_passes : PASSES;
    int total_pairs = 0;
    s.count = (size_t)(sw->max_bytes / sizeof(float));
    st = plan_links(&s, &total_pairs);
    if (st == FP_OK) {
        st = link_buffers(&s);
        if (st == FP_ENOMEM)
            fp_error("links: cannot allocate two buffers of %llu bytes: lower --max-bytes",
                     (unsigned long long)sw->max_bytes);
    }
    FP_CHECK(fp_world_agree(ctx->world, st));
    if (s.rounds[0] == 0) {
        if (ctx->rank == 0)
            fp_warn("links: one node with one rank: no link to measure");
        goto cleanup;
    }
    fp_info("links: %d link%s in %d round%s (%d pass%s), %llu bytes each way", total_pairs,
            total_pairs == 1 ? "" : "s", s.rounds[0], s.rounds[0] == 1 ? "" : "s", s.passes,
            s.passes == 1 ? "" : "es", (unsigned long long)sw->max_bytes);
    for (int pass = 0; pass < s.passes; pass++) {
        double t0 = fp_world_now(ctx->world);
        for (int round = 0; round < s.rounds[pass]; round++) {
            FP_CHECK(fp_ctx_barrier(ctx, "links round"));
            int k = s.sched[(size_t)pass * (size_t)s.maxrounds + (size_t)round];
            my_link *l = k >= 0 ? &s.link[k] : NULL;
            if (l)
                FP_CHECK(exchange(&s, l));
            FP_CHECK(end_round(&s, l));
        }
        /* past the passes it must run, another only when it ends in time */
        if (pass + 1 < s.passes && pass + 1 >= s.cfg->link_min_passes) {
            bool go;
            FP_CHECK(fp_coll_in_time(ctx, t0, &go));
            if (!go) {
                if (ctx->rank == 0)
                    fp_info("links: %d of %d passes: the next would end past the deadline",
                            pass + 1, s.passes);
                break;
            }
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
    free(s.sched);
    free(s.link_of);
    free(s.listed);
    free(s.inside);
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
