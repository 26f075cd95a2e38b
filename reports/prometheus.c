/* A run as a Prometheus textfile (node_exporter's textfile collector reads
 * *.prom files), shaped for joins with dcgm-exporter's DCGM_FI_DEV_* series:
 *   - one gauge family per measurement kind, named with its base unit
 *     (fleetprint_gemm_flops{precision="bf16"},
 *     fleetprint_memory_bandwidth_bytes_per_second{op="triad"});
 *   - the entity as dcgm-exporter's labels: Hostname, gpu (index), UUID;
 *   - verdicts as a state set: fleetprint_verdict{...,state="fail"} 1;
 *   - every series carries run_tag, so the files of a preflight and a nightly
 *     in one textfile folder never hold the same series (node_exporter would
 *     drop one file's series as "collected before");
 *   - the run as a whole: fleetprint_run_verdict (-1 unknown, 0 pass, 1 warn,
 *     2 fail: unknown is below pass, so `>= 2` is a failure and nothing
 *     else), fleetprint_run_duration_seconds and
 *     fleetprint_last_success_timestamp_seconds (carried over from the file
 *     being replaced when this run did not succeed).
 * Written beside the target and renamed over it so the collector never reads
 * half a file. The metric list is docs/prometheus.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/detect.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/outfile.h"
#include "prometheus_internal.h"

/* ---- names ----------------------------------------------------------------------- */

/* A unit as fleetprint measures it, and the base unit a family name carries
 * (empty: a dimensionless count or flag) with the factor to get there. */
static const struct unit_map {
    const char *unit, *suffix;
    double scale;
} units[] = {
    {"GB/s", "_bytes_per_second", 1e9}, {"GFLOP/s", "_flops", 1e9}, {"us", "_seconds", 1e-6},
    {"ms", "_seconds", 1e-3},           {"s", "_seconds", 1},        {"C", "_celsius", 1},
    {"W", "_watts", 1},                 {"MHz", "_hertz", 1e6},      {"ratio", "_ratio", 1},
};

/* Metrics whose family is not test_metric: a pattern "*_x" puts the part
 * before "_x" into label; an exact name puts value there (NULL: no label). */
static const struct family_rule {
    const char *suite, *test, *metric, *stem, *label, *value;
} rules[] = {
    {"kernels", "gemm", "*_flops", "gemm", "precision", NULL},
    {"kernels", "gemm", "*_wrong", "gemm_wrong_elements", "precision", NULL},
    {"kernels", "membw", "*_bw", "memory_bandwidth", "op", NULL},
    {"kernels", "membw", "wrong", "memory_wrong_elements", NULL, NULL},
    {"kernels", "copy", "*_bw", "copy_bandwidth", "direction", NULL},
    {"kernels", "copy", "wrong", "copy_wrong_elements", NULL, NULL},
    {"kernels", "launch", "launch_us", "launch_latency", "api", "kernel"},
    {"kernels", "launch", "graph_launch_us", "launch_latency", "api", "graph"},
    {"collectives", "links", "bw_inter", "link_bandwidth", "scope", "inter"},
    {"collectives", "links", "bw_intra", "link_bandwidth", "scope", "intra"},
    {"collectives", "links", "lat_inter", "link_latency", "scope", "inter"},
    {"collectives", "links", "lat_intra", "link_latency", "scope", "intra"},
    {"burnin", "gemm", "gflops", "burnin_gemm", NULL, NULL},
};

/* Samples that are not quantities: who (a rank number) or the verdict again. */
static bool skipped_unit(const char *unit)
{
    return strcmp(unit, "rank") == 0 || strcmp(unit, "0pass1warn2fail") == 0;
}

static const struct unit_map *unit_of(const char *unit)
{
    static const struct unit_map none = {"", "", 1};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(units[i].unit, unit) == 0)
            return &units[i];
    return &none;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

/* Append text to buf (of len) at *at as a metric-name part: anything outside
 * [a-zA-Z0-9_] becomes '_'. */
