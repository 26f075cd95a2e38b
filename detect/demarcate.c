/* The detector's last phases: missing results, demarcation (which node, GPU
 * or link is to blame) and late ranks. They call only the engine (engine.c;
 * its state: detect_internal.h); the driver (detect.c) runs them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "fleetprint/stats.h"
#include "fleetprint/store.h"

/* ---- missing results ------------------------------------------------------------------------ */

/* An entity that has results of a test but lacks one of its keys is missing
 * that result (links are left out: pair sets differ between keys). */
fp_status fp__det_judge_missing(eng *g, const uint32_t *key_first, const uint32_t *by_key)
{
    if (g->rules->missing == FP_PASS)
        return FP_OK;
    enum { K = FP_ENT_KIND_COUNT };
    uint32_t *stamp = calloc(g->nents + 1, sizeof *stamp);
    uint32_t *list = malloc((g->nents + 1) * sizeof *list);
    size_t *have = malloc((g->nkeys + 1) * K * sizeof *have);
    fp_status st = FP_OK;
    if (g->ntests >= UINT32_MAX / 2)
        FP_FAIL(FP_EINPUT, "run %s has %zu tests: too many to judge missing results", g->run->id,
                g->ntests);
    FP_CHECK_ALLOC(stamp);
    FP_CHECK_ALLOC(list);
    FP_CHECK_ALLOC(have);
    /* per test and entity kind: a gpu lacks what other gpus have, a rank what
     * other ranks have (late-rank records exist only for late ranks). One
     * pass over a test's series lists its entities of each kind (in order of
     * first meeting, by key) and counts each key's. */
    for (size_t t = 0; t < g->ntests; t++) {
        size_t first[K + 1] = {0}, nl[K] = {0};
        for (int pass = 0; pass < 2; pass++) { /* count, then list */
            for (size_t k = 0; k < g->nkeys; k++) {
                if ((size_t)g->keys[k].test != t)
                    continue;
                memset(have + k * K, 0, K * sizeof *have);
                for (uint32_t i = key_first[k]; i < key_first[k + 1]; i++) {
                    uint32_t e = g->ser[by_key[i]].ent;
                    fp_entity_kind kind = g->ents[e].kind;
                    have[k * K + kind]++;
                    if (kind == FP_ENT_LINK || stamp[e] == 2 * t + 1 + (uint32_t)pass)
                        continue;
                    stamp[e] = 2 * (uint32_t)t + 1 + (uint32_t)pass;
                    if (pass)
                        list[first[kind] + nl[kind]++] = e;
                    else
                        first[kind + 1]++;
                }
            }
            for (size_t kind = 0; !pass && kind < K; kind++)
                first[kind + 1] += first[kind];
        }
        for (size_t kind = 0; kind < K; kind++) {
            if (kind == FP_ENT_LINK)
                continue;
            const uint32_t *ents = list + first[kind];
            for (size_t k = 0; k < g->nkeys; k++) {
                if ((size_t)g->keys[k].test != t || (g->keys[k].cls && g->keys[k].cls->late))
                    continue;
                if (have[k * K + kind] == 0 || have[k * K + kind] == nl[kind])
                    continue;
                for (size_t j = 0; j < nl[kind]; j++) {
                    if (fp__det_series_find(g, (uint32_t)k, ents[j]) >= 0)
                        continue;
                    fp__det_set_ent_verdict(g, ents[j], g->rules->missing);
                    fp_reason *r;
                    FP_CHECK(fp__det_add_reason(g, fp__det_ent_owner(g, ents[j]), &r));
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
    }
cleanup:
    free(stamp);
    free(list);
    free(have);
    return st;
}

/* ---- demarcation ------------------------------------------------------------------------------ */

/* The reasons of each owner found before demarcation, in order: a chain
 * from first[owner] through next[reason] (-1 ends it). Demarcation asks for
 * the reasons of devices, ranks and links, and adds reasons to nodes only:
 * without it, a fleet with thousands of failing links (a split fleet) spent
 * seconds scanning every reason for each. */
typedef struct owner_index {
    int64_t *first, *next;
} owner_index;

static fp_status index_owners(const eng *g, owner_index *x)
{
    size_t owners = g->nnodes + g->nents;
    x->first = fp_malloc_huge((owners + 1) * sizeof *x->first);
    x->next = fp_malloc_huge((g->nreasons + 1) * sizeof *x->next);
    fp_status st = FP_OK;
    if (!x->first || !x->next)
        FP_FAIL(FP_ENOMEM, "out of memory indexing the %zu reasons of run %s", g->nreasons,
                g->run->id);
    for (size_t o = 0; o < owners; o++)
        x->first[o] = -1;
    for (size_t i = g->nreasons; i-- > 0;) {
        x->next[i] = x->first[g->reasons[i].owner];
        x->first[g->reasons[i].owner] = (int64_t)i;
    }
cleanup:
    return st;
}

/* The first reason of an entity with verdict v (for a node's summary reason). */
static const fp_reason *first_reason(const eng *g, const owner_index *x, uint32_t owner,
                                     fp_verdict v)
{
    for (int64_t i = x->first[owner]; i >= 0; i = x->next[i])
        if (g->reasons[i].r.verdict == v)
            return &g->reasons[i].r;
    return NULL;
}

/* A failing link that a failing node explains drops to warn, saying which. */
static void explain_link(eng *g, const owner_index *x, size_t e, int32_t who, const char *why)
{
    g->ents[e].v = FP_WARN;
    for (int64_t i = x->first[g->nnodes + e]; i >= 0; i = x->next[i]) {
        owned_reason *o = &g->reasons[i];
        if (o->r.verdict == FP_FAIL) {
            o->r.verdict = FP_WARN;
            o->r.explained = true;
            snprintf(o->r.note, sizeof o->r.note, "explained by node %s (%s)", g->node[who], why);
        }
    }
}

/* Per node: its devices and links, the failing ones, the first of each that
 * fails (an entity id, -1: none), whether it has results at all, whether one
 * of its devices or ranks fails (its own evidence), and whether it is the
 * culprit of its failing links. */
typedef struct node_count {
    uint32_t links, bad_links, gpus, bad_gpus;
    int64_t first_gpu, first_link;
    bool culprit, has_data, own_fail;
} node_count;

/* Count per node (c: one per node): devices and links, and the failing ones;
 * a node with enough of its links failing is their culprit. A failing link
 * whose other end fails on its own evidence counts for that end only: many
 * slow nodes (a split fleet) would otherwise make culprits of the healthy
 * nodes that happen to have several of them as partners. */
static void count_nodes(const eng *g, node_count *c)
{
    const fp_rules *r = g->rules;
    for (size_t i = 0; i < g->nnodes; i++)
        c[i].first_gpu = c[i].first_link = -1;
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->kind == FP_ENT_GROUP || ei->kind == FP_ENT_LINK)
            continue;
        c[ei->node].has_data = true;
        c[ei->node].own_fail |= ei->v == FP_FAIL && ei->kind != FP_ENT_NODE;
        if (ei->kind == FP_ENT_GPU) {
            c[ei->node].gpus++;
            if (ei->v == FP_FAIL && c[ei->node].bad_gpus++ == 0)
                c[ei->node].first_gpu = (int64_t)e;
        }
    }
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->kind != FP_ENT_LINK)
            continue;
        c[ei->node].has_data = true;
        if (ei->node == ei->peer)
            continue;
        c[ei->peer].has_data = true;
        int32_t ends[2] = {ei->node, ei->peer};
        for (int j = 0; j < 2; j++) {
            c[ends[j]].links++;
            bool bad = ei->v == FP_FAIL && !c[ends[1 - j]].own_fail;
            if (bad && c[ends[j]].bad_links++ == 0)
                c[ends[j]].first_link = (int64_t)e;
        }
    }
    for (size_t n = 0; n < g->nnodes; n++)
        c[n].culprit = c[n].bad_links >= (uint32_t)r->node_link_min &&
                       c[n].bad_links >= r->node_link_fraction * c[n].links;
}

