/* History: the detector's verdicts turned into the record the store keeps
 * with a run (fleetprint/history.h), and `fleetprint store history`'s
 * listing of one entity's verdicts over time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleetprint/detect.h"
#include "fleetprint/history.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"

/* ---- the record ---------------------------------------------------------------------- */

/* A reason in one short line: "peers kernels.membw.triad_bw@8388608 = 12.3
 * GB/s, expected 14.8 GB/s, 17% worse (rule memory)"; evidence that is only
 * a note (late ranks, missing results, demarcation without a value) gives
 * "<evidence> <key>: <note>". */
static void reason_text(const fp_reason *r, char *buf, size_t len)
{
    const char *ev = fp_evidence_name(r->evidence);
    char t[512];
    int n;
    bool note_only = isnan(r->value) || r->evidence == FP_EV_MISSING || r->evidence == FP_EV_LATE;
    if (note_only)
        n = snprintf(t, sizeof t, "%s %s: %s", ev, r->key[0] ? r->key : "-",
                     r->note[0] ? r->note : "missing");
    else if (r->evidence == FP_EV_VALUE)
        n = snprintf(t, sizeof t, "%s %s = %g %s (limit %g, rule %s)", ev, r->key, r->value,
                     r->unit, r->expected, r->rule);
    else if (r->expected != 0 && isfinite(r->deviation) && strcmp(r->rule, "straggler") != 0)
        n = snprintf(t, sizeof t, "%s %s = %.4g %s, expected %.4g %s, %.1f%% worse (rule %s)",
                     ev, r->key, r->value, r->unit, r->expected, r->unit, 100 * r->deviation,
                     r->rule);
    else
        n = snprintf(t, sizeof t, "%s %s = %.4g %s, expected %.4g %s (rule %s)", ev, r->key,
                     r->value, r->unit, r->expected, r->unit, r->rule);
    if (!note_only && r->note[0] && n > 0 && (size_t)n < sizeof t) /* "device gpu:n3/0 fails" */
        snprintf(t + n, sizeof t - (size_t)n, " -- %s", r->note);
    snprintf(buf, len, "%.*s", (int)len - 1, t); /* the store keeps one short line */
}

/* fp_judgement is fp_verdict's order, kept by the store without the detector */
_Static_assert(FP_PASS == (int)FP_JUDGED_PASS && FP_WARN == (int)FP_JUDGED_WARN &&
                   FP_FAIL == (int)FP_JUDGED_FAIL && FP_UNKNOWN == (int)FP_JUDGED_UNKNOWN,
               "fp_judgement follows fp_verdict");

/* The first reason of ev that explains its own verdict: not history, and of
 * that verdict where one is; NULL when it has none. */
static const fp_reason *own_reason(const fp_verdicts *v, const fp_entity_verdict *ev,
                                   fp_verdict own)
{
    const fp_reason *any = NULL;
    for (size_t k = 0; k < ev->nreasons; k++) {
        const fp_reason *r = fp_verdicts_reason(v, ev->first_reason + k);
        if (r->evidence == FP_EV_HISTORY)
            continue;
        if (r->verdict == own)
            return r;
        if (!any)
            any = r;
    }
    return any;
}

/* The reason of entity i in one line into buf ("" when it has none): its
 * own, or for a node without one (a device's or rank's warn rolled up) the
 * first of its parts at the node's verdict, named: "gpu:n5/0: value ...". */
