/* Small statistics and hashing helpers every layer shares (one copy each). */
#include "fleetprint/stats.h"

#include <stdlib.h>

int fp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double fp_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, fp_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