static void put_name(char *buf, size_t len, size_t *at, const char *text)
{
    for (; *text && *at + 1 < len; text++) {
        char c = *text;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        buf[(*at)++] = ok ? c : '_';
    }
    buf[*at] = 0;
}

/* Append name="value" to the label list in buf, escaping backslash, double
 * quote and newline as the exposition format requires. */
static void put_label(char *buf, size_t len, size_t *at, const char *name, const char *value)
{
    int n = snprintf(buf + *at, len - *at, "%s%s=\"", *at ? "," : "", name);
    *at = n < 0 ? *at : *at + (size_t)n < len ? *at + (size_t)n : len - 1;
    for (; *value && *at + 3 < len; value++) {
        if (*value == '\\' || *value == '"')
            buf[(*at)++] = '\\';
        if (*value == '\n') {
            buf[(*at)++] = '\\';
            buf[(*at)++] = 'n';
        } else {
            buf[(*at)++] = *value;
        }
    }
    if (*at + 1 < len)
        buf[(*at)++] = '"';
    buf[*at] = 0;
}

/* Order of ranks by node name, device, then rank. */
static int cmp_uuid_ranks(const void *a, const void *b, void *arg)
{
    const fp_run *run = arg;
    const fp_rank_info *x = *(const fp_rank_info *const *)a, *y = *(const fp_rank_info *const *)b;
    int c = strcmp(run->nodes[x->node], run->nodes[y->node]);
    if (c == 0)
        c = (x->dev > y->dev) - (x->dev < y->dev);
    return c ? c : (x > y) - (x < y);
}

fp_status fp__prom_uuids_make(fp__prom_uuids *u, const fp_run *run)
{
    fp_status st = FP_OK;
    u->run = run;
    u->n = 0;
    u->by = malloc(((size_t)run->nranks + 1) * sizeof *u->by);
    FP_CHECK_ALLOC(u->by);
    for (int r = 0; r < run->nranks; r++) {
        const fp_rank_info *ri = &run->ranks[r];
        if (ri->uuid[0] && ri->node >= 0 && ri->node < run->nnodes)
            u->by[u->n++] = ri;
    }
    qsort_r(u->by, u->n, sizeof *u->by, cmp_uuid_ranks, (void *)run);
cleanup:
    return st;
}

void fp__prom_uuids_free(fp__prom_uuids *u)
{
    free(u->by);
    u->by = NULL;
    u->n = 0;
}

/* The UUID of device dev of node, or NULL: its first rank's. */
static const char *uuid_of(const fp__prom_uuids *u, const char *node, int dev)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) { /* the first rank not before (node, dev) */
        size_t mid = (lo + hi) / 2;
        const fp_rank_info *r = u->by[mid];
        int c = strcmp(u->run->nodes[r->node], node);
        if (c == 0)
            c = (r->dev > dev) - (r->dev < dev);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const fp_rank_info *r = lo < u->n ? u->by[lo] : NULL;
    return r && r->dev == dev && strcmp(u->run->nodes[r->node], node) == 0 ? r->uuid : NULL;
}

/* The labels dcgm-exporter gives a GPU (Hostname, gpu, UUID where the run
 * knows it), a node (Hostname), a rank (Hostname, rank), a link (both ends,
 * the second as peer_Hostname, peer_gpu), a group (group). */
static void entity_labels(char *buf, size_t len, size_t *at, const fp__prom_uuids *u,
                          const fp_entity *e)
{
    char num[16];
    if (e->kind == FP_ENT_GROUP) {
        put_label(buf, len, at, "group", e->node);
        return;
    }
    put_label(buf, len, at, "Hostname", e->node);
    if ((e->kind == FP_ENT_GPU || e->kind == FP_ENT_LINK) && e->dev >= 0) {
        snprintf(num, sizeof num, "%d", e->dev);
        put_label(buf, len, at, "gpu", num);
    }
    const char *uuid = e->kind == FP_ENT_GPU ? uuid_of(u, e->node, e->dev) : NULL;
    if (uuid)
        put_label(buf, len, at, "UUID", uuid);
    if (e->kind == FP_ENT_RANK) {
        snprintf(num, sizeof num, "%d", e->rank);
        put_label(buf, len, at, "rank", num);
    }
    if (e->kind == FP_ENT_LINK) {
        put_label(buf, len, at, "peer_Hostname", e->peer);
        if (e->peer_dev >= 0) {
            snprintf(num, sizeof num, "%d", e->peer_dev);
            put_label(buf, len, at, "peer_gpu", num);
        }
    }
}

