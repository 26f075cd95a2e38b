/* Topology-aware admission: which usable nodes a DP × PP job gets, and in
 * which rank order (see include/fleetprint/admit.h for the model).
 *
 * Ours works in three steps:
 *  1. pods: assign every grid cell a pod, within the pods' usable capacity.
 *     Candidates come from constructions that cut the grid into column strips
 *     (each row segment of a strip kept in one pod) or row bands (each column
 *     segment kept in one pod) for every number of strips or bands, filling
 *     pods largest-first or best-fit, plus the first-fit and best-fit
 *     placements. The best few are polished by a local search (move a cell to
 *     a pod with room, or swap two cells) on the objective with tie-breakers
 *     (how many groups sit at the maximum, then the mean spread).
 *  2. leaves: inside each pod, the same local search on leaf switches, moves
 *     restricted to the cell's pod, from row-major or column-major filling.
 *  3. nodes: each leaf's cells get its usable nodes, healthy ones first.
 * The answer is never worse than first-fit or best-fit: both are candidates
 * and are compared once more at the end. */
#include "fleetprint/admit.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rng_below(uint64_t *s, int n)
{
    return n <= 1 ? 0 : (int)(rng_next(s) % (uint64_t)n);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

const char *fp_admit_method_name(fp_admit_method m)
{
    switch (m) {
    case FP_ADMIT_TOPO: return "topo";
    case FP_ADMIT_FIRST_FIT: return "first-fit";
    case FP_ADMIT_BEST_FIT: return "best-fit";
    case FP_ADMIT_RANDOM_FIT: return "random-fit";
    }
    return "unknown";
}

void fp_placement_clear(fp_placement *p)
{
    free(p->node);
    memset(p, 0, sizeof *p);
}

/* ---- shape and availability ------------------------------------------------------ */

fp_status fp_admit_resolve(fp_admit_shape *s, char *err, size_t errlen)
{
    if (s->gpus_per_node == 0)
        s->gpus_per_node = 8;
    if (s->gpus_per_node < 1) {
        snprintf(err, errlen, "--gpus-per-node must be at least 1, not %d", s->gpus_per_node);
        return FP_EUSAGE;
    }
    if (s->tp == 0)
        s->tp = s->gpus_per_node;
    if (s->tp < 1 || s->gpus_per_node % s->tp != 0) {
        snprintf(err, errlen, "--tp %d must divide --gpus-per-node %d (TP stays inside a node)",
                 s->tp, s->gpus_per_node);
        return FP_EUSAGE;
    }
    if (s->pp == 0)
        s->pp = 1;
    if (s->pp < 1 || s->dp < 0 || s->nodes < 0) {
        snprintf(err, errlen, "--nodes, --dp and --pp must be positive");
        return FP_EUSAGE;
    }
    int per_node = s->gpus_per_node / s->tp; /* DP ranks per node */
    if (s->dp == 0) {
        if (s->nodes == 0) {
            snprintf(err, errlen, "--nodes N is required");
            return FP_EUSAGE;
        }
        if (s->nodes % s->pp != 0) {
            snprintf(err, errlen, "--nodes %d is not a multiple of --pp %d", s->nodes, s->pp);
            return FP_EUSAGE;
        }
        s->cols = s->nodes / s->pp;
        s->dp = s->cols * per_node;
    } else {
        if (s->dp % per_node != 0) {
            snprintf(err, errlen,
                     "--dp %d x --tp %d does not fill whole nodes of %d GPUs (dp must be a "
                     "multiple of %d)",
                     s->dp, s->tp, s->gpus_per_node, per_node);
            return FP_EUSAGE;
        }
        s->cols = s->dp / per_node;
        if (s->nodes == 0)
            s->nodes = s->cols * s->pp;
        if ((long long)s->cols * s->pp != s->nodes) {
            snprintf(err, errlen,
                     "--dp %d x --pp %d x --tp %d needs %lld nodes of %d GPUs, not --nodes %d",
                     s->dp, s->pp, s->tp, (long long)s->cols * s->pp, s->gpus_per_node,
                     s->nodes);
            return FP_EUSAGE;
        }
    }
    if (!(s->alpha >= 0 && s->alpha <= 1)) {
        snprintf(err, errlen, "--alpha must be between 0 and 1, not %g", s->alpha);
        return FP_EUSAGE;
    }
    s->rows = s->pp;
    return FP_OK;
}

fp_status fp_admit_availability(const fp_topology *t, const fp_hostlist *free_nodes,
                                const fp_hostlist *exclude, const fp_admit_health *health,
                                unsigned char *avail, char *err, size_t errlen)
{
    int n = fp_topology_nodes(t);
    memset(avail, free_nodes ? FP_ADMIT_UNAVAILABLE : FP_ADMIT_HEALTHY, (size_t)n);
    for (size_t i = 0; i < fp_hostlist_count(free_nodes); i++) {
        const char *name = fp_hostlist_get(free_nodes, i);
        int k = fp_topology_node_find(t, name);
        if (k < 0) {
            snprintf(err, errlen, "--free: node '%s' is not in the topology", name);
            return FP_EINPUT;
        }
        avail[k] = FP_ADMIT_HEALTHY;
    }
    const fp_hostlist *drop[2] = {exclude, health ? health->fail : NULL};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < fp_hostlist_count(drop[l]); i++) {
            int k = fp_topology_node_find(t, fp_hostlist_get(drop[l], i));
            if (k >= 0)
                avail[k] = FP_ADMIT_UNAVAILABLE;
        }
    for (size_t i = 0; health && i < fp_hostlist_count(health->warn); i++) {
        int k = fp_topology_node_find(t, fp_hostlist_get(health->warn, i));
        if (k >= 0 && avail[k] == FP_ADMIT_HEALTHY)
            avail[k] = FP_ADMIT_WARNED;
    }
    return FP_OK;
}

