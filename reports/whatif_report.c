/* What-if analysis results as JSON (the artifact's field names) and as a short
 * console summary. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/whatif.h"

/* ---- JSON ------------------------------------------------------------------------- */

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* {"<step>": v[s]} in step order */
static json_t *per_step(const fp_wi_result *r, const double *v)
{
    json_t *o = json_object();
    for (int s = 0; s < r->nsteps; s++) {
        char k[16];
        snprintf(k, sizeof k, "%d", r->steps[s]);
        json_object_set_new(o, k, num(v[s]));
    }
    return o;
}

/* {"<step>": v[s]} ordered by value, largest first, as the artifact writes it */
static json_t *per_step_sorted(const fp_wi_result *r, const double *v)
{
    int *idx = malloc((size_t)r->nsteps * sizeof *idx);
    json_t *o = json_object();
    if (!idx)
        return o;
    for (int s = 0; s < r->nsteps; s++)
        idx[s] = s;
    for (int i = 1; i < r->nsteps; i++) /* insertion sort: steps are few */
        for (int j = i; j > 0 && v[idx[j]] > v[idx[j - 1]]; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    for (int i = 0; i < r->nsteps; i++) {
        char k[16];
        snprintf(k, sizeof k, "%d", r->steps[idx[i]]);
        json_object_set_new(o, k, num(v[idx[i]]));
    }
    free(idx);
    return o;
}

static json_t *attribution(const fp_wi_attribution *a)
{
    if (!a->done)
        return json_null();
    json_t *o = json_object();
    for (int k = 0; k < a->n; k++)
        json_object_set_new(o, a->items[k].label, num(a->items[k].slowdown));
    return o;
}

/* {"<step>": {"<label>": v}} with labels ordered by value within each step */
static json_t *attribution_per_step(const fp_wi_result *r, const fp_wi_attribution *a)
{
    if (!a->done)
        return json_null();
    json_t *o = json_object();
    int *idx = malloc((size_t)(a->n ? a->n : 1) * sizeof *idx);
    if (!idx)
        return o;
    for (int s = 0; s < r->nsteps; s++) {
        for (int k = 0; k < a->n; k++)
            idx[k] = k;
        for (int i = 1; i < a->n; i++)
            for (int j = i; j > 0 && a->items[idx[j]].per_step[s] >
                                         a->items[idx[j - 1]].per_step[s];
                 j--) {
                int t = idx[j];
                idx[j] = idx[j - 1];
                idx[j - 1] = t;
            }
        json_t *st = json_object();
        for (int k = 0; k < a->n; k++)
            json_object_set_new(st, a->items[idx[k]].label, num(a->items[idx[k]].per_step[s]));
        char key[16];
        snprintf(key, sizeof key, "%d", r->steps[s]);
        json_object_set_new(o, key, st);
    }
    free(idx);
    return o;
}

static json_t *explain(const fp_wi_explain *e, const char *metric)
{
    if (!e->valid)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "trem", num(e->trem));
    json_object_set_new(o, "tadd", num(e->tadd));
    json_object_set_new(o, "tori", num(e->tori));
    json_object_set_new(o, "tideal", num(e->tideal));
    json_object_set_new(o, "rem", num(e->rem));
    json_object_set_new(o, "add", num(e->add));
    json_object_set_new(o, metric, num(e->rem));
    return o;
}

static const char *const dim_key[FP_WI_DIM_COUNT] = {"dp_rank", "stage", "optype"};