/* ---- measurements ---------------------------------------------------------------- */

typedef fp__prom_series series;

/* Name s's family into out (help text included) and start its label list with
 * run_tag and the family's own label, if any. */
static void name_series(const fp_sample *s, const char *tag, series *out, size_t *at)
{
    const struct unit_map *u = unit_of(s->unit);
    const char *test = s->test;
    char what[FP_NAME_MAX]; /* the help's name of the family */
    size_t n = 0;
    *at = 0;
    out->labels[0] = 0;
    put_label(out->labels, sizeof out->labels, at, "run_tag", tag);
    const struct family_rule *rule = NULL;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0] && !rule; i++) {
        const struct family_rule *r = &rules[i];
        if (strcmp(r->suite, s->suite) != 0 || strcmp(r->test, s->test) != 0)
            continue;
        if (r->metric[0] == '*' ? ends_with(s->metric, r->metric + 1) &&
                                      strlen(s->metric) > strlen(r->metric) - 1
                                : strcmp(r->metric, s->metric) == 0)
            rule = r;
    }
    out->family[0] = 0;
    put_name(out->family, sizeof out->family, &n, "fleetprint_");
    if (rule) {
        put_name(out->family, sizeof out->family, &n, rule->stem);
        if (rule->label && rule->value) {
            put_label(out->labels, sizeof out->labels, at, rule->label, rule->value);
        } else if (rule->label) {
            char variant[FP_NAME_MAX];
            snprintf(variant, sizeof variant, "%.*s",
                     (int)(strlen(s->metric) - (strlen(rule->metric) - 1)), s->metric);
            put_label(out->labels, sizeof out->labels, at, rule->label, variant);
        }
        /* a family of two metrics (bw_inter, bw_intra) by its label */
        if (rule->value)
            snprintf(what, sizeof what, "%s by %s", rule->stem, rule->label);
        else
            snprintf(what, sizeof what, "%s", rule->metric);
    } else {
        /* a collective is a label of one family per quantity; other tests
         * name their family test_metric, unit tokens turned into words */
        bool collective = strcmp(s->suite, "collectives") == 0 && strcmp(s->test, "links") != 0;
        char metric[FP_NAME_MAX];
        snprintf(metric, sizeof metric, "%s", s->metric);
        /* a collective's variant, FIGURE_TYPE_REDOP_ip|oop, becomes labels */
        char *w[3] = {NULL, NULL, NULL};
        for (int k = 2; collective && k >= 0; k--) {
            w[k] = strrchr(metric, '_');
            if (!w[k])
                break;
            *w[k]++ = 0;
        }
        if (collective && (!w[0] || (strcmp(w[2], "ip") != 0 && strcmp(w[2], "oop") != 0))) {
            snprintf(metric, sizeof metric, "%s", s->metric); /* not a variant: as it is */
            w[0] = NULL;
        }
        size_t m = strlen(metric);
        if (ends_with(metric, "_us") || ends_with(metric, "_ms"))
            metric[m - 3] = 0;
        put_name(out->family, sizeof out->family, &n, collective ? "collective" : s->test);
        put_name(out->family, sizeof out->family, &n, "_");
        if (strcmp(metric, "algbw") == 0 || strcmp(metric, "busbw") == 0) {
            put_name(out->family, sizeof out->family, &n,
                     metric[0] == 'a' ? "algorithm_bandwidth" : "bus_bandwidth");
        } else if (ends_with(metric, "_bw")) {
            metric[strlen(metric) - 2] = 0;
            put_name(out->family, sizeof out->family, &n, metric);
            put_name(out->family, sizeof out->family, &n, "bandwidth");
        } else {
            put_name(out->family, sizeof out->family, &n, metric);
            if (strcmp(metric, "wrong") == 0 || ends_with(metric, "_wrong"))
                put_name(out->family, sizeof out->family, &n, "_elements");
        }
        if (collective)
            put_label(out->labels, sizeof out->labels, at, "collective", s->test);
        if (collective && w[0]) {
            put_label(out->labels, sizeof out->labels, at, "type", w[0]);
            put_label(out->labels, sizeof out->labels, at, "redop", w[1]);
            put_label(out->labels, sizeof out->labels, at, "in_place",
                      strcmp(w[2], "ip") == 0 ? "true" : "false");
        }
        test = collective ? "<collective>" : s->test;
        snprintf(what, sizeof what, "%s", collective && w[0] ? metric : s->metric);
    }
    /* a family's help is the same whichever series comes first, in every file
     * (node_exporter refuses one family with two help texts) */
    snprintf(out->help, sizeof out->help, "fleetprint %s/%s %s, in base units (measured in %s)",
             s->suite, test, what, s->unit);
    put_name(out->family, sizeof out->family, &n, u->suffix);
}

