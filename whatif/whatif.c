/* What-if straggler analysis: dependency model, replay and attribution.
 *
 * The model follows the published artifact of arXiv 2505.05713
 * (ByteDance-Seed/StragglerAnalysis), re-derived here:
 *  - An op is (type, seq_id, stage). The dependency model is built once from the
 *    reference instance (DP rank 0, first step) and shared by every DP rank and
 *    step; every (DP rank, step) must hold the same ops.
 *  - Streams per worker: one compute stream (forward/backward in start order),
 *    one stream per P2P direction and kind, one DP-communication stream
 *    (params-all-gather, grads-reduce-scatter). A receive precedes the compute
 *    that consumes it and follows the previous compute of that kind; a send
 *    follows the compute that produced it. The first backward send/recv waits
 *    for the forward two computes before the first backward.
 *  - params-all-gather precedes the first forward of its model chunk; after the
 *    last compute: gc -> layernorm-grads-all-reduce -> embedding-grads-all-reduce
 *    (first and last stage) -> grads-reduce-scatter (or separate-grads-all-reduce
 *    when DP communication overlaps) -> optimizer-clip-main-grad -> optimizer.
 *  - Communication groups: each P2P send with its peer's recv; embedding
 *    all-reduce of the first and last stage; clip across all stages; every DP
 *    collective and the clip also across DP ranks. A group's ops all end at the
 *    latest member start plus their own transfer time.
 *  - Replay: an op starts at the latest end of its dependencies plus its launch
 *    delay (the gap the trace shows after its dependencies, CPU work the model
 *    does not see). Ideal: compute types take their mean duration, communication
 *    types their median transfer time, no launch delay.
 * Results use the artifact's definitions: launch slowdown = T_base / T_nodelay,
 * blocking slowdown S = T_nodelay / T_ideal (means over steps), attribution =
 * replay with one group measured and the rest ideal, M_S and M_W = share of the
 * slowdown removed by making the last stage / the slowest 3% of workers ideal. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/stats.h"
#include "whatif_internal.h"

/* ---- replay --------------------------------------------------------------------------- */

/* Replay every step of every DP rank. cost is the duration of compute-like ops
 * and the transfer time of grouped ops; delay (NULL: none) the launch delay.
 * Fills start and end ([nops*ninst], step-relative), t_opt (latest optimizer end
 * per step) and t_span (last end - first start per step); tmp has ninst slots. */
static void simulate(const wi_model *m, const double *cost, const double *delay, double *start,
                     double *end, double *t_opt, double *t_span, double *tmp)
{
    const int ni = m->ninst, dp = m->dp;
    for (int k = 0; k < m->nops; k++) {
        int v = m->sched_op[k];
        const wi_op *o = &m->ops[v];
        double *sv = start + (size_t)v * ni;
        const double *dv = delay ? delay + (size_t)v * ni : NULL;
        if (o->ndeps == 0) {
            for (int i = 0; i < ni; i++)
                sv[i] = dv ? dv[i] : 0.0;
        } else {
            const double *e0 = end + (size_t)o->deps[0] * ni;
            for (int i = 0; i < ni; i++)
                sv[i] = e0[i];
            for (int j = 1; j < o->ndeps; j++) {
                const double *ej = end + (size_t)o->deps[j] * ni;
                for (int i = 0; i < ni; i++)
                    sv[i] = ej[i] > sv[i] ? ej[i] : sv[i];
            }
            if (dv)
                for (int i = 0; i < ni; i++)
                    sv[i] += dv[i];
        }
        if (o->gid < 0) {
            const double *cv = cost + (size_t)v * ni;
            double *ev = end + (size_t)v * ni;
            for (int i = 0; i < ni; i++)
                ev[i] = sv[i] + cv[i];
        }
        int g = m->sched_fin[k];
        if (g < 0)
            continue;
        const wi_group *gr = &m->groups[g];
        for (int i = 0; i < ni; i++)
            tmp[i] = -INFINITY;
        for (int j = 0; j < gr->n; j++) {
            const double *sj = start + (size_t)gr->members[j] * ni;
            for (int i = 0; i < ni; i++)
                tmp[i] = sj[i] > tmp[i] ? sj[i] : tmp[i];
        }
        if (gr->dp_sync)
            for (int s = 0; s < m->nsteps; s++) {
                double mx = -INFINITY;
                for (int d = 0; d < dp; d++)
                    mx = fmax(mx, tmp[s * dp + d]);
                for (int d = 0; d < dp; d++)
                    tmp[s * dp + d] = mx;
            }
        for (int j = 0; j < gr->n; j++) {
            int u = gr->members[j];
            const double *cu = cost + (size_t)u * ni;
            double *eu = end + (size_t)u * ni;
            for (int i = 0; i < ni; i++)
                eu[i] = tmp[i] + cu[i];
        }
    }
    for (int s = 0; s < m->nsteps; s++) {
        double lo = INFINITY, hi = -INFINITY, opt = -INFINITY;
        for (int v = 0; v < m->nops; v++) {
            const double *sv = start + (size_t)v * ni + (size_t)s * dp;
            const double *ev = end + (size_t)v * ni + (size_t)s * dp;
            bool is_opt = m->ops[v].type == FP_WI_OPTIMIZER;
            for (int d = 0; d < dp; d++) {
                lo = sv[d] < lo ? sv[d] : lo;
                hi = ev[d] > hi ? ev[d] : hi;
                if (is_opt)
                    opt = ev[d] > opt ? ev[d] : opt;
            }
        }
        t_opt[s] = opt;
        t_span[s] = hi - lo;
    }
}

