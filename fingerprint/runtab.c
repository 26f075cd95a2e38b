/* Runtabs: a run's samples as rows of interned entities and metric keys, the
 * form the store reads and writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "runtab.h"

fp_status fp__run_copy_context(fp_run *dst, const fp_run *src)
{
    *dst = *src;
    dst->samples = NULL;
    dst->rows = NULL;
    dst->nsamples = dst->cap = 0;
    dst->nodes = NULL;
    dst->ranks = NULL;
    dst->nnodes = dst->nranks = 0;
    dst->config = NULL;
    dst->nconfig = 0;
    fp_status st = fp_run_set_shape(dst, src->nnodes, src->nranks);
    if (st == FP_OK && src->nconfig)
        st = fp_run_set_config(dst, src->config, src->nconfig);
    if (st != FP_OK)
        return st;
    if (src->nnodes)
        memcpy(dst->nodes, src->nodes, (size_t)src->nnodes * sizeof *src->nodes);
    if (src->nranks)
        memcpy(dst->ranks, src->ranks, (size_t)src->nranks * sizeof *src->ranks);
    return FP_OK;
}

/* Append text to a key buffer, with a separator that names never contain. */
static char *key_put(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    p[n] = '\x1f';
    return p + n + 1;
}

/* The key id of s's metric in t, added when new. */
static fp_status metric_id(fp__runtab *t, const fp_sample *s, uint32_t *mid, bool *added)
{
    char key[160];
    *added = false;
    if (t->nrows && t->last_metric < t->keys.n) {
        /* samples come grouped by metric: the previous one's key is likely */
        const fp__metric *m = &t->metrics[t->last_metric];
        if (m->size == s->size && strcmp(m->metric, s->metric) == 0 &&
            strcmp(m->test, s->test) == 0 && strcmp(m->suite, s->suite) == 0) {
            *mid = t->last_metric;
            return FP_OK;
        }
    }
    char *p = key_put(key_put(key_put(key, s->suite), s->test), s->metric);
    char digits[24];
    int nd = 0;
    uint64_t v = s->size;
    do {
        digits[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (nd)
        *p++ = digits[--nd];
    fp_status st = fp__strmap_intern(&t->keys, key, (size_t)(p - key), mid, added);
    if (st != FP_OK || !*added)
        return st;
    fp__metric *grown = fp_grow(t->metrics, &t->metric_cap, (size_t)*mid + 1, sizeof *grown, 64);
    FP_CHECK_ALLOC(grown);
    t->metrics = grown;
    fp__metric *m = &t->metrics[*mid];
    memset(m, 0, sizeof *m);
    memcpy(m->suite, s->suite, sizeof m->suite);
    memcpy(m->test, s->test, sizeof m->test);
    memcpy(m->metric, s->metric, sizeof m->metric);
    memcpy(m->unit, s->unit, sizeof m->unit);
    m->suite[sizeof m->suite - 1] = m->test[sizeof m->test - 1] = 0;
    m->metric[sizeof m->metric - 1] = m->unit[sizeof m->unit - 1] = 0;
    m->better = (uint8_t)s->better;
    m->size = s->size;
cleanup:
    return st;
}

fp_status fp__runtab_add(fp__runtab *t, const fp_sample *s, char *err, size_t errlen)
{
    char ent[2 * FP_NAME_MAX + 32];
    fp_entity_format(&s->entity, ent, sizeof ent);
    uint32_t eid, mid;
    bool added;
    fp_status st = fp__strmap_intern(&t->entities, ent, strlen(ent), &eid, NULL);
    if (st == FP_OK)
        st = metric_id(t, s, &mid, &added);
    if (st != FP_OK)
        return st;
    const fp__metric *m = &t->metrics[mid];
    if (!added && (strcmp(m->unit, s->unit) != 0 || m->better != (uint8_t)s->better)) {
        char k[128];
        snprintf(err, errlen,
                 "metric %s has unit '%s' (%s is better) here but '%s' (%s) earlier in run %s",
                 fp_sample_key(s, k, sizeof k), s->unit,
                 s->better == FP_BETTER_LOWER ? "lower" : "higher", m->unit,
                 m->better == FP_BETTER_LOWER ? "lower" : "higher", t->ctx.id);
        return FP_EINPUT;
    }
    fp__row *rows = fp_grow(t->rows, &t->row_cap, t->nrows + 1, sizeof *rows, 1024);
    FP_CHECK_ALLOC(rows);
    t->rows = rows;
    fp__row *r = &t->rows[t->nrows++];
    memset(r, 0, sizeof *r);
    r->entity = eid;
    r->key = mid;
    r->iter = s->iter;
    r->value = s->value;
    r->t_start = s->t_start;
    t->last_metric = mid;
cleanup:
    return st;
}

fp_status fp__runtab_from_run(fp__runtab *t, const fp_run *run)
{
    memset(t, 0, sizeof *t);
    fp_status st = fp__run_copy_context(&t->ctx, run);
    char err[256];
    for (size_t i = 0; st == FP_OK && i < run->nsamples; i++) {
        st = fp__runtab_add(t, &run->samples[i], err, sizeof err);
        if (st == FP_EINPUT)
            fp_error("run %s, sample %zu: %s", run->id, i, err);
    }
    return st;
}

void fp__runtab_key(const fp__runtab *t, uint32_t k, fp_sample *s)
{
    const fp__metric *m = &t->metrics[k];
    memset(s, 0, sizeof *s);
    memcpy(s->suite, m->suite, sizeof s->suite);
    memcpy(s->test, m->test, sizeof s->test);
    memcpy(s->metric, m->metric, sizeof s->metric);
    memcpy(s->unit, m->unit, sizeof s->unit);
    s->better = m->better ? FP_BETTER_LOWER : FP_BETTER_HIGHER;
    s->size = m->size;
}

void fp__runtab_sample(const fp__runtab *t, size_t i, fp_sample *s)
{
    const fp__row *r = &t->rows[i];
    fp__runtab_key(t, r->key, s);
    s->entity = t->ent[r->entity];
    s->iter = r->iter;
    s->value = r->value;
    s->t_start = r->t_start;
}

void fp__runtab_free(fp__runtab *t)
{
    fp_run_free(&t->ctx);
    fp__strmap_free(&t->entities);
    fp__strmap_free(&t->keys);
    free(t->ent);
    free(t->metrics);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

