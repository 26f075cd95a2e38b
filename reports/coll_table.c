/* Console tables of the collective suite, shaped like nccl-tests' output: one
 * table per collective test (a row per data type, reduction and size; the
 * out-of-place and in-place columns side by side), and the table of the link
 * sweep. Formatting only: every number comes from the run's samples. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/collectives.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/stats.h"
#include "fleetprint/mem.h"

enum { MAX_TESTS = 16 };

/* ---- collected rows ------------------------------------------------------------------ */

typedef struct place_cols {
    bool have;
    double time, algbw, busbw, wrong;
    bool checked;
    int *late;  /* calls in which each rank arrived last */
    int calls;
} place_cols;

typedef struct crow {
    int test;   /* index into the table of test names */
    fp_dtype dtype;
    fp_redop op;
    uint64_t size;
    place_cols p[2];
} crow;

typedef struct tables {
    const fp_run *run;
    char tests[MAX_TESTS][24];
    int ntests;
    crow *rows;
    size_t nrows, cap;
    size_t hint;    /* last row found: samples come in row order */
} tables;

static int test_index(tables *t, const char *name)
{
    for (int i = 0; i < t->ntests; i++)
        if (strcmp(t->tests[i], name) == 0)
            return i;
    if (t->ntests == MAX_TESTS)
        return -1;
    snprintf(t->tests[t->ntests], sizeof t->tests[0], "%s", name);
    return t->ntests++;
}

static bool same_row(const crow *r, int test, const fp_coll_variant *v, uint64_t size)
{
    return r->test == test && r->dtype == v->dtype && r->op == v->op && r->size == size;
}

static crow *find_row(tables *t, int test, const fp_coll_variant *v, uint64_t size)
{
    if (t->hint < t->nrows && same_row(&t->rows[t->hint], test, v, size))
        return &t->rows[t->hint];
    for (size_t i = t->nrows; i-- > 0;)
        if (same_row(&t->rows[i], test, v, size))
            return &t->rows[t->hint = i];
    crow *rows = fp_grow(t->rows, &t->cap, t->nrows + 1, sizeof *rows, 64);
    if (!rows)
        return NULL;
    t->rows = rows;
    crow *r = &t->rows[t->nrows];
    memset(r, 0, sizeof *r);
    r->test = test;
    r->dtype = v->dtype;
    r->op = v->op;
    r->size = size;
    t->hint = t->nrows++;
    return r;
}

static void add_sample(tables *t, const fp_sample_ref *s)
{
    char fig[32];
    fp_coll_variant v;
    if (!fp_coll_metric_parse(s->key->metric, fig, sizeof fig, &v))
        return;
    int test = test_index(t, s->key->test);
    crow *r = test >= 0 ? find_row(t, test, &v, s->key->size) : NULL;
    if (!r)
        return;
    place_cols *p = &r->p[v.in_place];
    p->have = true;
    if (strcmp(fig, "time_max") == 0)
        p->time = s->value;
    else if (strcmp(fig, "algbw") == 0)
        p->algbw = s->value;
    else if (strcmp(fig, "busbw") == 0)
        p->busbw = s->value;
    else if (strcmp(fig, "wrong") == 0) {
        p->wrong += s->value;
        p->checked = true;
    } else if (strcmp(fig, "late_rank") == 0) {
        int who = (int)s->value, n = t->run->nranks;
        if (!p->late && n > 0)
            p->late = calloc((size_t)n, sizeof *p->late);
        if (p->late && who >= 0 && who < n) {
            p->late[who]++;
            p->calls++;
        }
    }
}

static int cmp_rows(const void *a, const void *b)
{
    const crow *x = a, *y = b;
    if (x->test != y->test)
        return x->test - y->test;
    if (x->dtype != y->dtype)
        return (int)x->dtype - (int)y->dtype;
    if (x->op != y->op)
        return (int)x->op - (int)y->op;
    return (x->size > y->size) - (x->size < y->size);
}

/* ---- printing --------------------------------------------------------------------- */

static void print_place(FILE *out, const place_cols *p, int nranks)
{
    if (!p->have) {
        fprintf(out, " %9s %8s %8s %7s %9s", "n/a", "", "", "", "");
        return;
    }
    char wrong[16] = "-", late[16] = "-";
    if (p->checked)
        snprintf(wrong, sizeof wrong, "%.0f", p->wrong);
    if (p->calls > 0) {
        int who = 0;
        for (int r = 1; r < nranks; r++)
            who = p->late[r] > p->late[who] ? r : who;
        snprintf(late, sizeof late, "r%d %3.0f%%", who, 100.0 * p->late[who] / p->calls);
    }
    fprintf(out, " %9.1f %8.3f %8.3f %7s %9s", p->time, p->algbw, p->busbw, wrong, late);
}