static void first_reason(const fp_verdicts *v, size_t i, fp_verdict own, char *buf, size_t len)
{
    const fp_entity_verdict *ev = fp_verdicts_get(v, i);
    const fp_reason *r = own_reason(v, ev, own);
    buf[0] = 0;
    if (r) {
        reason_text(r, buf, len);
        return;
    }
    if (ev->entity->kind != FP_ENT_NODE)
        return;
    char node[FP_NAME_MAX + 8], part[2 * FP_NAME_MAX + 32], text[FP_JUDGED_REASON];
    snprintf(node, sizeof node, "node:%s", ev->entity->node);
    for (size_t j = fp_verdicts_node_count(v); j < fp_verdicts_count(v); j++) {
        const fp_entity_verdict *pe = fp_verdicts_get(v, j);
        if (fp_verdicts_own(v, j) != own || !fp_entity_in(pe->entity, node) ||
            !(r = own_reason(v, pe, own)))
            continue;
        reason_text(r, text, sizeof text);
        fp_entity_format(pe->entity, part, sizeof part);
        snprintf(buf, len, "%.*s", (int)len - 1, part);
        size_t at = strlen(buf);
        snprintf(buf + at, len - at, ": %.*s", (int)(len - at > 3 ? len - at - 3 : 0), text);
        return;
    }
}

fp_status fp_verdicts_record(const fp_verdicts *v, fp_run_verdicts *out)
{
    fp_status st = FP_OK;
    size_t nodes = fp_verdicts_node_count(v);
    bool *offends = calloc(fp_verdicts_count(v) + 1, sizeof *offends);
    FP_CHECK_ALLOC(offends);
    for (size_t i = 0; i < fp_verdicts_offender_count(v); i++)
        offends[fp_verdicts_offender(v, i)->entity] = true;
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        fp_verdict own = fp_verdicts_own(v, i);
        /* every judged node; the rest only when not passing (a device, rank
         * or link not listed passed where its nodes are listed) */
        if (i >= nodes && ev->verdict == FP_PASS)
            continue;
        char ent[FP_JUDGED_ENTITY], why[FP_JUDGED_REASON] = "";
        if (own != FP_PASS)
            first_reason(v, i, own, why, sizeof why);
        fp_entity_format(ev->entity, ent, sizeof ent);
        FP_CHECK(fp_run_verdicts_add(out, ent, (fp_judgement)own, offends[i], why));
    }
cleanup:
    free(offends);
    return st;
}

/* ---- store history --------------------------------------------------------------------- */

void fp_report_history(FILE *out, const fp_history_listing *l)
{
    size_t from = l->last > 0 && l->n > (size_t)l->last ? l->n - (size_t)l->last : 0;
    int idw = 6, tagw = 3;
    for (size_t i = from; i < l->n; i++) {
        int a = (int)strlen(l->entries[i].run), b = (int)strlen(l->entries[i].tag);
        idw = a > idw ? a : idw;
        tagw = b > tagw ? b : tagw;
    }
    fprintf(out, "history of %s in %s%s%s: %zu judged %s", l->entity, l->store,
            l->tag ? ", tag " : "", l->tag ? l->tag : "", l->n, fp_plural((long long)l->n, "run",
                                                                         "runs"));
    if (from)
        fprintf(out, " (the last %zu shown)", l->n - from);
    fputs(", oldest first\n", out);
    if (l->n)
        fprintf(out, "%-19s  %-*s  %-*s  %-7s  %s\n", "time (UTC)", idw, "run", tagw, "tag",
                "verdict", "first reason");
    for (size_t i = from; i < l->n; i++) {
        const fp_history_entry *e = &l->entries[i];
        char when[32] = "?";
        time_t t = (time_t)e->time;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(out, "%-19s  %-*s  %-*s  %-7s  %s%s\n", when, idw, e->run, tagw,
                e->tag[0] ? e->tag : "-", fp_judgement_name(e->verdict),
                e->offender ? "[repeat offender] " : "", e->reason[0] ? e->reason : "-");
    }
    const fp_offense *o = &l->now;
    if (l->offender)
        fprintf(out, "%s: a repeat offender: failed or warned in %d of its last %d judged runs "
                     "(rule: %d of %d)\n",
                l->entity, o->bad, o->judged, l->k, l->nrule);
    else
        fprintf(out, "%s: not a repeat offender: failed or warned in %d of its last %d judged "
                     "runs (rule: %d of %d)\n",
                l->entity, o->bad, o->judged, l->k, l->nrule);
}
