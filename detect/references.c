/* The reference catalog: expected figures per device model, each with its
 * source, read from JSON (docs/references.md). The built-in catalog below is
 * docs/references.json as C text (tests/e2e/references.sh checks they agree):
 * the H100 SXM5 and H200 figures were measured by this project, the A100 and
 * B200 ones come from vendor specifications and say so. Also here: a catalog
 * entry made from a store's SKU baselines (baseline export-reference). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_internal.h"
#include "fleetprint/mem.h"
#include "fleetprint/store.h"

/* ---- the built-in catalog --------------------------------------------------------- */

/* clang-format off */
static const char default_refs[] =
    "{\n"
    "  \"fleetprint_references\": 1,\n"
    "  \"comment\": \"Expected figures per device model (fleetprint detect --print-references; do"
    "cs/references.md). A figure applies to the keys of its metric whose size is at least min_siz"
    "e; reference evidence warns 15% and fails 30% below it (the rules' \\\"reference\\\").\",\n"
    "  \"models\": [\n"
    "    {\"name\": \"H100 SXM5 80GB\", \"match\": [\"NVIDIA H100 80GB HBM3\"],\n"
    "     \"source\": {\"kind\": \"measured\", \"date\": \"2026-11-23\", \"commit\": \"5c9bc70\","
    "\n"
    "                \"where\": \"tests/data/gpu-h100/kernels-3runs.jsonl: median of 3 clean runs"
    "' summaries (fleetprint run --suite kernels --device cuda)\"},\n"
    "     \"figures\": [\n"
    "       {\"metric\": \"kernels.membw.triad_bw\", \"min_size\": 67108864, \"value\": 2887, \"u"
    "nit\": \"GB/s\"},\n"
    "       {\"metric\": \"kernels.membw.copy_bw\", \"min_size\": 67108864, \"value\": 2706, \"un"
    "it\": \"GB/s\"},\n"
    "       {\"metric\": \"kernels.membw.scale_bw\", \"min_size\": 67108864, \"value\": 2636, \"u"
    "nit\": \"GB/s\"},\n"
    "       {\"metric\": \"kernels.membw.add_bw\", \"min_size\": 67108864, \"value\": 2840, \"uni"
    "t\": \"GB/s\"},\n"
    "       {\"metric\": \"kernels.gemm.bf16_flops\", \"min_size\": 134217728, \"value\": 867648,"
    " \"unit\": \"GFLOP/s\"},\n"
    "       {\"metric\": \"kernels.gemm.f16_flops\", \"min_size\": 134217728, \"value\": 851036, "
    "\"unit\": \"GFLOP/s\"},\n"
    "       {\"metric\": \"kernels.gemm.fp8_flops\", \"min_size\": 67108864, \"value\": 1519603, "
    "\"unit\": \"GFLOP/s\"},\n"
    "       {\"metric\": \"kernels.gemm.tf32_flops\", \"min_size\": 268435456, \"value\": 457544,"
    " \"unit\": \"GFLOP/s\"},\n"
    "       {\"metric\": \"kernels.gemm.f32_flops\", \"min_size\": 268435456, \"value\": 51999, "
    "\"unit\": \"GFLOP/s\"},\n"
    "       {\"metric\": \"kernels.gemm.f64_flops\", \"min_size\": 536870912, \"value\": 65281, "
    "\"unit\": \"GFLOP/s\"},\n"
    "       {\"metric\": \"kernels.copy.h2d_pinned_bw\", \"min_size\": 16777216, \"value\": 53.9,"
    " \"unit\": \"GB/s\"},\n"
    "       {\"metric\": \"kernels.copy.d2h_pinned_bw\", \"min_size\": 16777216, \"value\": 54.0,"
    " \"unit\": \"GB/s\"},\n"
    "       {\"metric\": \"kernels.copy.d2d_bw\", \"min_size\": 16777216, \"value\": 1101, \"unit"
    "\": \"GB/s\"}\n"
    "     ]},\n"
    "    {\"name\": \"H200 141GB\", \"match\": [\"NVIDIA H200\"],\n"
    "     \"source\": {\"kind\": \"measured\", \"date\": \"2026-11-26\", \"commit\": \"ac1f3bf\","
    "\n"
    "                \"where\": \"docs/gpu.md, the H200 table: gpu_burnin_cuda's membw triad (run"
    " --test membw --array-size 256M -n 5)\"},\n"
    "     \"figures\": [\n"
    "       {\"metric\": \"kernels.membw.triad_bw\", \"min_size\": 268435456, \"value\": 4215, \""
    "unit\": \"GB/s\"},\n"
    "       {\"metric\": \"kernels.gemm.bf16_flops\", \"min_size\": 134217728, \"value\": 867000,"
    " \"unit\": \"GFLOP/s\",\n"
    "        \"source\": {\"kind\": \"spec\", \"document\": \"NVIDIA H200 Tensor Core GPU datashe"
    "et (SXM): 989 TFLOP/s dense bf16\", \"peak\": 989000, \"efficiency\": 0.877,\n"
    "                   \"where\": \"efficiency: the H100 SXM5's measured bf16 GEMM over its own "
    "spec (867648 / 989000)\"}}\n"
    "     ]},\n"
    "    {\"name\": \"A100 80GB\", \"match\": [\"NVIDIA A100-SXM4-80GB\"],\n"
    "     \"source\": {\"kind\": \"spec\", \"document\": \"NVIDIA A100 Tensor Core GPU datasheet "
    "(SXM4 80GB)\",\n"
    "                \"where\": \"value = peak x the efficiency the H100 SXM5 measured against it"
    "s own spec for the same kernel (membw 0.862, bf16 0.877, tf32 0.925, f64 0.976)\"},\n"
    "     \"figures\": [\n"
    "       {\"metric\": \"kernels.membw.triad_bw\", \"min_size\": 67108864, \"value\": 1758, \"u"
    "nit\": \"GB/s\", \"peak\": 2039, \"efficiency\": 0.862},\n"
    "       {\"metric\": \"kernels.gemm.bf16_flops\", \"min_size\": 134217728, \"value\": 273600,"
    " \"unit\": \"GFLOP/s\", \"peak\": 312000, \"efficiency\": 0.877},\n"
    "       {\"metric\": \"kernels.gemm.tf32_flops\", \"min_size\": 268435456, \"value\": 144300,"
    " \"unit\": \"GFLOP/s\", \"peak\": 156000, \"efficiency\": 0.925},\n"
    "       {\"metric\": \"kernels.gemm.f64_flops\", \"min_size\": 536870912, \"value\": 19030, "
    "\"unit\": \"GFLOP/s\", \"peak\": 19500, \"efficiency\": 0.976}\n"
    "     ]},\n"
    "    {\"name\": \"B200\", \"match\": [\"NVIDIA B200\"],\n"
    "     \"source\": {\"kind\": \"spec\", \"document\": \"NVIDIA DGX B200 / HGX B200 datasheet, "
    "per GPU\",\n"
    "                \"where\": \"value = peak x the efficiency the H100 SXM5 measured against it"
    "s own spec for the same kernel (membw 0.862, bf16 0.877, fp8 0.768)\"},\n"
    "     \"figures\": [\n"
    "       {\"metric\": \"kernels.membw.triad_bw\", \"min_size\": 67108864, \"value\": 6896, \"u"
    "nit\": \"GB/s\", \"peak\": 8000, \"efficiency\": 0.862},\n"
    "       {\"metric\": \"kernels.gemm.bf16_flops\", \"min_size\": 134217728, \"value\": 1973000"
    ", \"unit\": \"GFLOP/s\", \"peak\": 2250000, \"efficiency\": 0.877},\n"
    "       {\"metric\": \"kernels.gemm.fp8_flops\", \"min_size\": 67108864, \"value\": 3456000, "
    "\"unit\": \"GFLOP/s\", \"peak\": 4500000, \"efficiency\": 0.768}\n"
    "     ]}\n"
    "  ]\n"
    "}\n";