static fp_status roll_up_entities(eng *g, const owner_index *x)
{
    fp_status st = FP_OK;
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        fp_entity_kind kind = ei->kind;
        if (kind == FP_ENT_GROUP)
            continue;
        fp_verdict v = ei->v;
        if (kind == FP_ENT_LINK && ei->node != ei->peer) {
            v = v == FP_UNKNOWN ? FP_UNKNOWN : FP_PASS;
            g->node_v[ei->node] = fp__det_worse(g->node_v[ei->node], v);
            g->node_v[ei->peer] = fp__det_worse(g->node_v[ei->peer], v);
            continue;
        }
        g->node_v[ei->node] = fp__det_worse(g->node_v[ei->node], v);
        if ((kind == FP_ENT_RANK || (kind == FP_ENT_LINK)) && v == FP_FAIL) {
            const fp_reason *src = first_reason(g, x, (uint32_t)(g->nnodes + e), FP_FAIL);
            fp_reason *nr;
            FP_CHECK(fp__det_add_reason(g, (uint32_t)ei->node, &nr));
            if (src)
                *nr = *src;
            char ent[2 * FP_NAME_MAX + 32];
            fp_entity_format(ei->e, ent, sizeof ent);
            nr->evidence = kind == FP_ENT_RANK ? FP_EV_LATE : FP_EV_GPUS;
            snprintf(nr->note, sizeof nr->note, "%.72s %s", ent,
                     kind == FP_ENT_RANK ? "fails (its rank)" : "fails (inside the node)");
        }
    }
