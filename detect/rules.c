/* Detector rules: the JSON rules file, its built-in defaults, and matching
 * metric keys to rule classes. The defaults are JSON text parsed by the same
 * code as a user's file, so the documented file and the behaviour agree. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"

/* ---- the defaults ------------------------------------------------------------------ */

static const char default_rules[] =
    "{\n"
    "  \"fleetprint_rules\": 1,\n"
    "  \"min_peers\": 3,\n"
    "  \"persistence\": {\"min_windows\": 2, \"fraction\": 0.5, \"strong_factor\": 2,\n"
    "                  \"strong_fraction\": 0.2, \"cost_fraction\": 0.6},\n"
    "  \"scale_floor\": 0.01,\n"
    "  \"node_links\": {\"min_links\": 2, \"fraction\": 0.5},\n"
    "  \"node_gpus\": {\"fraction\": 0.5},\n"
    "  \"missing\": \"fail\",\n"
    "  \"contended\": {\"warn\": 0.3, \"fail\": 0.6},\n"
    "  \"baselines\": {\"min_runs\": 3, \"prior_runs\": 3, \"noisy\": 0.03,\n"
    "                \"spread_prior\": 50},\n"
    "  \"breaker\": {\"max_drain\": 0.05, \"max_nodes\": 2},\n"
    "  \"config\": {\"fail\": [\"ecc_mode\", \"pcie_gen\", \"pcie_width\", \"power_limit\"],\n"
    "             \"warn\": [\"driver_version\", \"cuda_runtime\", \"cuda_driver\", \"nccl_version\",\n"
    "                      \"cublas_version\", \"vbios\", \"gpu_name\", \"mig_mode\",\n"
    "                      \"persistence_mode\", \"compute_mode\", \"kernel\", \"mpi_version\",\n"
    "                      \"ib_rate.*\"],\n"
    "             \"info\": [\"*\"]},\n"
    "  \"reference\": {\"warn\": 0.15, \"fail\": 0.3},\n"
    "  \"history\": {\"k\": 3, \"n\": 5, \"runs\": 100, \"tag\": \"\"},\n"
    "  \"classes\": [\n"
    "    {\"name\": \"late-rank\", \"match\": [\"collectives.*.late_rank*\"],\n"
    "     \"mode\": \"late\", \"warn\": 0.3, \"fail\": 0.5},\n"
    "    {\"name\": \"not-judged\", \"mode\": \"ignore\",\n"
    "     \"match\": [\"collectives.*.time_*\", \"*.rounds\", \"*.pairs\", \"kernels.fused.*\",\n"
    "               \"burnin.telemetry.*\", \"burnin.verdict.*\",\n"
    "               \"burnin.gemm.duty_cycle\"]},\n"
    "    {\"name\": \"straggler\", \"match\": [\"collectives.*.lateness*\"],\n"
    "     \"mode\": \"absolute\", \"warn\": 300, \"fail\": 1000, \"z\": 5},\n"
    "    {\"name\": \"link\", \"match\": [\"collectives.links.bw_*\", \"*.p2p*\"],\n"
    "     \"warn\": 0.2, \"fail\": 0.35, \"z\": 4, \"cost\": 0.05, \"run_spread\": 0.03,\n"
    "     \"summary\": true, \"contended\": {\"warn\": 0.3, \"fail\": 0.5, \"z\": 3}},\n"
    "    {\"name\": \"latency\", \"match\": [\"*.lat_*\", \"*latency*\", \"kernels.launch.*\"],\n"
    "     \"warn\": 0.25, \"fail\": 0.5, \"z\": 5, \"cost\": 0.25, \"run_spread\": 0.05,\n"
    "     \"noisy\": true, \"host\": true},\n"
    "    {\"name\": \"host-copy\", \"match\": [\"kernels.copy.*pageable*\"],\n"
    "     \"warn\": 0.1, \"fail\": 0.2, \"z\": 4, \"cost\": 0.1, \"run_spread\": 0.15,\n"
    "     \"noisy\": true, \"host\": true},\n"
    "    {\"name\": \"small-copy\", \"match\": [\"kernels.copy.*\"], \"max_size\": 4194304,\n"
    "     \"warn\": 0.1, \"fail\": 0.2, \"z\": 4, \"cost\": 0.1, \"run_spread\": 0.1,\n"
    "     \"noisy\": true, \"host\": true},\n"
    "    {\"name\": \"collective\", \"match\": [\"collectives.*\"],\n"
    "     \"warn\": 0.1, \"fail\": 0.2, \"z\": 4, \"cost\": 0.05, \"run_spread\": 0.03},\n"
    "    {\"name\": \"compute\", \"match\": [\"kernels.gemm.*\", \"burnin.*flops*\"],\n"
    "     \"warn\": 0.05, \"fail\": 0.07, \"z\": 3.5, \"cost\": 0.05, \"run_spread\": 0.01,\n"
    "     \"summary\": true},\n"
    "    {\"name\": \"copy\", \"match\": [\"kernels.copy*\"],\n"
    "     \"warn\": 0.05, \"fail\": 0.07, \"z\": 3.5, \"cost\": 0.05, \"run_spread\": 0.03,\n"
    "     \"summary\": true},\n"
    "    {\"name\": \"memory\", \"match\": [\"kernels.membw.*\", \"burnin.memtest.bandwidth*\"],\n"
    "     \"warn\": 0.05, \"fail\": 0.07, \"z\": 3.5, \"cost\": 0.05, \"run_spread\": 0.01,\n"
    "     \"summary\": true},\n"
    "    {\"name\": \"default\", \"match\": [\"*\"], \"warn\": 0.1, \"fail\": 0.2, \"z\": 4}\n"
    "  ],\n"
    "  \"values\": [\n"
    "    {\"name\": \"wrong-results\", \"match\": [\"*wrong*\", \"*mismatch*\", \"*.sdc*\",\n"
    "     \"*nonfinite*\", \"burnin.memtest.errors*\"], \"max\": 0, \"verdict\": \"fail\"},\n"
    "    {\"name\": \"ecc-uncorrected\",\n"
    "     \"match\": [\"*ecc_uncorrected*\", \"*.xid*\", \"*remapped_failed*\",\n"
    "               \"*remapped_rows_uncorr*\", \"*remap_failure*\"],\n"
    "     \"max\": 0, \"verdict\": \"fail\"},\n"
    "    {\"name\": \"ecc-corrected\",\n"
    "     \"match\": [\"*ecc_corrected*\", \"*remapped_rows_corr*\", \"*remap_pending*\",\n"
    "               \"*nvlink_errors*\"], \"max\": 0, \"verdict\": \"warn\"},\n"
    "    {\"name\": \"burnin-verdict\", \"match\": [\"burnin.verdict.outcome\"], \"max\": 1,\n"
    "     \"verdict\": \"fail\"},\n"
    "    {\"name\": \"burnin-degraded\", \"match\": [\"burnin.verdict.degraded\"], \"max\": 0,\n"
    "     \"verdict\": \"warn\"},\n"
    "    {\"name\": \"temperature\", \"match\": [\"*temperature*\", \"*temp_c*\"], \"max\": 85,\n"
    "     \"verdict\": \"warn\"}\n"
    "  ]\n"
    "}\n";

