/* A run as a Prometheus textfile (node_exporter's textfile collector reads
 * *.prom files): the run's summary values, per-entity verdicts and the run's
 * time, written beside the target and renamed over it so the collector never
 * reads half a file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/detect.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *name, const char *value, bool first)
{
    fprintf(f, "%s%s=\"", first ? "" : ",", name);
    for (; *value; value++) {
        if (*value == '\\' || *value == '"')
            fputc('\\', f);
        if (*value == '\n')
            fputs("\\n", f);
        else
            fputc(*value, f);
    }
    fputc('"', f);
}

static int cmp_series(const void *a, const void *b)
{
    const fp_sample *x = *(const fp_sample *const *)a, *y = *(const fp_sample *const *)b;
    char kx[128], ky[128];
    int c = strcmp(fp_sample_key(x, kx, sizeof kx), fp_sample_key(y, ky, sizeof ky));
    if (!c)
        c = memcmp(&x->entity, &y->entity, sizeof x->entity);
    if (!c)
        c = (x->value > y->value) - (x->value < y->value);
    return c;
}

/* One value per (metric key, entity): the summary sample (iter -1) when
 * there is one, else the median over its windows. */
static void values(FILE *f, const fp_run *run)
{
    size_t n = run->nsamples;
    const fp_sample **idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        /* a rank number (late_rank) names who, it is not a quantity to plot */
        if (strcmp(run->samples[i].unit, "rank") != 0)
            idx[m++] = &run->samples[i];
    n = m;
    qsort(idx, n, sizeof *idx, cmp_series);
    fputs("# HELP fleetprint_value A fleetprint measurement: the run's summary value, or the "
          "median over windows.\n# TYPE fleetprint_value gauge\n", f);
    for (size_t i = 0; i < n;) {
        size_t j = i, windows = 0;
        const fp_sample *summary = NULL;
        while (j < n && idx[j]->size == idx[i]->size && strcmp(idx[j]->metric, idx[i]->metric) == 0 &&
               strcmp(idx[j]->test, idx[i]->test) == 0 && strcmp(idx[j]->suite, idx[i]->suite) == 0 &&
               memcmp(&idx[j]->entity, &idx[i]->entity, sizeof idx[i]->entity) == 0) {
            if (idx[j]->iter < 0)
                summary = idx[j];
            else
                windows++;
            j++;
        }
        double v = NAN;
        if (summary) {
            v = summary->value;
        } else if (windows) { /* sorted by value within the series */
            size_t k = 0, mid = (windows - 1) / 2;
            for (size_t q = i; q < j; q++)
                if (idx[q]->iter >= 0 && k++ == mid)
                    v = idx[q]->value;
        }
        const fp_sample *s = idx[i];
        if (isfinite(v)) {
            char ent[2 * FP_NAME_MAX + 32], size[24];
            snprintf(size, sizeof size, "%llu", (unsigned long long)s->size);
            fputs("fleetprint_value{", f);
            label(f, "suite", s->suite, true);
            label(f, "test", s->test, false);
            label(f, "metric", s->metric, false);
            label(f, "size", size, false);
            label(f, "unit", s->unit, false);
            label(f, "better", s->better == FP_BETTER_LOWER ? "lower" : "higher", false);
            label(f, "entity", fp_entity_format(&s->entity, ent, sizeof ent), false);
            fprintf(f, "} %.17g\n", v);
        }
        i = j;
    }
    free(idx);
}

static void verdicts(FILE *f, const fp_verdicts *v)
{
    fputs("# HELP fleetprint_verdict The detector's verdict per entity: 0 pass, 1 warn, 2 fail, "
          "3 unknown.\n# TYPE fleetprint_verdict gauge\n", f);
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, i);
        char ent[2 * FP_NAME_MAX + 32];
        fputs("fleetprint_verdict{", f);
        label(f, "entity", fp_entity_format(&ev->entity, ent, sizeof ent), true);
        label(f, "kind", fp_entity_kind_name(ev->entity.kind), false);
        fprintf(f, "} %d\n", (int)ev->verdict);
    }
}

fp_status fp_report_prometheus(const fp_run *run, const fp_verdicts *v, const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        fp_error("%s: path too long", path);
        return FP_EUSAGE;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fp_error("%s: cannot write: %s", tmp, strerror(errno));
        return FP_EIO;
    }
    fputs("# HELP fleetprint_run_timestamp_seconds When the run started (Unix time).\n"
          "# TYPE fleetprint_run_timestamp_seconds gauge\nfleetprint_run_timestamp_seconds{", f);
    label(f, "run", run->id, true);
    label(f, "tag", run->tag, false);
    label(f, "status", run->status, false);
    fprintf(f, "} %.3f\n", run->time);
    values(f, run);
    if (v)
        verdicts(f, v);
    bool ok = !ferror(f);
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        fp_error("%s: cannot write: %s", path, strerror(errno));
        remove(tmp);
        return FP_EIO;
    }
    return FP_OK;
}