/* Samples (indices into the run, of either form) by key text, entity, value. */
static int cmp_samples(const void *a, const void *b, void *run)
{
    fp_sample_ref x = fp_run_ref(run, *(const size_t *)a), y = fp_run_ref(run, *(const size_t *)b);
    char kx[128], ky[128];
    int c = x.key == y.key ? 0 /* rows: one key, one entry of the run's table */
                           : strcmp(fp_sample_key(x.key, kx, sizeof kx),
                                    fp_sample_key(y.key, ky, sizeof ky));
    if (!c)
        c = memcmp(x.entity, y.entity, sizeof *x.entity);
    if (!c)
        c = (x.value > y.value) - (x.value < y.value);
    return c;
}

static int cmp_series(const void *a, const void *b)
{
    const series *x = a, *y = b;
    int c = strcmp(x->family, y->family);
    return c ? c : strcmp(x->labels, y->labels);
}

static bool same_series(fp_sample_ref a, fp_sample_ref b)
{
    const fp_sample *x = a.key, *y = b.key;
    return (x == y || (x->size == y->size && strcmp(x->metric, y->metric) == 0 &&
                       strcmp(x->test, y->test) == 0 && strcmp(x->suite, y->suite) == 0)) &&
           memcmp(a.entity, b.entity, sizeof *a.entity) == 0;
}

/* One value per (metric key, entity): the summary sample (iter -1) when
 * there is one, else the median over its windows; grouped into families,
 * each family's lines together as the exposition format requires. Sorts the
 * indices of the run's samples, of either form (samples or rows), and keeps
 * pointers to their keys and entities. */
