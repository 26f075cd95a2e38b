/* The detector engine. A run's samples become series (metric key x entity,
 * one value per window); series are grouped by key and SKU; every window of a
 * group gets a robust centre and scale (median, MAD; in log space for
 * relative rules, so a 2x outlier and a 0.5x one weigh alike); each series is
 * judged per window and must stay out of bounds in enough windows, in a row,
 * to fail (Minder's continuity check). Entity verdicts are then demarcated:
 * links slow with most partners of a node blame the node, the rest blame the
 * link; device and late-rank failures blame their node.
 *
 * Cost: O(samples) hashing plus O(series x windows) selection, no sorting of
 * samples; 10,000 nodes x 8 GPUs takes well under a second on one core. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "fleetprint/log.h"

#include "fleetprint/store.h"
#include "fleetprint/stats.h"
#include "fleetprint/mem.h"

/* ---- small tools ------------------------------------------------------------------ */

static uint64_t fnv_str(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 1099511628211ULL;
    }
    return h;
}

/* Open-addressing table of indices; the caller compares candidates. */
typedef struct table {
    uint32_t *slot; /* index + 1; 0 = empty */
    uint64_t *hash;
    size_t mask;
} table;

static bool table_init(table *t, size_t expect)
{
    size_t cap = 16;
    while (cap < 2 * expect + 16)
        cap <<= 1;
    t->slot = calloc(cap, sizeof *t->slot);
    t->hash = malloc(cap * sizeof *t->hash);
    t->mask = cap - 1;
    return t->slot && t->hash;
}

static void table_free(table *t)
{
    free(t->slot);
    free(t->hash);
}

static fp_verdict worse(fp_verdict a, fp_verdict b)
{
    /* fail > warn > pass > unknown for combining evidence of one entity */
    static const int rank[] = {[FP_PASS] = 1, [FP_WARN] = 2, [FP_FAIL] = 3, [FP_UNKNOWN] = 0};
    return rank[b] > rank[a] ? b : a;
}

const char *fp_verdict_name(fp_verdict v)
{
    static const char *const names[] = {"pass", "warn", "fail", "unknown"};
    return (unsigned)v <= FP_UNKNOWN ? names[v] : "?";
}

const char *fp_evidence_name(fp_evidence e)
{
    static const char *const names[] = {"peers", "drift", "fleet", "value",
                                        "missing", "links", "gpus", "late"};
    return (unsigned)e < FP_EV_COUNT ? names[e] : "?";
}

/* ---- the engine's state ------------------------------------------------------------- */

typedef struct ent_info {
    const fp_entity *e;
    int32_t node, peer; /* node indices; peer only for links */
    int32_t sku;
    fp_verdict v;
    bool explain;       /* record its passing evidence too (--explain) */
    /* windows (bit min(w, 63)) where at least one / two of its series are
     * out of bounds against peers: corroboration of a short episode */
    uint64_t bad1, bad2;
} ent_info;

typedef struct key_info {
    const fp_sample *rep;
    char text[96];
    int32_t windows;
    int32_t raw_windows; /* windows as measured (the summary aside), at least 1 */
    int32_t test;
    bool windowed;
    bool has_summary;
    bool use_summary; /* judge only the summary values (class option) */
    const fp_value_rule *vrule;
    const fp_rule_class *cls;
} key_info;

typedef struct series {
    uint32_t key, ent;
    size_t off;    /* first of key.windows values */
    size_t woff;   /* first of key.raw_windows values in wvals */
    bool windowed; /* has per-window samples (else one summary) */
    bool drift_judged; /* judged against its own baseline of min_runs runs */
    fp_verdict drift;  /* that verdict, a transient far window aside */
} series;

/* Why a failing reason's verdict waits for all evidence (a bit set). */
enum {
    HOLD_EPISODE = 1, /* fewer than a persistent share of windows: fails only
                         where another series of the entity agrees */
    HOLD_DRIFT = 2    /* peers or fleet against an entity with its own
                         baseline: fails only where drift saw a change */
};

typedef struct owned_reason {
    uint32_t owner; /* node index, or nnodes + entity id */
    uint32_t ser;   /* the series judged (held reasons) */
    uint64_t mask;  /* its out-of-bounds windows (held reasons) */
    int hold;       /* HOLD_* bits: a fail that release() decides */
    fp_reason r;
} owned_reason;

typedef struct eng {
    const fp_run *run;
    const fp_rules *rules;
    const fp_baselines *base;
    bool contended;
    const char *contended_note;
    /* nodes: the run's, then any named only by samples */
    char (*node)[FP_NAME_MAX];
    int32_t *node_sku;
    size_t nnodes, node_cap;
    table node_tab;
    /* SKUs */
    char (*sku)[FP_NAME_MAX];
    size_t nsku;
    /* interned keys, tests, entities, series */
    key_info *keys;
    size_t nkeys, key_cap;
    char (*tests)[48];
    size_t ntests;
    ent_info *ents;
    size_t nents;
    table ent_tab;
    series *ser;
    size_t nser;
    table ser_tab;
    uint32_t *sample_ser;
    double *vals;
    double *wvals; /* per-window values (a summary-only series: its summary) */
    double *class_floor; /* per rule class: the spread floor learned from the baselines */
    const char *explain;
    /* output */
    owned_reason *reasons;
    size_t nreasons, reason_cap;
    fp_verdict *node_v;
} eng;

/* ---- nodes and SKUs ------------------------------------------------------------------- */

static int32_t node_find(const eng *g, const char *name, uint64_t h)
{
    for (size_t i = h & g->node_tab.mask;; i = (i + 1) & g->node_tab.mask) {
        uint32_t s = g->node_tab.slot[i];
        if (!s)
            return -1;
        if (g->node_tab.hash[i] == h && strcmp(g->node[s - 1], name) == 0)
            return (int32_t)(s - 1);
    }
}

static int32_t node_intern(eng *g, const char *name)
{
    uint64_t h = fnv_str(14695981039346656037ULL, name);
    int32_t found = node_find(g, name, h);
    if (found >= 0)
        return found;
    if (g->nnodes == g->node_cap)
        return -1; /* sized for the run's nodes plus every sample: cannot happen */
    size_t i = h & g->node_tab.mask;
    while (g->node_tab.slot[i])
        i = (i + 1) & g->node_tab.mask;
    snprintf(g->node[g->nnodes], FP_NAME_MAX, "%s", name);
    g->node_sku[g->nnodes] = -1;
    g->node_tab.slot[i] = (uint32_t)(g->nnodes + 1);
    g->node_tab.hash[i] = h;
    return (int32_t)g->nnodes++;
}

static int32_t sku_intern(eng *g, const char *model)
{
    for (size_t i = 0; i < g->nsku; i++)
        if (strcmp(g->sku[i], model) == 0)
            return (int32_t)i;
    char (*t)[FP_NAME_MAX] = realloc(g->sku, (g->nsku + 1) * sizeof *t);
    if (!t)
        return -1;
    g->sku = t;
    snprintf(g->sku[g->nsku], FP_NAME_MAX, "%s", model);
    return (int32_t)g->nsku++;
}

static fp_status setup_nodes(eng *g)
{
    const fp_run *run = g->run;
    /* sample entities can name nodes the context lacks: at most two per sample
     * (bounded below by a distinct-name count would need a pass; this bound
     * only costs memory for the table) */
    g->node_cap = (size_t)run->nnodes + 2 * run->nsamples + 1;
    size_t expect = (size_t)run->nnodes + 1024;
    if (g->node_cap > expect * 64)
        g->node_cap = expect * 64; /* real runs repeat node names heavily */
    g->node = malloc(g->node_cap * sizeof *g->node);
    g->node_sku = malloc(g->node_cap * sizeof *g->node_sku);
    if (!g->node || !g->node_sku || !table_init(&g->node_tab, g->node_cap))
        return FP_ENOMEM;
    for (int i = 0; i < run->nnodes; i++)
        if (node_intern(g, run->nodes[i]) < 0)
            return FP_ENOMEM;
    /* a node's SKU is its ranks' device model; several give "mixed" */
    for (int r = 0; r < run->nranks; r++) {
        const fp_rank_info *ri = &run->ranks[r];
        if (ri->node < 0 || ri->node >= run->nnodes)
            continue;
        int32_t s = sku_intern(g, ri->model[0] ? ri->model : "unknown");
        if (s < 0)
            return FP_ENOMEM;
        int32_t *cur = &g->node_sku[ri->node];
        if (*cur < 0)
            *cur = s;
        else if (*cur != s)
            *cur = sku_intern(g, "mixed");
    }
    return FP_OK;
}

/* ---- interning samples ---------------------------------------------------------------- */