/* ---- scoring ---------------------------------------------------------------------- */

/* Max distinct keys over rows and over columns of an R x C grid of keys
 * (key[k] < nkeys), and the sums and how many groups sit at the maximum.
 * stamp has nkeys ints, reused across calls through *gen. */
typedef struct spread_stats {
    int rmax, cmax, rat, cat;
    long rsum, csum;
} spread_stats;

static void grid_spreads(int R, int C, const int *key, int *stamp, int *gen, spread_stats *o)
{
    memset(o, 0, sizeof *o);
    for (int s = 0; s < R; s++) {
        int g = ++*gen, n = 0;
        for (int d = 0; d < C; d++) {
            int k = key[s * C + d];
            if (stamp[k] != g) {
                stamp[k] = g;
                n++;
            }
        }
        o->rsum += n;
        if (n > o->rmax) {
            o->rmax = n;
            o->rat = 0;
        }
        if (n == o->rmax)
            o->rat++;
    }
    for (int d = 0; d < C; d++) {
        int g = ++*gen, n = 0;
        for (int s = 0; s < R; s++) {
            int k = key[s * C + d];
            if (stamp[k] != g) {
                stamp[k] = g;
                n++;
            }
        }
        o->csum += n;
        if (n > o->cmax) {
            o->cmax = n;
            o->cat = 0;
        }
        if (n == o->cmax)
            o->cat++;
    }
}

fp_status fp_admit_score_nodes(const fp_topology *t, const fp_admit_shape *shape,
                               const int *node, const unsigned char *avail,
                               fp_admit_score *out)
{
    fp_status st = FP_OK;
    int R = shape->rows, C = shape->cols, N = R * C, nsw = fp_topology_switches(t);
    int *key = calloc((size_t)N + 1, sizeof *key);
    int *stamp = calloc((size_t)nsw + 1, sizeof *stamp);
    FP_CHECK_ALLOC(key);
    FP_CHECK_ALLOC(stamp);
    int gen = 0;
    spread_stats ss;
    memset(out, 0, sizeof *out);
    for (int k = 0; k < N; k++)
        key[k] = fp_topology_node_pod(t, node[k]);
    grid_spreads(R, C, key, stamp, &gen, &ss);
    out->dp_spread = ss.rmax;
    out->pp_spread = ss.cmax;
    for (int k = 0; k < N; k++)
        key[k] = fp_topology_node_leaf(t, node[k]);
    grid_spreads(R, C, key, stamp, &gen, &ss);
    out->dp_leaf_spread = ss.rmax;
    out->pp_leaf_spread = ss.cmax;
    double a = shape->alpha;
    out->objective = a * out->dp_spread + (1 - a) * out->pp_spread;
    out->leaf_objective = a * out->dp_leaf_spread + (1 - a) * out->pp_leaf_spread;
    for (int k = 0; avail && k < N; k++)
        out->warned += avail[node[k]] == FP_ADMIT_WARNED;
cleanup:
    free(key);
    free(stamp);
    return st;
}