fp_status fp__prom_collect(const fp_run *run, const char *tag, series **series_out,
                           size_t *count)
{
    size_t n = 0, m = 0;
    *series_out = NULL;
    *count = 0;
    size_t *idx = malloc((run->nsamples ? run->nsamples : 1) * sizeof *idx);
    series *out = calloc(run->nsamples ? run->nsamples : 1, sizeof *out);
    fp__prom_uuids u = {0};
    if (!idx || !out || fp__prom_uuids_make(&u, run) != FP_OK) {
        free(idx);
        free(out);
        fp__prom_uuids_free(&u);
        fp_error("Prometheus textfile: out of memory");
        return FP_ENOMEM;
    }
    for (size_t i = 0; i < run->nsamples; i++)
        if (!skipped_unit(fp_run_ref(run, i).key->unit))
            idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, cmp_samples, (void *)run);
    for (size_t i = 0; i < n;) {
        size_t j = i, windows = 0;
        fp_sample_ref first = fp_run_ref(run, idx[i]);
        double v = NAN, summary = NAN;
        bool have_summary = false;
        for (; j < n; j++) {
            fp_sample_ref r = fp_run_ref(run, idx[j]);
            if (!same_series(r, first))
                break;
            if (r.iter < 0) {
                summary = r.value;
                have_summary = true;
            } else {
                windows++;
            }
        }
        if (have_summary) {
            v = summary;
        } else if (windows) { /* sorted by value within the series */
            size_t k = 0, mid = (windows - 1) / 2;
            for (size_t q = i; q < j; q++) {
                fp_sample_ref r = fp_run_ref(run, idx[q]);
                if (r.iter >= 0 && k++ == mid)
                    v = r.value;
            }
        }
        if (isfinite(v)) {
            const fp_sample *s = first.key;
            series *o = &out[m++];
            size_t at;
            name_series(s, tag, o, &at);
            o->base_end = at;
            o->key = s;
            o->entity = first.entity;
            entity_labels(o->labels, sizeof o->labels, &at, &u, first.entity);
            if (s->size) {
                char size[24];
                snprintf(size, sizeof size, "%llu", (unsigned long long)s->size);
                put_label(o->labels, sizeof o->labels, &at, "size", size);
            }
            o->value = v * unit_of(s->unit)->scale;
        }
        i = j;
    }
    qsort(out, m, sizeof *out, cmp_series);
    free(idx);
    fp__prom_uuids_free(&u);
    *series_out = out;
    *count = m;
    return FP_OK;
}

void fp__prom_put_series(FILE *f, const series *s, const series *prev)
{
    if (!prev || strcmp(s->family, prev->family) != 0)
        fprintf(f, "# HELP %s %s.\n# TYPE %s gauge\n", s->family, s->help, s->family);
    fprintf(f, "%s{%s} %.17g\n", s->family, s->labels, s->value);
}

static fp_status values(FILE *f, const fp_run *run, const char *tag)
{
    series *out;
    size_t m;
    fp_status st = fp__prom_collect(run, tag, &out, &m);
    for (size_t i = 0; st == FP_OK && i < m; i++)
        fp__prom_put_series(f, &out[i], i ? &out[i - 1] : NULL);
    free(out);
    return st;
}

/* ---- verdicts -------------------------------------------------------------------- */

static const char verdict_help[] =
    "# HELP fleetprint_verdict The detector's verdict per entity as a state set: 1 on "
    "the entity's state (pass, warn, fail, unknown), 0 on the others.\n"
    "# TYPE fleetprint_verdict gauge\n";

void fp__prom_verdicts(FILE *f, const fp__prom_uuids *u, const fp_verdicts *v, const char *tag,
                       const size_t *which, size_t n)
{
    static const fp_verdict states[] = {FP_PASS, FP_WARN, FP_FAIL, FP_UNKNOWN};
    if (!which)
        n = fp_verdicts_count(v);
    if (!which || n)
        fputs(verdict_help, f);
    for (size_t j = 0; j < n; j++) {
        const fp_entity_verdict *ev = fp_verdicts_get(v, which ? which[j] : j);
        char labels[640];
        size_t at = 0;
        labels[0] = 0;
        put_label(labels, sizeof labels, &at, "run_tag", tag);
        put_label(labels, sizeof labels, &at, "kind", fp_entity_kind_name(ev->entity->kind));
        entity_labels(labels, sizeof labels, &at, u, ev->entity);
        for (size_t k = 0; k < sizeof states / sizeof states[0]; k++)
            fprintf(f, "fleetprint_verdict{%s,state=\"%s\"} %d\n", labels,
                    fp_verdict_name(states[k]), ev->verdict == states[k]);
    }
}

/* Configuration drift as info series: one per differing field, 1, its
 * labels saying what differs (node and device as the verdicts label them). */