cleanup:
    return st;
}

/* Node n's own reasons (c: its counts): its failing devices (node-wide or one device), its
 * links when it is their culprit, and no results at all. */
static fp_status judge_node(eng *g, const owner_index *x, const node_count *c, size_t n)
{
    const fp_rules *r = g->rules;
    fp_status st = FP_OK;
    fp_reason *nr;
    if (c->bad_gpus) {
        const ent_info *ei = &g->ents[c->first_gpu];
        const fp_reason *src =
            first_reason(g, x, (uint32_t)(g->nnodes + (size_t)c->first_gpu), FP_FAIL);
        FP_CHECK(fp__det_add_reason(g, (uint32_t)n, &nr));
        if (src)
            *nr = *src;
        nr->evidence = FP_EV_GPUS;
        nr->verdict = FP_FAIL;
        char ent[2 * FP_NAME_MAX + 32];
        fp_entity_format(ei->e, ent, sizeof ent);
        if (c->bad_gpus >= r->node_gpu_fraction * c->gpus && c->gpus > 1)
            snprintf(nr->note, sizeof nr->note, "node-wide: %u of %u devices fail", c->bad_gpus,
                     c->gpus);
        else
            snprintf(nr->note, sizeof nr->note, "device %.60s fails (%u of %u devices)", ent,
                     c->bad_gpus, c->gpus);
    }
    if (c->culprit) {
        g->node_v[n] = FP_FAIL;
        const fp_reason *src =
            c->first_link >= 0
                ? first_reason(g, x, (uint32_t)(g->nnodes + (size_t)c->first_link), FP_WARN)
                : NULL;
        FP_CHECK(fp__det_add_reason(g, (uint32_t)n, &nr));
        if (src)
            *nr = *src;
        nr->explained = false; /* the node's own reason, not an explained link's */
        nr->evidence = FP_EV_LINKS;
        nr->verdict = FP_FAIL;
        snprintf(nr->note, sizeof nr->note,
                 "slow with %u of %u link partners: the node, not the links", c->bad_links,
                 c->links);
    }
    if (!c->has_data && r->missing != FP_PASS) {
        g->node_v[n] = fp__det_worse(g->node_v[n], r->missing);
        FP_CHECK(fp__det_add_reason(g, (uint32_t)n, &nr));
        snprintf(nr->rule, sizeof nr->rule, "missing");
        nr->evidence = FP_EV_MISSING;
        nr->verdict = r->missing;
        nr->value = nr->expected = nr->deviation = nr->z = NAN;
        snprintf(nr->note, sizeof nr->note, "the node is in the run but has no results");
    }
cleanup:
    return st;
}