/* clang-format on */

const char *fp_references_default_text(void)
{
    return default_refs;
}

/* ---- the catalog in memory ---------------------------------------------------------- */

typedef struct ref_figure {
    char metric[96];   /* suite.test.metric */
    uint64_t min_size; /* applies to keys of at least this size */
    double value;
    char source[96];   /* in words: "measured 2026-11-23 at 5c9bc70" */
} ref_figure;

typedef struct ref_model {
    char name[64];
    fp_pattern_list match; /* globs over the device model */
    size_t first, n;       /* its figures */
} ref_model;

struct fp_references {
    ref_model *models;
    size_t nmodels;
    ref_figure *figs;
    size_t nfigs;
};

void fp_references_free(fp_references *refs)
{
    if (!refs)
        return;
    free(refs->models);
    free(refs->figs);
    free(refs);
}

/* ---- parsing ------------------------------------------------------------------------- */

/* "origin: where: what" into err; FP_EINPUT. */
static fp_status bad(char *err, size_t errlen, const char *origin, const char *where,
                     const char *what)
{
    snprintf(err, errlen, "%s: %s: %s", origin, where, what);
    return FP_EINPUT;
}

/* Every field of obj is one of known (NULL-terminated); else the unknown one
 * into *which. */
static bool known_fields(const json_t *obj, const char *const *known, const char **which)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool ok = false;
        for (int i = 0; known[i]; i++)
            ok |= strcmp(known[i], key) == 0;
        if (!ok) {
            *which = key;
            return false;
        }
    }
    return true;
}

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A source object into words: "measured DATE at COMMIT", "vendor spec: DOC",
 * "baselines of STORE built DATE (N runs)". */
