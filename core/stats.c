/* Small statistics helpers every layer shares (one copy each): comparison,
 * sorting, medians (sorting and selecting), quantiles and MAD. The 64-bit
 * mixer fp_mix64 is inline in stats.h. */
#include "fleetprint/stats.h"

#include <math.h>
#include <stdlib.h>

/* ---- order ----------------------------------------------------------------------- */

int fp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void fp_sort_doubles(double *v, size_t n)
{
    if (n > 24) {
        qsort(v, n, sizeof *v, fp_cmp_double);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* kth smallest of a[0..n) (reorders a). */
double fp_select_k(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        /* median of three as the pivot */
        if (a[mid] < a[lo]) { double t = a[mid]; a[mid] = a[lo]; a[lo] = t; }
        if (a[hi] < a[lo]) { double t = a[hi]; a[hi] = a[lo]; a[lo] = t; }
        if (a[hi] < a[mid]) { double t = a[hi]; a[hi] = a[mid]; a[mid] = t; }
        double pivot = a[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

/* ---- medians, quantiles, MAD ------------------------------------------------------- */

double fp_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, fp_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median of a[0..n), n > 0 (reorders a). */
double fp_median_select(double *a, size_t n)
{
    size_t k = n / 2;
    double hi = fp_select_k(a, n, k);
    if (n % 2)
        return hi;
    double lo = a[0];
    for (size_t i = 1; i < k; i++)
        lo = a[i] > lo ? a[i] : lo;
    return 0.5 * (lo + hi);
}

/* Median and MAD of a[0..n) (reorders a). */
void fp_median_mad(double *a, size_t n, double *med, double *mad)
{
    double m = fp_median_select(a, n);
    for (size_t i = 0; i < n; i++)
        a[i] = fabs(a[i] - m);
    *med = m;
    *mad = fp_median_select(a, n);
}

/* Quantile q of sorted v[0..n), linear interpolation between order statistics
 * (the "type 7" rule of R and numpy's default). */
double fp_quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double h = q * (double)(n - 1);
    size_t lo = (size_t)floor(h);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (h - (double)lo) * (v[hi] - v[lo]);
}

double fp_mad(const double *v, size_t n, double med, double *scratch)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = fabs(v[i] - med);
    fp_sort_doubles(scratch, n);
    return fp_quantile(scratch, n, 0.5);
}