static double mean(const double *x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i];
    return n ? s / n : NAN;
}

/* ---- analysis ----------------------------------------------------------------------- */

typedef struct wi_work {
    const wi_model *m;
    size_t cells;              /* nops * ninst */
    double *o_start, *o_end;   /* measured, step-relative */
    double *o_cost, *o_delay;  /* measured duration or transfer; launch delay */
    double *i_cost;            /* ideal */
    double *mix, *s_start, *s_end, *tmp;
    double *t_opt, *t_span;    /* [nsteps] scratch */
    double *t_nd_opt, *t_ideal_opt; /* denominators of the two slowdowns */
} wi_work;

/* mix = sel ? a : b, where sel holds for op v in instance i when op_mask[v] and
 * worker_mask[stage(v) * dp + dp(i)]; NULL masks select everything. */
static void mix_cost(const wi_work *w, const bool *op_mask, const bool *worker_mask,
                     const double *a, const double *b, double *out)
{
    const wi_model *m = w->m;
    const size_t ni = (size_t)m->ninst;
    for (int v = 0; v < m->nops; v++) {
        size_t off = (size_t)v * ni;
        if (op_mask && !op_mask[v]) {
            if (out != b)
                memcpy(out + off, b + off, ni * sizeof *out);
            continue;
        }
        if (!worker_mask) {
            if (out != a)
                memcpy(out + off, a + off, ni * sizeof *out);
            continue;
        }
        const bool *wm = worker_mask + (size_t)m->ops[v].stage * m->dp;
        for (size_t i = 0; i < ni; i += (size_t)m->dp)
            for (int d = 0; d < m->dp; d++)
                out[off + i + d] = wm[d] ? a[off + i + d] : b[off + i + d];
    }
}

/* Label of an op for attribution by type: P2P kinds merge into pp-comm. */
static const char *type_label(fp_wi_optype t)
{
    switch (t) {
    case FP_WI_FORWARD_SEND:
    case FP_WI_FORWARD_RECV:
        return "forward-pp-comm";
    case FP_WI_BACKWARD_SEND:
    case FP_WI_BACKWARD_RECV:
        return "backward-pp-comm";
    default:
        return fp_wi_optype_name(t);
    }
}

static int cmp_attr(const void *a, const void *b)
{
    const fp_wi_attr *x = a, *y = b;
    return (x->slowdown < y->slowdown) - (x->slowdown > y->slowdown);
}