static bool same_key(const fp_sample *a, const fp_sample *b)
{
    return a->size == b->size && strcmp(a->metric, b->metric) == 0 &&
           strcmp(a->test, b->test) == 0 && strcmp(a->suite, b->suite) == 0;
}

static bool same_entity(const fp_entity *a, const fp_entity *b)
{
    return a->kind == b->kind && a->dev == b->dev && a->peer_dev == b->peer_dev &&
           a->rank == b->rank && strcmp(a->node, b->node) == 0 && strcmp(a->peer, b->peer) == 0;
}

static int32_t test_intern(eng *g, const fp_sample *s)
{
    char name[48];
    snprintf(name, sizeof name, "%s.%s", s->suite, s->test);
    for (size_t i = 0; i < g->ntests; i++)
        if (strcmp(g->tests[i], name) == 0)
            return (int32_t)i;
    char (*t)[48] = realloc(g->tests, (g->ntests + 1) * sizeof *t);
    if (!t)
        return -1;
    g->tests = t;
    snprintf(g->tests[g->ntests], 48, "%s", name);
    return (int32_t)g->ntests++;
}

static int64_t key_intern(eng *g, const fp_sample *s)
{
    for (size_t i = 0; i < g->nkeys; i++)
        if (same_key(g->keys[i].rep, s))
            return (int64_t)i;
    key_info *grown = fp_grow(g->keys, &g->key_cap, g->nkeys + 1, sizeof *grown, 32);
    if (!grown)
        return -1;
    g->keys = grown;
    key_info *k = &g->keys[g->nkeys];
    memset(k, 0, sizeof *k);
    k->rep = s;
    fp_sample_key(s, k->text, sizeof k->text);
    k->test = test_intern(g, s);
    if (k->test < 0)
        return -1;
    k->vrule = fp__rules_value(g->rules, k->text);
    k->cls = k->vrule ? NULL : fp__rules_class(g->rules, k->text);
    return (int64_t)g->nkeys++;
}

static uint64_t entity_hash(const fp_entity *e)
{
    uint64_t h = fnv_str(14695981039346656037ULL, e->node);
    h = fnv_str(h ^ 0x2f, e->peer);
    h = fnv_u64(h, (uint64_t)e->kind | (uint64_t)(uint32_t)e->dev << 8);
    return fnv_u64(h, (uint64_t)(uint32_t)e->peer_dev | (uint64_t)(uint32_t)e->rank << 32);
}

static int64_t entity_intern(eng *g, const fp_entity *e)
{
    uint64_t h = entity_hash(e);
    size_t i = h & g->ent_tab.mask;
    for (;; i = (i + 1) & g->ent_tab.mask) {
        uint32_t s = g->ent_tab.slot[i];
        if (!s)
            break;
        if (g->ent_tab.hash[i] == h && same_entity(g->ents[s - 1].e, e))
            return s - 1;
    }
    ent_info *ei = &g->ents[g->nents];
    ei->e = e;
    /* a group's name is not a node: it has neither node nor SKU */
    bool group = e->kind == FP_ENT_GROUP;
    ei->node = group ? -1 : node_intern(g, e->node);
    ei->peer = e->kind == FP_ENT_LINK ? node_intern(g, e->peer) : -1;
    ei->v = FP_UNKNOWN;
    ei->bad1 = ei->bad2 = 0;
    ei->explain = false; /* set for --explain once every entity is known */
    if ((!group && ei->node < 0) || (e->kind == FP_ENT_LINK && ei->peer < 0))
        return -1;
    ei->sku = group ? -1 : g->node_sku[ei->node];
    g->ent_tab.slot[i] = (uint32_t)(g->nents + 1);
    g->ent_tab.hash[i] = h;
    return (int64_t)g->nents++;
}

static int64_t series_find(const eng *g, uint32_t key, uint32_t ent, bool add, eng *gm)
{
    uint64_t h = fp_mix64((uint64_t)key << 32 | ent);
    size_t i = h & g->ser_tab.mask;
    for (;; i = (i + 1) & g->ser_tab.mask) {
        uint32_t s = g->ser_tab.slot[i];
        if (!s)
            break;
        const series *se = &g->ser[s - 1];
        if (se->key == key && se->ent == ent)
            return s - 1;
    }
    if (!add)
        return -1;
    series *se = &gm->ser[gm->nser];
    memset(se, 0, sizeof *se);
    se->key = key;
    se->ent = ent;
    gm->ser_tab.slot[i] = (uint32_t)(gm->nser + 1);
    gm->ser_tab.hash[i] = h;
    return (int64_t)gm->nser++;
}

static fp_status intern_samples(eng *g)
{
    const fp_run *run = g->run;
    size_t n = run->nsamples;
    g->ents = malloc((n + 1) * sizeof *g->ents);
    g->ser = malloc((n + 1) * sizeof *g->ser);
    g->sample_ser = malloc((n + 1) * sizeof *g->sample_ser);
    if (!g->ents || !g->ser || !g->sample_ser || !table_init(&g->ent_tab, n / 2 + 64) ||
        !table_init(&g->ser_tab, n / 2 + 64))
        return FP_ENOMEM;
    int64_t last_key = -1, last_ent = -1;
    const fp_sample *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const fp_sample *s = &run->samples[i];
        int64_t k = prev && same_key(prev, s) ? last_key : key_intern(g, s);
        int64_t e = prev && same_entity(&prev->entity, &s->entity) ? last_ent
                                                                   : entity_intern(g, &s->entity);
        if (k < 0 || e < 0)
            return FP_ENOMEM;
        int64_t se = series_find(g, (uint32_t)k, (uint32_t)e, true, g);
        g->sample_ser[i] = (uint32_t)se;
        key_info *ki = &g->keys[k];
        ki->has_summary |= s->iter < 0;
        if (s->iter >= 0) {
            g->ser[se].windowed = true;
            ki->windowed = true;
            if (s->iter + 1 > ki->windows)
                ki->windows = s->iter + 1;
        }
        ki->raw_windows = ki->windows > 1 ? ki->windows : 1;
        prev = s;
        last_key = k;
        last_ent = e;
    }
    /* per-window values; a key whose series only hold summaries has one window */
    size_t off = 0;
    for (size_t k = 0; k < g->nkeys; k++) {
        key_info *ki = &g->keys[k];
        ki->use_summary = ki->cls && ki->cls->summary && ki->has_summary;
        if (ki->windows < 1 || ki->use_summary)
            ki->windows = 1;
    }
    size_t woff = 0;
    for (size_t s = 0; s < g->nser; s++) {
        g->ser[s].off = off;
        g->ser[s].woff = woff;
        off += (size_t)g->keys[g->ser[s].key].windows;
        woff += (size_t)g->keys[g->ser[s].key].raw_windows;
    }
    g->vals = malloc((off + 1) * sizeof *g->vals);
    g->wvals = malloc((woff + 1) * sizeof *g->wvals);
    if (!g->vals || !g->wvals)
        return FP_ENOMEM;
    for (size_t i = 0; i < off; i++)
        g->vals[i] = NAN;
    for (size_t i = 0; i < woff; i++)
        g->wvals[i] = NAN;
    for (size_t i = 0; i < n; i++) {
        const fp_sample *s = &run->samples[i];
        const series *se = &g->ser[g->sample_ser[i]];
        if (se->windowed ? s->iter >= 0 : s->iter < 0)
            g->wvals[se->woff + (size_t)(s->iter > 0 ? s->iter : 0)] = s->value;
        bool use_summary = g->keys[se->key].use_summary || !se->windowed;
        if (use_summary ? s->iter >= 0 : s->iter < 0)
            continue; /* windows or the summary, not both */
        g->vals[se->off + (size_t)(use_summary ? 0 : s->iter)] = s->value;
    }
    for (size_t e = 0; g->explain && e < g->nents; e++)
        g->ents[e].explain = fp_entity_in(g->ents[e].e, g->explain);
    return FP_OK;
}

/* ---- reasons ---------------------------------------------------------------------------- */

static fp_reason *add_reason(eng *g, uint32_t owner)
{
    owned_reason *t = fp_grow(g->reasons, &g->reason_cap, g->nreasons + 1, sizeof *t, 256);
    if (!t)
        return NULL;
    g->reasons = t;
    owned_reason *o = &g->reasons[g->nreasons++];
    memset(o, 0, sizeof *o);
    o->owner = owner;
    return &o->r;
}

static uint32_t ent_owner(const eng *g, uint32_t ent)
{
    const ent_info *ei = &g->ents[ent];
    if (ei->e->kind == FP_ENT_NODE)
        return (uint32_t)ei->node;
    return (uint32_t)(g->nnodes + ent);
}

static void set_ent_verdict(eng *g, uint32_t ent, fp_verdict v)
{
    ent_info *ei = &g->ents[ent];
    ei->v = worse(ei->v, v);
}

