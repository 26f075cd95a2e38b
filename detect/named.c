/* Verdicts that a search named rather than judged (fp_verdicts_named), and
 * the peer threshold a rule class sets (fp_rules_peer_fail): isolation
 * (collectives/isolate.c, app/isolate.c) names nodes and links in rounds, and
 * its culprits go to the same outputs as the detector's verdicts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"

static fp_verdict worse(fp_verdict a, fp_verdict b)
{
    /* unknown ranks below pass here: a named entity has its own reasons */
    int ra = a == FP_UNKNOWN ? -1 : (int)a, rb = b == FP_UNKNOWN ? -1 : (int)b;
    return ra >= rb ? a : b;
}

static bool same_entity(const fp_entity *a, const fp_entity *b)
{
    return a->kind == b->kind && a->dev == b->dev && a->peer_dev == b->peer_dev &&
           a->rank == b->rank && strcmp(a->node, b->node) == 0 && strcmp(a->peer, b->peer) == 0;
}

/* The entity verdict for e with its reasons from named[0..n) appended. */
static void add_entity(fp_verdicts *v, const fp_entity *e, const fp_named *named, size_t n,
                       fp_verdict start)
{
    fp_entity_verdict *ev = &v->ents[v->nents++];
    ev->entity = fp__det_made(v, *e);
    ev->verdict = start;
    ev->first_reason = v->nreasons;
    for (size_t k = 0; k < n; k++) {
        if (!same_entity(&named[k].entity, e))
            continue;
        v->reasons[v->nreasons++] = named[k].reason;
        ev->nreasons++;
        ev->verdict = ev->nreasons == 1 ? named[k].reason.verdict
                                        : worse(ev->verdict, named[k].reason.verdict);
    }
    v->overall = worse(v->overall, ev->verdict);
}

fp_status fp_verdicts_named(const fp_run *run, const fp_named *named, size_t n,
                            fp_verdicts **out)
{
    fp_status st = FP_OK;
    *out = NULL;
    size_t nn = run->nnodes > 0 ? (size_t)run->nnodes : 0;
    fp_verdicts *v = calloc(1, sizeof *v);
    FP_CHECK_ALLOC(v);
    v->run = run;
    v->ents = calloc(nn + n + 1, sizeof *v->ents);
    v->made = calloc(nn + n + 1, sizeof *v->made);
    v->reasons = calloc(n + 1, sizeof *v->reasons);
    v->node_names = calloc(nn + 1, sizeof *v->node_names);
    v->fail_nodes = calloc(nn + 1, sizeof *v->fail_nodes);
    v->warn_nodes = calloc(nn + 1, sizeof *v->warn_nodes);
    if (!v->ents || !v->made || !v->reasons || !v->node_names || !v->fail_nodes ||
        !v->warn_nodes)
        FP_FAIL(FP_ENOMEM, "out of memory for the named verdicts of run %s (%zu nodes)",
                run->id, nn);
    v->overall = FP_PASS;
    for (size_t i = 0; i < nn; i++) {
        snprintf(v->node_names[i], FP_NAME_MAX, "%s", run->nodes[i]);
        fp_entity e = fp_entity_node(run->nodes[i]);
        add_entity(v, &e, named, n, FP_PASS);
        fp_verdict nv = v->ents[v->nents - 1].verdict;
        if (nv == FP_FAIL)
            v->fail_nodes[v->nfail_nodes++] = v->node_names[i];
        if (nv == FP_FAIL || nv == FP_WARN)
            v->warn_nodes[v->nwarn_nodes++] = v->node_names[i];
    }
    v->nnodes = nn;
    for (size_t k = 0; k < n; k++) {
        bool seen = named[k].entity.kind == FP_ENT_NODE &&
                    fp_run_node_index(run, named[k].entity.node) >= 0;
        for (size_t j = 0; j < k && !seen; j++)
            seen = same_entity(&named[j].entity, &named[k].entity);
        if (!seen)
            add_entity(v, &named[k].entity, named, n, FP_PASS);
    }
    *out = v;
    v = NULL;
cleanup:
    fp_verdicts_free(v);
    return st;
}

double fp_rules_peer_fail(const fp_rules *rules, const char *key, bool contended)
{
    const fp_rule_class *cls = fp__rules_class(rules, key);
    if (!cls || cls->absolute || cls->ignore || cls->late)
        return NAN;
    double fail = cls->fail;
    if (contended) {
        double cf = cls->contended_fail >= 0 ? cls->contended_fail : rules->contended_fail;
        fail = fail > cf ? fail : cf;
    }
    return fail;
}