/* Lexicographic: objective, then leaf objective. */
static bool score_better(const fp_admit_score *a, const fp_admit_score *b)
{
    if (fabs(a->objective - b->objective) > 1e-9)
        return a->objective < b->objective;
    return a->leaf_objective < b->leaf_objective - 1e-9;
}

/* ---- the cluster seen by a placement ------------------------------------------ */

/* Usable nodes grouped by leaf, leaves by pod; "units" are pods or leaves
 * that have usable nodes. */
typedef struct pool {
    int nnode;
    unsigned char *use;  /* per topology node: usable for this job */
    int npod, nleaf;
    int *pod_of_sw;      /* switch → pod unit or -1 */
    int *leaf_of_sw;     /* switch → leaf unit or -1 */
    int *pod_cap, *leaf_cap, *leaf_pod;
    int *leaf_start;     /* leaf unit → first of its nodes in leaf_nodes */
    int *leaf_nodes;     /* usable nodes by leaf, healthy first, topology order */
} pool;

static void pool_free(pool *p)
{
    free(p->use);
    free(p->pod_of_sw);
    free(p->leaf_of_sw);
    free(p->pod_cap);
    free(p->leaf_cap);
    free(p->leaf_pod);
    free(p->leaf_start);
    free(p->leaf_nodes);
    memset(p, 0, sizeof *p);
}

