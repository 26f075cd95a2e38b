/* Fleet simulation: runs of samples from a fleet with realistic noise and
 * known faults, to measure the detector's precision and recall.
 *
 * Noise model (all multiplicative, documented in docs/detect.md):
 *   SKU base value x per-node offset N(0, 1.5%) clipped to +-4% (persistent)
 *   x per-device offset N(0, 1%) clipped to +-3% (persistent), the two
 *     together within +-5%: a healthy device's persistent quirk stays within
 *     the rules' cost floor (5%; further off, a job on it loses more than
 *     the rules tolerate, and it fails by design)
 *   x diurnal drift 1 + 1.5% sin(hour of day) common to the fleet
 *   x per-run wander of each device, N(0, w) with w per metric class
 *   x per-window noise exp(s t3) with Student-t (3 dof) tails, s per class
 *   x rare transient dips (0.1% of values, 10-40% worse for one window).
 * Per class (as the H100 runs in tests/data/gpu-h100 show): membw s 0.8% w 0.5%,
 * GEMM 1% / 0.5%, links 2% / 1%, pageable host copies 5% / 4%, launch
 * latency 4% / 4% -- the last two are noisy host-side metrics that only
 * host-side faults touch (host-dip, slow-launch).
 * Faults live in the last run only (the earlier runs are the history that
 * baselines come from), but for the persistent ones (fail-slow,
 * slow-launch: already there when the baselines were built). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "fleetprint/log.h"
#include "fleetprint/outfile.h"

/* ---- random numbers ---------------------------------------------------------------- */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed * 0x2545f4914f6cdd1dULL + stream * 0x9e3779b97f4a7c15ULL + 1;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** */
static uint64_t next_u64(rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static double uniform(rng *r)
{
    return (double)(next_u64(r) >> 11) * 0x1.0p-53;
}

static double uniform_in(rng *r, double lo, double hi)
{
    return lo + (hi - lo) * uniform(r);
}

static int below(rng *r, int n)
{
    return (int)(uniform(r) * n);
}

static double normal(rng *r)
{
    double u = uniform(r), v = uniform(r);
    return sqrt(-2 * log(u > 1e-300 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* Student-t with 3 degrees of freedom: heavy tails, scale 1. */
static double student3(rng *r)
{
    double a = normal(r), b = normal(r), c = normal(r), z = normal(r);
    return z / sqrt((a * a + b * b + c * c) / 3);
}

static double clip(double x, double lim)
{
    return x < -lim ? -lim : x > lim ? lim : x;
}

/* ---- the fleet ------------------------------------------------------------------------ */

typedef struct sku_def {
    const char *model;
    double triad, flops; /* GB/s, GFLOP/s */
    double pageable, launch; /* GB/s, us */
    double share;        /* fraction of the fleet */
} sku_def;

static const sku_def skus[] = {
    {"H100-SXM5-80GB", 3000, 790000, 15, 3.2, 0.5},
    {"H200-SXM-141GB", 4300, 810000, 16, 3.0, 0.3},
    {"A100-SXM4-80GB", 1750, 290000, 12, 4.1, 0.2},
};

/* What a device metric measures, for the faults that touch it. */
typedef enum sim_kind { SIM_MEM, SIM_GEMM, SIM_HOST_COPY, SIM_LAUNCH } sim_kind;

/* A device metric: its class's noise (per window) and wander (per run). */
typedef struct sim_metric {
    const char *test;
    fp_metric m;
    uint64_t size;
    double noise, wander;
    sim_kind kind;
} sim_metric;

static const sim_metric dev_metrics[] = {
    {"membw", {"triad_bw", "GB/s", FP_BETTER_HIGHER}, 64u << 20, 0.008, 0.005, SIM_MEM},
    {"gemm", {"bf16_flops", "GFLOP/s", FP_BETTER_HIGHER}, 8192u * 8192u * 2u, 0.01, 0.005,
     SIM_GEMM},
    {"copy", {"h2d_pageable_bw", "GB/s", FP_BETTER_HIGHER}, 4u << 20, 0.05, 0.04, SIM_HOST_COPY},
    {"launch", {"launch_us", "us", FP_BETTER_LOWER}, 0, 0.04, 0.04, SIM_LAUNCH},
};
enum { NDEV_METRICS = sizeof dev_metrics / sizeof dev_metrics[0] };
enum { NSKU = sizeof skus / sizeof skus[0] };
static const double link_gbs = 24; /* one 200G NIC per node pair path */

struct fp_sim {
    fp_sim_opts o;
    int width;           /* digits of node names */
    int *sku;            /* per node */
    double *node_off;    /* per node */
    double *gpu_off;     /* per node x gpu */
    int (*pair)[2];
    double *link_off;
    size_t npairs;
    fp_sim_fault *faults;
    size_t nfaults;
    uint32_t *node_first; /* per node + 1: where its faults start in node_fault */
    uint32_t *node_fault; /* the faults of each node (fault.node), in the order drawn */
};

static const char *const fault_names[FP_SIM_KIND_COUNT] = {
    "slow-gpu", "slow-node", "bad-link", "sdc", "throttle", "intermittent",
    "host-dip", "fail-slow", "slow-launch", "split"};

const char *fp_sim_fault_name(fp_sim_fault_kind k)
{
    return (unsigned)k < FP_SIM_KIND_COUNT ? fault_names[k] : "?";
}

bool fp_sim_fault_is_node(const fp_sim_fault *f)
{
    return f->kind != FP_SIM_BAD_LINK && f->kind != FP_SIM_HOST_DIP;
}

/* A fault present in every run, the history the baselines come from too. */
static bool fault_persists(const fp_sim_fault *f)
{
    return f->kind == FP_SIM_FAIL_SLOW || f->kind == FP_SIM_SLOW_LAUNCH;
}

/* Whether a device fault of kind k slows metrics of kind m. */
static bool fault_touches(fp_sim_fault_kind k, sim_kind m)
{
    switch (k) {
    case FP_SIM_FAIL_SLOW:
        return m == SIM_GEMM;
    case FP_SIM_SLOW_LAUNCH:
        return m == SIM_LAUNCH;
    case FP_SIM_HOST_DIP:
        return m == SIM_HOST_COPY || m == SIM_LAUNCH;
    case FP_SIM_BAD_LINK:
    case FP_SIM_SDC:
        return false;
    default: /* slow-gpu, slow-node, throttle, intermittent, split */
        return m == SIM_MEM || m == SIM_GEMM;
    }
}

const char *fp_sim_default_faults(void)
{
    return "slow-gpu=0.5%,slow-node=0.2%,bad-link=0.2%,sdc=0.1%,throttle=0.2%,intermittent=0.2%";
}

int fp_sim_runs(const fp_sim *sim)
{
    return sim->o.runs;
}

size_t fp_sim_faults(const fp_sim *sim, const fp_sim_fault **faults)
{
    *faults = sim->faults;
    return sim->nfaults;
}

void fp_sim_free(fp_sim *sim)
{
    if (!sim)
        return;
    free(sim->sku);
    free(sim->node_off);
    free(sim->gpu_off);
    free(sim->pair);
    free(sim->link_off);
    free(sim->faults);
    free(sim->node_first);
    free(sim->node_fault);
    free(sim);
}

/* "kind=N" or "kind=P%" items, comma-separated; "none" for no faults. */
static fp_status parse_faults(const char *spec, int nodes, int counts[FP_SIM_KIND_COUNT], char *err,
                              size_t errlen)
{
    memset(counts, 0, FP_SIM_KIND_COUNT * sizeof *counts);
    if (strcmp(spec, "none") == 0 || !spec[0])
        return FP_OK;
    char buf[512];
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "--faults: spec too long");
        return FP_EUSAGE;
    }
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        int k = -1;
        if (eq) {
            *eq = 0;
            for (int i = 0; i < FP_SIM_KIND_COUNT; i++)
                if (strcmp(item, fault_names[i]) == 0)
                    k = i;
        }
        if (k < 0) {
            snprintf(err, errlen,
                     "--faults '%s': unknown fault kind '%s' (slow-gpu, slow-node, bad-link, sdc, "
                     "throttle, intermittent, host-dip, fail-slow, slow-launch, split)",
                     spec, item);
            return FP_EUSAGE;
        }
        char *val = eq + 1, *end = NULL;
        double v = strtod(val, &end);
        bool pct = end && *end == '%';
        if (end == val || !(v >= 0) || (pct ? end[1] != 0 : *end != 0) || (pct && v > 100) ||
            (!pct && v != floor(v))) {
            snprintf(err, errlen, "--faults '%s': bad count '%s' for %s (N or P%%)", spec, val, item);
            return FP_EUSAGE;
        }
        counts[k] = (int)(pct ? floor(v / 100 * nodes + 0.5) : v);
    }
    return FP_OK;
}

/* A healthy device's persistent offset (its node's and its own) at most. */
#define QUIRK_MAX 0.05

/* Node SKUs in contiguous blocks (racks are bought together), with each
 * node's and device's persistent offset. */
static void draw_nodes(fp_sim *s, rng *r)
{
    int n = s->o.nodes, G = s->o.gpus_per_node;
    for (int i = 0; i < n; i++) {
        double pos = (i + 0.5) / n, acc = 0;
        s->sku[i] = NSKU - 1;
        for (int k = 0; k < NSKU; k++) {
            acc += skus[k].share;
            if (pos < acc) {
                s->sku[i] = k;
                break;
            }
        }
        s->node_off[i] = clip(0.015 * normal(r), 0.04);
        for (int g = 0; g < G; g++) {
            double d = clip(0.01 * normal(r), 0.03);
            double both = clip((1 + s->node_off[i]) * (1 + d) - 1, QUIRK_MAX);
            s->gpu_off[(size_t)i * G + g] = (1 + both) / (1 + s->node_off[i]) - 1;
        }
    }
}

/* The link sweep's pairs, each with its persistent offset: all up to 32
 * nodes, else near neighbours and random partners (each node in about
 * 2 x partners pairs). */
static void draw_pairs(fp_sim *s, rng *r)
{
    int n = s->o.nodes;
    if (n <= 32) {
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++) {
                s->pair[s->npairs][0] = a;
                s->pair[s->npairs][1] = b;
                s->npairs++;
            }
    } else {
        int near = (s->o.link_partners + 1) / 2;
        for (int a = 0; a < n; a++)
            for (int k = 0; k < s->o.link_partners; k++) {
                int b = k < near ? (a + k + 1) % n : below(r, n);
                if (b == a)
                    b = (a + near + 1) % n;
                s->pair[s->npairs][0] = a < b ? a : b;
                s->pair[s->npairs][1] = a < b ? b : a;
                s->npairs++;
            }
    }
    for (size_t p = 0; p < s->npairs; p++)
        s->link_off[p] = clip(0.02 * normal(r), 0.05);
}

