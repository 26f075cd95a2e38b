/* History evidence: repeat offenders. After demarcation, every node, device and
 * link of the run is looked up in the history of the runs judged before this
 * one (fleetprint/history.h); one that failed or warned in at
 * least k of its last n judged runs gets a reason of evidence "history" and
 * is raised to at least warn -- never to fail by history alone, and never
 * lowered. The verdicts before history are kept, so that what a run stores
 * is its own evidence and history never counts itself. The accessors of the
 * offenders are here too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect_internal.h"
#include "fleetprint/history.h"
#include "fleetprint/log.h"
#include "fleetprint/mem.h"

/* A pass or an unknown becomes a warn; a warn or a fail stays. */
static fp_verdict raised(fp_verdict v)
{
    return v == FP_PASS || v == FP_UNKNOWN ? FP_WARN : v;
}

/* "2026-11-20 .. 2026-11-25", or "2026-11-26 10:01 .. 10:09 UTC" within a day. */
static void span_text(double first, double last, char *buf, size_t len)
{
    time_t a = (time_t)first, b = (time_t)last;
    struct tm ta, tb;
    char da[32] = "?", db[32] = "?";
    if (!gmtime_r(&a, &ta) || !gmtime_r(&b, &tb)) {
        snprintf(buf, len, "?");
        return;
    }
    strftime(da, sizeof da, "%Y-%m-%d", &ta);
    strftime(db, sizeof db, "%Y-%m-%d", &tb);
    if (strcmp(da, db) != 0) {
        snprintf(buf, len, "%s .. %s", da, db);
        return;
    }
    strftime(da, sizeof da, "%Y-%m-%d %H:%M", &ta);
    strftime(db, sizeof db, "%H:%M", &tb);
    snprintf(buf, len, "%s .. %s UTC", da, db);
}

/* If text names a repeat offender, record it (owner, its verdict before
 * history) and give it its reason; *hit says whether it is one. */
static fp_status judge_one(eng *g, const fp_history *h, det_history *d, uint32_t owner,
                           const char *text, fp_verdict own, bool *hit)
{
    fp_status st = FP_OK;
    const fp_history_rule *hr = &g->rules->history;
    fp_offense o;
    *hit = fp_history_offender(h, text, hr->k, hr->n, &o);
    if (!*hit)
        return FP_OK;
    det_offender *off = fp_grow(d->off, &d->cap, d->n + 1, sizeof *off, 16);
    FP_CHECK_ALLOC(off);
    d->off = off;
    off[d->n++] = (det_offender){.owner = owner, .own = own, .bad = o.bad, .judged = o.judged,
                                 .first = o.first, .last = o.last};
    fp_reason *r;
    FP_CHECK(fp__det_add_reason(g, owner, &r));
    char span[64], note[256];
    span_text(o.first, o.last, span, sizeof span);
    snprintf(r->key, sizeof r->key, "history");
    snprintf(r->unit, sizeof r->unit, "runs");
    snprintf(r->rule, sizeof r->rule, "history");
    r->evidence = FP_EV_HISTORY;
    r->verdict = FP_WARN;
    r->value = r->expected = r->band = r->deviation = r->z = NAN;
    r->windows_bad = o.bad;
    r->windows = o.judged;
    snprintf(note, sizeof note,
             "repeat offender: failed or warned in %d of its last %d judged runs (%s)", o.bad,
             o.judged, span);
    snprintf(r->note, sizeof r->note, "%.*s", (int)sizeof r->note - 1, note);
    d->changed |= raised(own) != own;
cleanup:
    return st;
}

