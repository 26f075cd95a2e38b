/* Configuration drift: each node's and device's configuration record (the
 * run's fp_cfg_items) against the majority of its SKU in the run, against
 * its own limits (ECC off, a PCIe link below its max) and against its own
 * record in the store's previous run. The "config" section of the rules says
 * which fields fail, warn or only inform. A phase of the detector, run by
 * the driver (detect.c) after demarcation: it raises node verdicts. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect_internal.h"
#include "fleetprint/config.h"
#include "fleetprint/mem.h"

/* ---- the rules' "config" section ---------------------------------------------------- */

static const char *const list_names[3] = {"fail", "warn", "info"};

static fp_status parse_section(const json_t *c, const char *origin, fp_config_rules *out,
                               char *err, size_t errlen)
{
    if (!json_is_object(c)) {
        snprintf(err, errlen, "%s: config: expected {\"fail\": [...], \"warn\": [...], "
                 "\"info\": [...]} of configuration field patterns", origin);
        return FP_EINPUT;
    }
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)c, key, val) {
        int k = -1;
        for (int i = 0; i < 3; i++)
            k = strcmp(key, list_names[i]) == 0 ? i : k;
        if (k < 0 && strcmp(key, "comment") != 0) {
            snprintf(err, errlen, "%s: config.%s: unknown field (fail, warn, info; "
                     "docs/config.md)", origin, key);
            return FP_EINPUT;
        }
    }
    memset(out, 0, sizeof *out);
    for (int k = 0; k < 3; k++) {
        const json_t *l = json_object_get(c, list_names[k]);
        if (!l)
            continue;
        if (!json_is_array(l) || json_array_size(l) > FP_CFG_PATTERNS) {
            snprintf(err, errlen, "%s: config.%s: expected a list of at most %d field patterns",
                     origin, list_names[k], FP_CFG_PATTERNS);
            return FP_EINPUT;
        }
        for (size_t i = 0; i < json_array_size(l); i++) {
            const json_t *p = json_array_get(l, i);
            if (!json_is_string(p) || !json_string_length(p) ||
                json_string_length(p) >= sizeof out->item[k][0]) {
                snprintf(err, errlen, "%s: config.%s[%zu]: expected a field name or glob "
                         "pattern (1 to 31 bytes)", origin, list_names[k], i);
                return FP_EINPUT;
            }
            snprintf(out->item[k][out->n[k]++], sizeof out->item[k][0], "%s",
                     json_string_value(p));
        }
    }
    return FP_OK;
}

fp_status fp__rules_parse_config(const json_t *root, const char *origin, fp_rules *r, char *err,
                                 size_t errlen)
{
    const json_t *c = json_object_get(root, "config");
    if (c)
        return parse_section(c, origin, &r->config, err, errlen);
    /* a rules file without the section: the built-in one */
    json_t *def = json_loads(fp_rules_default_text(), 0, NULL);
    fp_status st = def ? parse_section(json_object_get(def, "config"), "default rules", &r->config,
                                       err, errlen)
                       : FP_ENOMEM;
    json_decref(def);
    return st;
}

/* The verdict the rules give field: FP_FAIL, FP_WARN, FP_PASS (informational)
 * or FP_UNKNOWN (not judged). */
static fp_verdict field_verdict(const fp_config_rules *c, const char *field)
{
    static const fp_verdict v[3] = {FP_FAIL, FP_WARN, FP_PASS};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < c->n[k]; i++)
            if (fp__glob(c->item[k][i], field))
                return v[k];
    return FP_UNKNOWN;
}

/* ---- judging -------------------------------------------------------------------------- */

/* A value as a number (its leading figure: "400 Gb/sec (4X NDR)" is 400). */
static bool number(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end != s && isfinite(*out);
}

/* "350 W" or "Enabled": a value with its field's unit. */
static const char *with_unit(const char *field, const char *value, char *buf, size_t len)
{
    const fp_cfg_field *f = fp_cfg_field_find(field);
    double x;
    if (f && f->unit[0] && number(value, &x) && !strchr(value, ' '))
        snprintf(buf, len, "%.40s %s", value, f->unit);
    else
        snprintf(buf, len, "%.48s", value);
    return buf;
}