/* One attribution item: replay with the selection measured (launch: its delays)
 * and the rest ideal; ratios against the ideal replay's optimizer ends. */
static fp_status attr_item(wi_work *w, bool launch, const bool *op_mask, const bool *worker_mask,
                           const char *label, fp_wi_attr *item)
{
    const wi_model *m = w->m;
    snprintf(item->label, sizeof item->label, "%s", label);
    item->per_step = malloc((size_t)m->nsteps * sizeof *item->per_step);
    fp_status st = FP_OK;
    FP_CHECK_ALLOC(item->per_step);
    const double *den = launch ? w->t_nd_opt : w->t_ideal_opt;
    if (launch) {
        /* measured costs; delays only for the selection (zero elsewhere) */
        for (size_t k = 0; k < w->cells; k++)
            w->mix[k] = 0.0;
        mix_cost(w, op_mask, worker_mask, w->o_delay, w->mix, w->mix);
        simulate(m, w->o_cost, w->mix, w->s_start, w->s_end, w->t_opt, w->t_span, w->tmp);
    } else {
        mix_cost(w, op_mask, worker_mask, w->o_cost, w->i_cost, w->mix);
        simulate(m, w->mix, NULL, w->s_start, w->s_end, w->t_opt, w->t_span, w->tmp);
    }
    for (int s = 0; s < m->nsteps; s++)
        item->per_step[s] = w->t_opt[s] / den[s];
    item->slowdown = mean(w->t_opt, m->nsteps) / mean(den, m->nsteps);
cleanup:
    return st;
}

/* Attribution by DP rank, stage and op type. */
static fp_status attribute(wi_work *w, bool launch, fp_wi_attribution out[FP_WI_DIM_COUNT])
{
    fp_status st = FP_OK;
    const wi_model *m = w->m;
    int nw = m->dp * m->pp;
    bool *wmask = malloc((size_t)nw);
    bool *omask = malloc((size_t)m->nops);
    const char **labels = malloc((size_t)(m->nops + 1) * sizeof *labels);
    const char **oplabel = malloc((size_t)m->nops * sizeof *oplabel);
    FP_CHECK_ALLOC(wmask);
    FP_CHECK_ALLOC(omask);
    FP_CHECK_ALLOC(labels);
    FP_CHECK_ALLOC(oplabel);
    /* by DP rank */
    out[FP_WI_BY_DP_RANK].items = calloc((size_t)m->dp, sizeof(fp_wi_attr));
    FP_CHECK_ALLOC(out[FP_WI_BY_DP_RANK].items);
    for (int d = 0; d < m->dp; d++) {
        for (int k = 0; k < nw; k++)
            wmask[k] = k % m->dp == d;
        char lab[16];
        snprintf(lab, sizeof lab, "%d", d);
        FP_CHECK(attr_item(w, launch, NULL, wmask, lab, &out[FP_WI_BY_DP_RANK].items[d]));
        out[FP_WI_BY_DP_RANK].n++;
    }
    /* by stage */
    out[FP_WI_BY_STAGE].items = calloc((size_t)m->pp, sizeof(fp_wi_attr));
    FP_CHECK_ALLOC(out[FP_WI_BY_STAGE].items);
    for (int s = 0; s < m->pp; s++) {
        for (int v = 0; v < m->nops; v++)
            omask[v] = m->ops[v].stage == s;
        char lab[16];
        snprintf(lab, sizeof lab, "%d", s);
        FP_CHECK(attr_item(w, launch, omask, NULL, lab, &out[FP_WI_BY_STAGE].items[s]));
        out[FP_WI_BY_STAGE].n++;
    }
    /* by op type; for launch delays the op that opens a stage's step is its own
     * group ("first-op"): its delay is the step's start-up, not a straggler */
    int nl = 0;
    for (int v = 0; v < m->nops; v++) {
        const wi_op *o = &m->ops[v];
        const char *l = type_label(o->type);
        if (launch && o->seq == 0 &&
            ((o->stage == 0 && o->type == FP_WI_FORWARD_COMPUTE) ||
             (o->stage > 0 && o->type == FP_WI_FORWARD_RECV)))
            l = "first-op";
        oplabel[v] = l;
        bool seen = false;
        for (int k = 0; k < nl && !seen; k++)
            seen = strcmp(labels[k], l) == 0;
        if (!seen)
            labels[nl++] = l;
    }
    out[FP_WI_BY_OPTYPE].items = calloc((size_t)nl, sizeof(fp_wi_attr));
    FP_CHECK_ALLOC(out[FP_WI_BY_OPTYPE].items);
    for (int k = 0; k < nl; k++) {
        for (int v = 0; v < m->nops; v++)
            omask[v] = strcmp(oplabel[v], labels[k]) == 0;
        FP_CHECK(attr_item(w, launch, omask, NULL, labels[k], &out[FP_WI_BY_OPTYPE].items[k]));
        out[FP_WI_BY_OPTYPE].n++;
    }
    for (int d = 0; d < FP_WI_DIM_COUNT; d++)
        out[d].done = true;
cleanup:
    free(wmask);
    free(omask);
    free(labels);
    free(oplabel);
    return st;
}

