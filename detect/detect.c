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
 * samples; 10,000 nodes x 8 GPUs takes well under a second on one core.
 * This file: interning, reasons, assembling and the entry point; the
 * evidence phases are evidence.c (value, peers, baselines) and demarcate.c
 * (missing results, demarcation, late ranks). */
#include <math.h>
#include <pthread.h>
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


static bool table_init(table *t, size_t expect)
{
    size_t cap = 16;
    while (cap < 2 * expect + 16)
        cap <<= 1;
    t->slot = fp_calloc_huge(cap, sizeof *t->slot);
    t->hash = fp_malloc_huge(cap * sizeof *t->hash);
    t->mask = cap - 1;
    t->used = 0;
    return t->slot && t->hash;
}

static void table_free(table *t)
{
    free(t->slot);
    free(t->hash);
}

/* The first empty slot on h's probe sequence. */
static size_t table_empty(const table *t, uint64_t h)
{
    size_t i = h & t->mask;
    while (t->slot[i])
        i = (i + 1) & t->mask;
    return i;
}

/* Add index (0-based) under hash h, making the table four times larger when
 * it would be over half full: tables start small, so that their probes stay
 * in cache. */
static bool table_add(table *t, uint64_t h, size_t index)
{
    if (2 * (t->used + 1) > t->mask + 1) {
        table old = *t;
        if (!table_init(t, old.mask + 1)) {
            table_free(t);
            *t = old;
            return false;
        }
        for (size_t i = 0; i <= old.mask; i++)
            if (old.slot[i]) {
                size_t j = table_empty(t, old.hash[i]);
                t->slot[j] = old.slot[i];
                t->hash[j] = old.hash[i];
            }
        t->used = old.used;
        table_free(&old);
    }
    size_t i = table_empty(t, h);
    t->slot[i] = (uint32_t)(index + 1);
    t->hash[i] = h;
    t->used++;
    return true;
}

fp_verdict fp__det_worse(fp_verdict a, fp_verdict b)
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
    if (g->nnodes == g->node_cap || !table_add(&g->node_tab, h, g->nnodes))
        return -1; /* node_cap: sized for the run's nodes plus every sample */
    snprintf(g->node[g->nnodes], FP_NAME_MAX, "%s", name);
    g->node_sku[g->nnodes] = -1;
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
    if (!g->node || !g->node_sku || !table_init(&g->node_tab, (size_t)run->nnodes))
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
    k->next = -1;
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
    ei->kind = e->kind;
    ei->next = -1;
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
    if (!table_add(&g->ent_tab, h, g->nents))
        return -1;
    return (int64_t)g->nents++;
}

int64_t fp__det_series_find(const eng *g, uint32_t key, uint32_t ent, bool add, eng *gm)
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
    if (!table_add(&gm->ser_tab, h, gm->nser))
        return -1;
    series *se = &gm->ser[gm->nser];
    memset(se, 0, sizeof *se);
    se->key = key;
    se->ent = ent;
    se->next = -1;
    return (int64_t)gm->nser++;
}

/* The key and entity of sample s, which follows prev (of key k, entity e;
 * NULL, -1 and -1 for the first). Samples come in runs of one entity, and
 * each window lists its keys and entities in the order of the one before:
 * what followed k (or e, or series prev) last time is tried before a lookup.
 * -1: no memory. */
static int64_t next_key(eng *g, const fp_sample *prev, int64_t k, const fp_sample *s)
{
    if (prev && same_key(prev, s))
        return k;
    int64_t guess = k >= 0 ? g->keys[k].next : -1;
    int64_t found = guess >= 0 && same_key(g->keys[guess].rep, s) ? guess : key_intern(g, s);
    if (k >= 0)
        g->keys[k].next = (int32_t)found;
    return found;
}

static int64_t next_entity(eng *g, const fp_sample *prev, int64_t e, const fp_sample *s)
{
    if (prev && same_entity(&prev->entity, &s->entity))
        return e;
    int64_t guess = e >= 0 ? g->ents[e].next : -1;
    int64_t found = guess >= 0 && same_entity(g->ents[guess].e, &s->entity)
                        ? guess
                        : entity_intern(g, &s->entity);
    if (e >= 0)
        g->ents[e].next = (int32_t)found;
    /* the next guess is compared with a sample of the first window, far
     * behind: fetch it while this entity's samples go by */
    int32_t after = found >= 0 ? g->ents[found].next : -1;
    if (after >= 0)
        for (size_t b = 0; b < sizeof(fp_entity); b += 64)
            __builtin_prefetch((const char *)g->ents[after].e + b);
    return found;
}

