#ifndef FLEETPRINT_STATS_H
#define FLEETPRINT_STATS_H
/* Small statistics and hashing helpers (core/stats.c), one copy for every
 * layer: comparison for qsort, medians, quantiles, MAD and a 64-bit mixer. */

/* qsort comparator of doubles, ascending (NaN compares equal to everything). */
int fp_cmp_double(const void *a, const void *b);

/* Median of v[0..n), n > 0; sorts v in place. */
double fp_median(double *v, int n);

#endif
