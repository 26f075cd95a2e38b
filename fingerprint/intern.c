/* Hash tables for the store: string interning (entity, metric and run-id
 * tables) and a 64-bit key map (baseline lookup). Open addressing, linear
 * probing, power-of-two sizes, grown at half load. */
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "fleetprint/mem.h"
#include "fleetprint/stats.h"

/* ---- string map ------------------------------------------------------------------ */

static uint32_t hash_bytes(const char *s, size_t len)
{
    /* FNV-1a, then a final mix so low bits spread */
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

static fp_status strmap_rehash(fp__strmap *m, uint32_t nslots)
{
    fp_status st = FP_OK;
    uint32_t *slot = calloc(nslots, sizeof *slot);
    FP_CHECK_ALLOC(slot);
    for (uint32_t id = 0; id < m->n; id++) {
        uint32_t i = m->hash[id] & (nslots - 1);
        while (slot[i])
            i = (i + 1) & (nslots - 1);
        slot[i] = id + 1;
    }
    free(m->slot);
    m->slot = slot;
    m->nslots = nslots;
cleanup:
    return st;
}

uint32_t fp__strmap_find(const fp__strmap *m, const char *s, size_t len)
{
    if (!m->nslots)
        return FP__NONE;
    uint32_t h = hash_bytes(s, len);
    for (uint32_t i = h & (m->nslots - 1);; i = (i + 1) & (m->nslots - 1)) {
        uint32_t v = m->slot[i];
        if (!v)
            return FP__NONE;
        const char *k = m->pool + m->off[v - 1];
        if (m->hash[v - 1] == h && strncmp(k, s, len) == 0 && k[len] == 0)
            return v - 1;
    }
}

fp_status fp__strmap_intern(fp__strmap *m, const char *s, size_t len, uint32_t *id, bool *added)
{
    fp_status st = FP_OK;
    uint32_t found = fp__strmap_find(m, s, len);
    if (added)
        *added = found == FP__NONE;
    if (found != FP__NONE) {
        *id = found;
        return FP_OK;
    }
    if (m->n == FP__NONE - 1 || m->pool_len + len + 1 > UINT32_MAX)
        FP_FAIL(FP_ENOMEM, "string table full: %u strings in %zu bytes", m->n, m->pool_len);
    if ((size_t)(m->n + 1) * 2 > m->nslots)
        FP_CHECK(strmap_rehash(m, m->nslots ? m->nslots * 2 : 64));
    if (m->n == m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 32;
        uint32_t *off = realloc(m->off, cap * sizeof *off);
        FP_CHECK_ALLOC(off);
        m->off = off;
        uint32_t *hash = realloc(m->hash, cap * sizeof *hash);
        FP_CHECK_ALLOC(hash);
        m->hash = hash;
        m->cap = cap;
    }
    if (m->pool_len + len + 1 > m->pool_cap) {
        size_t cap = m->pool_cap ? m->pool_cap : 1024;
        while (cap < m->pool_len + len + 1)
            cap *= 2;
        char *pool = realloc(m->pool, cap);
        FP_CHECK_ALLOC(pool);
        m->pool = pool;
        m->pool_cap = cap;
    }
    memcpy(m->pool + m->pool_len, s, len);
    m->pool[m->pool_len + len] = 0;
    uint32_t h = hash_bytes(s, len);
    m->off[m->n] = (uint32_t)m->pool_len;
    m->hash[m->n] = h;
    m->pool_len += len + 1;
    uint32_t i = h & (m->nslots - 1);
    while (m->slot[i])
        i = (i + 1) & (m->nslots - 1);
    m->slot[i] = m->n + 1;
    *id = m->n++;
cleanup:
    return st;
}

fp_status fp__strmap_adopt(fp__strmap *m, char *buf, size_t width, size_t n, size_t *dup)
{
    fp_status st = FP_OK;
    uint32_t nslots = 64;
    memset(m, 0, sizeof *m);
    m->pool = buf;
    *dup = n;
    if (n >= FP__NONE / 4 || (n && width > UINT32_MAX / n))
        FP_FAIL(FP_ENOMEM, "string table full: %zu strings of %zu bytes", n, width);
    while (nslots < 2 * n + 2) /* room for one more before a rehash */
        nslots *= 2;
    m->slot = fp_calloc_huge(nslots, sizeof *m->slot);
    m->off = fp_malloc_huge((n ? n : 1) * sizeof *m->off);
    m->hash = fp_malloc_huge((n ? n : 1) * sizeof *m->hash);
    FP_CHECK_ALLOC(m->slot);
    FP_CHECK_ALLOC(m->off);
    FP_CHECK_ALLOC(m->hash);
    fp_populate(m->slot, nslots * sizeof *m->slot); /* filled at random: a fault a page */
    m->nslots = nslots;
    m->cap = (uint32_t)(n ? n : 1);
    m->pool_len = m->pool_cap = n * width;
    for (uint32_t id = 0; id < n; id++) {
        const char *s = buf + (size_t)id * width;
        uint32_t h = hash_bytes(s, strlen(s)), i = h & (nslots - 1);
        for (; m->slot[i]; i = (i + 1) & (nslots - 1))
            if (m->hash[m->slot[i] - 1] == h && strcmp(m->pool + m->off[m->slot[i] - 1], s) == 0) {
                *dup = id;
                goto cleanup;
            }
        m->off[id] = id * (uint32_t)width;
        m->hash[id] = h;
        m->slot[i] = id + 1;
        m->n = id + 1;
    }
cleanup:
    return st;
}

size_t fp__strmap_width(const fp__strmap *m)
{
    size_t w = 2;
    for (uint32_t id = 0; id < m->n; id++) {
        size_t l = strlen(m->pool + m->off[id]) + 1;
        if (l > w)
            w = l;
    }
    return w;
}

void fp__strmap_free(fp__strmap *m)
{
    free(m->pool);
    free(m->off);
    free(m->hash);
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* ---- name index -------------------------------------------------------------------- */

fp_status fp__nameix_build(fp__nameix *ix, const char *names, size_t stride, int n)
{
    fp_status st = FP_OK;
    memset(ix, 0, sizeof *ix);
    ix->first = malloc((n > 0 ? (size_t)n : 1) * sizeof *ix->first);
    FP_CHECK_ALLOC(ix->first);
    for (int i = 0; i < n; i++) {
        const char *name = names + (size_t)i * stride;
        uint32_t id;
        bool added;
        FP_CHECK(fp__strmap_intern(&ix->names, name, strlen(name), &id, &added));
        if (added)
            ix->first[id] = i;
    }
cleanup:
    return st;
}

int fp__nameix_get(const fp__nameix *ix, const char *name)
{
    uint32_t id = fp__strmap_find(&ix->names, name, strlen(name));
    return id == FP__NONE ? -1 : ix->first[id];
}

void fp__nameix_free(fp__nameix *ix)
{
    fp__strmap_free(&ix->names);
    free(ix->first);
    memset(ix, 0, sizeof *ix);
}

/* ---- 64-bit key map --------------------------------------------------------------- */

static fp_status u64map_grow(fp__u64map *m, size_t nslots)
{
    fp_status st = FP_OK;
    uint64_t *key = malloc(nslots * sizeof *key);
    uint32_t *val = malloc(nslots * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
    memset(val, 0xff, nslots * sizeof *val);
    for (size_t i = 0; i < m->nslots; i++) {
        if (m->val[i] == FP__NONE)
            continue;
        size_t j = (size_t)fp_mix64(m->key[i]) & (nslots - 1);
        while (val[j] != FP__NONE)
            j = (j + 1) & (nslots - 1);
        key[j] = m->key[i];
        val[j] = m->val[i];
    }
    free(m->key);
    free(m->val);
    m->key = key;
    m->val = val;
    m->nslots = nslots;
cleanup:
    return st;
}

fp_status fp__u64map_reserve(fp__u64map *m, size_t n)
{
    size_t want = 64;
    while (want < 2 * n)
        want *= 2;
    return want > m->nslots ? u64map_grow(m, want) : FP_OK;
}

fp_status fp__u64map_put(fp__u64map *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->nslots) {
        fp_status st = u64map_grow(m, m->nslots ? m->nslots * 2 : 64);
        if (st != FP_OK)
            return st;
    }
    size_t j = (size_t)fp_mix64(key) & (m->nslots - 1);
    while (m->val[j] != FP__NONE && m->key[j] != key)
        j = (j + 1) & (m->nslots - 1);
    if (m->val[j] == FP__NONE)
        m->n++;
    m->key[j] = key;
    m->val[j] = val;
    return FP_OK;
}

uint32_t fp__u64map_get(const fp__u64map *m, uint64_t key)
{
    if (!m->nslots)
        return FP__NONE;
    for (size_t j = (size_t)fp_mix64(key) & (m->nslots - 1);; j = (j + 1) & (m->nslots - 1)) {
        if (m->val[j] == FP__NONE)
            return FP__NONE;
        if (m->key[j] == key)
            return m->val[j];
    }
}

void fp__u64map_free(fp__u64map *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}