static fp_reason *series_reason(eng *g, const series *se, fp_evidence ev, fp_verdict v,
                                const char *rule)
{
    fp_reason *r = add_reason(g, ent_owner(g, se->ent));
    if (!r)
        return NULL;
    const key_info *k = &g->keys[se->key];
    snprintf(r->key, sizeof r->key, "%s", k->text);
    snprintf(r->unit, sizeof r->unit, "%s", k->rep->unit);
    snprintf(r->rule, sizeof r->rule, "%s", rule);
    r->evidence = ev;
    r->verdict = v;
    return r;
}

/* ---- value rules -------------------------------------------------------------------------- */

static fp_status judge_value(eng *g, const series *se)
{
    const key_info *k = &g->keys[se->key];
    const fp_value_rule *vr = k->vrule;
    int bad = 0, present = 0;
    double worst = NAN;
    for (int w = 0; w < k->windows; w++) {
        double v = g->vals[se->off + (size_t)w];
        if (isnan(v))
            continue;
        present++;
        if (v > vr->max || v < vr->min) {
            bad++;
            if (isnan(worst) || (v > vr->max ? v > worst : v < worst))
                worst = v;
        }
    }
    if (!present)
        return FP_OK; /* judged as missing elsewhere */
    if (!bad) {
        set_ent_verdict(g, se->ent, FP_PASS);
        return FP_OK;
    }
    set_ent_verdict(g, se->ent, vr->verdict);
    fp_reason *r = series_reason(g, se, FP_EV_VALUE, vr->verdict, vr->name);
    if (!r)
        return FP_ENOMEM;
    r->value = worst;
    r->expected = worst > vr->max ? vr->max : vr->min;
    r->deviation = worst - r->expected;
    r->z = NAN;
    r->windows_bad = bad;
    r->windows = present;
    snprintf(r->note, sizeof r->note, "%s %g in %d of %d windows",
             worst > vr->max ? "above the limit:" : "below the limit:", worst, bad, present);
    return FP_OK;
}

/* ---- peer evidence -------------------------------------------------------------------------- */

/* Per-window judgement of one series against a centre and scale. */
typedef struct window_score {
    double loss, z, value, expected;
    double band; /* expected +- band: the scale in the metric's unit */
    int level; /* 0 ok, 1 warn, 2 fail */
} window_score;

/* What a series is judged against: how many runs x windows (or peers) stand
 * behind the expected value, and whether it is noisy (then only a
 * persistence over several windows fails it, never one window). */
typedef struct reference {
    int runs, windows;
    bool noisy;
} reference;

/* The evidence of a series from its per-window scores: persistence decides. */
static fp_status conclude(eng *g, const series *se, const window_score *ws, int n, fp_evidence ev,
                          const fp_rule_class *cls, const reference *ref)
{
    const fp_rules *r = g->rules;
    int present = 0, nfail = 0, nwarn = 0, nstrong = 0;
    int run_f = 0, run_w = 0, run_s = 0, best_f = 0, best_w = 0, best_s = 0;
    uint64_t out_w = 0, out_f = 0; /* windows out of bounds: warn, fail level */
    for (int w = 0; w < n; w++) {
        if (ws[w].level < 0)
            continue;
        uint64_t bit = (uint64_t)1 << (n > 64 ? w * 64 / n : w);
        out_w |= ws[w].level >= 1 ? bit : 0;
        out_f |= ws[w].level >= 2 ? bit : 0;
        present++;
        run_s = ws[w].level >= 3 ? run_s + 1 : 0;
        run_f = ws[w].level >= 2 ? run_f + 1 : 0;
        run_w = ws[w].level >= 1 ? run_w + 1 : 0;
        nstrong += ws[w].level >= 3;
        nfail += ws[w].level >= 2;
        nwarn += ws[w].level >= 1;
        best_s = run_s > best_s ? run_s : best_s;
        best_f = run_f > best_f ? run_f : best_f;
        best_w = run_w > best_w ? run_w : best_w;
    }
    if (!present)
        return FP_OK;
    ent_info *ei = &g->ents[se->ent];
    if (ev == FP_EV_PEERS) {
        ei->bad2 |= ei->bad1 & out_w;
        ei->bad1 |= out_w;
    }
    /* out of bounds long enough: a fraction of the windows, min_windows in a
     * row; far out of bounds (strong_factor x fail): a smaller fraction */
    int streak = r->persist_min < present ? r->persist_min : present;
    if (ref->noisy && streak < 2 && n > 1)
        streak = 2; /* one window never fails (a summary, an aggregate over the
                       measurement's own iterations, is judged as it is) */
    int need = (int)ceil(r->persist_fraction * present - 1e-9);
    need = need < streak ? streak : need > present ? present : need;
    int need_s = (int)ceil(r->strong_fraction * present - 1e-9);
    need_s = need_s < streak ? streak : need_s > present ? present : need_s;
    if (cls->absolute || ref->noisy) /* per-call timings, noisy metrics: persistence alone */
        nstrong = 0;
    fp_verdict v = FP_PASS;
    bool persistent = nfail >= need && best_f >= streak;
    if (persistent || (nstrong >= need_s && best_s >= streak))
        v = FP_FAIL;
    else if ((nwarn >= need && best_w >= streak) || nstrong > 0)
        v = FP_WARN; /* a persistent mild deviation, or one far out of bounds */
    int hold = 0;
    if (v == FP_FAIL && !persistent)
        hold |= HOLD_EPISODE;
    if (v == FP_FAIL && g->base && !g->contended && (ev == FP_EV_PEERS || ev == FP_EV_FLEET))
        hold |= HOLD_DRIFT;
    uint32_t si = (uint32_t)(se - g->ser);
    if (ev == FP_EV_DRIFT) { /* did the level change? (one far window is no change) */
        g->ser[si].drift_judged = true;
        g->ser[si].drift = v == FP_WARN && !(nwarn >= need && best_w >= streak) ? FP_PASS : v;
    }
    set_ent_verdict(g, se->ent, hold ? FP_WARN : v);
    if (v == FP_PASS && !ei->explain)
        return FP_OK;
    /* describe the out-of-bounds windows (all, for a pass) by their medians */
    int lvl = v == FP_FAIL ? (nfail >= need && best_f >= streak ? 2 : 3) : v == FP_WARN, m = 0;
    double buf[5][64];
    double *loss = buf[0], *z = buf[1], *val = buf[2], *exp_ = buf[3], *band = buf[4];
    int stride = n > 64 ? (n + 63) / 64 : 1;
    for (int w = 0; w < n && m < 64; w += 1) {
        if (ws[w].level < lvl || (stride > 1 && w % stride))
            continue;
        loss[m] = ws[w].loss;
        z[m] = ws[w].z;
        val[m] = ws[w].value;
        exp_[m] = ws[w].expected;
        band[m] = ws[w].band;
        m++;
    }
    if (m == 0) { /* a transient fail window on a sparse stride */
        for (int w = 0; w < n && m < 1; w++)
            if (ws[w].level >= 1) {
                loss[0] = ws[w].loss, z[0] = ws[w].z, val[0] = ws[w].value;
                exp_[0] = ws[w].expected;
                band[0] = ws[w].band;
                m = 1;
            }
    }
    fp_reason *rs = series_reason(g, se, ev, v, cls->name);
    if (!rs)
        return FP_ENOMEM;
    g->reasons[g->nreasons - 1].ser = si;
    g->reasons[g->nreasons - 1].mask = out_f;
    g->reasons[g->nreasons - 1].hold = hold;
    rs->deviation = fp_median_select(loss, (size_t)m);
    rs->z = fp_median_select(z, (size_t)m);
    rs->value = fp_median_select(val, (size_t)m);
    rs->expected = fp_median_select(exp_, (size_t)m);
    rs->band = fp_median_select(band, (size_t)m);
    rs->ref_runs = ref->runs;
    rs->ref_windows = ref->windows;
    rs->windows_bad = lvl == 3 ? nstrong : lvl == 2 ? nfail : lvl == 1 ? nwarn : 0;
    rs->windows = present;
    if (v == FP_WARN && nstrong > 0 && !(nwarn >= need && best_w >= streak))
        snprintf(rs->note, sizeof rs->note, "transient: far out of bounds in %d of %d windows",
                 nstrong, present);
    else if (ref->noisy && v != FP_FAIL && nfail > 0)
        snprintf(rs->note, sizeof rs->note,
                 "noisy metric: %d of %d windows out of bounds is no persistent fault", nfail,
                 present);
    else if (g->contended && !cls->absolute)
        snprintf(rs->note, sizeof rs->note, "contended thresholds (%.0f%%/%.0f%%): %s",
                 100 * cls->warn, 100 * cls->fail, g->contended_note ? g->contended_note : "");
    return FP_OK;
}

