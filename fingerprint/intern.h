#ifndef FLEETPRINT_FINGERPRINT_INTERN_H
#define FLEETPRINT_FINGERPRINT_INTERN_H
/* The hash tables of fingerprint/ (intern.c): string interning, which gives
 * distinct strings dense ids 0..n-1 (the store's entity, metric and run-id
 * tables), and a map from 64-bit keys to 32-bit values (baseline lookup).
 * Private to fingerprint/: fp__ prefix, not installed. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/status.h"

typedef struct fp__strmap {
    char *pool;         /* all strings, NUL-terminated, back to back */
    size_t pool_len, pool_cap;
    uint32_t *off;      /* id -> offset in pool */
    uint32_t *hash;     /* id -> hash */
    uint32_t n, cap;    /* ids in use / allocated */
    uint32_t *slot;     /* open addressing: id + 1, 0 = empty */
    uint32_t nslots;    /* power of two */
} fp__strmap;

#define FP__NONE UINT32_MAX

/* Find or add the string s[0..len) (no NUL inside). *id gets its id; *added
 * (may be NULL) says whether it was new. FP_ENOMEM on allocation failure. */
fp_status fp__strmap_intern(fp__strmap *m, const char *s, size_t len, uint32_t *id, bool *added);
/* m, empty, made of the n strings of buf, width bytes apart, each
 * NUL-terminated within its width: ids in their order, buf becomes m's pool
 * (m frees it, whatever the outcome). *dup: the first that repeats one before
 * it (m then holds those before it), n when none does. One hash table sized
 * once and no copy, where interning one at a time rehashed and copied its
 * way up (1.2 M entity names took 0.4 s). FP_ENOMEM. */
fp_status fp__strmap_adopt(fp__strmap *m, char *buf, size_t width, size_t n, size_t *dup);
/* The id of s, or FP__NONE. */
uint32_t fp__strmap_find(const fp__strmap *m, const char *s, size_t len);
/* The string of an id (valid until the next intern). */
static inline const char *fp__strmap_str(const fp__strmap *m, uint32_t id)
{
    return m->pool + m->off[id];
}
/* Longest string length + 1 (at least 2), for fixed-size HDF5 strings. */
size_t fp__strmap_width(const fp__strmap *m);
void fp__strmap_free(fp__strmap *m);

/* Names held in an array (n of them, stride bytes apart, NUL-terminated):
 * the index of each one's first place in it, what a linear search answers,
 * in constant time (a run's node names, looked up once per rank: 800,000
 * linear searches of 100,000 names took minutes). */
typedef struct fp__nameix {
    fp__strmap names;
    int *first; /* by name id */
} fp__nameix;

/* Build *ix (zeroed first) over the n names. FP_ENOMEM (ix still freeable). */
fp_status fp__nameix_build(fp__nameix *ix, const char *names, size_t stride, int n);
/* The first index of name, or -1. */
int fp__nameix_get(const fp__nameix *ix, const char *name);
void fp__nameix_free(fp__nameix *ix);

/* A map from 64-bit keys to 32-bit values (open addressing). */
typedef struct fp__u64map {
    uint64_t *key;
    uint32_t *val; /* FP__NONE marks an empty slot */
    size_t nslots, n;
} fp__u64map;

fp_status fp__u64map_reserve(fp__u64map *m, size_t n);
fp_status fp__u64map_put(fp__u64map *m, uint64_t key, uint32_t val);
uint32_t fp__u64map_get(const fp__u64map *m, uint64_t key);
void fp__u64map_free(fp__u64map *m);

#endif