static fp_status pool_build(const fp_topology *t, const unsigned char *avail, bool with_warned,
                            pool *p)
{
    fp_status st = FP_OK;
    int n = fp_topology_nodes(t), nsw = fp_topology_switches(t);
    memset(p, 0, sizeof *p);
    p->nnode = n;
    p->use = calloc((size_t)n + 1, 1);
    p->pod_of_sw = malloc(((size_t)nsw + 1) * sizeof(int));
    p->leaf_of_sw = malloc(((size_t)nsw + 1) * sizeof(int));
    p->pod_cap = calloc((size_t)nsw + 1, sizeof(int));
    p->leaf_cap = calloc((size_t)nsw + 1, sizeof(int));
    p->leaf_pod = calloc((size_t)nsw + 1, sizeof(int));
    p->leaf_start = calloc((size_t)nsw + 2, sizeof(int));
    p->leaf_nodes = malloc(((size_t)n + 1) * sizeof(int));
    if (!p->use || !p->pod_of_sw || !p->leaf_of_sw || !p->pod_cap || !p->leaf_cap ||
        !p->leaf_pod || !p->leaf_start || !p->leaf_nodes) {
        pool_free(p);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
    for (int s = 0; s < nsw; s++)
        p->pod_of_sw[s] = p->leaf_of_sw[s] = -1;
    for (int k = 0; k < n; k++) {
        p->use[k] = avail[k] == FP_ADMIT_HEALTHY || (with_warned && avail[k] == FP_ADMIT_WARNED);
        if (!p->use[k])
            continue;
        int pod = fp_topology_node_pod(t, k), leaf = fp_topology_node_leaf(t, k);
        if (p->pod_of_sw[pod] < 0)
            p->pod_of_sw[pod] = p->npod++;
        if (p->leaf_of_sw[leaf] < 0) {
            p->leaf_pod[p->nleaf] = p->pod_of_sw[pod];
            p->leaf_of_sw[leaf] = p->nleaf++;
        }
        p->pod_cap[p->pod_of_sw[pod]]++;
        p->leaf_cap[p->leaf_of_sw[leaf]]++;
    }
    for (int l = 0; l < p->nleaf; l++)
        p->leaf_start[l + 1] = p->leaf_start[l] + p->leaf_cap[l];
    int *fill = calloc((size_t)p->nleaf + 1, sizeof *fill);
    if (!fill) {
        pool_free(p);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
    for (int pass = 0; pass < 2; pass++) /* healthy first, then warned */
        for (int k = 0; k < n; k++) {
            if (!p->use[k] || (avail[k] == FP_ADMIT_HEALTHY) != (pass == 0))
                continue;
            int l = p->leaf_of_sw[fp_topology_node_leaf(t, k)];
            p->leaf_nodes[p->leaf_start[l] + fill[l]++] = k;
        }
    free(fill);
cleanup:
    return st;
}

/* ---- baselines -------------------------------------------------------------------- */

static void first_fit(const pool *p, int N, int *node)
{
    int m = 0;
    for (int k = 0; k < p->nnode && m < N; k++)
        if (p->use[k])
            node[m++] = k;
}

static void random_fit(const pool *p, int N, uint64_t *rng, int *node, int *scratch)
{
    int m = 0;
    for (int k = 0; k < p->nnode; k++)
        if (p->use[k])
            scratch[m++] = k;
    for (int i = 0; i < N; i++) { /* partial Fisher-Yates */
        int j = i + rng_below(rng, m - i);
        int x = scratch[i];
        scratch[i] = scratch[j];
        scratch[j] = x;
    }
    memcpy(node, scratch, (size_t)N * sizeof *node);
    qsort(node, (size_t)N, sizeof *node, cmp_int);
}

/* Fewest pods: the smallest pod that holds the job, else pods by free
 * capacity, largest first; nodes in topology order. */
static void best_fit(const fp_topology *t, const pool *p, int N, int *node, int *scratch)
{
    int K = p->npod, best = -1;
    for (int u = 0; u < K; u++)
        if (p->pod_cap[u] >= N && (best < 0 || p->pod_cap[u] < p->pod_cap[best]))
            best = u;
    int *take = calloc((size_t)K + 1, sizeof *take);
    if (!take) { /* fall back to first-fit rather than fail */
        first_fit(p, N, node);
        return;
    }
    if (best >= 0) {
        take[best] = N;
    } else {
        for (int u = 0; u < K; u++)
            scratch[u] = u;
        /* order pods by capacity, largest first (insertion sort: K is small) */
        for (int i = 1; i < K; i++) {
            int x = scratch[i], j = i;
            while (j > 0 && p->pod_cap[scratch[j - 1]] < p->pod_cap[x]) {
                scratch[j] = scratch[j - 1];
                j--;
            }
            scratch[j] = x;
        }
        int need = N;
        for (int i = 0; i < K && need > 0; i++) {
            int u = scratch[i];
            take[u] = p->pod_cap[u] < need ? p->pod_cap[u] : need;
            need -= take[u];
        }
    }
    int m = 0;
    for (int k = 0; k < p->nnode && m < N; k++) {
        if (!p->use[k])
            continue;
        int u = p->pod_of_sw[fp_topology_node_pod(t, k)];
        if (take[u] > 0) {
            take[u]--;
            node[m++] = k;
        }
    }
    free(take);
}

/* ---- local search over a grid of cells assigned to units ---------------------------- */

typedef struct gls {
    int R, C, K;
    double wr, wc;   /* guidance weights of rows (DP) and columns (PP) */
    const int *cap;  /* per unit */
    const int *fam;  /* per unit; moves stay inside a family */
    int *a;          /* per cell: unit (not owned) */
    int *used, *rc, *cc, *rs, *cs, *rh, *ch;
    int rmax, cmax;
    long rsum, csum;
    int *ustart, *ucell, *upos; /* cells of unit u: ucell[ustart[u] ..+used[u]) */
    int *ufree;                 /* units of each family with room, for moves */
} gls;

static void gls_free(gls *g)
{
    free(g->used);
    free(g->rc);
    free(g->cc);
    free(g->rs);
    free(g->cs);
    free(g->rh);
    free(g->ch);
    free(g->ustart);
    free(g->ucell);
    free(g->upos);
}

static void spread_change(int *sp, int *hist, int *mx, long *sum, int i, int delta)
{
    hist[sp[i]]--;
    sp[i] += delta;
    hist[sp[i]]++;
    *sum += delta;
    if (sp[i] > *mx)
        *mx = sp[i];
    while (*mx > 0 && hist[*mx] == 0)
        (*mx)--;
}

/* Move cell x's counts from unit p to unit q (lists handled by callers). */
static void gls_count(gls *g, int x, int p, int q)
{
    int s = x / g->C, d = x % g->C, K = g->K;
    if (--g->rc[(size_t)s * K + p] == 0)
        spread_change(g->rs, g->rh, &g->rmax, &g->rsum, s, -1);
    if (++g->rc[(size_t)s * K + q] == 1)
        spread_change(g->rs, g->rh, &g->rmax, &g->rsum, s, +1);
    if (--g->cc[(size_t)d * K + p] == 0)
        spread_change(g->cs, g->ch, &g->cmax, &g->csum, d, -1);
    if (++g->cc[(size_t)d * K + q] == 1)
        spread_change(g->cs, g->ch, &g->cmax, &g->csum, d, +1);
    g->a[x] = q;
}

static double gls_cost(const gls *g)
{
    return 1e6 * (g->wr * g->rmax + g->wc * g->cmax) +
           1e3 * (g->wr * g->rh[g->rmax] / g->R + g->wc * g->ch[g->cmax] / g->C) +
           (g->wr * (double)g->rsum / g->R + g->wc * (double)g->csum / g->C) / (g->K + 1);
}

static fp_status gls_init(gls *g, int R, int C, int K, double alpha, const int *cap,
                          const int *fam, int *a)
{
    fp_status st = FP_OK;
    memset(g, 0, sizeof *g);
    g->R = R;
    g->C = C;
    g->K = K;
    g->wr = alpha > 1e-3 ? alpha : 1e-3;
    g->wc = 1 - alpha > 1e-3 ? 1 - alpha : 1e-3;
    g->cap = cap;
    g->fam = fam;
    g->a = a;
    int N = R * C;
    g->used = calloc((size_t)K + 1, sizeof(int));
    g->rc = calloc((size_t)R * K + 1, sizeof(int));
    g->cc = calloc((size_t)C * K + 1, sizeof(int));
    g->rs = calloc((size_t)R, sizeof(int));
    g->cs = calloc((size_t)C, sizeof(int));
    g->rh = calloc((size_t)K + 2, sizeof(int));
    g->ch = calloc((size_t)K + 2, sizeof(int));
    g->ustart = calloc((size_t)K + 1, sizeof(int));
    g->ucell = malloc((size_t)N * sizeof(int));
    g->upos = malloc((size_t)N * sizeof(int));
    if (!g->used || !g->rc || !g->cc || !g->rs || !g->cs || !g->rh || !g->ch || !g->ustart ||
        !g->ucell || !g->upos) {
        gls_free(g);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
    for (int x = 0; x < N; x++) {
        int u = a[x], s = x / C, d = x % C;
        g->used[u]++;
        if (g->rc[(size_t)s * K + u]++ == 0)
            g->rs[s]++;
        if (g->cc[(size_t)d * K + u]++ == 0)
            g->cs[d]++;
    }
    /* cell lists sized by the unit's capacity so moves into it always fit */
    long off = 0;
    for (int u = 0; u < K; u++) {
        g->ustart[u] = (int)off;
        off += cap[u];
    }
    int *fill = calloc((size_t)K + 1, sizeof *fill);
    int *slots = malloc(((size_t)off + 1) * sizeof *slots);
    if (!fill || !slots) {
        free(fill);
        free(slots);
        gls_free(g);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
    free(g->ucell);
    g->ucell = slots;
    for (int x = 0; x < N; x++) {
        int u = a[x];
        g->upos[x] = g->ustart[u] + fill[u];
        g->ucell[g->upos[x]] = x;
        fill[u]++;
    }
    free(fill);
    for (int s = 0; s < R; s++) {
        g->rh[g->rs[s]]++;
        g->rsum += g->rs[s];
        if (g->rs[s] > g->rmax)
            g->rmax = g->rs[s];
    }
    for (int d = 0; d < C; d++) {
        g->ch[g->cs[d]]++;
        g->csum += g->cs[d];
        if (g->cs[d] > g->cmax)
            g->cmax = g->cs[d];
    }
cleanup:
    return st;
}

/* Move x into unit q, which has room. */
static void gls_move(gls *g, int x, int q)
{
    int p = g->a[x];
    /* take x out of p's list: the last cell of p fills its slot */
    int last = g->ucell[g->ustart[p] + g->used[p] - 1];
    g->ucell[g->upos[x]] = last;
    g->upos[last] = g->upos[x];
    g->used[p]--;
    g->upos[x] = g->ustart[q] + g->used[q];
    g->ucell[g->upos[x]] = x;
    g->used[q]++;
    gls_count(g, x, p, q);
}

static void gls_swap(gls *g, int x, int z)
{
    int p = g->a[x], q = g->a[z];
    int px = g->upos[x];
    g->upos[x] = g->upos[z];
    g->upos[z] = px;
    g->ucell[g->upos[x]] = x;
    g->ucell[g->upos[z]] = z;
    gls_count(g, x, p, q);
    gls_count(g, z, q, p);
}

/* Hill climbing with sideways moves: pick a cell in a row or column at the
 * maximum spread and try to bring it into a unit another cell of that group
 * already uses. */
static void gls_run(gls *g, long iters, uint64_t *rng)
{
    int R = g->R, C = g->C;
    double pr = g->wr / (g->wr + g->wc);
    double cost = gls_cost(g);
    for (long it = 0; it < iters; it++) {
        bool by_row = (double)(rng_next(rng) >> 11) * 0x1.0p-53 < pr;
        int x, y;
        if (by_row) {
            int s = rng_below(rng, R);
            for (int tries = 0; tries < 4 && g->rs[s] < g->rmax; tries++)
                s = rng_below(rng, R);
            x = s * C + rng_below(rng, C);
            y = s * C + rng_below(rng, C);
        } else {
            int d = rng_below(rng, C);
            for (int tries = 0; tries < 4 && g->cs[d] < g->cmax; tries++)
                d = rng_below(rng, C);
            x = rng_below(rng, R) * C + d;
            y = rng_below(rng, R) * C + d;
        }
        if (rng_below(rng, 16) == 0) /* now and then any cell: diversity */
            y = rng_below(rng, R * C);
        int p = g->a[x], q = g->a[y];
        if (p == q || g->fam[p] != g->fam[q])
            continue;
        if (g->used[q] < g->cap[q]) {
            gls_move(g, x, q);
            double c2 = gls_cost(g);
            if (c2 > cost + 1e-9)
                gls_move(g, x, p);
            else
                cost = c2;
        } else {
            int z = g->ucell[g->ustart[q] + rng_below(rng, g->used[q])];
            gls_swap(g, x, z);
            double c2 = gls_cost(g);
            if (c2 > cost + 1e-9)
                gls_swap(g, x, z);
            else
                cost = c2;
        }
    }
}

/* ---- constructions at the pod level ---------------------------------------------- */

/* Cut the grid into `parts` column strips (bands = false: segments are the
 * rows of a strip) or row bands (bands = true: segments are the columns of a
 * band). Each segment goes whole into one pod when one has room: the pod in
 * use while it lasts, then the best-fitting pod for the rest of the part
 * (best_fit) or the pod with the most room; otherwise it is split. */
static void construct(int R, int C, int K, const int *cap, bool bands, int parts, bool best,
                      int *rem, int *a)
{
    memcpy(rem, cap, (size_t)K * sizeof *rem);
    int span = bands ? R : C;    /* what the parts cut */
    int nseg = bands ? C : R;    /* segments per part */
    int cur = -1, start = 0;
    for (int j = 0; j < parts; j++) {
        int len = span / parts + (j < span % parts ? 1 : 0);
        for (int sg = 0; sg < nseg; sg++) {
            if (cur < 0 || rem[cur] < len) {
                long need = (long)len * (nseg - sg);
                int pick = -1;
                for (int u = 0; u < K; u++) {
                    if (rem[u] < len)
                        continue;
                    if (pick < 0)
                        pick = u;
                    else if (best && rem[u] >= need &&
                             (rem[pick] < need || rem[u] < rem[pick]))
                        pick = u;
                    else if ((!best || rem[pick] < need) && rem[u] > rem[pick])
                        pick = u;
                }
                cur = pick;
            }
            for (int i = 0; i < len; i++) {
                int x = bands ? (start + i) * C + sg : sg * C + start + i;
                if (cur < 0 || rem[cur] == 0) { /* split: the pod with most room */
                    cur = 0;
                    for (int u = 1; u < K; u++)
                        if (rem[u] > rem[cur])
                            cur = u;
                }
                a[x] = cur;
                rem[cur]--;
            }
        }
        start += len;
    }
}

/* ---- ours --------------------------------------------------------------------------- */

typedef struct cand {
    double cost;
    int *a;
} cand;

static double stats_cost(const spread_stats *st, int R, int C, int K, double alpha)
{
    double wr = alpha > 1e-3 ? alpha : 1e-3, wc = 1 - alpha > 1e-3 ? 1 - alpha : 1e-3;
    return 1e6 * (wr * st->rmax + wc * st->cmax) +
           1e3 * (wr * st->rat / R + wc * st->cat / C) +
           (wr * (double)st->rsum / R + wc * (double)st->csum / C) / (K + 1);
}

#define KEEP 3 /* candidates polished by the local search */

static void keep_candidate(cand *best, const int *a, double cost, int N)
{
    int worst = 0;
    for (int i = 1; i < KEEP; i++)
        if (best[i].cost > best[worst].cost)
            worst = i;
    if (cost >= best[worst].cost)
        return;
    for (int i = 0; i < KEEP; i++) /* skip exact duplicates */
        if (best[i].cost == cost && memcmp(best[i].a, a, (size_t)N * sizeof *a) == 0)
            return;
    best[worst].cost = cost;
    memcpy(best[worst].a, a, (size_t)N * sizeof *a);
}

static long search_iters(int N)
{
    long it = 40L * N;
    return it < 5000 ? 5000 : it > 400000 ? 400000 : it;
}

static fp_status place_topo(const fp_topology *t, const fp_admit_shape *shape, const pool *p,
                            uint64_t *rng, int *node)
{
    fp_status st = FP_OK;
    int R = shape->rows, C = shape->cols, N = R * C, K = p->npod, L = p->nleaf;
    int nsw = fp_topology_switches(t);
    int *a = malloc((size_t)N * sizeof *a), *rem = malloc(((size_t)K + L + 1) * sizeof *rem);
    int *stamp = calloc((size_t)(K > L ? K : L) + nsw + 1, sizeof *stamp);
    int *tmp = malloc(((size_t)p->nnode + K + 1) * sizeof *tmp);
    int *fam0 = calloc((size_t)K + 1, sizeof *fam0);
    int *leafa = malloc((size_t)N * sizeof *leafa), *leafb = malloc((size_t)N * sizeof *leafb);
    cand best[KEEP];
    memset(best, 0, sizeof best);
    int gen = 0;
    gls g;
    bool g_live = false;
    if (!a || !rem || !stamp || !tmp || !fam0 || !leafa || !leafb)
        FP_FAIL(FP_ENOMEM, "out of memory");
    for (int i = 0; i < KEEP; i++) {
        best[i].cost = INFINITY;
        FP_CHECK_ALLOC(best[i].a = malloc((size_t)N * sizeof(int)));
    }

    /* 1. pods: constructions, then the baselines as candidates */
    spread_stats ss;
    int maxparts[2] = {C < K ? C : K, R < K ? R : K};
    for (int bands = 0; bands < 2; bands++)
        for (int parts = 1; parts <= maxparts[bands]; parts++)
            for (int bf = 0; bf < 2; bf++) {
                construct(R, C, K, p->pod_cap, bands, parts, bf, rem, a);
                grid_spreads(R, C, a, stamp, &gen, &ss);
                keep_candidate(best, a, stats_cost(&ss, R, C, K, shape->alpha), N);
            }
    for (int b = 0; b < 2; b++) {
        if (b == 0)
            first_fit(p, N, node);
        else
            best_fit(t, p, N, node, tmp);
        for (int k = 0; k < N; k++)
            a[k] = p->pod_of_sw[fp_topology_node_pod(t, node[k])];
        grid_spreads(R, C, a, stamp, &gen, &ss);
        keep_candidate(best, a, stats_cost(&ss, R, C, K, shape->alpha), N);
    }
    double top = INFINITY;
    for (int i = 0; i < KEEP; i++) {
        if (!isfinite(best[i].cost))
            continue;
        FP_CHECK(gls_init(&g, R, C, K, shape->alpha, p->pod_cap, fam0, best[i].a));
        gls_run(&g, search_iters(N), rng);
        double c = gls_cost(&g);
        gls_free(&g);
        if (c < top) {
            top = c;
            memcpy(a, best[i].a, (size_t)N * sizeof *a);
        }
    }

    /* 2. leaves inside each pod: fill the pod's leaves (largest first) with
     * its cells in row-major or column-major order, keep the better, search */
    int *order = tmp; /* leaves of each pod, largest first */
    for (int l = 0; l < L; l++)
        order[l] = l;
    for (int i = 1; i < L; i++) {
        int x = order[i], j = i;
        while (j > 0 && (p->leaf_pod[order[j - 1]] > p->leaf_pod[x] ||
                         (p->leaf_pod[order[j - 1]] == p->leaf_pod[x] &&
                          p->leaf_cap[order[j - 1]] < p->leaf_cap[x]))) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    int *cursor = rem; /* per pod: index into order of the leaf being filled */
    int *left = rem + K; /* per leaf: room left */
    double lcost[2];
    for (int v = 0; v < 2; v++) {
        int *la = v ? leafb : leafa;
        for (int u = 0; u < K; u++)
            cursor[u] = -1;
        for (int i = L - 1; i >= 0; i--) /* first leaf of each pod in order */
            cursor[p->leaf_pod[order[i]]] = i;
        memcpy(left, p->leaf_cap, (size_t)L * sizeof *left);
        for (int k = 0; k < N; k++) {
            int x = v ? (k % R) * C + k / R : k;
            int u = a[x];
            while (left[order[cursor[u]]] == 0)
                cursor[u]++;
            la[x] = order[cursor[u]];
            left[la[x]]--;
        }
        grid_spreads(R, C, la, stamp, &gen, &ss);
        lcost[v] = stats_cost(&ss, R, C, L, shape->alpha);
    }
    int *la = lcost[1] < lcost[0] ? leafb : leafa;
    FP_CHECK(gls_init(&g, R, C, L, shape->alpha, p->leaf_cap, p->leaf_pod, la));
    g_live = true;
    gls_run(&g, search_iters(N), rng);

    /* 3. nodes: each leaf's cells, in rank order, get its nodes in order */
    memset(left, 0, (size_t)L * sizeof *left);
    for (int x = 0; x < N; x++) {
        int l = la[x];
        node[x] = p->leaf_nodes[p->leaf_start[l] + left[l]++];
    }

cleanup:
    if (g_live)
        gls_free(&g);
    for (int i = 0; i < KEEP; i++)
        free(best[i].a);
    free(a);
    free(rem);
    free(stamp);
    free(tmp);
    free(fam0);
    free(leafa);
    free(leafb);
    return st;
}

/* ---- entry point -------------------------------------------------------------------- */

fp_status fp_admit_place(const fp_topology *t, const fp_admit_shape *shape,
                         const unsigned char *avail, fp_admit_method method, uint64_t seed,
                         fp_placement *out, char *err, size_t errlen)
{
    fp_status st = FP_OK;
    pool p = {0};
    int *scratch = NULL, *other = NULL;
    int N = shape->rows * shape->cols, n = fp_topology_nodes(t);
    uint64_t rng = seed ^ 0x5eedf1ee7ull;
    memset(out, 0, sizeof *out);
    if (errlen)
        err[0] = 0;
    int healthy = 0, warned = 0;
    for (int k = 0; k < n; k++) {
        healthy += avail[k] == FP_ADMIT_HEALTHY;
        warned += avail[k] == FP_ADMIT_WARNED;
    }
    if (N <= 0 || healthy + warned < N) {
        snprintf(err, errlen,
                 "cannot admit %d nodes: only %d free healthy and %d warned nodes are usable", N,
                 healthy, warned);
        return FP_EFAIL;
    }
    FP_CHECK(pool_build(t, avail, healthy < N, &p));
    out->n = N;
    FP_CHECK_ALLOC(out->node = malloc((size_t)N * sizeof(int)));
    FP_CHECK_ALLOC(scratch = malloc(((size_t)n + 1) * sizeof(int)));
    switch (method) {
    case FP_ADMIT_FIRST_FIT: first_fit(&p, N, out->node); break;
    case FP_ADMIT_BEST_FIT: best_fit(t, &p, N, out->node, scratch); break;
    case FP_ADMIT_RANDOM_FIT: random_fit(&p, N, &rng, out->node, scratch); break;
    case FP_ADMIT_TOPO: FP_CHECK(place_topo(t, shape, &p, &rng, out->node)); break;
    }
    FP_CHECK(fp_admit_score_nodes(t, shape, out->node, avail, &out->score));
    if (method == FP_ADMIT_TOPO) {
        /* never worse than the simple placements */
        FP_CHECK_ALLOC(other = malloc((size_t)N * sizeof(int)));
        for (int b = 0; b < 2; b++) {
            fp_admit_score sc;
            if (b == 0)
                first_fit(&p, N, other);
            else
                best_fit(t, &p, N, other, scratch);
            FP_CHECK(fp_admit_score_nodes(t, shape, other, avail, &sc));
            if (score_better(&sc, &out->score)) {
                memcpy(out->node, other, (size_t)N * sizeof(int));
                out->score = sc;
            }
        }
    }
cleanup:
    if (st != FP_OK) {
        if (!err[0])
            snprintf(err, errlen, "%s", fp_strerror(st));
        fp_placement_clear(out);
    }
    pool_free(&p);
    free(scratch);
    free(other);
    return st;
}