/* Score value v against centre c and scale s (both in the transformed space). */
static void score(const fp_rule_class *cls, fp_better better, double v, double c, double s,
                  double floor_, double strong, window_score *out)
{
    out->value = v;
    if (cls->absolute) {
        double dev = better == FP_BETTER_HIGHER ? v - c : c - v;
        double sc = s > floor_ * fabs(c) ? s : floor_ * fabs(c);
        sc = sc > 1e-12 ? sc : 1e-12;
        out->expected = c;
        out->band = sc;
        out->loss = -dev;
        out->z = dev / sc;
    } else {
        double lv = log(v > 1e-300 ? v : 1e-300);
        double dev = better == FP_BETTER_HIGHER ? lv - c : c - lv;
        double sc = s > floor_ ? s : floor_;
        out->expected = exp(c);
        out->band = out->expected * sc;
        out->loss = better == FP_BETTER_HIGHER ? 1 - exp(lv - c) : exp(lv - c) - 1;
        out->z = dev / sc;
    }
    out->level = 0;
    if (out->z > -cls->z)
        return;
    if (out->loss >= cls->warn)
        out->level = 1;
    if (out->loss >= cls->fail)
        out->level = 2;
    if (out->loss >= strong * cls->fail)
        out->level = 3;
}

/* Straggler attribution for absolute rules (lateness): the time this entity
 * was behind its peers, summed over windows (calls), and what it cost the
 * m - 1 others who waited for it. */
static void note_cost(fp_reason *r, const window_score *ws, int n, size_t m)
{
    double behind = 0;
    int calls = 0;
    for (int w = 0; w < n; w++)
        if (ws[w].level >= 0) {
            calls++;
            behind += ws[w].loss > 0 ? ws[w].loss : 0;
        }
    snprintf(r->note, sizeof r->note,
             "behind by %.4g %.8s over %d calls; cost the %zu others %.4g %.8s", behind, r->unit,
             calls, m - 1, behind * (double)(m - 1), r->unit);
}

/* Judge the series sers[0..m) of one key and one SKU against each other. */
/* The class with thresholds for this run: on contended runs relative
 * thresholds are at least the rules' contended ones, and absolute (timing)
 * ones only warn. */
static fp_rule_class effective(const eng *g, const fp_rule_class *cls)
{
    fp_rule_class c = *cls;
    if (g->contended && !c.absolute) {
        c.warn = c.warn > g->rules->contended_warn ? c.warn : g->rules->contended_warn;
        c.fail = c.fail > g->rules->contended_fail ? c.fail : g->rules->contended_fail;
    }
    if (g->contended && (c.absolute || c.noisy)) {
        /* per-call timings and noisy metrics (small messages, launches) on
         * shared cores are mostly the scheduler's: they warn, and the
         * scale-free late-rank count and the bandwidths decide who fails */
        c.fail = INFINITY;
    }
    return c;
}

static fp_status judge_peers(eng *g, const key_info *k, const uint32_t *sers, size_t m,
                             double *buf, window_score *ws)
{
    fp_rule_class eff = effective(g, k->cls);
    const fp_rule_class *cls = &eff;
    int W = k->windows;
    fp_better better = k->rep->better;
    double *centre = buf + m, *scale = centre + W, *spread = scale + W;
    size_t nsp = 0;
    bool any = false;
    for (int w = 0; w < W; w++) {
        size_t c = 0;
        for (size_t i = 0; i < m; i++) {
            double v = g->vals[g->ser[sers[i]].off + (size_t)w];
            if (isnan(v))
                continue;
            buf[c++] = cls->absolute ? v : log(v > 1e-300 ? v : 1e-300);
        }
        centre[w] = NAN;
        if (c < (size_t)g->rules->min_peers)
            continue;
        double med, mad;
        fp_median_mad(buf, c, &med, &mad);
        centre[w] = med;
        scale[w] = 1.4826 * mad;
        spread[nsp++] = scale[w];
        any = true;
    }
    if (!any)
        return FP_OK; /* too few peers: no evidence (unknown unless baselines speak) */
    /* peers that spread more than the rules' noisy level per window: a noisy
     * metric, judged on persistence only */
    bool noisy = cls->noisy || (!cls->absolute && fp_median_select(spread, nsp) > g->rules->base_noisy);
    for (size_t i = 0; i < m; i++) {
        const series *se = &g->ser[sers[i]];
        for (int w = 0; w < W; w++) {
            double v = g->vals[se->off + (size_t)w];
            ws[w].level = -1;
            if (isnan(v) || isnan(centre[w]))
                continue;
            score(cls, better, v, centre[w], scale[w], g->rules->scale_floor, g->rules->strong_factor,
                  &ws[w]);
        }
        size_t before = g->nreasons;
        reference ref = {.runs = 0, .windows = (int)m, .noisy = noisy};
        fp_status st = conclude(g, se, ws, W, FP_EV_PEERS, cls, &ref);
        if (st != FP_OK)
            return st;
        if (cls->absolute && g->nreasons > before)
            note_cost(&g->reasons[g->nreasons - 1].r, ws, W, m);
    }
    return FP_OK;
}

/* ---- baseline evidence (drift and fleet) -------------------------------------------------- */

/* sqrt(a^2 + b^2) of the finite ones of two relative spreads (NaN: none). */
static double combine(double a, double b)
{
    if (!isfinite(a))
        return b;
    if (!isfinite(b))
        return a;
    return sqrt(a * a + b * b);
}

/* The Student-t quantile with dof degrees of freedom at the normal quantile
 * z (the Cornish-Fisher expansion, Abramowitz & Stegun 26.7.5; within a few
 * percent for dof >= 3 and z <= 6). A spread estimated from few values is
 * itself uncertain: a threshold of z standard deviations becomes this many
 * estimated ones, so that the false-alarm rate stays the rule's. */
static double t_quantile(double z, double dof)
{
    if (!(dof < 1e4))
        return z;
    double n = dof < 3 ? 3 : dof, z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2,
           z9 = z7 * z2;
    return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
           (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n) +
           (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * n * n * n * n);
}

/* An entity's spread estimated from n runs, shrunk toward its SKU's: a
 * weighted mean of variances, the entity's with n - 1 degrees of freedom,
 * the SKU's with prior (runs' worth of weight). NaN where neither is known. */
static double shrink(double ent, double sku, int n, double prior)
{
    double we = isfinite(ent) && n > 1 ? n - 1 : 0, ws = isfinite(sku) ? prior : 0;
    if (we + ws <= 0)
        return isfinite(ent) ? ent : sku;
    double v = (we ? we * ent * ent : 0) + (ws ? ws * sku * sku : 0);
    return sqrt(v / (we + ws));
}

/* The relative spread one live window is expected to show around a
 * baseline's centre: run-to-run and within-run spread (drift, shrunk toward
 * the SKU's), or the spread between entities and within-run (fleet). */
static double window_spread_of(const eng *g, const fp_baseline *b, const fp_baseline *sku,
                               fp_evidence ev)
{
    if (ev == FP_EV_FLEET)
        return combine(1.4826 * b->mad / b->median, b->window_spread);
    int n = (int)b->nruns;
    double prior = g->rules->base_prior_runs;
    double rs = shrink(b->run_spread, sku ? sku->run_spread : NAN, n, prior);
    double ws = shrink(b->window_spread, sku ? sku->window_spread : NAN, n, prior);
    return combine(rs, ws);
}

/* Per rule class, the floor under every baseline spread, learned from the
 * SKU baselines of the run's keys: the first quartile of their window
 * spreads (the quiet end of the class), at least the rules' scale_floor. */
static fp_status learn_floors(eng *g)
{
    const fp_rules *r = g->rules;
    g->class_floor = malloc((size_t)(r->nclasses + 1) * sizeof *g->class_floor);
    double *v = malloc((g->nkeys * (g->nsku + 1) + 1) * sizeof *v);
    if (!g->class_floor || !v) {
        free(v);
        return FP_ENOMEM;
    }
    for (int c = 0; c < r->nclasses; c++) {
        size_t n = 0;
        for (size_t k = 0; k < g->nkeys; k++) {
            if (g->keys[k].cls != &r->classes[c])
                continue;
            for (size_t s = 0; s < g->nsku; s++) {
                const fp_baseline *b = fp_baselines_sku(g->base, g->keys[k].text, g->sku[s]);
                double sp = b && b->median > 0 ? window_spread_of(g, b, NULL, FP_EV_DRIFT) : NAN;
                if (isfinite(sp))
                    v[n++] = sp;
            }
        }
        double q = n ? fp_select_k(v, n, n / 4) : 0;
        g->class_floor[c] = q > r->scale_floor ? q : r->scale_floor;
    }
    free(v);
    return FP_OK;
}