static int64_t next_series(eng *g, int64_t prev, uint32_t key, uint32_t ent)
{
    if (prev >= 0 && g->ser[prev].key == key && g->ser[prev].ent == ent)
        return prev;
    int64_t guess = prev >= 0 ? g->ser[prev].next : -1;
    int64_t found = guess >= 0 && g->ser[guess].key == key && g->ser[guess].ent == ent
                        ? guess
                        : fp__det_series_find(g, key, ent, true, g);
    if (prev >= 0)
        g->ser[prev].next = (int32_t)found;
    return found;
}

static fp_status intern_samples(eng *g)
{
    const fp_run *run = g->run;
    size_t n = run->nsamples;
    g->ents = fp_malloc_huge((n + 1) * sizeof *g->ents);
    g->ser = fp_malloc_huge((n + 1) * sizeof *g->ser);
    g->sample_ser = fp_malloc_huge((n + 1) * sizeof *g->sample_ser);
    if (!g->ents || !g->ser || !g->sample_ser || !table_init(&g->ent_tab, 1024) ||
        !table_init(&g->ser_tab, 1024))
        return FP_ENOMEM;
    fp_status st = FP_OK;
    int64_t key = -1, ent = -1, se_prev = -1;
    const fp_sample *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const fp_sample *s = &run->samples[i];
        key = next_key(g, prev, key, s);
        ent = next_entity(g, prev, ent, s);
        int64_t se = key < 0 || ent < 0 ? -1 : next_series(g, se_prev, (uint32_t)key, (uint32_t)ent);
        if (se < 0)
            FP_FAIL(FP_ENOMEM, "out of memory interning sample %zu of run %s", i, run->id);
        g->sample_ser[i] = (uint32_t)se;
        key_info *ki = &g->keys[key];
        ki->has_summary |= s->iter < 0;
        if (s->iter >= 0) {
            g->ser[se].windowed = true;
            ki->windowed = true;
            if (s->iter + 1 > ki->windows)
                ki->windows = s->iter + 1;
        }
        ki->raw_windows = ki->windows > 1 ? ki->windows : 1;
        prev = s;
        se_prev = se;
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
    g->vals = fp_malloc_huge((off + 1) * sizeof *g->vals);
    g->wvals = fp_malloc_huge((woff + 1) * sizeof *g->wvals);
    FP_CHECK_ALLOC(g->vals);
    FP_CHECK_ALLOC(g->wvals);
    for (size_t i = 0; i < off; i++)
        g->vals[i] = NAN;
    for (size_t i = 0; i < woff; i++)
        g->wvals[i] = NAN;
    /* the samples of a window visit every series: fetch a series ahead of
     * its sample, or each one waits for memory (~20% of detect's time at
     * 10,000 nodes x 8) */
    enum { AHEAD = 16 };
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n)
            __builtin_prefetch(&g->ser[g->sample_ser[i + AHEAD]]);
        const fp_sample *s = &run->samples[i];
        const series *se = &g->ser[g->sample_ser[i]];
        if (se->windowed ? s->iter >= 0 : s->iter < 0)
            g->wvals[se->woff + (size_t)(s->iter > 0 ? s->iter : 0)] = s->value;
        bool use_summary = g->keys[se->key].use_summary || !se->windowed;
        if (use_summary ? s->iter >= 0 : s->iter < 0)
            continue; /* windows or the summary, not both */
        g->vals[se->off + (size_t)(use_summary ? 0 : s->iter)] = s->value;
    }
    for (size_t x = 0; g->explain && x < g->nents; x++)
        g->ents[x].explain = fp_entity_in(g->ents[x].e, g->explain);
cleanup:
    return st;
}

/* ---- reasons ---------------------------------------------------------------------------- */

fp_reason *fp__det_add_reason(eng *g, uint32_t owner)
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

uint32_t fp__det_ent_owner(const eng *g, uint32_t ent)
{
    const ent_info *ei = &g->ents[ent];
    if (ei->kind == FP_ENT_NODE)
        return (uint32_t)ei->node;
    return (uint32_t)(g->nnodes + ent);
}