static fp_status parse_source(const json_t *s, const char *origin, const char *where, char *out,
                              size_t len, char *err, size_t errlen)
{
    static const char *const known[] = {"kind",  "date",       "commit", "where", "document",
                                        "peak",  "efficiency", "store",  "runs",  "comment",
                                        NULL};
    char field[192];
    const char *which = NULL;
    snprintf(field, sizeof field, "%.120s.source", where);
    if (!json_is_object(s))
        return bad(err, errlen, origin, field,
                   "expected an object with \"kind\": \"measured\", \"spec\" or \"baseline\"");
    if (!known_fields(s, known, &which)) {
        snprintf(field, sizeof field, "%.120s.source.%.48s", where, which);
        return bad(err, errlen, origin, field, "unknown field (docs/references.md)");
    }
    const char *kind = str_of(s, "kind"), *date = str_of(s, "date"), *commit = str_of(s, "commit");
    const char *doc = str_of(s, "document"), *store = str_of(s, "store");
    if (kind && strcmp(kind, "measured") == 0) {
        if (!date || !commit)
            return bad(err, errlen, origin, field, "a measured figure needs \"date\" and \"commit\"");
        snprintf(out, len, "measured %.16s at %.40s", date, commit);
    } else if (kind && strcmp(kind, "spec") == 0) {
        if (!doc)
            return bad(err, errlen, origin, field, "a vendor spec needs its \"document\"");
        snprintf(out, len, "vendor spec: %.80s", doc);
    } else if (kind && strcmp(kind, "baseline") == 0) {
        const json_t *runs = json_object_get(s, "runs");
        if (!date)
            return bad(err, errlen, origin, field, "a baseline figure needs \"date\"");
        snprintf(out, len, "baselines of %.40s built %.16s (%lld runs)", store ? store : "a store",
                 date, json_is_integer(runs) ? (long long)json_integer_value(runs) : 0LL);
    } else {
        return bad(err, errlen, origin, field,
                   "\"kind\" must be \"measured\", \"spec\" or \"baseline\"");
    }
    return FP_OK;
}