/* A bad link between two nodes no fault has touched yet (false: none found
 * in many tries). */
static bool draw_bad_link(const fp_sim *s, rng *r, bool *used, fp_sim_fault *f)
{
    size_t p = 0;
    int tries = 0;
    do
        p = (size_t)(uniform(r) * (double)s->npairs);
    while ((used[s->pair[p][0]] || used[s->pair[p][1]]) && ++tries < 100000);
    if (tries >= 100000)
        return false;
    f->node = s->pair[p][0];
    f->peer = s->pair[p][1];
    used[f->node] = used[f->peer] = true;
    f->factor = uniform_in(r, 0.2, 0.6);
    return true;
}

/* The device, factor and windows of a fault of f->kind on node f->node. */
static void draw_node_fault(rng *r, int G, int W, fp_sim_fault *f)
{
    switch (f->kind) {
    case FP_SIM_SLOW_GPU:
        f->gpu = below(r, G);
        f->factor = uniform_in(r, 0.5, 0.9);
        break;
    case FP_SIM_SLOW_NODE:
        f->factor = uniform_in(r, 0.6, 0.9);
        break;
    case FP_SIM_SDC:
        f->gpu = below(r, G);
        f->factor = 1;
        break;
    case FP_SIM_THROTTLE:
        f->gpu = uniform(r) < 0.3 ? -1 : below(r, G);
        f->factor = uniform_in(r, 0.5, 0.85);
        f->from = W >= 3 ? 1 + below(r, W - 2) : 0; /* at least two windows throttled */
        break;
    case FP_SIM_INTERMITTENT: {
        f->gpu = below(r, G);
        f->factor = uniform_in(r, 0.4, 0.8);
        int len = W >= 3 ? 2 + below(r, 2) : W;
        len = len > W ? W : len;
        f->from = below(r, W - len + 1);
        f->to = f->from + len;
        break;
    }
    case FP_SIM_HOST_DIP: /* pageable copies 25-40% slower, launches 1.33-1.67x */
        f->factor = uniform_in(r, 0.6, 0.75);
        break;
    case FP_SIM_FAIL_SLOW:
        f->gpu = below(r, G);
        f->factor = uniform_in(r, 0.88, 0.92);
        break;
    case FP_SIM_SLOW_LAUNCH: /* as a factor on speed: latency x 1.5-1.7 */
        f->gpu = below(r, G);
        f->factor = 1 / uniform_in(r, 1.5, 1.7);
        break;
    case FP_SIM_SPLIT:
        f->factor = 0.5;
        break;
    default:
        break;
    }
}