void fp__prom_drift(FILE *f, const fp_verdicts *v, const char *tag, fp__prom_holds holds,
                    const void *arg)
{
    size_t n = fp_verdicts_drift_count(v);
    bool header = false;
    for (size_t i = 0; i < n; i++) {
        const fp_config_drift *d = fp_verdicts_drift(v, i);
        fp_entity e = d->dev >= 0 ? fp_entity_gpu(d->node, d->dev) : fp_entity_node(d->node);
        if (holds && !holds(&e, arg))
            continue;
        if (!header)
            fputs("# HELP fleetprint_config_drift_info A configuration field that differs from "
                  "its SKU's majority, its own max, ECC on or its previous run (labels: field, "
                  "value, expected, against, verdict); always 1.\n"
                  "# TYPE fleetprint_config_drift_info gauge\n",
                  f);
        header = true;
        char labels[1024], num[16];
        size_t at = 0;
        labels[0] = 0;
        put_label(labels, sizeof labels, &at, "run_tag", tag);
        put_label(labels, sizeof labels, &at, "Hostname", d->node);
        if (d->dev >= 0) {
            snprintf(num, sizeof num, "%d", d->dev);
            put_label(labels, sizeof labels, &at, "gpu", num);
        }
        put_label(labels, sizeof labels, &at, "field", d->field);
        put_label(labels, sizeof labels, &at, "value", d->value);
        put_label(labels, sizeof labels, &at, "expected", d->expected);
        put_label(labels, sizeof labels, &at, "against", d->against);
        put_label(labels, sizeof labels, &at, "verdict",
                  d->verdict == FP_PASS ? "info" : fp_verdict_name(d->verdict));
        fprintf(f, "fleetprint_config_drift_info{%s} 1\n", labels);
    }
}

/* Repeat offenders, when the run was judged with history:
 * fleetprint_node_repeat_offender{run_tag, Hostname} 0 or 1 for every judged
 * node (1: it, one of its devices or an intra-node link of it failed or
 * warned in k of its last n judged runs), and fleetprint_repeat_offender with
 * the entity's labels, 1 for each offending entity. */
void fp__prom_offenders(FILE *f, const fp__prom_uuids *u, const fp_verdicts *v, const char *tag,
                        fp__prom_holds holds, const void *arg, const size_t *which,
                        size_t nwhich)
{
    if (!fp_verdicts_history(v, NULL, NULL, NULL))
        return;
    bool header = false;
    size_t nodes = fp_verdicts_node_count(v);
    for (size_t k = 0; k < (which ? nwhich : nodes); k++) {
        size_t i = which ? which[k] : k;
        const fp_entity *e = fp_verdicts_get(v, i)->entity;
        if (i >= nodes || (!which && holds && !holds(e, arg)))
            continue;
        if (!header)
            fputs("# HELP fleetprint_node_repeat_offender 1 when the node, one of its devices or "
                  "an intra-node link failed or warned in k of its last n judged runs (detect's "
                  "history; docs/detect.md), else 0.\n"
                  "# TYPE fleetprint_node_repeat_offender gauge\n",
                  f);
        header = true;
        const char *node = e->node;
        char labels[256];
        size_t at = 0;
        put_label(labels, sizeof labels, &at, "run_tag", tag);
        put_label(labels, sizeof labels, &at, "Hostname", node);
        fprintf(f, "fleetprint_node_repeat_offender{%s} %d\n", labels,
                fp_verdicts_node_offends(v, node));
    }
    header = false;
    for (size_t i = 0; i < fp_verdicts_offender_count(v); i++) {
        const fp_entity *e = fp_verdicts_get(v, fp_verdicts_offender(v, i)->entity)->entity;
        char labels[640];
        size_t at = 0;
        if (holds && !holds(e, arg))
            continue;
        if (!header)
            fputs("# HELP fleetprint_repeat_offender 1 for each entity (node, device, link) "
                  "that failed or warned in k of its last n judged runs.\n"
                  "# TYPE fleetprint_repeat_offender gauge\n",
                  f);
        header = true;
        put_label(labels, sizeof labels, &at, "run_tag", tag);
        put_label(labels, sizeof labels, &at, "kind", fp_entity_kind_name(e->kind));
        entity_labels(labels, sizeof labels, &at, u, e);
        fprintf(f, "fleetprint_repeat_offender{%s} 1\n", labels);
    }
}