void fp__det_set_ent_verdict(eng *g, uint32_t ent, fp_verdict v)
{
    fp_verdict *to = g->ent_v ? &g->ent_v[ent] : &g->ents[ent].v;
    *to = fp__det_worse(*to, v);
}

fp_reason *fp__det_series_reason(eng *g, const series *se, fp_evidence ev, fp_verdict v,
                                const char *rule)
{
    fp_reason *r = fp__det_add_reason(g, fp__det_ent_owner(g, se->ent));
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

/* ---- assembling the verdicts ---------------------------------------------------------------- */

static fp_status assemble(eng *g, fp_verdicts *out)
{
    size_t nn = g->nnodes, nother = 0;
    for (size_t e = 0; e < g->nents; e++)
        nother += g->ents[e].kind != FP_ENT_NODE;
    out->run = g->run;
    out->nents = nn + nother;
    out->ents = fp_calloc_huge(out->nents + 1, sizeof *out->ents);
    out->reasons = fp_malloc_huge((g->nreasons + 1) * sizeof *out->reasons);
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
        overall = fp__det_worse(overall, g->node_v[n]);
        if (g->node_v[n] == FP_FAIL)
            out->fail_nodes[out->nfail_nodes++] = out->node_names[n];
        if (g->node_v[n] == FP_FAIL || g->node_v[n] == FP_WARN)
            out->warn_nodes[out->nwarn_nodes++] = out->node_names[n];
    }
    out->nnodes = nn;
    size_t slot = nn;
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->kind == FP_ENT_NODE) {
            slot_of_owner[nn + e] = (size_t)ei->node;
            continue;
        }
        slot_of_owner[nn + e] = slot;
        out->ents[slot].entity = *ei->e;
        out->ents[slot].verdict = ei->v;
        overall = fp__det_worse(overall, ei->v);
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
    out->blind = g->blind, out->nblind = g->nblind;
    g->blind = NULL;
    free(slot_of_owner);
    free(count);
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
    free(g->blind);
    free(g->node_v);
}

/* A series' peer group: its entity's SKU (those of none last), then kind. */
/* Baseline evidence runs on a thread of its own, beside peer evidence. It
 * reads only what interning made, and writes into a shallow copy of the
 * engine: its own reasons and entity verdicts (merged after peer evidence's,
 * so the verdicts and their order do not depend on the threads), the class
 * floors and the series' drift fields, which peer evidence does not touch. */
typedef struct base_job {
    eng g;
    window_score *ws;
    pthread_t thread;
    bool running;
    fp_status st;
} base_job;

static void *base_main(void *arg)
{
    base_job *j = arg;
    j->st = fp__det_judge_baselines(&j->g, j->ws);
    return NULL;
}

static fp_status base_start(base_job *j, const eng *g, int maxw)
{
    j->g = *g;
    j->g.reasons = NULL;
    j->g.nreasons = j->g.reason_cap = 0;
    j->g.ent_v = fp_malloc_huge((g->nents + 1) * sizeof *j->g.ent_v);
    j->ws = malloc((size_t)maxw * sizeof *j->ws);
    if (!j->g.ent_v || !j->ws)
        return FP_ENOMEM;
    for (size_t e = 0; e < g->nents; e++)
        j->g.ent_v[e] = FP_UNKNOWN;
    j->running = pthread_create(&j->thread, NULL, base_main, j) == 0;
    if (!j->running) /* no thread to be had: judge here */
        base_main(j);
    return FP_OK;
}

/* Waits for the baseline thread and merges its results into g. */
static fp_status base_finish(base_job *j, eng *g)
{
    if (j->running)
        pthread_join(j->thread, NULL);
    j->running = false;
    g->class_floor = j->g.class_floor;
    j->g.class_floor = NULL;
    fp_status st = j->st;
    if (st == FP_OK && j->g.nreasons) {
        owned_reason *t = fp_grow(g->reasons, &g->reason_cap, g->nreasons + j->g.nreasons,
                                  sizeof *t, 256);
        if (!t)
            st = FP_ENOMEM;
        else {
            g->reasons = t;
            memcpy(g->reasons + g->nreasons, j->g.reasons, j->g.nreasons * sizeof *t);
            g->nreasons += j->g.nreasons;
        }
    }
    for (size_t e = 0; st == FP_OK && e < g->nents; e++)
        g->ents[e].v = fp__det_worse(g->ents[e].v, j->g.ent_v[e]);
    return st;
}