/* counts[k] faults of each kind on distinct nodes, drawn from a shuffled
 * order; order and used hold one entry per node. */
static void draw_faults(fp_sim *s, rng *r, const int counts[FP_SIM_KIND_COUNT], int *order,
                        bool *used)
{
    int n = s->o.nodes, G = s->o.gpus_per_node, W = s->o.windows;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = below(r, i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int next = 0;
    for (int k = 0; k < FP_SIM_KIND_COUNT; k++) {
        for (int c = 0; c < counts[k]; c++) {
            fp_sim_fault f = {.kind = (fp_sim_fault_kind)k, .gpu = -1, .peer = -1, .from = 0, .to = W};
            if (k == FP_SIM_BAD_LINK) {
                if (draw_bad_link(s, r, used, &f))
                    s->faults[s->nfaults++] = f;
                continue;
            }
            if (k == FP_SIM_SPLIT) { /* spread evenly: every SKU's share alike */
                int at = (int)((long long)c * n / counts[k]);
                while (at < n && used[at])
                    at++;
                if (at >= n)
                    break;
                f.node = at;
                used[at] = true;
                draw_node_fault(r, G, W, &f);
                s->faults[s->nfaults++] = f;
                continue;
            }
            while (next < n && used[order[next]])
                next++;
            if (next >= n)
                break;
            f.node = order[next];
            used[f.node] = true;
            draw_node_fault(r, G, W, &f);
            s->faults[s->nfaults++] = f;
        }
    }
}

/* The faults of each node, so that making a run looks at a node's own
 * faults only (each sample looked at all of them: at 100,000 nodes, most of
 * a run's time). */
static fp_status index_faults(fp_sim *s)
{
    fp_status st = FP_OK;
    int n = s->o.nodes;
    s->node_first = calloc((size_t)n + 2, sizeof *s->node_first);
    s->node_fault = malloc((s->nfaults + 1) * sizeof *s->node_fault);
    FP_CHECK_ALLOC(s->node_first);
    FP_CHECK_ALLOC(s->node_fault);
    for (size_t i = 0; i < s->nfaults; i++)
        s->node_first[s->faults[i].node + 2]++;
    for (int i = 0; i < n; i++)
        s->node_first[i + 2] += s->node_first[i + 1];
    for (size_t i = 0; i < s->nfaults; i++) /* node_first[node + 1]: its next fault's place */
        s->node_fault[s->node_first[s->faults[i].node + 1]++] = (uint32_t)i;
cleanup:
    return st;
}

fp_status fp_sim_open(const fp_sim_opts *o, fp_sim **out, char *err, size_t errlen)
{
    *out = NULL;
    if (o->nodes < 1 || o->nodes > 1000000 || o->gpus_per_node < 1 || o->gpus_per_node > 64 ||
        o->runs < 1 || o->runs > 100 || o->windows < 1 || o->windows > 1000 ||
        o->link_partners < 1 || o->link_partners > 64 || !(o->shift >= 0 && o->shift <= 10)) {
        snprintf(err, errlen,
                 "simulate: need 1 <= nodes <= 1e6, 1 <= gpus-per-node <= 64, 1 <= runs <= 100, "
                 "1 <= windows <= 1000, 1 <= partners <= 64, 0 <= shift <= 10");
        return FP_EUSAGE;
    }
    int counts[FP_SIM_KIND_COUNT];
    fp_status st = parse_faults(o->faults ? o->faults : fp_sim_default_faults(), o->nodes, counts,
                                err, errlen);
    if (st != FP_OK)
        return st;
    int total = 0;
    for (int k = 0; k < FP_SIM_KIND_COUNT; k++)
        total += counts[k] * (k == FP_SIM_BAD_LINK ? 2 : 1);
    if (total > o->nodes / 2) {
        snprintf(err, errlen, "--faults: %d faulty nodes is more than half of %d nodes", total,
                 o->nodes);
        return FP_EUSAGE;
    }
    fp_sim *s = calloc(1, sizeof *s);
    int *order = NULL;
    bool *used = NULL;
    FP_CHECK_ALLOC(s);
    s->o = *o;
    int n = o->nodes, G = o->gpus_per_node;
    s->width = 1;
    for (int x = n - 1; x >= 10; x /= 10)
        s->width++;
    s->sku = malloc((size_t)n * sizeof *s->sku);
    s->node_off = malloc((size_t)n * sizeof *s->node_off);
    s->gpu_off = malloc((size_t)n * (size_t)G * sizeof *s->gpu_off);
    size_t maxpairs =
        n <= 32 ? (size_t)n * (size_t)(n - 1) / 2 : (size_t)n * (size_t)o->link_partners;
    s->pair = malloc((maxpairs + 1) * sizeof *s->pair);
    s->link_off = malloc((maxpairs + 1) * sizeof *s->link_off);
    s->faults = malloc(((size_t)total + 1) * sizeof *s->faults);
    order = malloc((size_t)n * sizeof *order);
    used = calloc((size_t)n, sizeof *used);
    if (!s->sku || !s->node_off || !s->gpu_off || !s->pair || !s->link_off || !s->faults ||
        !order || !used)
        FP_FAIL(FP_ENOMEM, "out of memory for a simulated fleet of %d nodes x %d GPUs", n, G);
    rng r;
    rng_seed(&r, o->seed, 0);
    draw_nodes(s, &r);
    draw_pairs(s, &r);
    draw_faults(s, &r, counts, order, used);
    FP_CHECK(index_faults(s));
    *out = s;
    s = NULL;
cleanup:
    free(order);
    free(used);
    fp_sim_free(s);
    return st;
}

/* ---- making a run ------------------------------------------------------------------------ */

static void node_name(const fp_sim *s, int i, char *buf, size_t len)
{
    snprintf(buf, len, "n%0*d", s->width, i);
}

/* Fault multiplier (a factor on speed, < 1: worse) of a device's metric of
 * kind m (gpu >= 0) or a link's (gpu < 0, nodes a < b) values in window w of
 * run live (the last) or of an earlier one (persistent faults only). */
static double fault_factor(const fp_sim *s, bool live, int node, int gpu, sim_kind m, int a,
                           int b, int w)
{
    double f = 1;
    int first = gpu >= 0 ? node : a, second = gpu >= 0 || b == a ? -1 : b;
    const uint32_t *p = s->node_fault + s->node_first[first], *q = NULL;
    size_t np = s->node_first[first + 1] - s->node_first[first], nq = 0, i = 0, j = 0;
    if (second >= 0) {
        q = s->node_fault + s->node_first[second];
        nq = s->node_first[second + 1] - s->node_first[second];
    }
    while (i < np || j < nq) { /* the two nodes' faults in the order drawn, as the product's */
        const fp_sim_fault *x = &s->faults[j == nq || (i < np && p[i] < q[j]) ? p[i++] : q[j++]];
        if (!fault_persists(x) && (!live || w < x->from || w >= x->to))
            continue;
        if (gpu >= 0) {
            if ((x->gpu < 0 || x->gpu == gpu) && fault_touches(x->kind, m))
                f *= x->factor;
        } else {
            if (x->kind == FP_SIM_BAD_LINK && x->node == a && x->peer == b)
                f *= x->factor;
            if (x->kind == FP_SIM_SLOW_NODE || x->kind == FP_SIM_SPLIT)
                f *= x->factor;
        }
    }
    return f;
}

/* A noise factor (< 1: worse) of per-window scale `scale`. */
static double noisy(rng *r, double scale)
{
    double v = exp(scale * clip(student3(r), 12));
    if (uniform(r) < 0.001)
        v *= uniform_in(r, 0.6, 0.9); /* a transient dip: preemption, a noisy neighbour */
    return v;
}

/* The base value of metric m on SKU k. */
static double metric_base(const sku_def *k, int m)
{
    const double v[NDEV_METRICS] = {k->triad, k->flops, k->pageable, k->launch};
    return v[m];
}

/* Where a run's samples go: its array (sized beforehand), or rows. */
typedef struct sim_out {
    fp_run *run;
    fp_rows_builder *rows; /* NULL: the array */
    fp_status st;          /* the first failure to add a row */
} sim_out;

static void emit(sim_out *o, const char *suite, const char *test, const fp_metric *m,
                 const fp_entity *e, uint64_t size, int iter, double value, double t)
{
    if (!o->rows) {
        fp_sample_make(&o->run->samples[o->run->nsamples++], suite, test, m, e, size, iter,
                       value, t);
        return;
    }
    fp_sample smp;
    fp_sample_make(&smp, suite, test, m, e, size, iter, value, t);
    if (o->st == FP_OK)
        o->st = fp_rows_builder_add(o->rows, &smp);
}

static fp_status sim_run(const fp_sim *s, int ri, fp_run *run, fp_rows_builder *rows)
{
    fp_status st = FP_OK;
    sim_out out = {run, rows, FP_OK};
    const fp_sim_opts *o = &s->o;
    int n = o->nodes, G = o->gpus_per_node, W = o->windows;
    bool live = ri == o->runs - 1;
    double *wander = NULL;
    fp_run_init(run);
    rng r;
    rng_seed(&r, o->seed, (uint64_t)ri + 1);
    snprintf(run->id, sizeof run->id, "sim-%llu-%02d", (unsigned long long)o->seed, ri);
    snprintf(run->tag, sizeof run->tag, "sim");
    run->time = 1.7e9 + ri * 86400.0 + fmod(ri * 7.3, 24) * 3600;
    run->duration = W * 60.0;
    snprintf(run->command, sizeof run->command, "fleetprint simulate --nodes %d --gpus-per-node %d --seed %llu",
             n, G, (unsigned long long)o->seed);
    snprintf(run->device_backend, sizeof run->device_backend, "sim");
    snprintf(run->comm_backend, sizeof run->comm_backend, "sim");
    snprintf(run->fleetprint_version, sizeof run->fleetprint_version, "%s", "sim");
    /* the faulty run says so: baselines never learn its faults as normal (the
     * persistent ones were there unannounced all along) */
    bool shifted = live && o->shift > 0 && o->shift != 1;
    if (live && (s->nfaults || shifted))
        snprintf(run->injections, sizeof run->injections,
                 "simulated: %zu faults (--faults %s), shift %g", s->nfaults,
                 o->faults ? o->faults : "default", shifted ? o->shift : 1);
    FP_CHECK(fp_run_set_shape(run, n, n * G));
    for (int i = 0; i < n; i++) {
        node_name(s, i, run->nodes[i], FP_NAME_MAX);
        for (int g = 0; g < G; g++) {
            fp_rank_info *rk = &run->ranks[i * G + g];
            rk->node = i;
            rk->local_rank = g;
            rk->dev = g;
            snprintf(rk->model, sizeof rk->model, "%s", skus[s->sku[i]].model);
        }
    }
    size_t want = (size_t)n * G * (NDEV_METRICS * (size_t)W + 1) + s->npairs * (size_t)W;
    /* this run's wander of every device and metric */
    wander = malloc((size_t)n * G * NDEV_METRICS * sizeof *wander);
    FP_CHECK_ALLOC(wander);
    for (size_t i = 0; i < (size_t)n * G * NDEV_METRICS; i++)
        wander[i] = exp(dev_metrics[i % NDEV_METRICS].wander * clip(normal(&r), 4));
    if (!rows) {
        run->samples = malloc(want * sizeof *run->samples);
        FP_CHECK_ALLOC(run->samples);
        run->cap = want;
    }
    static const fp_metric m_wrong = {"bf16_wrong", "count", FP_BETTER_LOWER};
    static const fp_metric m_link = {"bw_inter", "GB/s", FP_BETTER_HIGHER};
    double hour = fmod(ri * 7.3, 24);
    for (int w = 0; w < W; w++) {
        double t = w * 60.0;
        double diurnal = 1 + 0.015 * sin(2 * M_PI * (hour + t / 3600) / 24);
        for (int i = 0; i < n; i++) {
            const sku_def *k = &skus[s->sku[i]];
            char name[FP_NAME_MAX];
            node_name(s, i, name, sizeof name);
            for (int g = 0; g < G; g++) {
                fp_entity e = fp_entity_gpu(name, g);
                double base = (1 + s->node_off[i]) * (1 + s->gpu_off[(size_t)i * G + g]) * diurnal;
                const double *wd = wander + ((size_t)i * G + g) * NDEV_METRICS;
                for (int m = 0; m < NDEV_METRICS; m++) {
                    const sim_metric *sm = &dev_metrics[m];
                    double f = s->nfaults ? fault_factor(s, live, i, g, sm->kind, -1, -1, w) : 1;
                    if (shifted && (sm->kind == SIM_MEM || sm->kind == SIM_GEMM))
                        f *= o->shift;
                    double x = base * wd[m] * f * noisy(&r, sm->noise);
                    /* a lower-is-better metric gets worse as x falls */
                    double v = metric_base(k, m) * (sm->m.better == FP_BETTER_LOWER ? 1 / x : x);
                    emit(&out, "kernels", sm->test, &sm->m, &e, sm->size, w, v, t + m);
                }
            }
        }
        for (size_t p = 0; p < s->npairs; p++) {
            int a = s->pair[p][0], b = s->pair[p][1];
            char na[FP_NAME_MAX], nb[FP_NAME_MAX];
            node_name(s, a, na, sizeof na);
            node_name(s, b, nb, sizeof nb);
            fp_entity e = fp_entity_link(na, -1, nb, -1);
            double nic = 1 + 0.5 * (s->node_off[a] + s->node_off[b]) * 0.5;
            double f = live ? fault_factor(s, live, -1, -1, SIM_MEM, a, b, w) : 1;
            emit(&out, "collectives", "links", &m_link, &e, 16u << 20, w,
                 link_gbs * nic * (1 + s->link_off[p]) * diurnal * f * noisy(&r, 0.02), t + 2);
        }
    }
    /* wrong results: one count per device and run; SDC devices have some */
    for (int i = 0; i < n; i++) {
        char name[FP_NAME_MAX];
        node_name(s, i, name, sizeof name);
        for (int g = 0; g < G; g++) {
            double wrong = 0;
            for (uint32_t x = s->node_first[i]; live && x < s->node_first[i + 1]; x++) {
                const fp_sim_fault *f = &s->faults[s->node_fault[x]];
                if (f->kind == FP_SIM_SDC && f->gpu == g)
                    wrong = 1 + below(&r, 1000);
            }
            fp_entity e = fp_entity_gpu(name, g);
            emit(&out, "kernels", "gemm", &m_wrong, &e, 8192u * 8192u * 2u, -1, wrong, W * 60.0);
        }
    }
    if (out.st != FP_OK)
        FP_FAIL(out.st, "no memory for the rows of simulated run %d (%zu samples)", ri, want);
    if (rows) {
        fp_run_rows *made = fp_rows_builder_take(rows);
        FP_CHECK_ALLOC(made);
        fp_run_set_rows(run, made);
    }
cleanup:
    free(wander);
    return st;
}

fp_status fp_sim_run(const fp_sim *s, int ri, fp_run *run)
{
    return sim_run(s, ri, run, NULL);
}

fp_status fp_sim_run_rows(const fp_sim *s, int ri, fp_run *run)
{
    fp_rows_builder b;
    memset(&b, 0, sizeof b);
    fp_status st = sim_run(s, ri, run, &b);
    fp_rows_builder_free(&b);
    return st;
}

/* ---- truth and scoring ---------------------------------------------------------------------- */

void fp_sim_score_verdicts(const fp_sim *sim, const fp_verdicts *v, fp_sim_score *out)
{
    memset(out, 0, sizeof *out);
    int n = sim->o.nodes;
    bool *truth = calloc((size_t)n, sizeof *truth);
    if (!truth)
        return;
    for (size_t i = 0; i < sim->nfaults; i++)
        if (fp_sim_fault_is_node(&sim->faults[i]))
            truth[sim->faults[i].node] = true;
    for (int i = 0; i < n; i++) {
        char name[FP_NAME_MAX];
        node_name(sim, i, name, sizeof name);
        bool pred = fp_verdicts_node(v, name) == FP_FAIL;
        out->tp += pred && truth[i];
        out->fp += pred && !truth[i];
        out->fn += !pred && truth[i];
        out->tn += !pred && !truth[i];
    }
    free(truth);
    /* links */
    size_t bad = 0;
    for (size_t i = 0; i < sim->nfaults; i++)
        bad += sim->faults[i].kind == FP_SIM_BAD_LINK;
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        if (ev->entity->kind != FP_ENT_LINK || ev->verdict != FP_FAIL)
            continue;
        bool hit = false;
        for (size_t x = 0; x < sim->nfaults && !hit; x++) {
            const fp_sim_fault *f = &sim->faults[x];
            char a[FP_NAME_MAX], b[FP_NAME_MAX];
            if (f->kind != FP_SIM_BAD_LINK)
                continue;
            node_name(sim, f->node, a, sizeof a);
            node_name(sim, f->peer, b, sizeof b);
            hit = strcmp(ev->entity->node, a) == 0 && strcmp(ev->entity->peer, b) == 0;
        }
        out->link_tp += hit;
        out->link_fp += !hit;
    }
    out->link_fn = bad > out->link_tp ? bad - out->link_tp : 0;
    out->precision = out->tp + out->fp ? (double)out->tp / (double)(out->tp + out->fp) : 1;
    out->recall = out->tp + out->fn ? (double)out->tp / (double)(out->tp + out->fn) : 1;
    out->f1 = out->precision + out->recall > 0
                  ? 2 * out->precision * out->recall / (out->precision + out->recall)
                  : 0;
}