/* ---- the run as a whole ------------------------------------------------------------ */

/* The value of fleetprint_last_success_timestamp_seconds{run_tag="tag"} in
 * the textfile at path (the one this run replaces), or 0 when it has none. */
static double last_success(const char *path, const char *labels)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[1024], want[768];
    snprintf(want, sizeof want, "fleetprint_last_success_timestamp_seconds{%s} ", labels);
    double t = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, want, strlen(want)) == 0)
            t = strtod(line + strlen(want), NULL);
    fclose(f);
    return isfinite(t) && t > 0 ? t : 0;
}

/* -1 unknown, 0 pass, 1 warn, 2 fail: unknown sorts below pass, so an alert
 * on >= 1 or >= 2 never fires on a run that could not be judged. */
static int verdict_value(fp_verdict v)
{
    return v == FP_PASS ? 0 : v == FP_WARN ? 1 : v == FP_FAIL ? 2 : -1;
}

/* The confirm pass (docs/confirm.md): whether it ran, what it measured again,
 * what reproduced and what it cost; labels: the run's. */
static void confirm_series(FILE *f, const fp_confirm_info *c, const char *labels)
{
    size_t count[FP_CONFIRM_FOUND + 1] = {0};
    for (size_t i = 0; i < c->nitems; i++)
        count[c->items[i].outcome]++;
    fprintf(f,
            "# HELP fleetprint_confirm_ran Whether the run's failures were measured again "
            "before acting (1), or not (0: nothing failed, --confirm off, no budget).\n"
            "# TYPE fleetprint_confirm_ran gauge\n"
            "fleetprint_confirm_ran{%s} %d\n"
            "# HELP fleetprint_confirm_retested Failing entities the re-test measured again.\n"
            "# TYPE fleetprint_confirm_retested gauge\n"
            "fleetprint_confirm_retested{%s} %zu\n"
            "# HELP fleetprint_confirm_reproduced Failing entities that failed again on re-test "
            "(acted on).\n"
            "# TYPE fleetprint_confirm_reproduced gauge\n"
            "fleetprint_confirm_reproduced{%s} %zu\n"
            "# HELP fleetprint_confirm_not_reproduced Failing entities that did not fail again "
            "on re-test (they warn, not acted on).\n"
            "# TYPE fleetprint_confirm_not_reproduced gauge\n"
            "fleetprint_confirm_not_reproduced{%s} %zu\n"
            "# HELP fleetprint_confirm_found Nodes that passed but were slow with nodes that "
            "passed on re-test (an end of a failing link: the node's fault).\n"
            "# TYPE fleetprint_confirm_found gauge\n"
            "fleetprint_confirm_found{%s} %zu\n"
            "# HELP fleetprint_confirm_seconds How long the re-test took.\n"
            "# TYPE fleetprint_confirm_seconds gauge\n"
            "fleetprint_confirm_seconds{%s} %.3f\n"
            "# HELP fleetprint_confirm_first_pass_seconds How long the first pass took, to "
            "which the re-test's budget is relative.\n"
            "# TYPE fleetprint_confirm_first_pass_seconds gauge\n"
            "fleetprint_confirm_first_pass_seconds{%s} %.3f\n",
            labels, c->ran, labels,
            count[FP_CONFIRM_REPRODUCED] + count[FP_CONFIRM_NOT_REPRODUCED], labels,
            count[FP_CONFIRM_REPRODUCED], labels, count[FP_CONFIRM_NOT_REPRODUCED], labels,
            count[FP_CONFIRM_FOUND], labels, c->ran ? c->seconds : 0, labels, c->first_seconds);
}

