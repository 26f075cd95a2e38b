/* Reference evidence: a device's run summary against the reference
 * catalog's figure for its model (references.c), for the day a SKU has no
 * fleet baseline yet, and as a floor that a stale baseline cannot lower. The
 * rules' "reference" section says how far below the figure warns and fails.
 * A phase of the detector, run by the driver (detect.c) before demarcation. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect_internal.h"
#include "fleetprint/stats.h"
#include "fleetprint/store.h"

/* ---- the rules' "reference" section ----------------------------------------------------- */

fp_status fp__rules_parse_reference(const json_t *root, const char *origin, fp_rules *r,
                                    char *err, size_t errlen)
{
    r->reference_warn = 0.15;
    r->reference_fail = 0.3;
    const json_t *p = json_object_get(root, "reference");
    if (!p)
        return FP_OK;
    const char *key;
    const json_t *v;
    bool ok = json_is_object(p);
    json_object_foreach((json_t *)p, key, v) {
        double *to = strcmp(key, "warn") == 0 ? &r->reference_warn
                     : strcmp(key, "fail") == 0 ? &r->reference_fail
                                                : NULL;
        if (to && json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) <= 1)
            *to = json_number_value(v);
        else if (strcmp(key, "comment") != 0)
            ok = false;
    }
    if (!ok || r->reference_warn > r->reference_fail) {
        snprintf(err, errlen, "%s: reference: expected {\"warn\": W, \"fail\": F}, fractions "
                 "below the catalog's figure with 0 <= W <= F <= 1", origin);
        return FP_EINPUT;
    }
    return FP_OK;
}

/* ---- judging ------------------------------------------------------------------------------ */

/* The value a series is judged by: its summary (iteration -1: the best of the
 * run) where it has one, else the median of its windows. NaN: none. */
static double series_value(const eng *g, const series *se, double *buf)
{
    const key_info *k = &g->keys[se->key];
    if (k->has_summary && k->use_summary && !isnan(g->vals[se->off]))
        return g->vals[se->off];
    size_t c = 0;
    for (int w = 0; w < k->windows; w++)
        if (!isnan(g->vals[se->off + (size_t)w]))
            buf[c++] = g->vals[se->off + (size_t)w];
    return c ? fp_median_select(buf, c) : NAN;
}

/* Whether the SKU's fleet baseline of key is thick enough to judge by (then
 * the reference is only a floor: it fails, never warns). */
static bool fleet_judges(const eng *g, const key_info *k, int32_t sku)
{
    const fp_baseline *b = g->base && sku >= 0 ? fp_baselines_sku(g->base, k->text, g->sku[sku])
                                               : NULL;
    return b && b->count >= (uint32_t)g->rules->base_min_runs;
}

/* What the catalog and the fleet's baselines say of one key on one SKU:
 * looked up once (each takes string matches), not once a series. */
typedef struct key_ref {
    bool looked, found, floor_only;
    double expected;
    const char *model, *source;
} key_ref;