const char *fp_rules_default_text(void)
{
    return default_rules;
}

/* ---- parsing ------------------------------------------------------------------------- */

/* "origin: field: what" into err; returns FP_EINPUT. */
static fp_status bad(char *err, size_t errlen, const char *origin, const char *field,
                     const char *what)
{
    snprintf(err, errlen, "%s: %s: %s", origin, field, what);
    return FP_EINPUT;
}

/* A number field; absent keeps *out. */
static bool get_number(const json_t *obj, const char *key, double *out, double lo, double hi,
                       bool *present)
{
    const json_t *v = json_object_get(obj, key);
    if (present)
        *present = v != NULL;
    if (!v)
        return true;
    if (!json_is_number(v))
        return false;
    double d = json_number_value(v);
    if (!(d >= lo && d <= hi))
        return false;
    *out = d;
    return true;
}

static fp_status get_patterns(const json_t *obj, const char *where, const char *origin,
                              fp_pattern_list *out, char *err, size_t errlen)
{
    const json_t *m = json_object_get(obj, "match");
    char field[64];
    snprintf(field, sizeof field, "%s.match", where);
    if (json_is_string(m)) {
        /* as for a list: a longer pattern would be cut and match other keys */
        if (strlen(json_string_value(m)) >= sizeof out->item[0])
            return bad(err, errlen, origin, field, "a pattern must be shorter than 96 bytes");
        out->n = 1;
        snprintf(out->item[0], sizeof out->item[0], "%s", json_string_value(m));
        return FP_OK;
    }
    if (!json_is_array(m) || json_array_size(m) == 0 || json_array_size(m) > FP_RULE_PATTERNS)
        return bad(err, errlen, origin, field,
                   "expected a string or a list of 1 to 8 glob patterns");
    out->n = (int)json_array_size(m);
    for (int i = 0; i < out->n; i++) {
        const json_t *p = json_array_get(m, (size_t)i);
        if (!json_is_string(p) || strlen(json_string_value(p)) >= sizeof out->item[0])
            return bad(err, errlen, origin, field,
                       "every pattern must be a string shorter than 96 bytes");
        snprintf(out->item[i], sizeof out->item[i], "%s", json_string_value(p));
    }
    return FP_OK;
}