void fp__prom_run_series(FILE *f, const fp_run *run, const fp_verdicts *v, const char *tag,
                         const char *path)
{
    char labels[640];
    size_t at = 0;
    labels[0] = 0;
    put_label(labels, sizeof labels, &at, "run_tag", tag);
    /* without verdicts, a run that completed is a pass */
    fp_verdict overall = v ? fp_verdicts_overall(v)
                           : strcmp(run->status, "complete") == 0 ? FP_PASS : FP_FAIL;
    double end = run->time + (run->duration > 0 ? run->duration : 0);
    double success = overall == FP_PASS || overall == FP_WARN ? end : last_success(path, labels);
    fprintf(f,
            "# HELP fleetprint_run_verdict The run's verdict: -1 unknown (nothing could be "
            "judged), 0 pass, 1 warn, 2 fail.\n"
            "# TYPE fleetprint_run_verdict gauge\n"
            "fleetprint_run_verdict{%s} %d\n"
            "# HELP fleetprint_run_duration_seconds How long the run took.\n"
            "# TYPE fleetprint_run_duration_seconds gauge\n"
            "fleetprint_run_duration_seconds{%s} %.3f\n"
            "# HELP fleetprint_last_success_timestamp_seconds When the last run with this "
            "run_tag that passed or warned ended (Unix time; 0: none yet).\n"
            "# TYPE fleetprint_last_success_timestamp_seconds gauge\n"
            "fleetprint_last_success_timestamp_seconds{%s} %.3f\n",
            labels, verdict_value(overall), labels, run->duration > 0 ? run->duration : 0,
            labels, success);
    if (v)
        fprintf(f,
                "# HELP fleetprint_run_blind_spots Metrics whose peers spread too widely on this "
                "run for a fault at the rules' fail threshold to fail (detect's blind spots).\n"
                "# TYPE fleetprint_run_blind_spots gauge\n"
                "fleetprint_run_blind_spots{%s} %zu\n",
                labels, fp_verdicts_blind_count(v));
    if (v)
        fprintf(f,
                "# HELP fleetprint_breaker_tripped 1 when more of the run's nodes failed than "
                "--max-drain allows, so nothing was drained (suspect the baselines, the test "
                "or a fleet-wide change), else 0.\n"
                "# TYPE fleetprint_breaker_tripped gauge\n"
                "fleetprint_breaker_tripped{%s} %d\n"
                "# HELP fleetprint_run_failing_nodes Nodes of the run whose verdict is fail.\n"
                "# TYPE fleetprint_run_failing_nodes gauge\n"
                "fleetprint_run_failing_nodes{%s} %zu\n",
                labels, fp_verdicts_breaker(v)->tripped, labels, fp_verdicts_breaker(v)->failing);
    if (v && fp_verdicts_confirm_info(v))
        confirm_series(f, fp_verdicts_confirm_info(v), labels);
    put_label(labels, sizeof labels, &at, "run", run->id);
    put_label(labels, sizeof labels, &at, "status", run->status);
    fprintf(f, "# HELP fleetprint_run_timestamp_seconds When the run started (Unix time).\n"
               "# TYPE fleetprint_run_timestamp_seconds gauge\n"
               "fleetprint_run_timestamp_seconds{%s} %.3f\n",
            labels, run->time);
}

fp_status fp_report_prometheus(const fp_run *run, const fp_verdicts *v, const char *default_tag,
                               const char *path)
{
    const char *tag = run->tag[0] ? run->tag : default_tag;
    fp_status st;
    FILE *f = fp_outfile_open(path, &st);
    if (!f)
        return st;
    fp__prom_uuids u = {0};
    fp__prom_run_series(f, run, v, tag, path);
    st = values(f, run, tag);
    if (st == FP_OK && v && (st = fp__prom_uuids_make(&u, run)) == FP_OK) {
        fp__prom_verdicts(f, &u, v, tag, NULL, 0);
        fp__prom_drift(f, v, tag, NULL, NULL);
        fp__prom_offenders(f, &u, v, tag, NULL, NULL, NULL, 0);
    }
    fp__prom_uuids_free(&u);
    return fp_status_worst(st, fp_outfile_close(f, path, st == FP_OK));
}

/* ---- for the per-node folder (prometheus_nodes.c) ----------------------------------- */

void fp__prom_label(char *buf, size_t len, size_t *at, const char *name, const char *value)
{
    put_label(buf, len, at, name, value);
}