fp_status fp__det_judge_reference(eng *g, double *buf)
{
    const fp_rules *r = g->rules;
    fp_status st = FP_OK;
    if (!g->refs)
        return FP_OK;
    key_ref *memo = calloc(g->nkeys * g->nsku + 1, sizeof *memo);
    if (!memo)
        return FP_ENOMEM;
    for (size_t s = 0; s < g->nser && st == FP_OK; s++) {
        const series *se = &g->ser[s];
        const key_info *k = &g->keys[se->key];
        const ent_info *ei = &g->ents[se->ent];
        if (!k->cls || k->cls->ignore || k->cls->late || k->cls->absolute || k->vrule ||
            ei->sku < 0)
            continue;
        key_ref *kr = &memo[se->key * g->nsku + (size_t)ei->sku];
        if (!kr->looked) {
            kr->looked = true;
            kr->found = fp_references_find(g->refs, g->sku[ei->sku], k->text, &kr->expected,
                                           &kr->model, &kr->source);
            kr->floor_only = kr->found && fleet_judges(g, k, ei->sku);
        }
        if (!kr->found)
            continue;
        double expected = kr->expected, v = series_value(g, se, buf);
        if (isnan(v))
            continue;
        double loss = k->rep->better == FP_BETTER_HIGHER ? 1 - v / expected : v / expected - 1;
        bool floor_only = kr->floor_only;
        /* on shared cores a healthy device's summary can read far off (the
         * other ranks held its core): the rules' contended thresholds, as
         * peer evidence takes them */
        double warn = r->reference_warn, fail = r->reference_fail;
        if (g->contended) {
            warn = warn > r->contended_warn ? warn : r->contended_warn;
            fail = fail > r->contended_fail ? fail : r->contended_fail;
        }
        fp_verdict verdict = loss >= fail                 ? FP_FAIL
                             : loss >= warn && !floor_only ? FP_WARN
                                                           : FP_PASS;
        fp__det_set_ent_verdict(g, se->ent, verdict);
        if (verdict == FP_PASS && !ei->explain)
            continue;
        fp_reason *rs;
        st = fp__det_series_reason(g, se, FP_EV_REFERENCE, verdict, "reference", &rs);
        if (st != FP_OK)
            break;
        rs->value = v;
        rs->expected = expected;
        rs->band = NAN;
        rs->deviation = loss;
        rs->z = NAN;
        rs->windows_bad = verdict != FP_PASS;
        rs->windows = 1;
        snprintf(rs->note, sizeof rs->note, "reference %.30s, %.69s", kr->model, kr->source);
    }
    free(memo);
    return st;
}

/* ---- a catalog entry from a store's baselines ------------------------------------------- */

fp_status fp_references_from_baselines(const fp_baselines *b, const fp_rules *rules,
                                       const char *sku, const char *origin, char **text,
                                       char *err, size_t errlen)
{
    *text = NULL;
    json_t *figs = json_array();
    char date[16] = "";
    time_t built = (time_t)fp_baselines_built(b);
    struct tm tm;
    gmtime_r(&built, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
    const char *key, *name;
    const fp_baseline *row;
    for (size_t i = 0; (row = fp_baselines_sku_row(b, i, &key, &name)); i++) {
        if (strcmp(name, sku) != 0)
            continue;
        const fp_rule_class *c = fp__rules_value(rules, key) ? NULL : fp__rules_class(rules, key);
        double value = row->summary > 0 ? row->summary : row->median;
        if (!c || c->ignore || c->late || c->absolute || c->noisy || !(value > 0))
            continue;
        char bare[128];
        snprintf(bare, sizeof bare, "%s", key);
        char *at = strchr(bare, '@');
        unsigned long long size = at ? strtoull(at + 1, NULL, 10) : 0;
        if (at)
            *at = 0;
        json_t *f = json_pack("{s:s, s:I, s:f, s:{s:s, s:s, s:s, s:I}}", "metric", bare,
                              "min_size", (json_int_t)size, "value", value, "source", "kind",
                              "baseline", "store", origin, "date", date, "runs",
                              (json_int_t)row->nruns);
        json_array_append_new(figs, f);
    }
    fp_status st = FP_OK;
    if (json_array_size(figs) == 0) {
        size_t n = 0;
        char have[256] = "";
        for (size_t i = 0; (row = fp_baselines_sku_row(b, i, &key, &name)) && n < 4; i++)
            if (!strstr(have, name)) {
                size_t l = strlen(have);
                snprintf(have + l, sizeof have - l, "%s'%s'", n++ ? ", " : "", name);
            }
        snprintf(err, errlen, "%s: no baselines of SKU '%s' to export (SKUs with baselines: %s; "
                 "fleetprint baseline build)", origin, sku, n ? have : "none");
        st = FP_EINPUT;
    } else {
        json_t *root = json_pack("{s:i, s:s, s:[{s:s, s:[s], s:o}]}", "fleetprint_references", 1,
                                 "comment", "exported by fleetprint baseline export-reference",
                                 "models", "name", sku, "match", sku, "figures", figs);
        figs = NULL;
        *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
        json_decref(root);
        if (!*text) {
            snprintf(err, errlen, "out of memory writing the catalog of %s", sku);
            st = FP_ENOMEM;
        }
    }
    json_decref(figs);
    return st;
}