static void base_free(base_job *j, eng *g)
{
    if (j->running)
        (void)base_finish(j, g);
    free(j->g.reasons);
    free(j->g.ent_v);
    free(j->g.class_floor);
    free(j->ws);
}

static size_t peer_group(const eng *g, uint32_t ser)
{
    const ent_info *ei = &g->ents[g->ser[ser].ent];
    size_t sku = ei->sku < 0 ? g->nsku : (size_t)ei->sku;
    return sku * FP_ENT_KIND_COUNT + (size_t)ei->kind;
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
    uint32_t *by_key = NULL, *key_first = NULL, *grp = NULL, *grp_first = NULL;
    double *buf = NULL;
    window_score *ws = NULL;
    fp_verdicts *v = NULL;
    late_tally late = {0};
    base_job bj = {0};
    *out = NULL;
    if (run->nsamples == 0 || run->nsamples >= UINT32_MAX / 2)
        FP_FAIL(FP_EINPUT, "run %s has %s samples: nothing to judge", run->id,
                run->nsamples ? "too many" : "no");
    FP_CHECK(setup_nodes(&g));
    FP_CHECK(intern_samples(&g));

    /* series bucketed by key (counting sort) */
    by_key = fp_malloc_huge((g.nser + 1) * sizeof *by_key);
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
    buf = fp_malloc_huge((g.nser + 4 * (size_t)maxw + 1) * sizeof *buf);
    ws = malloc((size_t)maxw * sizeof *ws);
    grp = fp_malloc_huge((g.nser + 1) * sizeof *grp);
    size_t ngrp = (g.nsku + 1) * FP_ENT_KIND_COUNT;
    grp_first = malloc((ngrp + 1) * sizeof *grp_first);
    FP_CHECK_ALLOC(grp_first);
    FP_CHECK_ALLOC(buf);
    FP_CHECK_ALLOC(ws);
    FP_CHECK_ALLOC(grp);
    late.count = calloc(g.nents + 1, sizeof *late.count);
    FP_CHECK_ALLOC(late.count);
    if (g.base)
        FP_CHECK(base_start(&bj, &g, maxw));

    for (size_t k = 0; k < g.nkeys; k++) {
        const key_info *ki = &g.keys[k];
        const uint32_t *sers = by_key + key_first[k];
        size_t m = key_first[k + 1] - key_first[k];
        if (ki->vrule) {
            for (size_t i = 0; i < m; i++)
                FP_CHECK(fp__det_judge_value(&g, &g.ser[sers[i]]));
            continue;
        }
        if (!ki->cls || ki->cls->ignore)
            continue; /* no class matches, or the class is not judged */
        if (ki->cls->late) {
            fp__det_tally_late(&g, ki, sers, m, &late);
            continue;
        }
        /* one peer group per SKU and entity kind, those of no SKU last
         * (a counting sort of the key's series into grp) */
        memset(grp_first, 0, (ngrp + 1) * sizeof *grp_first);
        for (size_t i = 0; i < m; i++)
            grp_first[peer_group(&g, sers[i]) + 1]++;
        for (size_t b = 0; b < ngrp; b++)
            grp_first[b + 1] += grp_first[b];
        for (size_t i = 0; i < m; i++)
            grp[grp_first[peer_group(&g, sers[i])]++] = sers[i];
        for (size_t b = 0, lo = 0; b < ngrp; lo = grp_first[b++])
            if (grp_first[b] > lo)
                FP_CHECK(fp__det_judge_peers(&g, ki, grp + lo, grp_first[b] - lo, buf, ws));
    }
    FP_CHECK(fp__det_judge_late(&g, &late));
    if (g.base)
        FP_CHECK(base_finish(&bj, &g));
    fp__det_release(&g);
    FP_CHECK(fp__det_judge_missing(&g, key_first, by_key));
    FP_CHECK(fp__det_demarcate(&g));
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
    free(grp_first);
    free(buf);
    free(ws);
    free(late.count);
    base_free(&bj, &g);
    eng_free(&g);
    return st;
}

/* ---- accessors --------------------------------------------------------------------------------- */

size_t fp_verdicts_blind_count(const fp_verdicts *v)
{
    return v->nblind;
}

