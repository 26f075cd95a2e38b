/* The JSON form of a sample and of a run's context, both ways: the schema the
 * JSON report, the JSON Lines interchange and run files (`detect --input`,
 * runfile.c) share. */
#include "fleetprint/jsonl.h"

#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "intern.h"

/* ---- writing -------------------------------------------------------------------- */

json_t *fp_json_sample(const fp_sample *s)
{
    char ent[2 * FP_NAME_MAX + 32];
    fp_entity_format(&s->entity, ent, sizeof ent);
    json_t *j = json_object();
    json_object_set_new(j, "suite", json_string(s->suite));
    json_object_set_new(j, "test", json_string(s->test));
    json_object_set_new(j, "metric", json_string(s->metric));
    json_object_set_new(j, "unit", json_string(s->unit));
    json_object_set_new(j, "better", json_string(s->better == FP_BETTER_LOWER ? "lower" : "higher"));
    json_object_set_new(j, "entity", json_string(ent));
    json_object_set_new(j, "size", json_integer((json_int_t)s->size));
    json_object_set_new(j, "iter", json_integer(s->iter));
    /* JSON has no NaN or Inf: write null and read it back as NaN */
    json_object_set_new(j, "value", isfinite(s->value) ? json_real(s->value) : json_null());
    json_object_set_new(j, "t", json_real(s->t_start));
    return j;
}

/* The configuration record as [{"entity": "node:n0" | "gpu:n0/1", "fields":
 * {"kernel": "6.8.0", ...}}, ...], one object per node and device in the
 * order their first field was recorded. */
static json_t *config_json(const fp_run *run)
{
    json_t *list = json_array();
    bool *done = calloc(run->nconfig, sizeof *done);
    for (size_t i = 0; done && i < run->nconfig; i++) {
        if (done[i])
            continue;
        const fp_cfg_item *a = &run->config[i];
        const char *node = a->node >= 0 && a->node < run->nnodes ? run->nodes[a->node] : "";
        fp_entity e = a->dev < 0 ? fp_entity_node(node) : fp_entity_gpu(node, a->dev);
        char ent[2 * FP_NAME_MAX + 32];
        json_t *o = json_object(), *f = json_object();
        json_object_set_new(o, "entity", json_string(fp_entity_format(&e, ent, sizeof ent)));
        for (size_t k = i; k < run->nconfig; k++) {
            const fp_cfg_item *b = &run->config[k];
            if (done[k] || b->node != a->node || b->dev != a->dev)
                continue;
            done[k] = true;
            json_object_set_new(f, b->field, json_string(b->value));
        }
        json_object_set_new(o, "fields", f);
        json_array_append_new(list, o);
    }
    free(done);
    return list;
}

json_t *fp_json_context(const fp_run *run)
{
    json_t *j = json_object();
#define STR(field) json_object_set_new(j, #field, json_string(run->field));
    STR(id)
    FP_RUN_TEXT_FIELDS(STR)
#undef STR
    json_object_set_new(j, "time", json_real(run->time));
    json_object_set_new(j, "duration", json_real(run->duration));
    json_t *nodes = json_array();
    for (int i = 0; i < run->nnodes; i++)
        json_array_append_new(nodes, json_string(run->nodes[i]));
    json_object_set_new(j, "nodes", nodes);
    json_t *ranks = json_array();
    for (int r = 0; r < run->nranks; r++) {
        const fp_rank_info *ri = &run->ranks[r];
        json_t *o = json_object();
        json_object_set_new(o, "node", json_string(ri->node >= 0 && ri->node < run->nnodes
                                                       ? run->nodes[ri->node]
                                                       : ""));
        json_object_set_new(o, "local_rank", json_integer(ri->local_rank));
        json_object_set_new(o, "dev", json_integer(ri->dev));
        json_object_set_new(o, "clock_offset", json_real(ri->clock_offset));
        json_object_set_new(o, "clock_error", json_real(ri->clock_error));
        json_object_set_new(o, "model", json_string(ri->model));
        json_object_set_new(o, "uuid", json_string(ri->uuid));
        json_object_set_new(o, "pci_bus", json_string(ri->pci_bus));
        json_array_append_new(ranks, o);
    }
    json_object_set_new(j, "ranks", ranks);
    if (run->nconfig)
        json_object_set_new(j, "config", config_json(run));
    return j;
}

/* ---- reading -------------------------------------------------------------------- */

