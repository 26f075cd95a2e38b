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

static void swap_at(double *a, size_t i, size_t j)
{
    double t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* Order a[lo] <= a[mid] <= a[hi] by swaps; the middle one, a pivot. */
static double median_of_three(double *a, size_t lo, size_t mid, size_t hi)
{
    if (a[mid] < a[lo])
        swap_at(a, mid, lo);
    if (a[hi] < a[lo])
        swap_at(a, hi, lo);
    if (a[hi] < a[mid])
        swap_at(a, hi, mid);
    return a[mid];
}

/* Sort v[0..n) ascending without allocating: quicksort (median of three,
 * the smaller side first) down to short runs, then insertion sort. qsort
 * called fp_cmp_double through a pointer for each comparison: the peers'
 * split sorted half of each group so, 2% of detect's time at 100k nodes. */
void fp_sort_doubles(double *v, size_t n)
{
    while (n > 16) {
        size_t last = n - 1;
        double p = median_of_three(v, 0, n / 2, last);
        size_t i = 0, j = last;
        for (;;) { /* Hoare: v[0..j] <= p <= v[j+1..n), 0 <= j < last */
            while (v[i] < p)
                i++;
            while (v[j] > p)
                j--;
            if (i >= j)
                break;
            swap_at(v, i++, j--);
        }
        size_t nl = j + 1;
        if (nl < n - nl) {
            fp_sort_doubles(v, nl);
            v += nl;
            n -= nl;
        } else {
            fp_sort_doubles(v + nl, n - nl);
            n = nl;
        }
    }
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Partition a[lo..hi] until a[k] holds its order statistic: median of three
 * as the pivot. */
static void select_three(double *a, size_t lo, size_t hi, size_t k)
{
    while (lo < hi) {
        double pivot = median_of_three(a, lo, lo + (hi - lo) / 2, hi);
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                swap_at(a, i, j);
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
            return;
    }
}

/* Above this many values a range is first narrowed around k by selecting
 * in a sample of it (Floyd and Rivest): about n + min(k, n - k) comparisons
 * where median-of-three partitioning takes some 3.4 n. Half the time on the
 * 100,000s of values in one of the peers' windows at 100,000 nodes. */
#define SAMPLE_ABOVE 600

static void select_range(double *a, size_t lo, size_t hi, size_t k)
{
    while (hi - lo > SAMPLE_ABOVE) {
        /* a sample of s values around k's place, s ~ n^(2/3): its order
         * statistic near k, a little to the side of the middle, is the pivot */
        double n = (double)(hi - lo + 1), i = (double)(k - lo + 1), z = log(n);
        double s = 0.5 * exp(2 * z / 3), sd = 0.5 * sqrt(z * s * (n - s) / n);
        sd = i < n / 2 ? -sd : sd;
        double l = (double)k - i * s / n + sd, r = (double)k + (n - i) * s / n + sd;
        select_range(a, l > (double)lo ? (size_t)l : lo, r < (double)hi ? (size_t)r : hi, k);
        double t = a[k];
        size_t x = lo, y = hi;
        swap_at(a, lo, k);
        if (a[hi] > t)
            swap_at(a, hi, lo);
        while (x < y) { /* the ends hold t and a value on its side: no scan passes them */
            swap_at(a, x++, y--);
            while (a[x] < t)
                x++;
            while (a[y] > t)
                y--;
        }
        if (a[lo] == t)
            swap_at(a, lo, y);
        else
            swap_at(a, ++y, hi);
        /* a[y] == t, at most t before it, at least t after it */
        if (y == k)
            return;
        if (y < k)
            lo = y + 1;
        else
            hi = y - 1;
    }
    select_three(a, lo, hi, k);
}

/* kth smallest of a[0..n) (reorders a: a[0..k) hold none above it, a(k..n)
 * none below). The value is the order statistic whatever the algorithm;
 * only the order the others are left in depends on it. */
double fp_select_k(double *a, size_t n, size_t k)
{
    if (n == 0)
        return NAN;
    select_range(a, 0, n - 1, k);
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