static void print_test(FILE *out, const tables *t, int test, size_t from, size_t to)
{
    int n = t->run->nranks;
    fprintf(out,
            "#\n# collectives/%s on %d %s (%d %s); time: max over ranks; late: the "
            "rank last to arrive most often, share of calls\n",
            t->tests[test], n, fp_plural(n, "rank", "ranks"), t->run->nnodes,
            fp_plural(t->run->nnodes, "node", "nodes"));
    fprintf(out, "# %41s %-45s %s\n", "", "out-of-place", "in-place");
    fprintf(out, "# %10s %12s %8s %6s %9s %8s %8s %7s %9s %9s %8s %8s %7s %9s\n", "size", "count",
            "type", "redop", "time", "algbw", "busbw", "#wrong", "late", "time", "algbw", "busbw",
            "#wrong", "late");
    fprintf(out, "# %10s %12s %8s %6s %9s %8s %8s %7s %9s %9s %8s %8s %7s %9s\n", "(B)",
            "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "", "(us)", "(GB/s)", "(GB/s)",
            "", "");
    double wrong = 0;
    const crow *largest = NULL;
    for (size_t i = from; i < to; i++) {
        const crow *r = &t->rows[i];
        size_t esz = fp_dtype_size(r->dtype);
        fprintf(out, "  %10llu %12llu %8s %6s", (unsigned long long)r->size,
                (unsigned long long)(esz ? r->size / esz : 0), fp_dtype_name(r->dtype),
                r->op < FP_REDOP_COUNT ? fp_redop_name(r->op) : "none");
        print_place(out, &r->p[0], n);
        print_place(out, &r->p[1], n);
        double w = r->p[0].wrong + r->p[1].wrong;
        fprintf(out, "%s\n", w > 0 ? "  FAIL" : "");
        wrong += w;
        if (r->p[0].have && (!largest || r->size >= largest->size))
            largest = r;
    }
    fprintf(out, "# %s: %.0f wrong elements (%s)", t->tests[test], wrong, wrong > 0 ? "FAIL" : "OK");
    if (largest)
        fprintf(out, "; busbw at the largest size, %llu B %s %s out-of-place: %.3f GB/s",
                (unsigned long long)largest->size, fp_dtype_name(largest->dtype),
                largest->op < FP_REDOP_COUNT ? fp_redop_name(largest->op) : "", largest->p[0].busbw);
    fprintf(out, "\n");
}

/* The link sweep's summary samples (iter -1) as one table. */
static bool print_links(FILE *out, const fp_run *run)
{
    size_t n = 0;
    double rounds = 0, pairs = 0;
    bool have_rounds = false, have_pairs = false;
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        const char *metric = s.key->metric;
        if (strcmp(s.key->suite, "collectives") != 0 || strcmp(s.key->test, "links") != 0 ||
            s.iter >= 0)
            continue;
        n += strncmp(metric, "bw_", 3) == 0;
        if (strcmp(metric, "rounds") == 0) {
            rounds = s.value;
            have_rounds = true;
        }
        if (strcmp(metric, "pairs") == 0) {
            pairs = s.value;
            have_pairs = true;
        }
    }
    if (n == 0)
        return have_rounds;
    double *med[2] = {calloc(n, sizeof(double)), calloc(n, sizeof(double))};
    size_t cnt[2] = {0, 0};
    for (size_t i = 0; med[0] && med[1] && i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        if (strcmp(s.key->test, "links") == 0 && s.iter < 0 &&
            strncmp(s.key->metric, "bw_", 3) == 0) {
            int k = strcmp(s.key->metric, "bw_intra") == 0;
            med[k][cnt[k]++] = s.value;
        }
    }
    double m[2] = {NAN, NAN};
    for (int k = 0; k < 2 && med[0] && med[1]; k++) {
        m[k] = fp_median(med[k], cnt[k]);
    }
    free(med[0]);
    free(med[1]);
    fprintf(out, "#\n# collectives/links: %.0f pairs in %.0f rounds; bw counts both directions "
                 "(median over every exchange); latency: median of small exchanges\n",
            have_pairs ? pairs : (double)n, have_rounds ? rounds : 0);
    fprintf(out, "# %-28s %6s %12s %10s %13s\n", "link", "kind", "bw (GB/s)", "vs median",
            "latency (us)");
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        if (strcmp(s.key->test, "links") != 0 || s.iter >= 0 ||
            strncmp(s.key->metric, "bw_", 3) != 0)
            continue;
        int k = strcmp(s.key->metric, "bw_intra") == 0;
        double lat = NAN;
        for (size_t j = 0; j < run->nsamples; j++) {
            fp_sample_ref l = fp_run_ref(run, j);
            if (strncmp(l.key->metric, "lat_", 4) == 0 && strcmp(l.key->test, "links") == 0 &&
                strcmp(l.key->metric + 4, s.key->metric + 3) == 0 &&
                memcmp(l.entity, s.entity, sizeof *l.entity) == 0)
                lat = l.value;
        }
        char ent[2 * FP_NAME_MAX + 16];
        fp_entity_format(s.entity, ent, sizeof ent);
        fprintf(out, "  %-28s %6s %12.3f %10.2f %13.1f\n", ent, k ? "intra" : "inter", s.value,
                s.value / m[k], lat);
    }
    return true;
}

/* ---- entry ------------------------------------------------------------------------- */

bool fp_report_collectives(FILE *out, const fp_run *run)
{
    tables t = {.run = run};
    bool any = false;
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        if (strcmp(s.key->suite, "collectives") != 0)
            continue;
        any = true;
        if (strcmp(s.key->test, "links") != 0)
            add_sample(&t, &s);
    }
    if (t.nrows)
        qsort(t.rows, t.nrows, sizeof *t.rows, cmp_rows);
    for (size_t i = 0; i < t.nrows;) {
        size_t j = i;
        while (j < t.nrows && t.rows[j].test == t.rows[i].test)
            j++;
        print_test(out, &t, t.rows[i].test, i, j);
        i = j;
    }
    if (any)
        print_links(out, run);
    for (size_t i = 0; i < t.nrows; i++) {
        free(t.rows[i].p[0].late);
        free(t.rows[i].p[1].late);
    }
    free(t.rows);
    return any;
}