static fp_status parse_name(const json_t *obj, const char *where, const char *origin, char *name,
                            size_t cap, char *err, size_t errlen)
{
    const json_t *n = json_object_get(obj, "name");
    char field[64];
    snprintf(field, sizeof field, "%s.name", where);
    if (!json_is_string(n) || !json_string_value(n)[0] || strlen(json_string_value(n)) >= cap)
        return bad(err, errlen, origin, field, "expected a non-empty string (< 32 bytes)");
    snprintf(name, cap, "%s", json_string_value(n));
    return FP_OK;
}

/* A field of obj that is not in known (NULL-terminated) is an error: a typo
 * must not silently drop a threshold. */
static fp_status check_fields(const json_t *obj, const char *const *known, const char *where,
                              const char *origin, char *err, size_t errlen)
{
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        bool found = false;
        for (int i = 0; known[i]; i++)
            found |= strcmp(known[i], key) == 0;
        if (!found) {
            char field[96];
            snprintf(field, sizeof field, "%s%s%s", where ? where : "", where ? "." : "", key);
            return bad(err, errlen, origin, field,
                       "unknown field (see docs/detect.md for the rules format)");
        }
    }
    return FP_OK;
}

/* What every rule starts with: an object with only known fields, a name and
 * match patterns. */
static fp_status parse_head(const json_t *c, const char *const *known, const char *where,
                            const char *origin, char *name, size_t cap, fp_pattern_list *patterns,
                            char *err, size_t errlen)
{
    if (!json_is_object(c))
        return bad(err, errlen, origin, where, "expected an object");
    fp_status st = check_fields(c, known, where, origin, err, errlen);
    if (st == FP_OK)
        st = parse_name(c, where, origin, name, cap, err, errlen);
    if (st == FP_OK)
        st = get_patterns(c, where, origin, patterns, err, errlen);
    return st;
}

/* p is "contended": {"warn": W, "fail": F[, "z": Z]}, 0 <= W <= F <= 1; a
 * field it lacks keeps *warn, *fail or *z as it was (z NULL: no z allowed). */
static bool get_contended(const json_t *p, double *warn, double *fail, double *z)
{
    return json_is_object(p) && get_number(p, "warn", warn, 0, 1, NULL) &&
           get_number(p, "fail", fail, 0, 1, NULL) && *warn <= *fail &&
           (z ? get_number(p, "z", z, 0, 1e6, NULL) : !json_object_get(p, "z"));
}