const fp_blind_spot *fp_verdicts_blind(const fp_verdicts *v, size_t i)
{
    return i < v->nblind ? &v->blind[i] : NULL;
}

void fp_verdicts_free(fp_verdicts *v)
{
    if (!v)
        return;
    free(v->ents);
    free(v->reasons);
    free(v->blind);
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

/* ---- a run that timed out -------------------------------------------------------------- */

/* A reason that needs no measurement: evidence missing, the note says why. */
static fp_reason hung_reason(const char *key, const char *note)
{
    fp_reason r;
    memset(&r, 0, sizeof r);
    snprintf(r.key, sizeof r.key, "%s", key);
    snprintf(r.rule, sizeof r.rule, "hung");
    snprintf(r.note, sizeof r.note, "%s", note);
    r.evidence = FP_EV_MISSING;
    r.verdict = FP_FAIL;
    r.value = r.expected = r.band = r.deviation = r.z = NAN;
    return r;
}

fp_status fp_verdicts_hung(const fp_run *run, const int *ranks, size_t n, const char *step,
                           fp_verdicts **out)
{
    *out = NULL;
    size_t nn = run->nnodes > 0 ? (size_t)run->nnodes : 0;
    fp_verdicts *v = calloc(1, sizeof *v);
    if (!v)
        return FP_ENOMEM;
    v->run = run;
    v->ents = calloc(nn + n + 2, sizeof *v->ents);
    v->reasons = calloc(nn + n + 2, sizeof *v->reasons);
    v->node_names = calloc(nn + 1, sizeof *v->node_names);
    v->fail_nodes = calloc(nn + 1, sizeof *v->fail_nodes);
    v->warn_nodes = calloc(nn + 1, sizeof *v->warn_nodes);
    if (!v->ents || !v->reasons || !v->node_names || !v->fail_nodes || !v->warn_nodes) {
        fp_verdicts_free(v);
        return FP_ENOMEM;
    }
    char note[sizeof v->reasons[0].note], key[sizeof v->reasons[0].key];
    snprintf(note, sizeof note, "hung: never arrived in %s", step);
    /* nodes in run order: a node with a missing rank fails (one reason per
     * missing rank), the others arrived but were not judged */
    for (size_t i = 0; i < nn; i++) {
        fp_entity_verdict *ev = &v->ents[v->nents++];
        snprintf(v->node_names[i], FP_NAME_MAX, "%s", run->nodes[i]);
        ev->entity = fp_entity_node(run->nodes[i]);
        ev->verdict = FP_UNKNOWN;
        ev->first_reason = v->nreasons;
        for (size_t k = 0; k < n; k++) {
            if (ranks[k] < 0 || ranks[k] >= run->nranks || run->ranks[ranks[k]].node != (int)i)
                continue;
            snprintf(key, sizeof key, "rank %d", ranks[k]);
            v->reasons[v->nreasons++] = hung_reason(key, note);
            ev->nreasons++;
            ev->verdict = FP_FAIL;
        }
        if (ev->verdict == FP_FAIL)
            v->fail_nodes[v->nfail_nodes++] = v->warn_nodes[v->nwarn_nodes++] = v->node_names[i];
    }
    v->nnodes = nn;
    for (size_t k = 0; k < n; k++) {
        if (ranks[k] < 0 || ranks[k] >= run->nranks)
            continue;
        fp_entity_verdict *ev = &v->ents[v->nents++];
        ev->entity = fp_entity_rank(run->nodes[run->ranks[ranks[k]].node], ranks[k]);
        ev->verdict = FP_FAIL;
        ev->first_reason = v->nreasons;
        ev->nreasons = 1;
        v->reasons[v->nreasons++] = hung_reason("arrival", note);
    }
    if (v->nfail_nodes == 0) { /* every rank arrived, the step still did not end */
        fp_entity_verdict *ev = &v->ents[v->nents++];
        ev->entity = fp_entity_group("world");
        ev->verdict = FP_FAIL;
        ev->first_reason = v->nreasons;
        ev->nreasons = 1;
        snprintf(note, sizeof note, "timeout: every rank arrived but %s did not complete", step);
        v->reasons[v->nreasons++] = hung_reason("completion", note);
    }
    v->overall = FP_FAIL;
    *out = v;
    return FP_OK;
}