/* Judge a series against a baseline b (drift: the entity's own, sku its
 * SKU's for shrinking; fleet: the SKU's). Relative rules use the windows as
 * measured, never the run's summary alone where windows exist. */
static fp_status judge_baseline(eng *g, const series *se, const fp_baseline *b,
                                const fp_baseline *sku, fp_evidence ev, double shift,
                                window_score *ws)
{
    const key_info *k = &g->keys[se->key];
    fp_rule_class eff = effective(g, k->cls);
    const fp_rules *r = g->rules;
    /* no verdict rests on a baseline of fewer runs (drift) or fewer
     * entity-runs (fleet) than the rules' minimum */
    if (!b || b->count == 0 || !(b->median > 0 || eff.absolute))
        return FP_OK;
    uint32_t behind = ev == FP_EV_DRIFT ? b->nruns : b->count;
    if (behind < (uint32_t)r->base_min_runs) {
        if (!g->ents[se->ent].explain)
            return FP_OK;
        fp_reason *rs = series_reason(g, se, ev, FP_UNKNOWN, k->cls->name);
        if (!rs)
            return FP_ENOMEM;
        rs->value = rs->expected = rs->deviation = rs->z = rs->band = NAN;
        snprintf(rs->note, sizeof rs->note, "not judged: %s baseline of %u %s < min_runs %d",
                 ev == FP_EV_DRIFT ? "drift: entity" : "fleet: SKU", behind,
                 ev == FP_EV_DRIFT ? "runs" : "entity-runs", r->base_min_runs);
        return FP_OK;
    }
    /* ranks sharing cores measure the scheduler as much as the device, and
     * how much it steals differs from one run to the next: against history
     * a contended run only warns (peers, sharing the same cores, decide) */
    if (g->contended)
        eff.fail = INFINITY;
    double c, s, floor_ = r->scale_floor;
    reference ref = {.runs = (int)b->nruns, .windows = (int)(b->windows ? b->windows : 1)};
    const double *vals = g->vals + se->off;
    int n = k->windows;
    if (eff.absolute) {
        c = b->median + shift;
        s = 1.4826 * b->mad;
    } else if (k->use_summary && !eff.noisy && b->summary > 0) {
        /* summary classes (best of run, median over passes) judge the run's
         * summary against the baseline runs' summaries: on shared cores
         * the windows are the scheduler's, the best of them is the device's */
        c = log(b->summary) + shift;
        s = ev == FP_EV_FLEET ? b->summary_spread
                              : shrink(b->summary_spread, sku ? sku->run_spread : NAN,
                                       (int)b->nruns, r->base_prior_runs);
        if (!isfinite(s))
            s = r->scale_floor;
        s = s > floor_ ? s : floor_;
        ref.windows = 1;
    } else {
        c = log(b->median) + shift;
        s = window_spread_of(g, b, sku, ev);
        if (!isfinite(s)) /* too few values for a spread: the pooled MAD */
            s = 1.4826 * b->mad / b->median;
        double cf = g->class_floor[k->cls - r->classes];
        floor_ = cf > floor_ ? cf : floor_;
        s = s > floor_ ? s : floor_;
        vals = g->wvals + se->woff; /* the windows as measured */
        n = k->raw_windows;
    }
    if (!eff.absolute) {
        ref.noisy = eff.noisy || s > r->base_noisy;
        /* degrees of freedom of the spread: runs (and the SKU's prior runs)
         * for drift, entity-runs for fleet */
        double dof = ev == FP_EV_FLEET ? (double)b->count - 1
                                       : (double)b->nruns - 1 +
                                             (sku && isfinite(sku->run_spread) ? r->base_prior_runs : 0);
        eff.z = t_quantile(eff.z, dof);
    }
    for (int w = 0; w < n; w++) {
        ws[w].level = -1;
        if (!isnan(vals[w]))
            score(&eff, k->rep->better, vals[w], c, s, floor_, r->strong_factor, &ws[w]);
    }
    return conclude(g, se, ws, n, ev, &eff, &ref);
}

/* How far the live run of a series lies from a baseline: the log ratio of
 * its median over windows to the baseline's median (relative rules), or the
 * difference (absolute). NaN where either is missing. buf: k.windows. */
static double live_shift(const eng *g, const series *se, const fp_baseline *b, double *buf)
{
    const key_info *k = &g->keys[se->key];
    if (!b || b->count == 0 || !(b->median > 0 || k->cls->absolute))
        return NAN;
    size_t c = 0;
    for (int w = 0; w < k->windows; w++)
        if (!isnan(g->vals[se->off + (size_t)w]))
            buf[c++] = g->vals[se->off + (size_t)w];
    double m = c ? fp_median_select(buf, c) : NAN;
    if (k->cls->absolute)
        return m - b->median;
    return m > 0 ? log(m / b->median) : NAN;
}

/* A series' peer group for the fleet-wide shift: key x SKU (none last). */
static size_t shift_group(const eng *g, const series *se)
{
    int32_t sku = g->ents[se->ent].sku;
    return se->key * (g->nsku + 1) + (sku >= 0 ? (size_t)sku : g->nsku);
}

/* Drift and fleet evidence of every series. Each is judged relative to the
 * fleet-wide shift of its metric in this run (per key and SKU, the median
 * of the series' shifts from their baselines, over series on at least
 * min_peers nodes): a drift every peer shares (a driver, the room's
 * temperature, the time of day) is no entity's fault, and peer evidence
 * judges the level. Fewer nodes than that could all share one fault (the
 * devices of one slow node): no shift then. */
static fp_status judge_baselines(eng *g, window_score *ws)
{
    char ent[2 * FP_NAME_MAX + 32];
    size_t nb = g->nkeys * (g->nsku + 1), n = g->nser;
    int maxw = 1;
    for (size_t k = 0; k < g->nkeys; k++)
        maxw = g->keys[k].windows > maxw ? g->keys[k].windows : maxw;
    const fp_baseline **bl = malloc((2 * n + 1) * sizeof *bl);
    double *sh = malloc((3 * n + 2 * nb + (size_t)maxw + 1) * sizeof *sh);
    uint32_t *first = calloc(nb + 2, sizeof *first), *order = malloc((n + 1) * sizeof *order);
    size_t *seen = calloc(g->nnodes + 1, sizeof *seen); /* bucket + 1 that counted the node */
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(bl);
    FP_CHECK_ALLOC(sh);
    FP_CHECK_ALLOC(first);
    FP_CHECK_ALLOC(order);
    FP_CHECK_ALLOC(seen);
    FP_CHECK(learn_floors(g));
    double *shift = sh + 2 * n, *buf = shift + 2 * nb, *tmp = buf + maxw;
    /* each series' baselines (drift, fleet) and live shifts from them */
    for (size_t s = 0; s < n; s++) {
        const series *se = &g->ser[s];
        const key_info *k = &g->keys[se->key];
        const ent_info *ei = &g->ents[se->ent];
        bl[2 * s] = bl[2 * s + 1] = NULL;
        if (!k->cls || k->cls->ignore || k->cls->late)
            continue;
        bl[2 * s + 1] = ei->sku >= 0 ? fp_baselines_sku(g->base, k->text, g->sku[ei->sku]) : NULL;
        fp_entity_format(ei->e, ent, sizeof ent);
        bl[2 * s] = fp_baselines_entity(g->base, k->text, ent);
        sh[2 * s] = live_shift(g, se, bl[2 * s], buf);
        sh[2 * s + 1] = live_shift(g, se, bl[2 * s + 1], buf);
        if (bl[2 * s] || bl[2 * s + 1])
            first[shift_group(g, se) + 1]++;
    }
    for (size_t b = 0; b < nb; b++)
        first[b + 1] += first[b];
    for (size_t s = 0; s < n; s++) /* series by key and SKU (counting sort) */
        if (bl[2 * s] || bl[2 * s + 1])
            order[first[shift_group(g, &g->ser[s])]++] = (uint32_t)s;
    /* first[b] is now the end of bucket b; the fleet-wide shifts per bucket */
    for (size_t b = 0, lo = 0; b < nb; lo = first[b++]) {
        for (size_t e = 0; e < 2; e++) {
            size_t c = 0, nodes = 0;
            for (size_t i = lo; i < first[b]; i++) {
                if (!isfinite(sh[2 * order[i] + e]))
                    continue;
                tmp[c++] = sh[2 * order[i] + e];
                int32_t nd = g->ents[g->ser[order[i]].ent].node;
                if (nd >= 0 && seen[nd] != 2 * b + e + 1) {
                    seen[nd] = 2 * b + e + 1;
                    nodes++;
                }
            }
            shift[2 * b + e] = nodes >= (size_t)g->rules->min_peers ? fp_median_select(tmp, c) : 0;
        }
    }
    for (size_t s = 0; s < n && st == FP_OK; s++) {
        if (!bl[2 * s] && !bl[2 * s + 1])
            continue;
        const series *se = &g->ser[s];
        size_t b = shift_group(g, se);
        st = judge_baseline(g, se, bl[2 * s], bl[2 * s + 1], FP_EV_DRIFT, shift[2 * b], ws);
        if (st == FP_OK)
            st = judge_baseline(g, se, bl[2 * s + 1], NULL, FP_EV_FLEET, shift[2 * b + 1], ws);
    }
cleanup:
    free(bl);
    free(sh);
    free(first);
    free(order);
    free(seen);
    return st;
}