/* Record one finding: a reason of its node (verdict v; FP_PASS informs) and
 * an entry of the drift table. */
static fp_status finding(eng *g, const fp_cfg_item *it, fp_verdict v, const char *against,
                         const char *expected, int count, int total, double since)
{
    fp_status st = FP_OK;
    fp_config_drift *t = fp_grow(g->drift, &g->drift_cap, g->ndrift + 1, sizeof *t, 16);
    FP_CHECK_ALLOC(t);
    g->drift = t;
    fp_config_drift *d = &g->drift[g->ndrift++];
    memset(d, 0, sizeof *d);
    snprintf(d->node, sizeof d->node, "%s", g->node[it->node]);
    d->dev = it->dev;
    snprintf(d->field, sizeof d->field, "%s", it->field);
    snprintf(d->value, sizeof d->value, "%s", it->value);
    snprintf(d->expected, sizeof d->expected, "%s", expected);
    snprintf(d->against, sizeof d->against, "%s", against);
    d->count = count;
    d->total = total;
    d->since = since;
    d->verdict = v;

    fp_reason *r;
    FP_CHECK(fp__det_add_reason(g, (uint32_t)it->node, &r));
    snprintf(r->key, sizeof r->key, "%s", it->field);
    snprintf(r->rule, sizeof r->rule, "config");
    r->evidence = FP_EV_CONFIG;
    r->verdict = v;
    r->value = r->expected = r->deviation = r->z = r->band = NAN;
    char val[64], exp_[64], dev[24] = "", day[16] = "", note[256];
    with_unit(it->field, it->value, val, sizeof val);
    with_unit(it->field, expected, exp_, sizeof exp_);
    if (it->dev >= 0)
        snprintf(dev, sizeof dev, " on gpu %d", it->dev);
    if (strcmp(against, "fleet") == 0)
        snprintf(note, sizeof note, "%s%s (fleet: %s on %d of %d %s)", val, dev, exp_, count,
                 total, it->dev >= 0 ? "devices" : "nodes");
    else if (strcmp(against, "max") == 0)
        snprintf(note, sizeof note, "%s%s (below its max %s)", val, dev, exp_);
    else if (strcmp(against, "ecc") == 0)
        snprintf(note, sizeof note, "%s%s (ECC off)", val, dev);
    else {
        time_t tt = (time_t)since;
        struct tm tm;
        gmtime_r(&tt, &tm);
        strftime(day, sizeof day, "%Y-%m-%d", &tm);
        snprintf(note, sizeof note, "%s%s (changed since %s: was %s)", val, dev, day, exp_);
    }
    snprintf(r->note, sizeof r->note, "%.*s", (int)sizeof r->note - 1, note);
    g->node_v[it->node] = fp__det_worse(g->node_v[it->node], v);
cleanup:
    return st;
}

/* Sorting items by index: by (node, dev, field) to look one up, by (scope,
 * SKU, field, value) to count values. */
typedef struct sort_ctx {
    const fp_cfg_item *items;
    const int32_t *sku; /* per item: its node's SKU */
} sort_ctx;

static int cmp_place(const void *a, const void *b, void *arg)
{
    const fp_cfg_item *it = ((const sort_ctx *)arg)->items;
    const fp_cfg_item *x = &it[*(const uint32_t *)a], *y = &it[*(const uint32_t *)b];
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return strcmp(x->field, y->field);
}

static int cmp_value(const void *a, const void *b, void *arg)
{
    const sort_ctx *c = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const fp_cfg_item *x = &c->items[i], *y = &c->items[j];
    if ((x->dev < 0) != (y->dev < 0))
        return x->dev < 0 ? -1 : 1;
    if (c->sku[i] != c->sku[j])
        return c->sku[i] < c->sku[j] ? -1 : 1;
    int f = strcmp(x->field, y->field);
    return f ? f : strcmp(x->value, y->value);
}