static fp_status parse_figure(const json_t *f, const char *origin, const char *where,
                              const char *model_source, ref_figure *out, char *err,
                              size_t errlen)
{
    static const char *const known[] = {"metric", "min_size", "value",      "unit",
                                        "source", "peak",     "efficiency", "comment", NULL};
    char field[192];
    const char *which = NULL;
    if (!json_is_object(f))
        return bad(err, errlen, origin, where, "expected an object");
    if (!known_fields(f, known, &which)) {
        snprintf(field, sizeof field, "%.120s.%.48s", where, which);
        return bad(err, errlen, origin, field, "unknown field (docs/references.md)");
    }
    const char *metric = str_of(f, "metric");
    snprintf(field, sizeof field, "%.120s.metric", where);
    if (!metric || !metric[0] || strlen(metric) >= sizeof out->metric || strchr(metric, '@'))
        return bad(err, errlen, origin, field,
                   "expected suite.test.metric (no @size: min_size says which sizes)");
    snprintf(out->metric, sizeof out->metric, "%s", metric);
    const json_t *v = json_object_get(f, "value");
    snprintf(field, sizeof field, "%.120s.value", where);
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
        return bad(err, errlen, origin, field, "expected a number > 0");
    out->value = json_number_value(v);
    const json_t *ms = json_object_get(f, "min_size");
    snprintf(field, sizeof field, "%.120s.min_size", where);
    if (ms && (!json_is_integer(ms) || json_integer_value(ms) < 0))
        return bad(err, errlen, origin, field, "expected a size in bytes >= 0");
    out->min_size = ms ? (uint64_t)json_integer_value(ms) : 0;
    const json_t *s = json_object_get(f, "source");
    if (s)
        return parse_source(s, origin, where, out->source, sizeof out->source, err, errlen);
    if (!model_source)
        return bad(err, errlen, origin, where, "no source: give the figure or its model one");
    snprintf(out->source, sizeof out->source, "%s", model_source);
    return FP_OK;
}

static fp_status parse_model(const json_t *m, const char *origin, int i, fp_references *r,
                             char *err, size_t errlen)
{
    static const char *const known[] = {"name", "match", "source", "figures", "comment", NULL};
    char where[64], field[128], src[96];
    const char *which = NULL;
    snprintf(where, sizeof where, "models[%d]", i);
    if (!json_is_object(m))
        return bad(err, errlen, origin, where, "expected an object");
    if (!known_fields(m, known, &which)) {
        snprintf(field, sizeof field, "%s.%s", where, which);
        return bad(err, errlen, origin, field, "unknown field (docs/references.md)");
    }
    ref_model *mo = &r->models[r->nmodels];
    memset(mo, 0, sizeof *mo);
    const char *name = str_of(m, "name");
    snprintf(field, sizeof field, "%s.name", where);
    if (!name || !name[0] || strlen(name) >= sizeof mo->name)
        return bad(err, errlen, origin, field, "expected a name of 1 to 63 bytes");
    snprintf(mo->name, sizeof mo->name, "%s", name);
    const json_t *match = json_object_get(m, "match");
    snprintf(field, sizeof field, "%s.match", where);
    if (!json_is_array(match) || !json_array_size(match) ||
        json_array_size(match) > FP_RULE_PATTERNS)
        return bad(err, errlen, origin, field,
                   "expected a list of 1 to 8 device model patterns (\"NVIDIA H100 80GB HBM3\")");
    for (size_t k = 0; k < json_array_size(match); k++) {
        const json_t *p = json_array_get(match, k);
        if (!json_is_string(p) || json_string_length(p) >= sizeof mo->match.item[0])
            return bad(err, errlen, origin, field, "every pattern must be a string < 96 bytes");
        snprintf(mo->match.item[mo->match.n++], sizeof mo->match.item[0], "%s",
                 json_string_value(p));
    }
    const json_t *s = json_object_get(m, "source");
    if (s) {
        fp_status st = parse_source(s, origin, where, src, sizeof src, err, errlen);
        if (st != FP_OK)
            return st;
    }
    const json_t *figs = json_object_get(m, "figures");
    snprintf(field, sizeof field, "%s.figures", where);
    if (!json_is_array(figs) || !json_array_size(figs))
        return bad(err, errlen, origin, field, "expected a list of figures");
    mo->first = r->nfigs;
    for (size_t k = 0; k < json_array_size(figs); k++) {
        snprintf(field, sizeof field, "%s.figures[%zu]", where, k);
        fp_status st = parse_figure(json_array_get(figs, k), origin, field, s ? src : NULL,
                                    &r->figs[r->nfigs], err, errlen);
        if (st != FP_OK)
            return st;
        r->nfigs++;
        mo->n++;
    }
    r->nmodels++;
    return FP_OK;
}