static fp_status parse_class(const json_t *c, int i, const char *origin, fp_rule_class *out,
                             char *err, size_t errlen)
{
    static const char *const known[] = {"name",      "match",      "mode",      "warn",
                                        "fail",      "z",          "cost",      "run_spread",
                                        "summary",   "noisy",      "host",      "max_size",
                                        "contended", "comment",    NULL};
    char where[32], field[64];
    snprintf(where, sizeof where, "classes[%d]", i);
    fp_status st = parse_head(c, known, where, origin, out->name, sizeof out->name,
                              &out->patterns, err, errlen);
    if (st != FP_OK)
        return st;
    out->absolute = out->ignore = out->late = false;
    out->contended_warn = out->contended_fail = out->contended_z = -1;
    double size = 0;
    snprintf(field, sizeof field, "%s.max_size", where);
    if (!get_number(c, "max_size", &size, 1, 1e18, NULL) || size != floor(size))
        return bad(err, errlen, origin, field, "expected an integer >= 1 (bytes)");
    out->max_size = (uint64_t)size;
    const json_t *mode = json_object_get(c, "mode");
    if (mode) {
        const char *m = json_is_string(mode) ? json_string_value(mode) : "";
        snprintf(field, sizeof field, "%s.mode", where);
        if (strcmp(m, "absolute") == 0)
            out->absolute = true;
        else if (strcmp(m, "ignore") == 0)
            out->ignore = true;
        else if (strcmp(m, "late") == 0)
            out->late = true;
        else if (strcmp(m, "relative") != 0)
            return bad(err, errlen, origin, field,
                       "expected \"relative\", \"absolute\", \"late\" or \"ignore\"");
    }
    if (out->ignore)
        return FP_OK; /* matched keys are not judged: no thresholds */
    double hi = out->absolute ? 1e12 : 1.0;
    bool pw = false, pf = false;
    out->warn = out->fail = 0;
    out->z = 4;
    snprintf(field, sizeof field, "%s.warn", where);
    if (!get_number(c, "warn", &out->warn, 0, hi, &pw) || !pw)
        return bad(err, errlen, origin, field,
                   out->absolute ? "expected a number >= 0 (the metric's unit)"
                                 : "expected a fraction in 0..1 (0.05: 5% worse)");
    snprintf(field, sizeof field, "%s.fail", where);
    if (!get_number(c, "fail", &out->fail, 0, hi, &pf) || !pf)
        return bad(err, errlen, origin, field,
                   out->absolute ? "expected a number >= 0 (the metric's unit)"
                                 : "expected a fraction in 0..1 (0.1: 10% worse)");
    if (out->fail < out->warn)
        return bad(err, errlen, origin, field, "must be at least warn");
    snprintf(field, sizeof field, "%s.z", where);
    if (!get_number(c, "z", &out->z, 0, 1e6, NULL))
        return bad(err, errlen, origin, field, "expected a number >= 0");
    /* the cost floor lowers a relative class's fail threshold where the
     * noise allows (fail becomes a ceiling); absent, fail is the floor */
    out->cost = out->fail;
    snprintf(field, sizeof field, "%s.cost", where);
    bool relative = !out->absolute && !out->late;
    if (!get_number(c, "cost", &out->cost, 0, out->fail, &pf) || (pf && !relative))
        return bad(err, errlen, origin, field,
                   relative ? "expected a fraction in 0..fail (0.05: a job loses 5%)"
                            : "only a relative class has a cost floor");
    out->run_spread = 0;
    snprintf(field, sizeof field, "%s.run_spread", where);
    if (!get_number(c, "run_spread", &out->run_spread, 0, 1, &pf) || (pf && !relative))
        return bad(err, errlen, origin, field,
                   relative ? "expected a fraction in 0..1 (0.01: 1% between runs)"
                            : "only a relative class has a between-run spread");
    static const char *const flags[] = {"summary", "noisy", "host"};
    bool *dest[] = {&out->summary, &out->noisy, &out->host};
    for (int f = 0; f < 3; f++) {
        const json_t *b = json_object_get(c, flags[f]);
        snprintf(field, sizeof field, "%s.%s", where, flags[f]);
        if (b && !json_is_boolean(b))
            return bad(err, errlen, origin, field, "expected true or false");
        *dest[f] = json_is_true(b);
    }
    /* a class whose figure aggregates enough to stay comparable on shared
     * cores may ask for less than the rules' contended thresholds */
    const json_t *p = json_object_get(c, "contended");
    if (!p)
        return FP_OK;
    out->contended_warn = out->warn; /* what the object lacks: the class's own */
    out->contended_fail = out->fail;
    out->contended_z = out->z;
    snprintf(field, sizeof field, "%s.contended", where);
    if (out->absolute ||
        !get_contended(p, &out->contended_warn, &out->contended_fail, &out->contended_z))
        return bad(err, errlen, origin, field,
                   out->absolute ? "only a relative class has contended thresholds"
                                 : "expected {\"warn\": W, \"fail\": F, \"z\": Z} with 0 <= W <= F <= "
                                   "1, Z >= 0 (z optional)");
    return FP_OK;
}

