#ifndef FLEETPRINT_STATS_H
#define FLEETPRINT_STATS_H
/* Small statistics and hashing helpers (core/stats.c), one copy for every
 * layer: comparison and sorting of doubles, medians, quantiles, MAD, a
 * 64-bit mixer and a hash of bytes. None allocates; none fails. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* qsort comparator of doubles, ascending (NaN compares equal to everything). */
int fp_cmp_double(const void *a, const void *b);

/* Sort v[0..n) ascending: insertion sort up to 24 values, else qsort. */
void fp_sort_doubles(double *v, size_t n);

/* The kth smallest of a[0..n), k < n (quickselect; reorders a). */
double fp_select_k(double *a, size_t n, size_t k);

/* Median of v[0..n) (the mean of the two middle values when n is even);
 * sorts v in place, so v[0] and v[n-1] are the min and max after. NaN when n
 * is 0. */
double fp_median(double *v, size_t n);

/* The same median in O(n) by selection, n > 0; reorders a without sorting it. */
double fp_median_select(double *a, size_t n);

/* Median and MAD (median of absolute deviations, unscaled) of a[0..n), n > 0;
 * overwrites a with the absolute deviations. */
void fp_median_mad(double *a, size_t n, double *med, double *mad);

/* Quantile q (0..1) of sorted v[0..n), linear interpolation between order
 * statistics (R's type 7, numpy's default). NaN when n is 0. */
double fp_quantile(const double *sorted, size_t n, double q);

/* MAD of v[0..n) around med, via fp_quantile (0.5) of the absolute
 * deviations; scratch holds n values. */
double fp_mad(const double *v, size_t n, double med, double *scratch);

/* A 64-bit integer hash with full avalanche (MurmurHash3's fmix64). Inline:
 * the hash tables of the store and the detector call it on every lookup. */
static inline uint64_t fp_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* n bytes at p folded into hash h through fp_mix64, eight bytes a step: the
 * hash of the tables that key on text or on a struct's bytes. */
static inline uint64_t fp_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (; n >= 8; n -= 8, b += 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = fp_mix64(h ^ w);
    }
    for (; n; n--, b++)
        h = fp_mix64(h ^ *b);
    return h;
}

#endif
