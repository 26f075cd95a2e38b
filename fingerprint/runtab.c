/* Runtabs: a run's samples as rows of interned entities and metric keys, the
 * form the store reads and writes. */
#include <math.h>
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

void fp__run_take_context(fp_run *dst, fp_run *src)
{
    *dst = *src;
    dst->samples = NULL;
    dst->rows = NULL;
    dst->nsamples = dst->cap = 0;
    src->nodes = NULL;
    src->ranks = NULL;
    src->config = NULL;
    src->nnodes = src->nranks = 0;
    src->nconfig = 0;
}

/* A metric key and its unit and direction, as spans (not NUL-terminated). */
typedef struct mkey {
    const char *suite, *test, *metric, *unit;
    size_t suite_len, test_len, metric_len, unit_len;
    uint64_t size;
    uint8_t better;
} mkey;

/* Whether the NUL-terminated string a is exactly the span s[0..n) (which
 * holds no NUL). */
static bool same(const char *a, const char *s, size_t n)
{
    return strncmp(a, s, n) == 0 && a[n] == 0;
}

/* Append text to a key buffer, with a separator that names never contain. */
static char *key_put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    p[n] = '\x1f';
    return p + n + 1;
}

/* The id that came after id a last time in next[cap], or FP__NONE. */
static uint32_t predicted(const uint32_t *next, size_t cap, uint32_t a)
{
    return a < cap ? next[a] : FP__NONE;
}

/* Remember that id b came after id a (next grown to hold a; new entries
 * FP__NONE). */
static fp_status follow(uint32_t **next, size_t *cap, uint32_t a, uint32_t b)
{
    fp_status st = FP_OK;
    if (a >= *cap) {
        size_t old = *cap;
        uint32_t *grown = fp_grow(*next, cap, (size_t)a + 1, sizeof *grown, 1024);
        FP_CHECK_ALLOC(grown);
        memset(grown + old, 0xff, (*cap - old) * sizeof *grown);
        *next = grown;
    }
    (*next)[a] = b;
cleanup:
    return st;
}

/* Whether metric key id of t is k's. */
static bool metric_is(const fp__runtab *t, uint32_t id, const mkey *k)
{
    if (id >= t->keys.n)
        return false;
    const fp__metric *m = &t->metrics[id];
    return m->size == k->size && same(m->metric, k->metric, k->metric_len) &&
           same(m->test, k->test, k->test_len) && same(m->suite, k->suite, k->suite_len);
}

/* k's key id in t->keys, added (with its row in t->metrics) when new; key
 * is room for the key's text. */
static fp_status metric_lookup(fp__runtab *t, const mkey *k, char *key, uint32_t *mid,
                               bool *added)
{
    char *p = key_put(key_put(key_put(key, k->suite, k->suite_len), k->test, k->test_len),
                      k->metric, k->metric_len);
    char digits[24];
    int nd = 0;
    uint64_t v = k->size;
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
    memcpy(m->suite, k->suite, k->suite_len);
    memcpy(m->test, k->test, k->test_len);
    memcpy(m->metric, k->metric, k->metric_len);
    memcpy(m->unit, k->unit, k->unit_len);
    m->better = k->better;
    m->size = k->size;
    m->shape.last = -1;
cleanup:
    return st;
}

/* The key id of k's metric in t, added when new. */
static fp_status metric_id(fp__runtab *t, const mkey *k, uint32_t *mid, bool *added)
{
    fp_status st = FP_OK;
    char key[160];
    uint32_t last = t->last_metric;
    *added = false;
    if (metric_is(t, last, k)) {
        *mid = last; /* samples often come grouped by metric */
        return FP_OK;
    }
    uint32_t guess = predicted(t->next_metric, t->next_metric_cap, last);
    if (guess != FP__NONE && metric_is(t, guess, k)) {
        *mid = guess; /* or in the order of the window before */
        return FP_OK;
    }
    FP_CHECK(metric_lookup(t, k, key, mid, added));
    if (last < t->keys.n)
        FP_CHECK(follow(&t->next_metric, &t->next_metric_cap, last, *mid));
cleanup:
    return st;
}

/* Whether k's unit and direction are those its metric m was first seen with. */
static bool metric_agrees(const fp__metric *m, const mkey *k)
{
    return same(m->unit, k->unit, k->unit_len) && m->better == k->better;
}