static fp_status parse_value_rule(const json_t *c, int i, const char *origin, fp_value_rule *out,
                                  char *err, size_t errlen)
{
    static const char *const known[] = {"name", "match", "max", "min", "verdict", "comment", NULL};
    char where[32], field[64];
    snprintf(where, sizeof where, "values[%d]", i);
    fp_status st = parse_head(c, known, where, origin, out->name, sizeof out->name,
                              &out->patterns, err, errlen);
    if (st != FP_OK)
        return st;
    bool pmax = false, pmin = false;
    out->max = 1e300;
    out->min = -1e300;
    snprintf(field, sizeof field, "%s.max", where);
    if (!get_number(c, "max", &out->max, -1e300, 1e300, &pmax))
        return bad(err, errlen, origin, field, "expected a number");
    snprintf(field, sizeof field, "%s.min", where);
    if (!get_number(c, "min", &out->min, -1e300, 1e300, &pmin))
        return bad(err, errlen, origin, field, "expected a number");
    if (!pmax && !pmin)
        return bad(err, errlen, origin, where, "needs \"max\" or \"min\"");
    const json_t *v = json_object_get(c, "verdict");
    const char *vs = json_is_string(v) ? json_string_value(v) : v ? "" : "fail";
    snprintf(field, sizeof field, "%s.verdict", where);
    if (strcmp(vs, "fail") == 0)
        out->verdict = FP_FAIL;
    else if (strcmp(vs, "warn") == 0)
        out->verdict = FP_WARN;
    else
        return bad(err, errlen, origin, field, "expected \"warn\" or \"fail\"");
    return FP_OK;
}

/* "history": {"k": K, "n": N, "runs": R, "tag": T}: repeat offenders fail or
 * warn in K of their last N judged runs, read from the newest R stored runs
 * (0: no history), of tag T ("": any); absent fields keep the defaults. */
static fp_status parse_history(const json_t *p, const char *origin, fp_history_rule *out,
                               char *err, size_t errlen)
{
    static const char *const known[] = {"k", "n", "runs", "tag", "comment", NULL};
    double k = 3, n = 5, runs = 100;
    *out = (fp_history_rule){.k = 3, .n = 5, .runs = 100};
    if (!p)
        return FP_OK;
    if (!json_is_object(p))
        return bad(err, errlen, origin, "history", "expected an object");
    fp_status st = check_fields(p, known, "history", origin, err, errlen);
    if (st != FP_OK)
        return st;
    if (!get_number(p, "k", &k, 1, 1e6, NULL) || k != (int)k)
        return bad(err, errlen, origin, "history.k", "expected an integer >= 1");
    if (!get_number(p, "n", &n, 1, 1e6, NULL) || n != (int)n || n < k)
        return bad(err, errlen, origin, "history.n", "expected an integer >= k");
    if (!get_number(p, "runs", &runs, 0, 1e9, NULL) || runs != (int)runs)
        return bad(err, errlen, origin, "history.runs",
                   "expected an integer >= 0 (0: no history)");
    const json_t *tag = json_object_get(p, "tag");
    if (tag && (!json_is_string(tag) || strlen(json_string_value(tag)) >= sizeof out->tag))
        return bad(err, errlen, origin, "history.tag", "expected a string (< 32 bytes)");
    out->k = (int)k;
    out->n = (int)n;
    out->runs = (int)runs;
    snprintf(out->tag, sizeof out->tag, "%s", tag ? json_string_value(tag) : "");
    return FP_OK;
}

