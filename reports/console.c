/* Console summary of a run: one row per metric key. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/report.h"
#include "fleetprint/stats.h"

/* Order of metric keys: suite, test, metric, size. */
static int cmp_key(const fp_sample *x, const fp_sample *y)
{
    int c = strcmp(x->suite, y->suite);
    if (!c)
        c = strcmp(x->test, y->test);
    if (!c)
        c = strcmp(x->metric, y->metric);
    if (!c)
        c = (x->size > y->size) - (x->size < y->size);
    return c;
}

/* Sample indices by their keys (qsort_r, arg: the run). */
static int cmp_index(const void *a, const void *b, void *run)
{
    return cmp_key(fp_run_ref(run, *(const size_t *)a).key, fp_run_ref(run, *(const size_t *)b).key);
}

static void key_text(const fp_sample *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s %s", s->suite, s->test, s->metric);
}

/* A unit as a reader takes it: burn-in's verdict code says what its values mean. */
static const char *unit_text(const char *unit)
{
    return strcmp(unit, "0pass1warn2fail") == 0 ? "verdict: 0 pass, 1 warn, 2 fail" : unit;
}

/* Rows summarise summary samples (iter -1) where a key has them, else all; the
 * key column is as wide as the widest key, so every row's columns line up.
 * The collective suite has its own nccl-tests-shaped tables first. */
void fp_report_console(FILE *out, const fp_run *run)
{
    bool coll_tables = fp_report_collectives(out, run);
    size_t n = 0;
    size_t *idx = malloc((run->nsamples ? run->nsamples : 1) * sizeof *idx);
    double *vals = malloc((run->nsamples ? run->nsamples : 1) * sizeof *vals);
    if (!idx || !vals) {
        free(idx);
        free(vals);
        return;
    }
    for (size_t i = 0; i < run->nsamples; i++)
        if (!coll_tables || strcmp(fp_run_ref(run, i).key->suite, "collectives") != 0)
            idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, cmp_index, (void *)run);
    if (n == 0)
        goto done;
    int width = 34;
    for (size_t i = 0; i < n; i++) {
        char key[96];
        key_text(fp_run_ref(run, idx[i]).key, key, sizeof key);
        if ((int)strlen(key) > width)
            width = (int)strlen(key);
    }
    fprintf(out, "%-*s %10s %6s %12s %12s %12s  %s\n", width, "# metric", "size", "count", "min",
            "median", "max", "unit");
    for (size_t i = 0; i < n;) {
        size_t j = i;
        bool any_summary = false;
        const fp_sample *s = fp_run_ref(run, idx[i]).key;
        for (; j < n; j++) {
            fp_sample_ref r = fp_run_ref(run, idx[j]);
            if (cmp_key(s, r.key) != 0)
                break;
            any_summary |= r.iter < 0;
        }
        size_t m = 0;
        for (size_t k = i; k < j; k++) {
            fp_sample_ref r = fp_run_ref(run, idx[k]);
            if (!any_summary || r.iter < 0)
                vals[m++] = r.value;
        }
        double med = fp_median(vals, m); /* sorts: vals[0] and vals[m - 1] are min and max */
        char key[96];
        key_text(s, key, sizeof key);
        fprintf(out, "%-*s %10llu %6zu %12.4g %12.4g %12.4g  %s (%s is better)\n", width, key,
                (unsigned long long)s->size, m, vals[0], med, vals[m - 1], unit_text(s->unit),
                s->better == FP_BETTER_LOWER ? "lower" : "higher");
        i = j;
    }
done:
    free(idx);
    free(vals);
}