static bool get_str(const json_t *j, const char *key, char *dst, size_t len, bool required)
{
    const json_t *v = json_object_get(j, key);
    if (!v)
        return !required && (dst[0] = 0, true);
    if (!json_is_string(v) || json_string_length(v) >= len)
        return false;
    memcpy(dst, json_string_value(v), json_string_length(v) + 1);
    return true;
}

static bool get_num(const json_t *j, const char *key, double *out, bool required)
{
    const json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v)) {
        *out = v ? NAN : 0;
        return v ? true : !required;
    }
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return true;
}

#define BAD(field)                                                                         \
    do {                                                                                   \
        snprintf(err, errlen, "field '%s' missing or malformed", field);                   \
        return FP_EINPUT;                                                                  \
    } while (0)

fp_status fp_json_parse_sample(const json_t *j, fp_sample *out, char *err, size_t errlen)
{
    fp_sample s;
    memset(&s, 0, sizeof s);
    if (!json_is_object(j))
        BAD("sample");
    if (!get_str(j, "suite", s.suite, sizeof s.suite, true)) BAD("suite");
    if (!get_str(j, "test", s.test, sizeof s.test, true)) BAD("test");
    if (!get_str(j, "metric", s.metric, sizeof s.metric, true)) BAD("metric");
    if (!get_str(j, "unit", s.unit, sizeof s.unit, true)) BAD("unit");
    char text[2 * FP_NAME_MAX + 32];
    if (!get_str(j, "better", text, sizeof text, true)) BAD("better");
    if (strcmp(text, "higher") == 0)
        s.better = FP_BETTER_HIGHER;
    else if (strcmp(text, "lower") == 0)
        s.better = FP_BETTER_LOWER;
    else
        BAD("better");
    if (!get_str(j, "entity", text, sizeof text, true) || !fp_entity_parse(text, &s.entity))
        BAD("entity");
    double size, iter;
    if (!get_num(j, "size", &size, false) || !(size >= 0 && size < 0x1p64) || size != floor(size))
        BAD("size");
    if (!get_num(j, "iter", &iter, false) || iter != floor(iter) || fabs(iter) > 2e9) BAD("iter");
    if (!get_num(j, "value", &s.value, true)) BAD("value");
    if (!get_num(j, "t", &s.t_start, false)) BAD("t");
    s.size = (uint64_t)size;
    s.iter = (int32_t)iter;
    *out = s;
    return FP_OK;
}

/* "config" (config_json's form) into run->config; absent: none (older runs). */
static fp_status parse_config(const json_t *cfg, fp_run *run, const fp__nameix *ix, char *err,
                              size_t errlen)
{
    if (!cfg)
        return FP_OK;
    if (!json_is_array(cfg))
        BAD("config");
    size_t n = 0, k = 0;
    for (size_t i = 0; i < json_array_size(cfg); i++) {
        const json_t *f = json_object_get(json_array_get(cfg, i), "fields");
        n += json_is_object(f) ? json_object_size(f) : 0;
    }
    fp_cfg_item *items = calloc(n ? n : 1, sizeof *items);
    if (!items) {
        snprintf(err, errlen, "out of memory for %zu configuration fields", n);
        return FP_ENOMEM;
    }
    fp_status st = FP_OK;
    for (size_t i = 0; st == FP_OK && i < json_array_size(cfg); i++) {
        const json_t *o = json_array_get(cfg, i), *f = json_object_get(o, "fields");
        char text[2 * FP_NAME_MAX + 32];
        fp_entity e;
        int node = -1;
        if (!json_is_object(o) || !json_is_object(f) ||
            !get_str(o, "entity", text, sizeof text, true) || !fp_entity_parse(text, &e) ||
            (e.kind != FP_ENT_NODE && e.kind != FP_ENT_GPU) ||
            (node = fp__nameix_get(ix, e.node)) < 0) {
            snprintf(err, errlen, "field 'config[%zu]' malformed: expected {\"entity\": "
                     "\"node:N\" or \"gpu:N/D\" of the run's nodes, \"fields\": {...}}", i);
            st = FP_EINPUT;
            break;
        }
        const char *name;
        const json_t *v;
        json_object_foreach((json_t *)f, name, v) {
            fp_cfg_item *it = &items[k];
            if (!json_is_string(v) || strlen(name) >= sizeof it->field || !name[0] ||
                json_string_length(v) >= sizeof it->value) {
                snprintf(err, errlen, "field 'config[%zu].fields.%.32s' malformed: a string "
                         "(names < %zu, values < %zu bytes)", i, name, sizeof it->field,
                         sizeof it->value);
                st = FP_EINPUT;
                break;
            }
            it->node = node;
            it->dev = e.kind == FP_ENT_GPU ? e.dev : -1;
            snprintf(it->field, sizeof it->field, "%s", name);
            snprintf(it->value, sizeof it->value, "%s", json_string_value(v));
            k++;
        }
    }
    if (st == FP_OK)
        st = fp_run_set_config(run, items, k);
    free(items);
    return st;
}