fp_history_rule fp_rules_history(const fp_rules *r)
{
    return r->history;
}

static const char *const known_top[] = {"fleetprint_rules", "min_peers",  "persistence",
                                        "scale_floor",      "node_links", "node_gpus",
                                        "missing",          "classes",    "values",
                                        "contended",        "baselines",  "breaker",
                                        "comment",          "config",     "reference",
                                        "history",
                                        NULL};

static fp_status parse_rules(const json_t *root, const char *origin, fp_rules *r, char *err,
                             size_t errlen)
{
    if (!json_is_object(root))
        return bad(err, errlen, origin, "the top level", "must be an object");
    fp_status fields = check_fields(root, known_top, NULL, origin, err, errlen);
    if (fields != FP_OK)
        return fields;
    double version = 0;
    bool present = false;
    if (!get_number(root, "fleetprint_rules", &version, 1, 1, &present) || !present)
        return bad(err, errlen, origin, "fleetprint_rules",
                   "expected 1 (the rules format version)");
    double d = 3;
    if (!get_number(root, "min_peers", &d, 3, 1e9, NULL))
        return bad(err, errlen, origin, "min_peers", "expected an integer >= 3");
    r->min_peers = (int)d;
    const json_t *p = json_object_get(root, "persistence");
    r->persist_min = 2;
    r->persist_fraction = 0.5;
    r->strong_factor = 2;
    r->strong_fraction = 0.2;
    r->cost_fraction = 0.6;
    if (p) {
        d = 2;
        if (!json_is_object(p) || !get_number(p, "min_windows", &d, 1, 1e6, NULL))
            return bad(err, errlen, origin, "persistence.min_windows",
                       "expected an integer >= 1");
        r->persist_min = (int)d;
        if (!get_number(p, "fraction", &r->persist_fraction, 0, 1, NULL))
            return bad(err, errlen, origin, "persistence.fraction",
                       "expected a fraction in 0..1");
        if (!get_number(p, "strong_factor", &r->strong_factor, 1, 1e6, NULL))
            return bad(err, errlen, origin, "persistence.strong_factor",
                       "expected a number >= 1");
        if (!get_number(p, "cost_fraction", &r->cost_fraction, 0, 1, NULL))
            return bad(err, errlen, origin, "persistence.cost_fraction",
                       "expected a fraction in 0..1");
        if (!get_number(p, "strong_fraction", &r->strong_fraction, 0, 1, NULL))
            return bad(err, errlen, origin, "persistence.strong_fraction",
                       "expected a fraction in 0..1");
    }
    r->scale_floor = 0.01;
    if (!get_number(root, "scale_floor", &r->scale_floor, 0, 1, NULL))
        return bad(err, errlen, origin, "scale_floor", "expected a fraction in 0..1");
    r->node_link_min = 2;
    r->node_link_fraction = 0.5;
    p = json_object_get(root, "node_links");
    if (p) {
        d = 2;
        if (!json_is_object(p) || !get_number(p, "min_links", &d, 1, 1e6, NULL))
            return bad(err, errlen, origin, "node_links.min_links",
                       "expected an integer >= 1");
        r->node_link_min = (int)d;
        if (!get_number(p, "fraction", &r->node_link_fraction, 0, 1, NULL))
            return bad(err, errlen, origin, "node_links.fraction",
                       "expected a fraction in 0..1");
    }
    r->node_gpu_fraction = 0.5;
    p = json_object_get(root, "node_gpus");
    if (p && (!json_is_object(p) || !get_number(p, "fraction", &r->node_gpu_fraction, 0, 1, NULL)))
        return bad(err, errlen, origin, "node_gpus.fraction", "expected a fraction in 0..1");
    r->missing = FP_FAIL;
    const json_t *m = json_object_get(root, "missing");
    if (m) {
        const char *ms = json_is_string(m) ? json_string_value(m) : "";
        if (strcmp(ms, "fail") == 0)
            r->missing = FP_FAIL;
        else if (strcmp(ms, "warn") == 0)
            r->missing = FP_WARN;
        else if (strcmp(ms, "ignore") == 0)
            r->missing = FP_PASS;
        else
            return bad(err, errlen, origin, "missing",
                       "expected \"fail\", \"warn\" or \"ignore\"");
    }
    r->contended_warn = 0.3;
    r->contended_fail = 0.6;
    p = json_object_get(root, "contended");
    if (p && !get_contended(p, &r->contended_warn, &r->contended_fail, NULL))
        return bad(err, errlen, origin, "contended",
                   "expected {\"warn\": W, \"fail\": F} with 0 <= W <= F <= 1");
    r->base_min_runs = 3;
    r->base_prior_runs = 3;
    r->base_noisy = 0.03;
    r->base_spread_prior = 50;
    p = json_object_get(root, "baselines");
    if (p) {
        double mr = r->base_min_runs;
        if (!json_is_object(p) || !get_number(p, "min_runs", &mr, 1, 1e6, NULL))
            return bad(err, errlen, origin, "baselines.min_runs", "expected an integer >= 1");
        r->base_min_runs = (int)mr;
        if (!get_number(p, "prior_runs", &r->base_prior_runs, 0, 1e6, NULL))
            return bad(err, errlen, origin, "baselines.prior_runs", "expected a number >= 0");
        if (!get_number(p, "noisy", &r->base_noisy, 0, 1, NULL))
            return bad(err, errlen, origin, "baselines.noisy", "expected a fraction in 0..1");
        if (!get_number(p, "spread_prior", &r->base_spread_prior, 0, 1e9, NULL))
            return bad(err, errlen, origin, "baselines.spread_prior",
                       "expected a number >= 0 (entity-runs)");
    }
    r->breaker_max_drain = 0.05;
    r->breaker_max_nodes = 2;
    p = json_object_get(root, "breaker");
    if (p) {
        double mn = r->breaker_max_nodes;
        if (!json_is_object(p) || !get_number(p, "max_drain", &r->breaker_max_drain, 0, 1, NULL))
            return bad(err, errlen, origin, "breaker.max_drain",
                       "expected a share of the run's nodes in 0..1 (1: never trips)");
        if (!get_number(p, "max_nodes", &mn, 0, 1e9, NULL) || mn != floor(mn))
            return bad(err, errlen, origin, "breaker.max_nodes", "expected an integer >= 0");
        r->breaker_max_nodes = (int)mn;
    }
    fp_status day1 = fp__rules_parse_config(root, origin, r, err, errlen);
    if (day1 == FP_OK)
        day1 = fp__rules_parse_reference(root, origin, r, err, errlen);
    if (day1 != FP_OK)
        return day1;
    fp_status hist = parse_history(json_object_get(root, "history"), origin, &r->history, err,
                                   errlen);
    if (hist != FP_OK)
        return hist;
    const json_t *cls = json_object_get(root, "classes");
    if (!json_is_array(cls) || json_array_size(cls) == 0 ||
        json_array_size(cls) > FP_RULE_CLASSES)
        return bad(err, errlen, origin, "classes",
                   "expected a list of 1 to 64 rule classes");
    r->nclasses = (int)json_array_size(cls);
    for (int i = 0; i < r->nclasses; i++) {
        fp_status st = parse_class(json_array_get(cls, (size_t)i), i, origin, &r->classes[i], err,
                                   errlen);
        if (st != FP_OK)
            return st;
    }
    const json_t *vals = json_object_get(root, "values");
    r->nvalues = 0;
    if (vals) {
        if (!json_is_array(vals) || json_array_size(vals) > FP_RULE_CLASSES)
            return bad(err, errlen, origin, "values",
                       "expected a list of at most 64 value rules");
        r->nvalues = (int)json_array_size(vals);
        for (int i = 0; i < r->nvalues; i++) {
            fp_status st = parse_value_rule(json_array_get(vals, (size_t)i), i, origin,
                                            &r->values[i], err, errlen);
            if (st != FP_OK)
                return st;
        }
    }
    return FP_OK;
}