fp_status fp_wi_write_json(const fp_wi_result *r, const char *path)
{
    const fp_wi_meta *m = &r->meta;
    json_t *root = json_object();
    json_t *jm = json_object();
    json_object_set_new(jm, "trial_name", json_string(m->trial_name));
    json_object_set_new(jm, "run_id", json_integer(m->run_id));
    json_object_set_new(jm, "dp_size", json_integer(m->dp_size));
    json_object_set_new(jm, "pp_size", json_integer(m->pp_size));
    json_object_set_new(jm, "tp_size", json_integer(m->tp_size));
    json_object_set_new(jm, "dsp_size", json_integer(m->dsp_size));
    json_object_set_new(jm, "vpp_size", json_integer(m->vpp_size));
    json_object_set_new(jm, "world_size", json_integer(m->world_size));
    json_object_set_new(root, "job_meta", jm);
    json_object_set_new(root, "step_t_base", per_step(r, r->t_base));
    json_object_set_new(root, "step_t_nodelay", per_step(r, r->t_nodelay));
    json_object_set_new(root, "step_t_noblk", per_step(r, r->t_ideal));
    json_object_set_new(root, "launch_slowdown", num(r->launch_slowdown));
    json_object_set_new(root, "blocking_slowdown", num(r->blocking_slowdown));
    json_object_set_new(root, "blocking_step_slowdown", per_step_sorted(r, r->blocking_step));
    json_object_set_new(root, "launch_step_slowdown", per_step_sorted(r, r->launch_step));
    for (int d = 0; d < FP_WI_DIM_COUNT; d++) {
        char k[64];
        snprintf(k, sizeof k, "blocking_decompose_by_%s", dim_key[d]);
        json_object_set_new(root, k, attribution(&r->blocking[d]));
        snprintf(k, sizeof k, "launch_decompose_by_%s", dim_key[d]);
        json_object_set_new(root, k, attribution(&r->launch[d]));
    }
    for (int d = 0; d < FP_WI_DIM_COUNT; d++) {
        char k[64];
        snprintf(k, sizeof k, "blocking_decompose_by_%s_per_step", dim_key[d]);
        json_object_set_new(root, k, attribution_per_step(r, &r->blocking[d]));
        snprintf(k, sizeof k, "launch_decompose_by_%s_per_step", dim_key[d]);
        json_object_set_new(root, k, attribution_per_step(r, &r->launch[d]));
    }
    /* fleetprint additions */
    json_object_set_new(root, "ms", explain(&r->ms, "Ms"));
    json_t *mw = explain(&r->mw, "Mw");
    if (json_is_object(mw)) {
        json_t *ws = json_array();
        for (int k = 0; k < r->mw_nworkers; k++) {
            int w = r->mw_workers[k];
            json_t *o = json_object();
            json_object_set_new(o, "rank", json_integer(r->worker_rank[w]));
            json_object_set_new(o, "dp_rank", json_integer(w % m->dp_size));
            json_object_set_new(o, "stage", json_integer(w / m->dp_size));
            json_array_append_new(ws, o);
        }
        json_object_set_new(mw, "workers", ws);
    }
    json_object_set_new(root, "mw", mw);
    json_t *grid = json_array();
    for (int s = 0; s < m->pp_size; s++) {
        json_t *row = json_array();
        for (int d = 0; d < m->dp_size; d++)
            json_array_append_new(row, num(r->worker_slowdown[s * m->dp_size + d]));
        json_array_append_new(grid, row);
    }
    json_object_set_new(root, "worker_slowdown_by_stage_then_dp_rank", grid);
    json_object_set_new(root, "gpu_waste", num(1.0 - 1.0 / r->blocking_slowdown));
    json_object_set_new(root, "replay_error", num(r->replay_error));
    json_object_set_new(root, "rows", json_integer((json_int_t)r->nrows));

    return fp_json_write(root, path);
}

/* ---- console ---------------------------------------------------------------------- */

static void top(FILE *out, const char *what, const fp_wi_attribution *a, int n)
{
    fprintf(out, "  by %-9s", what);
    for (int k = 0; k < a->n && k < n; k++)
        fprintf(out, "%s %s %.3f", k ? "," : "", a->items[k].label, a->items[k].slowdown);
    fprintf(out, "\n");
}

void fp_wi_print_summary(FILE *out, const fp_wi_result *r)
{
    const fp_wi_meta *m = &r->meta;
    double tb = 0, ti = 0;
    for (int s = 0; s < r->nsteps; s++) {
        tb += r->t_nodelay[s];
        ti += r->t_ideal[s];
    }
    tb /= r->nsteps;
    ti /= r->nsteps;
    fprintf(out, "what-if analysis of %s: %zu rows, %d steps, dp %d x pp %d (%d ops per step "
                 "and model-parallel group)\n",
            m->trial_name, r->nrows, r->nsteps, m->dp_size, m->pp_size, r->nops);
    fprintf(out, "  straggler slowdown S = %.4f  (T %.4f s, T_ideal %.4f s, GPU waste %.1f%%)\n",
            r->blocking_slowdown, tb, ti, 100.0 * (1.0 - 1.0 / r->blocking_slowdown));
    fprintf(out, "  launch-delay slowdown %.4f; replay reproduces measured step times within "
                 "%.2f%% on average\n",
            r->launch_slowdown, 100.0 * r->replay_error);
    if (!r->blocking[FP_WI_BY_DP_RANK].done) {
        fprintf(out, "  S is below the attribution threshold: no straggler to attribute\n");
    } else {
        fprintf(out, "attribution (slowdown with only that group measured):\n");
        top(out, "op type", &r->blocking[FP_WI_BY_OPTYPE], 4);
        top(out, "stage", &r->blocking[FP_WI_BY_STAGE], 4);
        top(out, "DP rank", &r->blocking[FP_WI_BY_DP_RANK], 4);
    }
    if (r->mw.valid) {
        int w0 = r->mw_workers[0];
        fprintf(out, "  M_W = %.1f%% of the slowdown goes away when the slowest %d worker(s) "
                     "(first: rank %d, dp %d stage %d) are ideal\n",
                100.0 * r->mw.rem, r->mw_nworkers, r->worker_rank[w0], w0 % m->dp_size,
                w0 / m->dp_size);
    }
    if (r->ms.valid)
        fprintf(out, "  M_S = %.1f%% of the slowdown goes away when the last stage is ideal\n",
                100.0 * r->ms.rem);
    if (r->blocking[FP_WI_BY_DP_RANK].done && r->ms.valid && r->mw.valid) {
        const char *hint = "stragglers are spread over workers and steps (e.g. sequence-length "
                           "imbalance)";
        if (r->mw.rem >= 0.5)
            hint = "a few workers cause most of it: check those machines";
        else if (r->ms.rem >= 0.5)
            hint = "the last stage is slower than the others: rebalance the stage partitioning";
        fprintf(out, "  pattern: %s\n", hint);
    }
}