static fp_status parse_ranks(const json_t *ranks, fp_run *run, const fp__nameix *ix, char *err,
                             size_t errlen);

fp_status fp_json_parse_context(const json_t *j, fp_run *run, char *err, size_t errlen)
{
    if (!json_is_object(j))
        BAD("run");
    if (!get_str(j, "id", run->id, sizeof run->id, true))
        BAD("id");
#define STR(field)                                                                         \
    if (!get_str(j, #field, run->field, sizeof run->field, false))                         \
        BAD(#field);
    FP_RUN_TEXT_FIELDS(STR)
#undef STR
    if (!get_num(j, "time", &run->time, false)) BAD("time");
    if (!get_num(j, "duration", &run->duration, false)) BAD("duration");
    const json_t *nodes = json_object_get(j, "nodes"), *ranks = json_object_get(j, "ranks");
    if (nodes && !json_is_array(nodes)) BAD("nodes");
    if (ranks && !json_is_array(ranks)) BAD("ranks");
    int nn = nodes ? (int)json_array_size(nodes) : 0, nr = ranks ? (int)json_array_size(ranks) : 0;
    if (fp_run_set_shape(run, nn, nr) != FP_OK) {
        snprintf(err, errlen, "out of memory for %d nodes and %d ranks", nn, nr);
        return FP_ENOMEM;
    }
    for (int i = 0; i < nn; i++) {
        const json_t *v = json_array_get(nodes, (size_t)i);
        if (!json_is_string(v) || json_string_length(v) >= FP_NAME_MAX) BAD("nodes");
        memcpy(run->nodes[i], json_string_value(v), json_string_length(v) + 1);
    }
    /* each rank's and configuration entry's node, found in constant time */
    fp__nameix ix;
    fp_status st = fp__nameix_build(&ix, run->nodes[0], sizeof run->nodes[0], nn);
    if (st != FP_OK)
        snprintf(err, errlen, "out of memory for the names of %d nodes", nn);
    if (st == FP_OK)
        st = parse_ranks(ranks, run, &ix, err, errlen);
    if (st == FP_OK)
        st = parse_config(json_object_get(j, "config"), run, &ix, err, errlen);
    fp__nameix_free(&ix);
    return st;
}

/* "ranks" into run->ranks (run->nranks of them). */
static fp_status parse_ranks(const json_t *ranks, fp_run *run, const fp__nameix *ix, char *err,
                             size_t errlen)
{
    for (int r = 0; r < run->nranks; r++) {
        const json_t *o = json_array_get(ranks, (size_t)r);
        fp_rank_info *ri = &run->ranks[r];
        char node[FP_NAME_MAX];
        double lr, dev;
        if (!json_is_object(o) || !get_str(o, "node", node, sizeof node, true)) BAD("ranks.node");
        ri->node = fp__nameix_get(ix, node);
        if (ri->node < 0) BAD("ranks.node");
        /* whole numbers in int range: a cast of anything else is undefined */
        if (!get_num(o, "local_rank", &lr, false) || !(lr >= 0 && lr <= INT_MAX) ||
            lr != floor(lr))
            BAD("ranks.local_rank");
        if (!get_num(o, "dev", &dev, false) || !(dev >= -1 && dev <= INT_MAX) || dev != floor(dev))
            BAD("ranks.dev");
        if (!get_num(o, "clock_offset", &ri->clock_offset, false)) BAD("ranks.clock_offset");
        if (!get_num(o, "clock_error", &ri->clock_error, false)) BAD("ranks.clock_error");
        if (!get_str(o, "model", ri->model, sizeof ri->model, false)) BAD("ranks.model");
        if (!get_str(o, "uuid", ri->uuid, sizeof ri->uuid, false)) BAD("ranks.uuid");
        if (!get_str(o, "pci_bus", ri->pci_bus, sizeof ri->pci_bus, false)) BAD("ranks.pci_bus");
        ri->local_rank = (int)lr;
        ri->dev = (int)dev;
    }
    return FP_OK;
}