/* The artifact's explain_slowdown between the no-delay replay (measured costs)
 * and the ideal one, for the ops of the workers in worker_mask. */
static void explain(wi_work *w, const bool *worker_mask, double tori, double tideal,
                    fp_wi_explain *out)
{
    const wi_model *m = w->m;
    out->tori = tori;
    out->tideal = tideal;
    mix_cost(w, NULL, worker_mask, w->i_cost, w->o_cost, w->mix);
    simulate(m, w->mix, NULL, w->s_start, w->s_end, w->t_opt, w->t_span, w->tmp);
    out->trem = mean(w->t_span, m->nsteps);
    mix_cost(w, NULL, worker_mask, w->o_cost, w->i_cost, w->mix);
    simulate(m, w->mix, NULL, w->s_start, w->s_end, w->t_opt, w->t_span, w->tmp);
    out->tadd = mean(w->t_span, m->nsteps);
    double gap = tori - tideal;
    out->valid = gap > 1e-12 * fabs(tori);
    out->rem = out->valid ? (tori - out->trem) / gap : NAN;
    out->add = out->valid ? (out->tadd - tideal) / gap : NAN;
}

fp_wi_options fp_wi_options_default(void)
{
    return (fp_wi_options){.decompose_threshold = 1.03, .worker_share = 0.03,
                           .keep_timeline = false};
}

static void timeline_free(fp_wi_timeline *tl)
{
    if (!tl)
        return;
    free(tl->optype);
    free(tl->stage);
    free(tl->seq);
    free(tl->is_comm);
    free(tl->orig_start);
    free(tl->orig_end);
    free(tl->orig_cost);
    free(tl->ideal_start);
    free(tl->ideal_end);
    free(tl->ideal_cost);
    free(tl);
}

void fp_wi_result_free(fp_wi_result *r)
{
    if (!r)
        return;
    free(r->steps);
    free(r->t_base);
    free(r->t_replay);
    free(r->t_nodelay);
    free(r->t_ideal);
    free(r->launch_step);
    free(r->blocking_step);
    for (int d = 0; d < FP_WI_DIM_COUNT; d++) {
        for (int k = 0; k < r->blocking[d].n; k++)
            free(r->blocking[d].items[k].per_step);
        for (int k = 0; k < r->launch[d].n; k++)
            free(r->launch[d].items[k].per_step);
        free(r->blocking[d].items);
        free(r->launch[d].items);
    }
    free(r->worker_slowdown);
    free(r->worker_rank);
    free(r->mw_workers);
    timeline_free(r->timeline);
    free(r);
}

const fp_wi_attr *fp_wi_attr_find(const fp_wi_attribution *a, const char *label)
{
    for (int k = 0; a && k < a->n; k++)
        if (strcmp(a->items[k].label, label) == 0)
            return &a->items[k];
    return NULL;
}

/* Measured per-op arrays: step-relative times, transfer times of grouped ops,
 * launch delays; ideal costs per op type. */