/* The catalog in root (which this call releases) into *out; errors as
 * fp_references_parse. */
static fp_status parse_root(json_t *root, const char *origin, fp_references **out, char *err,
                            size_t errlen)
{
    static const char *const known[] = {"fleetprint_references", "models", "comment", NULL};
    const char *which = NULL;
    fp_status st = FP_OK;
    fp_references *r = calloc(1, sizeof *r);
    const json_t *models = json_object_get(root, "models"),
                 *ver = json_object_get(root, "fleetprint_references");
    size_t nfig = 0;
    if (!r) {
        st = FP_ENOMEM;
        snprintf(err, errlen, "%s: out of memory", origin);
    } else if (!json_is_object(root)) {
        st = bad(err, errlen, origin, "the top level", "must be an object");
    } else if (!known_fields(root, known, &which)) {
        st = bad(err, errlen, origin, which, "unknown field (docs/references.md)");
    } else if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        st = bad(err, errlen, origin, "fleetprint_references", "expected 1 (the format version)");
    } else if (!json_is_array(models)) {
        st = bad(err, errlen, origin, "models", "expected a list of device models");
    }
    for (size_t i = 0; st == FP_OK && i < json_array_size(models); i++) {
        const json_t *f = json_object_get(json_array_get(models, i), "figures");
        nfig += json_is_array(f) ? json_array_size(f) : 0;
    }
    if (st == FP_OK) {
        r->models = calloc(json_array_size(models) + 1, sizeof *r->models);
        r->figs = calloc(nfig + 1, sizeof *r->figs);
        if (!r->models || !r->figs) {
            st = FP_ENOMEM;
            snprintf(err, errlen, "%s: out of memory", origin);
        }
    }
    for (size_t i = 0; st == FP_OK && i < json_array_size(models); i++)
        st = parse_model(json_array_get(models, i), origin, (int)i, r, err, errlen);
    json_decref(root);
    if (st != FP_OK) {
        fp_references_free(r);
        return st;
    }
    *out = r;
    return FP_OK;
}

fp_status fp_references_parse(const char *text, const char *origin, fp_references **out,
                              char *err, size_t errlen)
{
    *out = NULL;
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "%s: line %d, column %d: %s", origin, je.line, je.column, je.text);
        return FP_EINPUT;
    }
    return parse_root(root, origin, out, err, errlen);
}

fp_status fp_references_load(const char *path, fp_references **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!path)
        return fp_references_parse(default_refs, "built-in references", out, err, errlen);
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "%s: line %d, column %d: %s", path, je.line, je.column, je.text);
        return FP_EINPUT;
    }
    return parse_root(root, path, out, err, errlen);
}

/* ---- lookups --------------------------------------------------------------------------- */

bool fp_references_find(const fp_references *refs, const char *model, const char *key,
                        double *value, const char **name, const char **source)
{
    char bare[128];
    snprintf(bare, sizeof bare, "%s", key);
    char *at = strchr(bare, '@');
    uint64_t size = at ? strtoull(at + 1, NULL, 10) : 0;
    if (at)
        *at = 0;
    for (size_t m = 0; refs && m < refs->nmodels; m++) {
        const ref_model *mo = &refs->models[m];
        bool match = false;
        for (int i = 0; i < mo->match.n && !match; i++)
            match = fp__glob(mo->match.item[i], model);
        if (!match)
            continue;
        for (size_t k = mo->first; k < mo->first + mo->n; k++) {
            const ref_figure *f = &refs->figs[k];
            if (strcmp(f->metric, bare) != 0 || size < f->min_size)
                continue;
            *value = f->value;
            *name = mo->name;
            *source = f->source;
            return true;
        }
        return false; /* the first model that matches is the device's */
    }
    return false;
}