/* Decide the held fails once all evidence is in. A short episode (too few
 * windows to be persistent) fails only where another series of the same
 * entity is out of bounds against its peers in one of its windows: a
 * transient dip of one metric never fails alone. Peer or fleet evidence
 * against an entity whose own baseline (min_runs runs) saw no change is
 * that entity's normal level: it warns. */
static void release(eng *g)
{
    for (size_t i = 0; i < g->nreasons; i++) {
        owned_reason *o = &g->reasons[i];
        if (!o->hold)
            continue;
        const series *se = &g->ser[o->ser];
        bool alone = (o->hold & HOLD_EPISODE) && !(g->ents[se->ent].bad2 & o->mask);
        bool normal = (o->hold & HOLD_DRIFT) && se->drift_judged && se->drift == FP_PASS;
        if (!alone && !normal) {
            set_ent_verdict(g, se->ent, FP_FAIL);
            continue;
        }
        o->r.verdict = FP_WARN;
        if (alone)
            snprintf(o->r.note, sizeof o->r.note,
                     "transient: out of bounds in %d of %d windows, no other metric agrees",
                     o->r.windows_bad, o->r.windows);
        else
            snprintf(o->r.note, sizeof o->r.note,
                     "its own baseline shows this level too (drift passes): its normal");
    }
}

/* ---- missing results ------------------------------------------------------------------------ */

/* An entity that has results of a test but lacks one of its keys is missing
 * that result (links are left out: pair sets differ between keys). */
static fp_status judge_missing(eng *g, const uint32_t *key_first, const uint32_t *by_key)
{
    if (g->rules->missing == FP_PASS)
        return FP_OK;
    uint32_t *stamp = calloc(g->nents + 1, sizeof *stamp);
    uint32_t *list = malloc((g->nents + 1) * sizeof *list);
    if (g->ntests * FP_ENT_KIND_COUNT >= UINT32_MAX) {
        free(stamp);
        free(list);
        return FP_EINPUT;
    }
    if (!stamp || !list) {
        free(stamp);
        free(list);
        return FP_ENOMEM;
    }
    fp_status st = FP_OK;
    /* per test and entity kind: a gpu lacks what other gpus have, a rank what
     * other ranks have (late-rank records exist only for late ranks) */
    for (size_t tk = 0; tk < g->ntests * FP_ENT_KIND_COUNT && st == FP_OK; tk++) {
        size_t t = tk / FP_ENT_KIND_COUNT;
        fp_entity_kind kind = (fp_entity_kind)(tk % FP_ENT_KIND_COUNT);
        if (kind == FP_ENT_LINK)
            continue;
        size_t nl = 0;
        for (size_t k = 0; k < g->nkeys; k++) {
            if ((size_t)g->keys[k].test != t)
                continue;
            for (uint32_t i = key_first[k]; i < key_first[k + 1]; i++) {
                uint32_t e = g->ser[by_key[i]].ent;
                if (g->ents[e].e->kind != kind || stamp[e] == tk + 1)
                    continue;
                stamp[e] = (uint32_t)tk + 1;
                list[nl++] = e;
            }
        }
        for (size_t k = 0; k < g->nkeys && st == FP_OK; k++) {
            if ((size_t)g->keys[k].test != t || (g->keys[k].cls && g->keys[k].cls->late))
                continue;
            size_t have = 0;
            for (uint32_t i = key_first[k]; i < key_first[k + 1]; i++)
                have += g->ents[g->ser[by_key[i]].ent].e->kind == kind;
            if (have == 0 || have == nl)
                continue;
            for (size_t j = 0; j < nl; j++) {
                if (series_find(g, (uint32_t)k, list[j], false, NULL) >= 0)
                    continue;
                set_ent_verdict(g, list[j], g->rules->missing);
                fp_reason *r = add_reason(g, ent_owner(g, list[j]));
                if (!r) {
                    st = FP_ENOMEM;
                    break;
                }
                snprintf(r->key, sizeof r->key, "%s", g->keys[k].text);
                snprintf(r->unit, sizeof r->unit, "%s", g->keys[k].rep->unit);
                snprintf(r->rule, sizeof r->rule, "missing");
                r->evidence = FP_EV_MISSING;
                r->verdict = g->rules->missing;
                r->value = r->expected = r->deviation = r->z = NAN;
                snprintf(r->note, sizeof r->note, "no result while its other %s results exist",
                         g->tests[t]);
            }
        }
    }
    free(stamp);
    free(list);
    return st;
}

/* ---- demarcation ------------------------------------------------------------------------------ */

/* The first failing reason of an entity (for a node's summary reason). */
static const fp_reason *first_reason(const eng *g, uint32_t owner, fp_verdict v)
{
    for (size_t i = 0; i < g->nreasons; i++)
        if (g->reasons[i].owner == owner && g->reasons[i].r.verdict == v)
            return &g->reasons[i].r;
    return NULL;
}

/* A failing link that a failing node explains drops to warn, saying which. */
static void explain_link(eng *g, size_t e, int32_t who, const char *why)
{
    g->ents[e].v = FP_WARN;
    for (size_t i = 0; i < g->nreasons; i++) {
        owned_reason *o = &g->reasons[i];
        if (o->owner == g->nnodes + e && o->r.verdict == FP_FAIL) {
            o->r.verdict = FP_WARN;
            snprintf(o->r.note, sizeof o->r.note, "explained by node %s (%s)", g->node[who], why);
        }
    }
}