fp_status fp__det_judge_history(eng *g, const fp_history *h, det_history *d)
{
    fp_status st = FP_OK;
    size_t nn = g->nnodes;
    memset(d, 0, sizeof *d);
    d->node_own = malloc((nn + 1) * sizeof *d->node_own);
    d->ent_own = malloc((g->nents + 1) * sizeof *d->ent_own);
    FP_CHECK_ALLOC(d->node_own);
    FP_CHECK_ALLOC(d->ent_own);
    for (size_t n = 0; n < nn; n++)
        d->node_own[n] = g->node_v[n];
    for (size_t e = 0; e < g->nents; e++)
        d->ent_own[e] = g->ents[e].v;
    if (!fp_history_any_suspect(h, g->rules->history.k))
        return FP_OK; /* no entity to name and ask (1.2 M at 100,000 nodes x 8) */
    char text[2 * FP_NAME_MAX + 32];
    bool hit;
    for (size_t n = 0; n < nn; n++) {
        snprintf(text, sizeof text, "node:%s", g->node[n]);
        FP_CHECK(judge_one(g, h, d, (uint32_t)n, text, d->node_own[n], &hit));
        if (hit)
            g->node_v[n] = raised(g->node_v[n]);
    }
    for (size_t e = 0; e < g->nents; e++) {
        ent_info *ei = &g->ents[e];
        /* a node is judged above; a rank's warn is its node's (rank numbers
         * change from job to job), and a group is no hardware */
        if (ei->kind == FP_ENT_NODE || ei->kind == FP_ENT_RANK || ei->kind == FP_ENT_GROUP)
            continue;
        fp_entity_format(ei->e, text, sizeof text);
        FP_CHECK(judge_one(g, h, d, (uint32_t)(nn + e), text, d->ent_own[e], &hit));
        if (!hit)
            continue;
        ei->v = raised(ei->v);
        /* as demarcation rolls a device's or intra-node link's verdict up to
         * its node */
        bool inside = ei->kind == FP_ENT_GPU || (ei->kind == FP_ENT_LINK && ei->node == ei->peer);
        if (inside && ei->node >= 0) {
            fp_verdict before = g->node_v[ei->node];
            g->node_v[ei->node] = fp__det_worse(before, FP_WARN);
            d->changed |= g->node_v[ei->node] != before;
        }
    }
cleanup:
    return st;
}

fp_status fp__det_history_finish(const eng *g, const fp_history *h, det_history *d,
                                 fp_verdicts *v)
{
    fp_status st = FP_OK;
    size_t nn = g->nnodes;
    size_t *slot = malloc((g->nents + 1) * sizeof *slot);
    FP_CHECK_ALLOC(slot);
    /* the slots assemble() gave: nodes first, then the other entities in order */
    for (size_t e = 0, next = nn; e < g->nents; e++)
        slot[e] = g->ents[e].kind == FP_ENT_NODE ? (size_t)g->ents[e].node : next++;
    v->history = true;
    v->hist_k = g->rules->history.k;
    v->hist_n = g->rules->history.n;
    v->hist_runs = fp_history_runs(h);
    if (d->n) {
        v->offenders = malloc(d->n * sizeof *v->offenders);
        FP_CHECK_ALLOC(v->offenders);
    }
    for (size_t i = 0; i < d->n; i++) {
        const det_offender *o = &d->off[i];
        fp_offender *out = &v->offenders[v->noffenders++];
        out->entity = o->owner < nn ? o->owner : slot[o->owner - nn];
        out->own = o->own;
        out->bad = o->bad;
        out->judged = o->judged;
        out->first = o->first;
        out->last = o->last;
    }
    if (d->changed) {
        v->own = malloc((v->nents + 1) * sizeof *v->own);
        FP_CHECK_ALLOC(v->own);
        for (size_t i = 0; i < v->nents; i++)
            v->own[i] = v->ents[i].verdict;
        for (size_t n = 0; n < nn; n++)
            v->own[n] = d->node_own[n];
        for (size_t e = 0; e < g->nents; e++)
            if (g->ents[e].kind != FP_ENT_NODE)
                v->own[slot[e]] = d->ent_own[e];
    }
cleanup:
    free(slot);
    return st;
}

void fp__det_history_free(det_history *d)
{
    free(d->off);
    free(d->node_own);
    free(d->ent_own);
    memset(d, 0, sizeof *d);
}

/* ---- accessors ------------------------------------------------------------------------ */

bool fp_verdicts_history(const fp_verdicts *v, int *k, int *n, size_t *runs)
{
    if (k)
        *k = v->hist_k;
    if (n)
        *n = v->hist_n;
    if (runs)
        *runs = v->hist_runs;
    return v->history;
}

size_t fp_verdicts_offender_count(const fp_verdicts *v)
{
    return v->noffenders;
}

const fp_offender *fp_verdicts_offender(const fp_verdicts *v, size_t i)
{
    return i < v->noffenders ? &v->offenders[i] : NULL;
}

fp_verdict fp_verdicts_own(const fp_verdicts *v, size_t i)
{
    if (i >= v->nents)
        return FP_UNKNOWN;
    return v->own ? v->own[i] : v->ents[i].verdict;
}

bool fp_verdicts_node_offends(const fp_verdicts *v, const char *node)
{
    for (size_t i = 0; i < v->noffenders; i++) {
        const fp_entity *e = v->ents[v->offenders[i].entity].entity;
        bool inside = e->kind == FP_ENT_NODE || e->kind == FP_ENT_GPU ||
                      (e->kind == FP_ENT_LINK && strcmp(e->peer, e->node) == 0);
        if (inside && strcmp(e->node, node) == 0)
            return true;
    }
    return false;
}