static fp_status measure(const fp_wi_trace *t, const int *row_of, wi_work *w)
{
    fp_status st = FP_OK;
    const wi_model *m = w->m;
    const int ni = m->ninst, dp = m->dp;
    double *step0 = malloc((size_t)m->nsteps * sizeof *step0);
    double *vals = malloc(w->cells * sizeof *vals);
    FP_CHECK_ALLOC(step0);
    FP_CHECK_ALLOC(vals);
    for (int s = 0; s < m->nsteps; s++)
        step0[s] = INFINITY;
    for (size_t k = 0; k < w->cells; k++) {
        int s = (int)(k % (size_t)ni) / dp;
        step0[s] = fmin(step0[s], t->rows[row_of[k]].start_ts);
    }
    for (size_t k = 0; k < w->cells; k++) {
        const fp_wi_row *r = &t->rows[row_of[k]];
        int s = (int)(k % (size_t)ni) / dp;
        w->o_start[k] = r->start_ts - step0[s];
        w->o_end[k] = w->o_start[k] + r->duration;
        w->o_cost[k] = r->duration;
    }
    /* transfer time: end minus the latest start among the group (and, for DP
     * collectives, among the DP ranks) */
    for (int g = 0; g < m->ngroups; g++) {
        const wi_group *gr = &m->groups[g];
        for (int i = 0; i < ni; i++)
            w->tmp[i] = -INFINITY;
        for (int j = 0; j < gr->n; j++)
            for (int i = 0; i < ni; i++)
                w->tmp[i] = fmax(w->tmp[i], w->o_start[(size_t)gr->members[j] * ni + i]);
        if (gr->dp_sync)
            for (int s = 0; s < m->nsteps; s++) {
                double mx = -INFINITY;
                for (int d = 0; d < dp; d++)
                    mx = fmax(mx, w->tmp[s * dp + d]);
                for (int d = 0; d < dp; d++)
                    w->tmp[s * dp + d] = mx;
            }
        for (int j = 0; j < gr->n; j++)
            for (int i = 0; i < ni; i++) {
                size_t k = (size_t)gr->members[j] * ni + i;
                double tr = w->o_end[k] - w->tmp[i];
                w->o_cost[k] = tr <= NEG_CLAMP ? 0.0 : tr;
            }
    }
    /* launch delay: start minus the latest end of the dependencies (or the
     * step's start) */
    for (int v = 0; v < m->nops; v++) {
        const wi_op *o = &m->ops[v];
        for (int i = 0; i < ni; i++) {
            double ready = 0.0;
            if (o->ndeps) {
                ready = -INFINITY;
                for (int j = 0; j < o->ndeps; j++)
                    ready = fmax(ready, w->o_end[(size_t)o->deps[j] * ni + i]);
            }
            double dl = w->o_start[(size_t)v * ni + i] - ready;
            w->o_delay[(size_t)v * ni + i] = dl <= NEG_CLAMP ? 0.0 : dl;
        }
    }
    /* ideal costs: mean duration for compute types, median transfer (or
     * duration, for ungrouped ones) for communication types */
    for (int ty = 0; ty < FP_WI_OPTYPE_COUNT; ty++)
        for (int grouped = 0; grouped < 2; grouped++) {
            size_t n = 0;
            for (int v = 0; v < m->nops; v++)
                if ((int)m->ops[v].type == ty && (m->ops[v].gid >= 0) == grouped)
                    for (int i = 0; i < ni; i++)
                        vals[n++] = w->o_cost[(size_t)v * ni + i];
            if (n == 0)
                continue;
            double ideal;
            if (fp_wi_optype_is_comm((fp_wi_optype)ty)) {
                ideal = fp_median(vals, n);
            } else {
                double s = 0;
                for (size_t k = 0; k < n; k++)
                    s += vals[k];
                ideal = s / (double)n;
            }
            for (int v = 0; v < m->nops; v++)
                if ((int)m->ops[v].type == ty && (m->ops[v].gid >= 0) == grouped)
                    for (int i = 0; i < ni; i++)
                        w->i_cost[(size_t)v * ni + i] = ideal;
        }
cleanup:
    free(step0);
    free(vals);
    return st;
}