static fp_status demarcate(eng *g)
{
    const fp_rules *r = g->rules;
    size_t nn = g->nnodes;
    uint32_t *links = calloc(nn, sizeof *links), *bad_links = calloc(nn, sizeof *bad_links);
    uint32_t *gpus = calloc(nn, sizeof *gpus), *bad_gpus = calloc(nn, sizeof *bad_gpus);
    int64_t *first_gpu = malloc(nn * sizeof *first_gpu), *first_link = malloc(nn * sizeof *first_link);
    bool *culprit = calloc(nn, sizeof *culprit);
    bool *has_data = calloc(nn, sizeof *has_data);
    g->node_v = malloc(nn * sizeof *g->node_v);
    fp_status st = FP_OK;
    if (!links || !bad_links || !gpus || !bad_gpus || !first_gpu || !first_link || !culprit ||
        !has_data || !g->node_v) {
        st = FP_ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < nn; i++) {
        g->node_v[i] = FP_UNKNOWN;
        first_gpu[i] = first_link[i] = -1;
    }
    /* count per node: devices and links, and the failing ones */
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->e->kind == FP_ENT_GROUP)
            continue;
        has_data[ei->node] = true;
        if (ei->e->kind == FP_ENT_GPU) {
            gpus[ei->node]++;
            if (ei->v == FP_FAIL && bad_gpus[ei->node]++ == 0)
                first_gpu[ei->node] = (int64_t)e;
        } else if (ei->e->kind == FP_ENT_LINK && ei->node != ei->peer) {
            has_data[ei->peer] = true;
            int32_t ends[2] = {ei->node, ei->peer};
            for (int j = 0; j < 2; j++) {
                links[ends[j]]++;
                if (ei->v == FP_FAIL && bad_links[ends[j]]++ == 0)
                    first_link[ends[j]] = (int64_t)e;
            }
        }
    }
    for (size_t n = 0; n < nn; n++)
        culprit[n] = bad_links[n] >= (uint32_t)r->node_link_min &&
                     bad_links[n] >= r->node_link_fraction * links[n];
    /* links: slow with a culprit node's every partner is the node, not the link */
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->e->kind != FP_ENT_LINK || ei->v != FP_FAIL || ei->node == ei->peer)
            continue;
        int32_t who = culprit[ei->node] ? ei->node : culprit[ei->peer] ? ei->peer : -1;
        if (who >= 0)
            explain_link(g, e, who, "slow with most partners");
    }
    /* nodes: the worst of their own results, devices, ranks, intra-node links, links */
    size_t nown = g->nreasons;
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        fp_entity_kind kind = ei->e->kind;
        if (kind == FP_ENT_GROUP)
            continue;
        fp_verdict v = ei->v;
        if (kind == FP_ENT_LINK && ei->node != ei->peer)
            v = v == FP_UNKNOWN ? FP_UNKNOWN : FP_PASS; /* a link's verdict stays the link's */
        if (kind == FP_ENT_LINK && ei->node != ei->peer) {
            g->node_v[ei->node] = worse(g->node_v[ei->node], v);
            g->node_v[ei->peer] = worse(g->node_v[ei->peer], v);
            continue;
        }
        g->node_v[ei->node] = worse(g->node_v[ei->node], v);
        if ((kind == FP_ENT_RANK || (kind == FP_ENT_LINK)) && v == FP_FAIL) {
            const fp_reason *src = first_reason(g, (uint32_t)(g->nnodes + e), FP_FAIL);
            fp_reason *nr = add_reason(g, (uint32_t)ei->node);
            if (!nr) {
                st = FP_ENOMEM;
                goto cleanup;
            }
            if (src)
                *nr = *src;
            char ent[2 * FP_NAME_MAX + 32];
            fp_entity_format(ei->e, ent, sizeof ent);
            nr->evidence = kind == FP_ENT_RANK ? FP_EV_LATE : FP_EV_GPUS;
            snprintf(nr->note, sizeof nr->note, "%.72s %s", ent,
                     kind == FP_ENT_RANK ? "fails (its rank)" : "fails (inside the node)");
        }
    }
    (void)nown;
    for (size_t n = 0; n < nn; n++) {
        if (bad_gpus[n]) {
            const ent_info *ei = &g->ents[first_gpu[n]];
            const fp_reason *src = first_reason(g, (uint32_t)(g->nnodes + (size_t)first_gpu[n]),
                                                FP_FAIL);
            fp_reason *nr = add_reason(g, (uint32_t)n);
            if (!nr) {
                st = FP_ENOMEM;
                goto cleanup;
            }
            if (src)
                *nr = *src;
            nr->evidence = FP_EV_GPUS;
            nr->verdict = FP_FAIL;
            char ent[2 * FP_NAME_MAX + 32];
            fp_entity_format(ei->e, ent, sizeof ent);
            if (bad_gpus[n] >= r->node_gpu_fraction * gpus[n] && gpus[n] > 1)
                snprintf(nr->note, sizeof nr->note, "node-wide: %u of %u devices fail", bad_gpus[n],
                         gpus[n]);
            else
                snprintf(nr->note, sizeof nr->note, "device %.60s fails (%u of %u devices)", ent,
                         bad_gpus[n], gpus[n]);
        }
        if (culprit[n]) {
            g->node_v[n] = FP_FAIL;
            const fp_reason *src = first_link[n] >= 0
                                       ? first_reason(g, (uint32_t)(g->nnodes + (size_t)first_link[n]),
                                                      FP_WARN)
                                       : NULL;
            fp_reason *nr = add_reason(g, (uint32_t)n);
            if (!nr) {
                st = FP_ENOMEM;
                goto cleanup;
            }
            if (src)
                *nr = *src;
            nr->evidence = FP_EV_LINKS;
            nr->verdict = FP_FAIL;
            snprintf(nr->note, sizeof nr->note, "slow with %u of %u link partners: the node, not the links",
                     bad_links[n], links[n]);
        }
        if (!has_data[n] && r->missing != FP_PASS) {
            g->node_v[n] = worse(g->node_v[n], r->missing);
            fp_reason *nr = add_reason(g, (uint32_t)n);
            if (!nr) {
                st = FP_ENOMEM;
                goto cleanup;
            }
            snprintf(nr->rule, sizeof nr->rule, "missing");
            nr->evidence = FP_EV_MISSING;
            nr->verdict = r->missing;
            nr->value = nr->expected = nr->deviation = nr->z = NAN;
            snprintf(nr->note, sizeof nr->note, "the node is in the run but has no results");
        }
    }
    /* a link of a node that fails on its own evidence (a slow rank, bad
     * devices) cannot be judged as a link: the node explains it */
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->e->kind != FP_ENT_LINK || ei->v != FP_FAIL || ei->node == ei->peer)
            continue;
        int32_t who = g->node_v[ei->node] == FP_FAIL ? ei->node
                      : g->node_v[ei->peer] == FP_FAIL ? ei->peer
                                                       : -1;
        if (who >= 0)
            explain_link(g, e, who, "the node fails");
    }
cleanup:
    free(links);
    free(bad_links);
    free(gpus);
    free(bad_gpus);
    free(first_gpu);
    free(first_link);
    free(culprit);
    free(has_data);
    return st;
}

/* ---- assembling the verdicts ---------------------------------------------------------------- */

static fp_status assemble(eng *g, fp_verdicts *out)
{
    size_t nn = g->nnodes, nother = 0;
    for (size_t e = 0; e < g->nents; e++)
        nother += g->ents[e].e->kind != FP_ENT_NODE;
    out->run = g->run;
    out->nents = nn + nother;
    out->ents = calloc(out->nents + 1, sizeof *out->ents);
    out->reasons = malloc((g->nreasons + 1) * sizeof *out->reasons);
    out->node_names = malloc((nn + 1) * sizeof *out->node_names);
    out->fail_nodes = malloc((nn + 1) * sizeof *out->fail_nodes);
    out->warn_nodes = malloc((nn + 1) * sizeof *out->warn_nodes);
    size_t *slot_of_owner = malloc((nn + g->nents + 1) * sizeof *slot_of_owner);
    size_t *count = calloc(nn + nother + 2, sizeof *count);
    if (!out->ents || !out->reasons || !out->node_names || !out->fail_nodes || !out->warn_nodes ||
        !slot_of_owner || !count) {
        free(slot_of_owner);
        free(count);
        return FP_ENOMEM;
    }
    fp_verdict overall = FP_UNKNOWN;
    for (size_t n = 0; n < nn; n++) {
        snprintf(out->node_names[n], FP_NAME_MAX, "%s", g->node[n]);
        out->ents[n].entity = fp_entity_node(g->node[n]);
        out->ents[n].verdict = g->node_v[n];
        slot_of_owner[n] = n;
        overall = worse(overall, g->node_v[n]);
        if (g->node_v[n] == FP_FAIL)
            out->fail_nodes[out->nfail_nodes++] = out->node_names[n];
        if (g->node_v[n] == FP_FAIL || g->node_v[n] == FP_WARN)
            out->warn_nodes[out->nwarn_nodes++] = out->node_names[n];
    }
    out->nnodes = nn;
    size_t slot = nn;
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->e->kind == FP_ENT_NODE) {
            slot_of_owner[nn + e] = (size_t)ei->node;
            continue;
        }
        slot_of_owner[nn + e] = slot;
        out->ents[slot].entity = *ei->e;
        out->ents[slot].verdict = ei->v;
        overall = worse(overall, ei->v);
        slot++;
    }
    out->overall = overall;
    /* reasons grouped by entity slot, in the order they were found */
    for (size_t i = 0; i < g->nreasons; i++)
        count[slot_of_owner[g->reasons[i].owner] + 1]++;
    for (size_t s = 0; s < out->nents; s++) {
        count[s + 1] += count[s];
        out->ents[s].first_reason = count[s];
    }
    for (size_t i = 0; i < g->nreasons; i++) {
        size_t s = slot_of_owner[g->reasons[i].owner];
        out->reasons[out->ents[s].first_reason + out->ents[s].nreasons++] = g->reasons[i].r;
    }
    out->nreasons = g->nreasons;
    free(slot_of_owner);
    free(count);
    return FP_OK;
}

/* ---- late ranks ------------------------------------------------------------------------------ */

/* Late-rank records: in each collective call the last rank to arrive has a
 * record. Over all calls of every collective, a rank that was the last in a
 * fraction of them at least the class's warn / fail (and at least twice its
 * fair share 1/N) is a straggler: magnitude-free, so it holds on fast fabrics
 * and on cores shared by many ranks alike (Mycroft counts the same way). */
typedef struct late_tally {
    const fp_rule_class *cls; /* the first late class met */
    uint32_t *count;          /* per entity: calls in which it was last */
    uint64_t calls;           /* calls seen over all late keys */
} late_tally;

static void tally_late(const eng *g, const key_info *k, const uint32_t *sers, size_t m,
                       late_tally *t)
{
    if (!t->cls)
        t->cls = k->cls;
    for (int w = 0; w < k->windows; w++) {
        bool any = false;
        for (size_t i = 0; i < m; i++) {
            const series *se = &g->ser[sers[i]];
            if (!isnan(g->vals[se->off + (size_t)w])) {
                t->count[se->ent]++;
                any = true;
            }
        }
        t->calls += any;
    }
}

