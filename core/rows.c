/* Building a run's rows: samples interned into a table of metric keys and a
 * table of entities as they come (rank 0's gather, core/world.c, merges every
 * rank's tables this way), each key and entity hashed and compared byte for
 * byte. */
#include <stdlib.h>
#include <string.h>

#include "fleetprint/mem.h"
#include "fleetprint/sample.h"
#include "fleetprint/stats.h"

static uint64_t key_hash(const fp_sample *s)
{
    uint64_t h = fp_hash_bytes(0, s->suite, FP_SAMPLE_KEY_TEXT);
    return fp_mix64(h ^ s->size ^ ((uint64_t)s->better << 63));
}

static bool same_key(const fp_sample *a, const fp_sample *b)
{
    return a->size == b->size && a->better == b->better &&
           memcmp(a->suite, b->suite, FP_SAMPLE_KEY_TEXT) == 0;
}

/* Double the slots of a table of n ids (hashes from hash_of), or make the
 * first 1,024. */
static bool rehash(uint32_t **slot, size_t *mask, size_t n, const void *items, size_t stride,
                   uint64_t (*hash_of)(const void *))
{
    size_t slots = *slot ? 2 * (*mask + 1) : 1024;
    uint32_t *s = fp_calloc_huge(slots, sizeof *s);
    if (!s)
        return false;
    for (size_t id = 0; id < n; id++) {
        size_t i = hash_of((const char *)items + id * stride) & (slots - 1);
        while (s[i])
            i = (i + 1) & (slots - 1);
        s[i] = (uint32_t)id + 1;
    }
    free(*slot);
    *slot = s;
    *mask = slots - 1;
    return true;
}

static uint64_t key_hash_of(const void *s)
{
    return key_hash(s);
}

static uint64_t ent_hash_of(const void *e)
{
    return fp_hash_bytes(0, e, sizeof(fp_entity));
}

fp_status fp_rows_builder_key(fp_rows_builder *b, const fp_sample *s, uint32_t *id)
{
    fp_run_rows *r = &b->rows;
    if (2 * (r->nkeys + 1) > b->key_mask + 1 &&
        !rehash(&b->key_slot, &b->key_mask, r->nkeys, r->keys, sizeof *r->keys, key_hash_of))
        return FP_ENOMEM;
    size_t i = key_hash(s) & b->key_mask;
    for (; b->key_slot[i]; i = (i + 1) & b->key_mask)
        if (same_key(&r->keys[b->key_slot[i] - 1], s)) {
            *id = b->key_slot[i] - 1;
            return FP_OK;
        }
    fp_sample *keys = fp_grow(r->keys, &b->key_cap, r->nkeys + 1, sizeof *keys, 64);
    if (!keys || r->nkeys >= UINT32_MAX - 1)
        return FP_ENOMEM;
    r->keys = keys;
    fp_sample *k = &r->keys[r->nkeys];
    memset(k, 0, sizeof *k);
    memcpy(k->suite, s->suite, FP_SAMPLE_KEY_TEXT);
    k->better = s->better;
    k->size = s->size;
    *id = (uint32_t)r->nkeys++;
    b->key_slot[i] = *id + 1;
    return FP_OK;
}

fp_status fp_rows_builder_entity(fp_rows_builder *b, const fp_entity *e, uint32_t *id)
{
    fp_run_rows *r = &b->rows;
    if (2 * (r->nents + 1) > b->ent_mask + 1 &&
        !rehash(&b->ent_slot, &b->ent_mask, r->nents, r->ents, sizeof *r->ents, ent_hash_of))
        return FP_ENOMEM;
    size_t i = ent_hash_of(e) & b->ent_mask;
    for (; b->ent_slot[i]; i = (i + 1) & b->ent_mask)
        if (memcmp(&r->ents[b->ent_slot[i] - 1], e, sizeof *e) == 0) {
            *id = b->ent_slot[i] - 1;
            return FP_OK;
        }
    fp_entity *ents = fp_grow(r->ents, &b->ent_cap, r->nents + 1, sizeof *ents, 64);
    if (!ents || r->nents >= UINT32_MAX - 1)
        return FP_ENOMEM;
    r->ents = ents;
    r->ents[r->nents] = *e;
    *id = (uint32_t)r->nents++;
    b->ent_slot[i] = *id + 1;
    return FP_OK;
}

fp_status fp_rows_builder_add(fp_rows_builder *b, const fp_sample *s)
{
    fp_run_rows *r = &b->rows;
    uint32_t key, ent;
    fp_status st = fp_rows_builder_key(b, s, &key);
    if (st == FP_OK)
        st = fp_rows_builder_entity(b, &s->entity, &ent);
    if (st != FP_OK)
        return st;
    fp_sample_row *row = fp_grow(r->row, &b->row_cap, r->n + 1, sizeof *row, 1024);
    if (!row)
        return FP_ENOMEM;
    r->row = row;
    double *t = fp_grow(r->t, &b->t_cap, r->n + 1, sizeof *t, 1024);
    if (!t)
        return FP_ENOMEM;
    r->t = t;
    t[r->n] = s->t_start;
    row[r->n++] = (fp_sample_row){.entity = ent, .key = key, .iter = s->iter, .value = s->value};
    return FP_OK;
}

fp_run_rows *fp_rows_builder_take(fp_rows_builder *b)
{
    fp_run_rows *r = malloc(sizeof *r);
    if (r) {
        *r = b->rows;
        memset(&b->rows, 0, sizeof b->rows);
    }
    fp_rows_builder_free(b);
    return r;
}

void fp_rows_builder_free(fp_rows_builder *b)
{
    free(b->rows.row);
    free(b->rows.t);
    free(b->rows.keys);
    free(b->rows.ents);
    free(b->key_slot);
    free(b->ent_slot);
    memset(b, 0, sizeof *b);
}