fp_status fp_rules_parse(const char *text, const char *origin, fp_rules **out, char *err,
                         size_t errlen)
{
    *out = NULL;
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "%s: line %d, column %d: %s", origin, je.line, je.column, je.text);
        return FP_EINPUT;
    }
    fp_rules *r = calloc(1, sizeof *r);
    if (!r) {
        json_decref(root);
        snprintf(err, errlen, "%s: out of memory", origin);
        return FP_ENOMEM;
    }
    fp_status st = parse_rules(root, origin, r, err, errlen);
    json_decref(root);
    if (st != FP_OK) {
        free(r);
        return st;
    }
    *out = r;
    return FP_OK;
}

fp_status fp_rules_load(const char *path, fp_rules **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!path)
        return fp_rules_parse(default_rules, "default rules", out, err, errlen);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the rules file: %m", path);
        return FP_EINPUT;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *t = realloc(text, cap);
            if (!t || cap > (64u << 20)) {
                free(t ? t : text);
                fclose(f);
                snprintf(err, errlen, "%s: rules file too large or out of memory", path);
                return FP_EINPUT;
            }
            text = t;
        }
        size_t n = fread(text + len, 1, 4096, f);
        len += n;
        if (n < 4096)
            break;
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        free(text);
        snprintf(err, errlen, "%s: read error", path);
        return FP_EINPUT;
    }
    text[len] = 0;
    size_t textlen = strlen(text);
    if (textlen != len) {
        free(text);
        snprintf(err, errlen, "%s: not a text file (NUL byte at offset %zu)", path, textlen);
        return FP_EINPUT;
    }
    fp_status st = fp_rules_parse(text, path, out, err, errlen);
    free(text);
    return st;
}