static fp_status judge_late(eng *g, const late_tally *t)
{
    enum { MIN_CALLS = 8 };
    int n = g->run->nranks;
    if (!t->cls || t->calls < MIN_CALLS || n < 3)
        return FP_OK; /* too few calls or ranks to tell a pattern from chance */
    double fair = 1.0 / n;
    for (size_t e = 0; e < g->nents; e++) {
        if (!t->count[e])
            continue;
        double f = (double)t->count[e] / (double)t->calls;
        fp_verdict v = f >= t->cls->fail && f >= 2 * fair   ? FP_FAIL
                       : f >= t->cls->warn && f >= 2 * fair ? FP_WARN
                                                            : FP_PASS;
        if (v == FP_PASS)
            continue;
        set_ent_verdict(g, (uint32_t)e, v);
        fp_reason *r = add_reason(g, ent_owner(g, (uint32_t)e));
        if (!r)
            return FP_ENOMEM;
        snprintf(r->key, sizeof r->key, "collectives.*.late_rank");
        snprintf(r->unit, sizeof r->unit, "calls");
        snprintf(r->rule, sizeof r->rule, "%s", t->cls->name);
        r->evidence = FP_EV_LATE;
        r->verdict = v;
        r->value = f;
        r->expected = fair;
        r->deviation = f - fair;
        r->z = NAN;
        r->windows_bad = (int)t->count[e];
        r->windows = (int)t->calls;
        snprintf(r->note, sizeof r->note, "last to arrive in %u of %llu collective calls (%.0f%%)",
                 t->count[e], (unsigned long long)t->calls, 100 * f);
    }
    return FP_OK;
}

/* ---- entry point ------------------------------------------------------------------------------ */

static void eng_free(eng *g)
{
    free(g->node);
    free(g->node_sku);
    table_free(&g->node_tab);
    free(g->sku);
    free(g->keys);
    free(g->tests);
    free(g->ents);
    table_free(&g->ent_tab);
    free(g->ser);
    table_free(&g->ser_tab);
    free(g->sample_ser);
    free(g->vals);
    free(g->wvals);
    free(g->class_floor);
    free(g->reasons);
    free(g->node_v);
}

fp_status fp_detect(const fp_run *run, const fp_detect_opts *opts, fp_verdicts **out)
{
    fp_status st = FP_OK;
    eng g;
    memset(&g, 0, sizeof g);
    g.run = run;
    g.rules = opts->rules;
    g.base = opts->baselines;
    g.contended = opts->contended;
    g.contended_note = opts->contended_note;
    g.explain = opts->explain;
    uint32_t *by_key = NULL, *key_first = NULL, *grp = NULL;
    double *buf = NULL;
    window_score *ws = NULL;
    fp_verdicts *v = NULL;
    late_tally late = {0};
    *out = NULL;
    if (run->nsamples == 0 || run->nsamples >= UINT32_MAX / 2)
        FP_FAIL(FP_EINPUT, "run %s has %s samples: nothing to judge", run->id,
                run->nsamples ? "too many" : "no");
    FP_CHECK(setup_nodes(&g));
    FP_CHECK(intern_samples(&g));

    /* series bucketed by key (counting sort) */
    by_key = malloc((g.nser + 1) * sizeof *by_key);
    key_first = calloc(g.nkeys + 2, sizeof *key_first);
    FP_CHECK_ALLOC(by_key);
    FP_CHECK_ALLOC(key_first);
    for (size_t s = 0; s < g.nser; s++)
        key_first[g.ser[s].key + 1]++;
    for (size_t k = 0; k < g.nkeys; k++)
        key_first[k + 1] += key_first[k];
    {
        uint32_t *fill = calloc(g.nkeys + 1, sizeof *fill);
        FP_CHECK_ALLOC(fill);
        for (size_t s = 0; s < g.nser; s++) {
            uint32_t k = g.ser[s].key;
            by_key[key_first[k] + fill[k]++] = (uint32_t)s;
        }
        free(fill);
    }
    int maxw = 1;
    for (size_t k = 0; k < g.nkeys; k++)
        maxw = g.keys[k].raw_windows > maxw ? g.keys[k].raw_windows : maxw;
    buf = malloc((g.nser + 3 * (size_t)maxw + 1) * sizeof *buf);
    ws = malloc((size_t)maxw * sizeof *ws);
    grp = malloc((g.nser + 1) * sizeof *grp);
    FP_CHECK_ALLOC(buf);
    FP_CHECK_ALLOC(ws);
    FP_CHECK_ALLOC(grp);
    late.count = calloc(g.nents + 1, sizeof *late.count);
    FP_CHECK_ALLOC(late.count);

    for (size_t k = 0; k < g.nkeys; k++) {
        const key_info *ki = &g.keys[k];
        const uint32_t *sers = by_key + key_first[k];
        size_t m = key_first[k + 1] - key_first[k];
        if (ki->vrule) {
            for (size_t i = 0; i < m; i++)
                FP_CHECK(judge_value(&g, &g.ser[sers[i]]));
            continue;
        }
        if (!ki->cls || ki->cls->ignore)
            continue; /* no class matches, or the class is not judged */
        if (ki->cls->late) {
            tally_late(&g, ki, sers, m, &late);
            continue;
        }
        /* one peer group per SKU (and per entity kind) */
        for (size_t sku = 0; sku <= g.nsku; sku++) {
            for (int kind = 0; kind < FP_ENT_KIND_COUNT; kind++) {
                size_t c = 0;
                for (size_t i = 0; i < m; i++) {
                    const ent_info *ei = &g.ents[g.ser[sers[i]].ent];
                    int32_t want = sku == g.nsku ? -1 : (int32_t)sku;
                    if (ei->sku == want && (int)ei->e->kind == kind)
                        grp[c++] = sers[i];
                }
                if (c)
                    FP_CHECK(judge_peers(&g, ki, grp, c, buf, ws));
            }
        }
    }
    FP_CHECK(judge_late(&g, &late));
    if (g.base)
        FP_CHECK(judge_baselines(&g, ws));
    release(&g);
    FP_CHECK(judge_missing(&g, key_first, by_key));
    FP_CHECK(demarcate(&g));
    v = calloc(1, sizeof *v);
    FP_CHECK_ALLOC(v);
    FP_CHECK(assemble(&g, v));
    *out = v;
    v = NULL;
cleanup:
    fp_verdicts_free(v);
    free(by_key);
    free(key_first);
    free(grp);
    free(buf);
    free(ws);
    free(late.count);
    eng_free(&g);
    return st;
}

/* ---- accessors --------------------------------------------------------------------------------- */

void fp_verdicts_free(fp_verdicts *v)
{
    if (!v)
        return;
    free(v->ents);
    free(v->reasons);
    free(v->node_names);
    free(v->fail_nodes);
    free(v->warn_nodes);
    free(v);
}

fp_verdict fp_verdicts_overall(const fp_verdicts *v)
{
    return v->overall;
}

size_t fp_verdicts_node_count(const fp_verdicts *v)
{
    return v->nnodes;
}

bool fp_entity_in(const fp_entity *e, const char *text)
{
    char name[2 * FP_NAME_MAX + 32];
    if (strcmp(fp_entity_format(e, name, sizeof name), text) == 0)
        return true;
    const char *node = strncmp(text, "node:", 5) == 0 ? text + 5 : NULL;
    return node && e->kind != FP_ENT_GROUP &&
           (strcmp(e->node, node) == 0 || (e->kind == FP_ENT_LINK && strcmp(e->peer, node) == 0));
}

size_t fp_verdicts_count(const fp_verdicts *v)
{
    return v->nents;
}

const fp_entity_verdict *fp_verdicts_get(const fp_verdicts *v, size_t i)
{
    return i < v->nents ? &v->ents[i] : NULL;
}

const fp_reason *fp_verdicts_reason(const fp_verdicts *v, size_t i)
{
    return i < v->nreasons ? &v->reasons[i] : NULL;
}

fp_verdict fp_verdicts_node(const fp_verdicts *v, const char *node)
{
    for (size_t i = 0; i < v->nnodes; i++)
        if (strcmp(v->node_names[i], node) == 0)
            return v->ents[i].verdict;
    return FP_UNKNOWN;
}

size_t fp_verdicts_nodes_at(const fp_verdicts *v, fp_verdict min, const char *const **names)
{
    if (min == FP_FAIL) {
        *names = v->fail_nodes;
        return v->nfail_nodes;
    }
    *names = v->warn_nodes;
    return v->nwarn_nodes;
}

fp_status fp_verdicts_status(const fp_verdicts *v)
{
    return v->overall == FP_FAIL ? FP_EFAIL : FP_OK;
}
