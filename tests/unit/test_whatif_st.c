/* The what-if analysis of the artifact's ST trace (stage imbalance, DP 2 x PP 4,
 * 32 steps) against the artifact's own published results: result-ST.json,
 * ms-ST.json and mw-ST.json, every number within 2% relative. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/whatif.h"

#define REL 0.02

static json_t *load(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j)
        fprintf(stderr, "%s: %s\n", path, err.text);
    return j;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) {
        fprintf(stderr, "expected number at '%s'\n", key);
        return NAN;
    }
    return json_number_value(v);
}

static int step_index(const fp_wi_result *r, const char *key)
{
    int step = atoi(key);
    for (int s = 0; s < r->nsteps; s++)
        if (r->steps[s] == step)
            return s;
    return -1;
}

/* {"<step>": value} against a per-step array */
static int check_steps(const fp_wi_result *r, const json_t *o, const double *v, const char *what)
{
    int n = 0;
    const char *key;
    json_t *val;
    CHECK(json_object_size(o) == (size_t)r->nsteps);
    json_object_foreach((json_t *)o, key, val)
    {
        int s = step_index(r, key);
        CHECK(s >= 0);
        if (s < 0)
            continue;
        if (fabs(v[s] - json_number_value(val)) > REL * fabs(json_number_value(val)))
            fprintf(stderr, "%s step %s: %.9g vs %.9g\n", what, key, v[s],
                    json_number_value(val));
        CHECK_NEAR(v[s], json_number_value(val), REL);
        n++;
    }
    return n;
}

/* blocking_decompose_by_X and its _per_step table */
static void check_attr(const fp_wi_result *r, const json_t *res, fp_wi_dim dim, const char *name)
{
    char key[96];
    const fp_wi_attribution *a = &r->blocking[dim];
    CHECK(a->done);
    snprintf(key, sizeof key, "blocking_decompose_by_%s", name);
    const json_t *o = json_object_get(res, key);
    CHECK(json_is_object(o));
    CHECK(json_object_size(o) == (size_t)a->n);
    const char *label;
    json_t *val;
    json_object_foreach((json_t *)o, label, val)
    {
        const fp_wi_attr *it = fp_wi_attr_find(a, label);
        CHECK(it != NULL);
        if (it)
            CHECK_NEAR(it->slowdown, json_number_value(val), REL);
    }
    snprintf(key, sizeof key, "blocking_decompose_by_%s_per_step", name);
    const json_t *ps = json_object_get(res, key);
    CHECK(json_is_object(ps));
    CHECK(json_object_size(ps) == (size_t)r->nsteps);
    const char *step;
    json_t *tab;
    int cells = 0;
    json_object_foreach((json_t *)ps, step, tab)
    {
        int s = step_index(r, step);
        CHECK(s >= 0);
        json_object_foreach(tab, label, val)
        {
            const fp_wi_attr *it = fp_wi_attr_find(a, label);
            CHECK(it != NULL);
            if (it && s >= 0) {
                CHECK_NEAR(it->per_step[s], json_number_value(val), REL);
                cells++;
            }
        }
    }
    CHECK(cells == a->n * r->nsteps);
    /* the launch decomposition was skipped (launch slowdown below 1.03) */
    snprintf(key, sizeof key, "launch_decompose_by_%s", name);
    CHECK(json_is_null(json_object_get(res, key)));
    CHECK(!r->launch[dim].done);
}

static void check_explain(const fp_wi_explain *e, const json_t *o, const char *metric)
{
    CHECK(e->valid);
    CHECK_NEAR(e->tori, num(o, "tori"), REL);
    CHECK_NEAR(e->tideal, num(o, "tideal"), REL);
    CHECK_NEAR(e->trem, num(o, "trem"), REL);
    CHECK_NEAR(e->tadd, num(o, "tadd"), REL);
    CHECK_NEAR(e->rem, num(o, "rem"), REL);
    CHECK_NEAR(e->add, num(o, "add"), REL);
    CHECK_NEAR(e->rem, num(o, metric), REL);
}

int main(void)
{
    const char *dir = FP_TEST_DATA "/whatif";
    char trace_path[1024], meta_path[1024];
    snprintf(trace_path, sizeof trace_path, "%s/trace-ST.csv", dir);
    snprintf(meta_path, sizeof meta_path, "%s/meta-ST.yaml", dir);
    json_t *res = load(dir, "result-ST.json");
    json_t *ms = load(dir, "ms-ST.json");
    json_t *mw = load(dir, "mw-ST.json");
    CHECK(res && ms && mw);
    if (!res || !ms || !mw)
        CHECK_DONE();

    fp_wi_meta meta;
    fp_wi_trace *trace = NULL;
    fp_wi_result *r = NULL;
    CHECK(fp_wi_meta_load(meta_path, &meta) == FP_OK);
    CHECK(meta.dp_size == 2 && meta.pp_size == 4 && meta.world_size == 8);
    CHECK(fp_wi_trace_load_csv(trace_path, &trace) == FP_OK);
    CHECK(fp_wi_trace_rows(trace) == 6784);
    fp_wi_options opt = fp_wi_options_default();
    CHECK(fp_wi_analyze(trace, &meta, &opt, &r) == FP_OK);
    if (!r)
        CHECK_DONE();
    CHECK(r->nsteps == 32 && r->nops == 106);

    /* slowdowns and step times */
    CHECK_NEAR(r->blocking_slowdown, num(res, "blocking_slowdown"), REL);
    CHECK_NEAR(r->launch_slowdown, num(res, "launch_slowdown"), REL);
    check_steps(r, json_object_get(res, "step_t_base"), r->t_base, "step_t_base");
    check_steps(r, json_object_get(res, "step_t_nodelay"), r->t_nodelay, "step_t_nodelay");
    check_steps(r, json_object_get(res, "step_t_noblk"), r->t_ideal, "step_t_noblk");
    check_steps(r, json_object_get(res, "blocking_step_slowdown"), r->blocking_step, "blocking");
    check_steps(r, json_object_get(res, "launch_step_slowdown"), r->launch_step, "launch");

    /* attribution by DP rank, stage and op type, overall and per step */
    check_attr(r, res, FP_WI_BY_DP_RANK, "dp_rank");
    check_attr(r, res, FP_WI_BY_STAGE, "stage");
    check_attr(r, res, FP_WI_BY_OPTYPE, "optype");
    /* the ranking the artifact reports: last stage first, forward compute first */
    CHECK(strcmp(r->blocking[FP_WI_BY_STAGE].items[0].label, "3") == 0);
    CHECK(strcmp(r->blocking[FP_WI_BY_OPTYPE].items[0].label, "forward-compute") == 0);

    /* M_S (last stage) and M_W (slowest 3% of workers: one of eight) */
    check_explain(&r->ms, ms, "Ms");
    check_explain(&r->mw, mw, "Mw");
    CHECK(r->mw_nworkers == 1);
    /* the model replays the measured trace (with its launch delays) exactly */
    CHECK(r->replay_error < 1e-6);

    fp_wi_result_free(r);
    fp_wi_trace_free(trace);
    json_decref(res);
    json_decref(ms);
    json_decref(mw);
    CHECK_DONE();
}