static fp_status keep_timeline(const wi_work *w, fp_wi_result *r)
{
    fp_status st = FP_OK;
    const wi_model *m = w->m;
    fp_wi_timeline *tl = calloc(1, sizeof *tl);
    FP_CHECK_ALLOC(tl);
    r->timeline = tl;
    tl->nops = m->nops;
    tl->ninst = m->ninst;
    tl->optype = malloc((size_t)m->nops * sizeof *tl->optype);
    tl->stage = malloc((size_t)m->nops * sizeof *tl->stage);
    tl->seq = malloc((size_t)m->nops * sizeof *tl->seq);
    tl->is_comm = malloc((size_t)m->nops * sizeof *tl->is_comm);
    FP_CHECK_ALLOC(tl->optype);
    FP_CHECK_ALLOC(tl->stage);
    FP_CHECK_ALLOC(tl->seq);
    FP_CHECK_ALLOC(tl->is_comm);
    for (int v = 0; v < m->nops; v++) {
        tl->optype[v] = m->ops[v].type;
        tl->stage[v] = m->ops[v].stage;
        tl->seq[v] = m->ops[v].seq;
        tl->is_comm[v] = m->ops[v].gid >= 0;
    }
    double **dst[] = {&tl->orig_start, &tl->orig_end, &tl->orig_cost,
                      &tl->ideal_start, &tl->ideal_end, &tl->ideal_cost};
    const double *src[] = {w->o_start, w->o_end, w->o_cost, w->s_start, w->s_end, w->i_cost};
    for (int k = 0; k < 6; k++) {
        *dst[k] = malloc(w->cells * sizeof(double));
        FP_CHECK_ALLOC(*dst[k]);
        memcpy(*dst[k], src[k], w->cells * sizeof(double));
    }
cleanup:
    return st;
}

typedef struct {
    double score;
    int rank, worker;
} wi_score;

static int cmp_score(const void *a, const void *b)
{
    const wi_score *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The work arrays of model m in w (w->m = m); the caller frees them, also on
 * error. */
static fp_status work_alloc(wi_work *w, const wi_model *m)
{
    fp_status st = FP_OK;
    const int ns = m->nsteps;
    w->m = m;
    w->cells = (size_t)m->nops * (size_t)m->ninst;
    double **arrs[] = {&w->o_start, &w->o_end, &w->o_cost, &w->o_delay, &w->i_cost,
                       &w->mix,     &w->s_start, &w->s_end};
    for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) {
        *arrs[k] = malloc(w->cells * sizeof(double));
        FP_CHECK_ALLOC(*arrs[k]);
    }
    w->tmp = malloc((size_t)m->ninst * sizeof *w->tmp);
    w->t_opt = malloc((size_t)ns * sizeof *w->t_opt);
    w->t_span = malloc((size_t)ns * sizeof *w->t_span);
    w->t_nd_opt = malloc((size_t)ns * sizeof *w->t_nd_opt);
    w->t_ideal_opt = malloc((size_t)ns * sizeof *w->t_ideal_opt);
    FP_CHECK_ALLOC(w->tmp);
    FP_CHECK_ALLOC(w->t_opt);
    FP_CHECK_ALLOC(w->t_span);
    FP_CHECK_ALLOC(w->t_nd_opt);
    FP_CHECK_ALLOC(w->t_ideal_opt);
cleanup:
    return st;
}

/* A new result for the trace of n rows under meta on model m: its steps and
 * worker ranks copied, its per-step and per-worker arrays allocated. */