void fp_rules_free(fp_rules *rules)
{
    free(rules);
}

/* ---- matching -------------------------------------------------------------------------- */

/* Glob with '*' (any run) and '?' (any one character), iterative with one
 * backtrack point: linear in practice, no recursion. */
static bool glob(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (*p == '?' || *p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == 0;
}

/* Patterns without '@' match the key without its @size part. */
static bool list_matches(const fp_pattern_list *l, const char *key, const char *bare)
{
    for (int i = 0; i < l->n; i++)
        if (glob(l->item[i], strchr(l->item[i], '@') ? key : bare))
            return true;
    return false;
}

static void strip_size(const char *key, char *bare, size_t cap)
{
    snprintf(bare, cap, "%s", key);
    char *at = strchr(bare, '@');
    if (at)
        *at = 0;
}

const fp_value_rule *fp__rules_value(const fp_rules *r, const char *key)
{
    char bare[128];
    strip_size(key, bare, sizeof bare);
    for (int i = 0; i < r->nvalues; i++)
        if (list_matches(&r->values[i].patterns, key, bare))
            return &r->values[i];
    return NULL;
}

/* Whether key's @size is at most max (max 0: any key; a key without a size
 * does not match a bounded class). */
static bool size_within(const char *key, uint64_t max)
{
    if (!max)
        return true;
    const char *at = strchr(key, '@');
    char *end = NULL;
    unsigned long long size = at ? strtoull(at + 1, &end, 10) : 0;
    return at && end != at + 1 && size <= max;
}

const fp_rule_class *fp__rules_class(const fp_rules *r, const char *key)
{
    char bare[128];
    strip_size(key, bare, sizeof bare);
    for (int i = 0; i < r->nclasses; i++)
        if (size_within(key, r->classes[i].max_size) &&
            list_matches(&r->classes[i].patterns, key, bare))
            return &r->classes[i];
    return NULL;
}

const char *fp_rules_classify(const fp_rules *r, const char *key)
{
    const fp_value_rule *v = fp__rules_value(r, key);
    const fp_rule_class *c = v ? NULL : fp__rules_class(r, key);
    return v ? v->name : c ? c->name : NULL;
}

bool fp__glob(const char *pattern, const char *text)
{
    return glob(pattern, text);
}