fp_status fp__runtab_intern(fp__runtab *t, const fp_sample *s, uint32_t *eid, uint32_t *mid,
                            char *err, size_t errlen)
{
    fp_status st = FP_OK;
    bool added;
    const fp_entity *e = &s->entity;
    const fp_entity *last = &t->last_ent;
    if (t->have_last_ent && e->kind == last->kind && e->dev == last->dev &&
        e->peer_dev == last->peer_dev && e->rank == last->rank &&
        strcmp(e->node, last->node) == 0 && strcmp(e->peer, last->peer) == 0) {
        /* a run's samples come grouped by entity: no text to format */
        *eid = t->last_ent_id;
    } else {
        char ent[2 * FP_NAME_MAX + 32];
        size_t n = strlen(fp_entity_format(e, ent, sizeof ent));
        uint32_t prev = t->have_last_ent ? t->last_ent_id : FP__NONE;
        uint32_t guess = predicted(t->next_entity, t->next_entity_cap, prev);
        if (guess != FP__NONE && same(fp__strmap_str(&t->entities, guess), ent, n)) {
            *eid = guess; /* in the order of the window before: no lookup */
        } else {
            FP_CHECK(fp__strmap_intern(&t->entities, ent, n, eid, NULL));
            if (prev != FP__NONE)
                FP_CHECK(follow(&t->next_entity, &t->next_entity_cap, prev, *eid));
        }
        t->have_last_ent = true;
        t->last_ent_id = *eid;
        t->last_ent = *e;
    }
    /* the fields as they are stored: cut to their arrays, NUL included */
    mkey k = {s->suite, s->test, s->metric, s->unit,
              strnlen(s->suite, sizeof s->suite - 1), strnlen(s->test, sizeof s->test - 1),
              strnlen(s->metric, sizeof s->metric - 1), strnlen(s->unit, sizeof s->unit - 1),
              s->size, (uint8_t)s->better};
    FP_CHECK(metric_id(t, &k, mid, &added));
    const fp__metric *m = &t->metrics[*mid];
    if (!added && !metric_agrees(m, &k)) {
        char key[128];
        snprintf(err, errlen,
                 "metric %s has unit '%s' (%s is better) here but '%s' (%s) earlier in run %s",
                 fp_sample_key(s, key, sizeof key), s->unit,
                 s->better == FP_BETTER_LOWER ? "lower" : "higher", m->unit,
                 m->better == FP_BETTER_LOWER ? "lower" : "higher", t->ctx.id);
        return FP_EINPUT;
    }
    t->last_metric = *mid;
cleanup:
    return st;
}

fp_status fp__runtab_intern_view(fp__runtab *t, const fp_jsonl_sample_view *v, uint32_t *eid,
                                 uint32_t *mid, bool *taken)
{
    fp_status st = FP_OK;
    bool added;
    *taken = false;
    const char *prev = t->last_entity < t->entities.n
                           ? fp__strmap_str(&t->entities, t->last_entity) : NULL;
    uint32_t guess = prev ? predicted(t->next_entity, t->next_entity_cap, t->last_entity)
                          : FP__NONE;
    if (prev && same(prev, v->entity, v->entity_len)) {
        *eid = t->last_entity;
    } else if (guess != FP__NONE &&
               same(fp__strmap_str(&t->entities, guess), v->entity, v->entity_len)) {
        *eid = guess; /* in the order of the window before: no lookup */
    } else if ((*eid = fp__strmap_find(&t->entities, v->entity, v->entity_len)) == FP__NONE) {
        /* new text: stored only when it is an entity in canonical form */
        char text[2 * FP_NAME_MAX + 32], canon[sizeof text];
        fp_entity e;
        if (v->entity_len >= sizeof text)
            return FP_OK;
        memcpy(text, v->entity, v->entity_len);
        text[v->entity_len] = 0;
        if (!fp_entity_parse(text, &e) ||
            strcmp(fp_entity_format(&e, canon, sizeof canon), text) != 0)
            return FP_OK;
        FP_CHECK(fp__strmap_intern(&t->entities, text, v->entity_len, eid, NULL));
    }
    if (prev && *eid != t->last_entity && *eid != guess)
        FP_CHECK(follow(&t->next_entity, &t->next_entity_cap, t->last_entity, *eid));
    mkey k = {v->suite,      v->test,       v->metric,   v->unit,
              v->suite_len,  v->test_len,   v->metric_len, v->unit_len,
              v->size,       (uint8_t)v->better};
    FP_CHECK(metric_id(t, &k, mid, &added));
    if (!added && !metric_agrees(&t->metrics[*mid], &k))
        return FP_OK; /* the full path words the error */
    t->last_entity = *eid;
    t->last_metric = *mid;
    *taken = true;
cleanup:
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
    s->t_start = t->t ? t->t[i] : NAN;
}

void fp__runtab_free(fp__runtab *t)
{
    fp_run_free(&t->ctx);
    fp__strmap_free(&t->entities);
    fp__strmap_free(&t->keys);
    free(t->next_entity);
    free(t->next_metric);
    free(t->ent);
    free(t->metrics);
    free(t->rows);
    free(t->t);
    memset(t, 0, sizeof *t);
}