static fp_status result_alloc(const fp_wi_meta *meta, size_t n, const wi_model *m,
                              fp_wi_result **out)
{
    fp_status st = FP_OK;
    const int ns = m->nsteps, nw = m->dp * m->pp;
    fp_wi_result *r = calloc(1, sizeof *r);
    FP_CHECK_ALLOC(r);
    r->meta = *meta;
    r->nrows = n;
    r->nops = m->nops;
    r->nsteps = ns;
    r->steps = malloc((size_t)ns * sizeof *r->steps);
    FP_CHECK_ALLOC(r->steps);
    memcpy(r->steps, m->steps, (size_t)ns * sizeof *r->steps);
    double **rarrs[] = {&r->t_base,      &r->t_replay,      &r->t_nodelay, &r->t_ideal,
                        &r->launch_step, &r->blocking_step};
    for (size_t k = 0; k < sizeof rarrs / sizeof rarrs[0]; k++) {
        *rarrs[k] = malloc((size_t)ns * sizeof(double));
        FP_CHECK_ALLOC(*rarrs[k]);
    }
    r->worker_slowdown = malloc((size_t)nw * sizeof *r->worker_slowdown);
    r->worker_rank = malloc((size_t)nw * sizeof *r->worker_rank);
    FP_CHECK_ALLOC(r->worker_slowdown);
    FP_CHECK_ALLOC(r->worker_rank);
    memcpy(r->worker_rank, m->worker_rank, (size_t)nw * sizeof *r->worker_rank);
    *out = r;
    r = NULL;
cleanup:
    fp_wi_result_free(r);
    return st;
}

/* Step times: measured, replayed with the measured delays (the model's
 * error), without launch delays and ideal; the two slowdowns per step and
 * overall. FP_EINPUT where a step replays to zero length. */
static fp_status replay_steps(wi_work *w, const fp_wi_trace *trace, fp_wi_result *r,
                              bool keep)
{
    fp_status st = FP_OK;
    const wi_model *m = w->m;
    const int ns = m->nsteps;
    for (int s = 0; s < ns; s++) {
        double hi = -INFINITY;
        for (int v = 0; v < m->nops; v++)
            for (int d = 0; d < m->dp; d++)
                hi = fmax(hi, w->o_end[(size_t)v * m->ninst + (size_t)s * m->dp + d]);
        r->t_base[s] = hi; /* relative to the step's first start */
    }
    /* replay with the measured delays: how well the model reproduces the trace */
    simulate(m, w->o_cost, w->o_delay, w->s_start, w->s_end, w->t_opt, r->t_replay, w->tmp);
    double err = 0;
    for (int s = 0; s < ns; s++)
        err += fabs(r->t_replay[s] - r->t_base[s]) / r->t_base[s];
    r->replay_error = err / ns;
    /* without launch delays */
    simulate(m, w->o_cost, NULL, w->s_start, w->s_end, w->t_nd_opt, r->t_nodelay, w->tmp);
    /* ideal */
    simulate(m, w->i_cost, NULL, w->s_start, w->s_end, w->t_ideal_opt, r->t_ideal, w->tmp);
    for (int s = 0; s < ns; s++)
        if (!(w->t_nd_opt[s] > 0) || !(w->t_ideal_opt[s] > 0))
            FP_CHECK(fp__wi_bad("%s: step %d replays to zero length; durations are all zero?",
                                trace->source, m->steps[s]));
    if (keep)
        FP_CHECK(keep_timeline(w, r));
    for (int s = 0; s < ns; s++) {
        r->launch_step[s] = r->t_base[s] / w->t_nd_opt[s];
        r->blocking_step[s] = r->t_nodelay[s] / w->t_ideal_opt[s];
    }
    r->launch_slowdown = mean(r->t_base, ns) / mean(w->t_nd_opt, ns);
    r->blocking_slowdown = mean(r->t_nodelay, ns) / mean(w->t_ideal_opt, ns);
cleanup:
    return st;
}

/* What making workers ideal explains: M_S the last stage, M_W the slowest
 * share of workers (where blocking was attributed by DP rank). */