fp_status fp__det_demarcate(eng *g)
{
    size_t nn = g->nnodes;
    node_count *c = calloc(nn + 1, sizeof *c);
    g->node_v = malloc(nn * sizeof *g->node_v);
    owner_index x = {0};
    fp_status st = FP_OK;
    if (!c || !g->node_v)
        FP_FAIL(FP_ENOMEM, "out of memory demarcating the %zu nodes of run %s", nn, g->run->id);
    for (size_t i = 0; i < nn; i++)
        g->node_v[i] = FP_UNKNOWN;
    FP_CHECK(index_owners(g, &x));
    count_nodes(g, c);
    /* links: slow with a culprit node's every partner is the node, not the link */
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->kind != FP_ENT_LINK || ei->v != FP_FAIL || ei->node == ei->peer)
            continue;
        int32_t who = c[ei->node].culprit ? ei->node : c[ei->peer].culprit ? ei->peer : -1;
        if (who >= 0)
            explain_link(g, &x, e, who, "slow with most partners");
    }
    FP_CHECK(roll_up_entities(g, &x));
    for (size_t n = 0; n < nn; n++)
        FP_CHECK(judge_node(g, &x, &c[n], n));
    /* a link of a node that fails on its own evidence (a slow rank, bad
     * devices) cannot be judged as a link: the node explains it */
    for (size_t e = 0; e < g->nents; e++) {
        const ent_info *ei = &g->ents[e];
        if (ei->kind != FP_ENT_LINK || ei->v != FP_FAIL || ei->node == ei->peer)
            continue;
        int32_t who = g->node_v[ei->node] == FP_FAIL ? ei->node
                      : g->node_v[ei->peer] == FP_FAIL ? ei->peer
                                                       : -1;
        if (who >= 0)
            explain_link(g, &x, e, who, "the node fails");
    }
cleanup:
    free(c);
    free(x.first);
    free(x.next);
    return st;
}

/* ---- late ranks ------------------------------------------------------------------------------ */


void fp__det_tally_late(const eng *g, const key_info *k, const uint32_t *sers, size_t m,
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

fp_status fp__det_judge_late(eng *g, const late_tally *t)
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
        fp__det_set_ent_verdict(g, (uint32_t)e, v);
        fp_reason *r;
        fp_status st = fp__det_add_reason(g, fp__det_ent_owner(g, (uint32_t)e), &r);
        if (st != FP_OK)
            return st;
        snprintf(r->key, sizeof r->key, "collectives.*.late_rank");
        snprintf(r->unit, sizeof r->unit, "share of calls");
        snprintf(r->rule, sizeof r->rule, "%s", t->cls->name);
        r->evidence = FP_EV_LATE;
        r->verdict = v;
        r->value = f;
        r->expected = fair;
        r->deviation = f - fair;
        r->z = NAN;
        r->windows_bad = (int)t->count[e];
        r->windows = (int)t->calls;
        snprintf(r->note, sizeof r->note,
                 "last to arrive in %u of %llu collective calls (%.0f%%); a healthy rank is last "
                 "in about 1 of %d",
                 t->count[e], (unsigned long long)t->calls, 100 * f, n);
    }
    return FP_OK;
}