/* Items sorted by place, for lookups. */
typedef struct place_index {
    const fp_run *run;
    uint32_t *order;
} place_index;

static fp_status place_index_make(const fp_run *run, place_index *out)
{
    out->run = run;
    out->order = malloc((run->nconfig + 1) * sizeof *out->order);
    if (!out->order)
        return FP_ENOMEM;
    for (size_t i = 0; i < run->nconfig; i++)
        out->order[i] = (uint32_t)i;
    sort_ctx c = {run->config, NULL};
    qsort_r(out->order, run->nconfig, sizeof *out->order, cmp_place, &c);
    return FP_OK;
}

/* The item of field for (node, dev), NULL when absent. */
static const fp_cfg_item *place_find(const place_index *p, int node, int dev, const char *field)
{
    size_t lo = 0, hi = p->run->nconfig;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const fp_cfg_item *m = &p->run->config[p->order[mid]];
        int c = m->node != node ? (m->node < node ? -1 : 1)
                : m->dev != dev ? (m->dev < dev ? -1 : 1)
                                : strcmp(m->field, field);
        if (c == 0)
            return m;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* What judging an item needs: the majority of its group (NULL: none), the
 * lookups in this run and the previous one, and the previous run's index of
 * each node. */
typedef struct judge_ctx {
    const char **maj;
    int *count, *total;
    place_index here, before;
    int32_t *prev_node;
} judge_ctx;

/* Judge one item: its own limits, the SKU's majority, its previous record. */
static fp_status judge_item(eng *g, const judge_ctx *j, size_t i, fp_verdict v)
{
    const fp_cfg_item *it = &g->run->config[i];
    const fp_cfg_field *f = fp_cfg_field_find(it->field);
    double x, m;
    fp_status st = FP_OK;
    if (strcmp(it->field, "ecc_mode") == 0 && strcmp(it->value, "Disabled") == 0)
        FP_CHECK(finding(g, it, v, "ecc", "Enabled", 0, 0, 0));
    if (strcmp(it->field, "pcie_gen") == 0 || strcmp(it->field, "pcie_width") == 0) {
        char maxname[40];
        snprintf(maxname, sizeof maxname, "%s_max", it->field);
        const fp_cfg_item *mx = place_find(&j->here, it->node, it->dev, maxname);
        if (mx && number(it->value, &x) && number(mx->value, &m) && x < m)
            FP_CHECK(finding(g, it, v, "max", mx->value, 0, 0, 0));
    }
    const char *maj = j->maj[i];
    if (maj && strcmp(maj, it->value) != 0) {
        /* a level (a power limit, a clock, a link) above its peers' is no fault */
        bool above = f && f->floor && number(it->value, &x) && number(maj, &m) && x > m;
        FP_CHECK(finding(g, it, above ? FP_PASS : v, "fleet", maj, j->count[i], j->total[i], 0));
    }
    int32_t pn = j->prev_node ? j->prev_node[it->node] : -1;
    const fp_cfg_item *was = pn >= 0 ? place_find(&j->before, pn, it->dev, it->field) : NULL;
    /* a change alone warns at most: the majority and the limits fail */
    if (was && strcmp(was->value, it->value) != 0)
        FP_CHECK(finding(g, it, v == FP_FAIL ? FP_WARN : v, "previous", was->value, 0, 0,
                         g->previous->time));
cleanup:
    return st;
}

/* For every item, the majority of its group (scope x SKU x field): the most
 * common value, held by more than half of the group's records, in a group
 * of at least min_peers records; NULL where there is none. O(n log n). */
static fp_status majorities(eng *g, judge_ctx *j)
{
    const fp_run *run = g->run;
    size_t n = run->nconfig;
    uint32_t *order = malloc((n + 1) * sizeof *order);
    int32_t *sku = malloc((n + 1) * sizeof *sku);
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(order);
    FP_CHECK_ALLOC(sku);
    for (size_t i = 0; i < n; i++) {
        order[i] = (uint32_t)i;
        int32_t nd = run->config[i].node;
        sku[i] = nd >= 0 && (size_t)nd < g->nnodes ? g->node_sku[nd] : -2;
    }
    sort_ctx c = {run->config, sku};
    qsort_r(order, n, sizeof *order, cmp_value, &c);
    for (size_t lo = 0, hi; lo < n; lo = hi) {
        const fp_cfg_item *a = &run->config[order[lo]];
        hi = lo + 1;
        while (hi < n && (run->config[order[hi]].dev < 0) == (a->dev < 0) &&
               sku[order[hi]] == sku[order[lo]] && strcmp(run->config[order[hi]].field, a->field) == 0)
            hi++;
        /* the group [lo, hi): its values in runs */
        size_t best = lo, top = 0;
        for (size_t r = lo, e; r < hi; r = e) {
            e = r + 1;
            while (e < hi && strcmp(run->config[order[e]].value, run->config[order[r]].value) == 0)
                e++;
            if (e - r > top) {
                top = e - r;
                best = r;
            }
        }
        size_t total = hi - lo;
        bool has = total >= (size_t)g->rules->min_peers && 2 * top > total;
        for (size_t k = lo; k < hi; k++) {
            j->maj[order[k]] = has ? run->config[order[best]].value : NULL;
            j->count[order[k]] = (int)top;
            j->total[order[k]] = (int)total;
        }
    }
cleanup:
    free(order);
    free(sku);
    return st;
}

static int cmp_name(const void *a, const void *b, void *arg)
{
    const fp_run *r = arg;
    return strcmp(r->nodes[*(const int32_t *)a], r->nodes[*(const int32_t *)b]);
}

/* The previous run's index of every node of g (-1: not in it). */
static fp_status previous_nodes(const eng *g, int32_t *out)
{
    const fp_run *p = g->previous;
    int32_t *byname = malloc(((size_t)p->nnodes + 1) * sizeof *byname);
    if (!byname)
        return FP_ENOMEM;
    for (int i = 0; i < p->nnodes; i++)
        byname[i] = i;
    qsort_r(byname, (size_t)p->nnodes, sizeof *byname, cmp_name, (void *)p);
    for (size_t n = 0; n < g->nnodes; n++) {
        out[n] = -1;
        size_t lo = 0, hi = (size_t)p->nnodes;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            int c = strcmp(p->nodes[byname[mid]], g->node[n]);
            if (c == 0) {
                out[n] = byname[mid];
                break;
            }
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    free(byname);
    return FP_OK;
}

fp_status fp__det_judge_config(eng *g)
{
    const fp_run *run = g->run;
    size_t n = run->nconfig;
    judge_ctx j;
    memset(&j, 0, sizeof j);
    fp_status st = FP_OK;
    if (!n)
        return FP_OK;
    j.maj = malloc(n * sizeof *j.maj);
    j.count = malloc(n * sizeof *j.count);
    j.total = malloc(n * sizeof *j.total);
    if (!j.maj || !j.count || !j.total)
        FP_FAIL(FP_ENOMEM, "out of memory judging the %zu configuration fields of run %s", n,
                run->id);
    FP_CHECK(majorities(g, &j));
    FP_CHECK(place_index_make(run, &j.here));
    if (g->previous && g->previous->nconfig) {
        j.prev_node = malloc((g->nnodes + 1) * sizeof *j.prev_node);
        FP_CHECK_ALLOC(j.prev_node);
        FP_CHECK(previous_nodes(g, j.prev_node));
        FP_CHECK(place_index_make(g->previous, &j.before));
    }
    for (size_t i = 0; i < n && st == FP_OK; i++) {
        const fp_cfg_item *it = &run->config[i];
        if (it->node < 0 || it->node >= run->nnodes)
            continue;
        fp_verdict v = field_verdict(&g->rules->config, it->field);
        if (v != FP_UNKNOWN)
            st = judge_item(g, &j, i, v);
    }
cleanup:
    free(j.maj);
    free(j.count);
    free(j.total);
    free(j.here.order);
    free(j.before.order);
    free(j.prev_node);
    return st;
}