static fp_status explain_workers(wi_work *w, const fp_wi_options *opt, fp_wi_result *r)
{
    fp_status st = FP_OK;
    const wi_model *m = w->m;
    const int ns = m->nsteps, nw = m->dp * m->pp;
    wi_score *scores = NULL;
    double tori = mean(r->t_nodelay, ns), tideal = mean(r->t_ideal, ns);
    bool *wmask = malloc((size_t)nw);
    FP_CHECK_ALLOC(wmask);
    for (int k = 0; k < nw; k++)
        wmask[k] = k / m->dp == m->pp - 1;
    explain(w, wmask, tori, tideal, &r->ms);
    if (r->blocking[FP_WI_BY_DP_RANK].done) {
        scores = malloc((size_t)nw * sizeof *scores);
        FP_CHECK_ALLOC(scores);
        for (int k = 0; k < nw; k++)
            scores[k] = (wi_score){r->worker_slowdown[k], m->worker_rank[k], k};
        qsort(scores, (size_t)nw, sizeof *scores, cmp_score);
        int n = (int)ceil(nw * opt->worker_share - 1e-9);
        if (n < 1)
            n = 1;
        if (n > nw)
            n = nw;
        r->mw_workers = malloc((size_t)n * sizeof *r->mw_workers);
        FP_CHECK_ALLOC(r->mw_workers);
        for (int k = 0; k < nw; k++)
            wmask[k] = false;
        for (int k = 0; k < n; k++) {
            r->mw_workers[k] = scores[k].worker;
            wmask[scores[k].worker] = true;
        }
        r->mw_nworkers = n;
        explain(w, wmask, tori, tideal, &r->mw);
    }
cleanup:
    free(wmask);
    free(scores);
    return st;
}

fp_status fp_wi_analyze(const fp_wi_trace *trace, const fp_wi_meta *meta,
                        const fp_wi_options *options, fp_wi_result **out)
{
    fp_status st = FP_OK;
    wi_model m = {0};
    wi_work w = {0};
    int *row_of = NULL;
    fp_wi_result *r = NULL;
    fp_wi_options opt = options ? *options : fp_wi_options_default();
    *out = NULL;
    FP_CHECK(fp_wi_meta_check(meta, trace->source));
    FP_CHECK(fp__wi_build_model(trace, meta, &m, &row_of));
    FP_CHECK(work_alloc(&w, &m));
    FP_CHECK(measure(trace, row_of, &w));
    FP_CHECK(result_alloc(meta, trace->n, &m, &r));
    FP_CHECK(replay_steps(&w, trace, r, opt.keep_timeline));

    /* attribution */
    if (r->blocking_slowdown >= opt.decompose_threshold)
        FP_CHECK(attribute(&w, false, r->blocking));
    if (r->launch_slowdown >= opt.decompose_threshold)
        FP_CHECK(attribute(&w, true, r->launch));
    /* items are still in label order here (rank d at index d); sorted at the end */
    for (int s = 0; s < m.pp; s++)
        for (int d = 0; d < m.dp; d++)
            r->worker_slowdown[s * m.dp + d] =
                r->blocking[FP_WI_BY_DP_RANK].done
                    ? fmin(r->blocking[FP_WI_BY_DP_RANK].items[d].slowdown,
                           r->blocking[FP_WI_BY_STAGE].items[s].slowdown)
                    : NAN;
    FP_CHECK(explain_workers(&w, &opt, r));
    for (int d = 0; d < FP_WI_DIM_COUNT; d++) {
        if (r->blocking[d].done)
            qsort(r->blocking[d].items, (size_t)r->blocking[d].n, sizeof(fp_wi_attr), cmp_attr);
        if (r->launch[d].done)
            qsort(r->launch[d].items, (size_t)r->launch[d].n, sizeof(fp_wi_attr), cmp_attr);
    }
    *out = r;
    r = NULL;
cleanup:
    fp_wi_result_free(r);
    fp__wi_model_free(&m);
    free(row_of);
    free(w.o_start);
    free(w.o_end);
    free(w.o_cost);
    free(w.o_delay);
    free(w.i_cost);
    free(w.mix);
    free(w.s_start);
    free(w.s_end);
    free(w.tmp);
    free(w.t_opt);
    free(w.t_span);
    free(w.t_nd_opt);
    free(w.t_ideal_opt);
    return st;
}