fp_status fp_sim_write_truth(const fp_sim *sim, const char *path)
{
    fp_status st;
    FILE *f = fp_outfile_open(path, &st);
    if (!f)
        return st;
    char a[FP_NAME_MAX], b[FP_NAME_MAX];
    fprintf(f, "{\n \"faulty_nodes\": [");
    int k = 0;
    for (size_t i = 0; i < sim->nfaults; i++)
        if (fp_sim_fault_is_node(&sim->faults[i])) {
            node_name(sim, sim->faults[i].node, a, sizeof a);
            fprintf(f, "%s\"%s\"", k++ ? ", " : "", a);
        }
    fprintf(f, "],\n \"bad_links\": [");
    k = 0;
    for (size_t i = 0; i < sim->nfaults; i++)
        if (sim->faults[i].kind == FP_SIM_BAD_LINK) {
            node_name(sim, sim->faults[i].node, a, sizeof a);
            node_name(sim, sim->faults[i].peer, b, sizeof b);
            fprintf(f, "%s\"link:%s~%s\"", k++ ? ", " : "", a, b);
        }
    fprintf(f, "],\n \"faults\": [");
    for (size_t i = 0; i < sim->nfaults; i++) {
        const fp_sim_fault *x = &sim->faults[i];
        char ent[2 * FP_NAME_MAX + 16];
        node_name(sim, x->node, a, sizeof a);
        if (x->kind == FP_SIM_BAD_LINK) {
            node_name(sim, x->peer, b, sizeof b);
            snprintf(ent, sizeof ent, "link:%s~%s", a, b);
        } else if (x->gpu >= 0) {
            snprintf(ent, sizeof ent, "gpu:%s/%d", a, x->gpu);
        } else {
            snprintf(ent, sizeof ent, "node:%s", a);
        }
        fprintf(f, "%s\n  {\"kind\": \"%s\", \"entity\": \"%s\", \"factor\": %.4f, \"from\": %d, "
                   "\"to\": %d}",
                i ? "," : "", fp_sim_fault_name(x->kind), ent, x->factor, x->from, x->to);
    }
    fprintf(f, "\n ],\n \"shift\": %g,\n \"run\": \"sim-%llu-%02d\"\n}\n",
            sim->o.shift > 0 ? sim->o.shift : 1, (unsigned long long)sim->o.seed,
            sim->o.runs - 1);
    return fp_outfile_close(f, path, true);
}
