/* Synthetic what-if traces: play a Megatron-style 1F1B pipeline schedule (no
 * virtual stages) with DP collectives, and record every op as a trace row.
 * Used by tests (planted stragglers must be found) and benches (large traces). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/mem.h"
#include "fleetprint/whatif.h"
#include "whatif_internal.h"

/* ---- schedule ------------------------------------------------------------------------ */

enum { P_FS = FP__WI_FS, P_FR = FP__WI_FR, P_BS = FP__WI_BS, P_BR = FP__WI_BR, P_N }; /* P2P kinds */
static const fp_wi_optype p2p_optype[P_N] = {FP_WI_FORWARD_SEND, FP_WI_FORWARD_RECV,
                                             FP_WI_BACKWARD_SEND, FP_WI_BACKWARD_RECV};

typedef fp__wi_item item;

typedef struct worker {
    item *prog;
    int n, pc;
    double clock, post;
    bool posted;
    int seq[FP_WI_OPTYPE_COUNT];
} worker;

static void add_compute(worker *w, bool fwd, int mb)
{
    w->prog[w->n++] = (item){.compute = true, .fwd = fwd, .mb = mb};
}

static void add_batch(worker *w, int k0, int m0, int k1, int m1)
{
    item it = {.nops = k1 < 0 ? 1 : 2, .kind = {k0, k1}, .mbs = {m0, m1}};
    w->prog[w->n++] = it;
}

/* Megatron's forward_backward_pipelining_without_interleaving for one stage. */
static void build_program(worker *w, int s, int pp, int M)
{
    bool first = s == 0, last = s == pp - 1;
    int warm = pp - s - 1 < M ? pp - s - 1 : M;
    int steady = M - warm;
    for (int i = 0; i < warm; i++) {
        if (!first)
            add_batch(w, P_FR, i, -1, 0);
        add_compute(w, true, i);
        if (!last)
            add_batch(w, P_FS, i, -1, 0);
    }
    if (steady > 0 && !first)
        add_batch(w, P_FR, warm, -1, 0);
    for (int i = 0; i < steady; i++) {
        add_compute(w, true, warm + i);
        if (!last)
            add_batch(w, P_FS, warm + i, P_BR, i);
        add_compute(w, false, i);
        if (!first) {
            if (i == steady - 1)
                add_batch(w, P_BS, i, -1, 0);
            else
                add_batch(w, P_BS, i, P_FR, warm + i + 1);
        }
    }
    for (int i = steady; i < M; i++) {
        if (!last)
            add_batch(w, P_BR, i, -1, 0);
        add_compute(w, false, i);
        if (!first)
            add_batch(w, P_BS, i, -1, 0);
    }
}

int fp__wi_1f1b_program(fp__wi_item *prog, int stage, int pp, int M)
{
    worker w = {.prog = prog};
    build_program(&w, stage, pp, M);
    return w.n;
}

/* ---- recording ------------------------------------------------------------------------ */

typedef struct rows {
    fp_wi_row *v;
    size_t n, cap;
} rows;

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
    return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0);
}

static fp_status emit(rows *r, worker *w, int d, int s, int dp, int step, fp_wi_optype t,
                      double start, double dur, int mc, int mb, int gmc)
{
    fp_status st = FP_OK;
    fp_wi_row *nv = fp_grow(r->v, &r->cap, r->n + 1, sizeof *nv, 4096);
    if (!nv)
        FP_FAIL(FP_ENOMEM, "out of memory for synthetic trace row %zu", r->n + 1);
    r->v = nv;
    r->v[r->n++] = (fp_wi_row){.dp_rank = d, .stage = s, .rank = s * dp + d, .step = step,
                               .optype = t, .start_ts = start, .duration = dur,
                               .seq_id = w->seq[t]++, .mc = mc, .mb_id = mb, .gmc = gmc};
cleanup:
    return st;
}

fp_wi_synth fp_wi_synth_default(void)
{
    return (fp_wi_synth){.dp = 2, .pp = 4, .microbatches = 4, .steps = 4, .fwd = 0.060,
                         .bwd = 0.120, .p2p = 0.001, .allgather = 0.020,
                         .reduce_scatter = 0.040, .embedding = 0.004, .clip = 0.010,
                         .optimizer = 0.030, .last_stage_factor = 1.0, .slow_dp = -1,
                         .slow_stage = -1, .slow_factor = 1.0, .jitter = 0.01, .seed = 1};
}

/* Play the pipeline of one DP replica for one step; clocks advance. */
/* A collective across the DP ranks of each stage (worker s*dp + d): it starts
 * when the last member arrives and takes dur; every member waits for it. */
static fp_status dp_collective(rows *out, worker *ws, int dp, int pp, int step, fp_wi_optype t,
                               double dur)
{
    for (int s = 0; s < pp; s++) {
        double latest = -INFINITY;
        for (int d = 0; d < dp; d++)
            latest = fmax(latest, ws[s * dp + d].clock);
        for (int d = 0; d < dp; d++) {
            worker *w = &ws[s * dp + d];
            fp_status st = emit(out, w, d, s, dp, step, t, w->clock, latest + dur - w->clock, 0,
                                -1, -1);
            if (st != FP_OK)
                return st;
            w->clock = latest + dur;
        }
    }
    return FP_OK;
}

static fp_status play_pipeline(const fp_wi_synth *sp, worker *ws, int d, int step, rows *out,
                               double *post_t, uint64_t *rng)
{
    fp_status st = FP_OK;
    const int pp = sp->pp, M = sp->microbatches;
    /* post_t[(s*P_N + kind)*M + mb]: when the op was posted, -1 before */
    for (int k = 0; k < pp * P_N * M; k++)
        post_t[k] = -1;
    for (;;) {
        bool progress = false, all_done = true;
        for (int s = 0; s < pp; s++) {
            worker *w = &ws[s];
            while (w->pc < w->n) {
                item *it = &w->prog[w->pc];
                if (it->compute) {
                    double base = it->fwd ? sp->fwd : sp->bwd;
                    double f = (s == pp - 1 ? sp->last_stage_factor : 1.0) *
                               (d == sp->slow_dp && s == sp->slow_stage ? sp->slow_factor : 1.0);
                    double dur = base * f * (1.0 + sp->jitter * (2.0 * uniform(rng) - 1.0));
                    st = emit(out, w, d, s, sp->dp, step,
                              it->fwd ? FP_WI_FORWARD_COMPUTE : FP_WI_BACKWARD_COMPUTE,
                              w->clock, dur, 0, it->mb, s);
                    if (st != FP_OK)
                        return st;
                    w->clock += dur;
                    w->pc++;
                    progress = true;
                    continue;
                }
                if (!w->posted) {
                    w->posted = true;
                    w->post = w->clock;
                    for (int j = 0; j < it->nops; j++)
                        post_t[(s * P_N + it->kind[j]) * M + it->mbs[j]] = w->clock;
                    progress = true;
                }
                /* the batch completes when every peer op has been posted */
                double end = w->post;
                bool ready = true;
                for (int j = 0; j < it->nops && ready; j++) {
                    int k = it->kind[j];
                    int ps = k == P_FS || k == P_BR ? s + 1 : s - 1;
                    int pk = k == P_FS ? P_FR : k == P_FR ? P_FS : k == P_BS ? P_BR : P_BS;
                    double pt = post_t[(ps * P_N + pk) * M + it->mbs[j]];
                    if (pt < 0)
                        ready = false;
                    else
                        end = fmax(end, fmax(w->post, pt) + sp->p2p);
                }
                if (!ready)
                    break;
                for (int j = 0; j < it->nops; j++) {
                    st = emit(out, w, d, s, sp->dp, step, p2p_optype[it->kind[j]], w->post,
                              end - w->post, -1, -1, -1);
                    if (st != FP_OK)
                        return st;
                }
                w->clock = end;
                w->posted = false;
                w->pc++;
                progress = true;
            }
            all_done &= w->pc == w->n;
        }
        if (all_done)
            return FP_OK;
        if (!progress)
            return FP_EINTERNAL; /* the schedule deadlocked: a bug in build_program */
    }
}

fp_status fp_wi_synth_rows(const fp_wi_synth *sp, fp_wi_row **rows_out, size_t *n_out)
{
    fp_status st = FP_OK;
    *rows_out = NULL;
    *n_out = 0;
    if (sp->dp < 1 || sp->pp < 1 || sp->microbatches < 1 || sp->steps < 1)
        return FP_EUSAGE;
    const int dp = sp->dp, pp = sp->pp, M = sp->microbatches, nw = dp * pp;
    rows out = {0};
    uint64_t rng = sp->seed;
    worker *ws = calloc((size_t)nw, sizeof *ws);
    double *post_t = malloc((size_t)pp * P_N * (size_t)M * sizeof *post_t);
    double *t_emb = malloc((size_t)dp * sizeof *t_emb);
    FP_CHECK_ALLOC(ws);
    FP_CHECK_ALLOC(post_t);
    FP_CHECK_ALLOC(t_emb);
    for (int k = 0; k < nw; k++) {
        ws[k].prog = malloc((size_t)(6 * M + 4) * sizeof(item));
        FP_CHECK_ALLOC(ws[k].prog);
        build_program(&ws[k], k / dp, pp, M);
    }
    double t0 = 1000.0; /* an arbitrary shared clock */
    for (int step = 0; step < sp->steps; step++) {
        int stepno = 100 + step;
        for (int k = 0; k < nw; k++) {
            memset(ws[k].seq, 0, sizeof ws[k].seq);
            ws[k].pc = 0;
            ws[k].posted = false;
            ws[k].clock = t0 + 2e-4 * uniform(&rng); /* launch skew */
        }
        /* params-all-gather before the first forward of the step */
        FP_CHECK(dp_collective(&out, ws, dp, pp, stepno, FP_WI_PARAMS_ALL_GATHER, sp->allgather));
        /* the pipeline of each replica (workers of replica d are strided by dp) */
        worker *rep = malloc((size_t)pp * sizeof *rep);
        FP_CHECK_ALLOC(rep);
        for (int d = 0; d < dp && st == FP_OK; d++) {
            for (int s = 0; s < pp; s++)
                rep[s] = ws[s * dp + d];
            st = play_pipeline(sp, rep, d, stepno, &out, post_t, &rng);
            for (int s = 0; s < pp; s++)
                ws[s * dp + d] = rep[s];
        }
        free(rep);
        if (st != FP_OK)
            goto cleanup;
        /* tail: gc, layernorm, embedding (first and last stage), DP reduce-scatter,
         * clip (everyone), optimizer */
        for (int k = 0; k < nw; k++) {
            worker *w = &ws[k];
            int s = k / dp, d = k % dp;
            FP_CHECK(emit(&out, w, d, s, dp, stepno, FP_WI_GC, w->clock, 0.0, -1, 0, -1));
            FP_CHECK(emit(&out, w, d, s, dp, stepno, FP_WI_LAYERNORM_GRADS_ALL_REDUCE, w->clock,
                          4e-5, -1, -1, -1));
            w->clock += 4e-5;
        }
        for (int d = 0; d < dp; d++) {
            worker *a = &ws[d], *b = &ws[(pp - 1) * dp + d];
            t_emb[d] = fmax(a->clock, b->clock) + sp->embedding;
        }
        for (int k = 0; k < nw; k++) {
            int s = k / dp, d = k % dp;
            if (s != 0 && s != pp - 1)
                continue;
            worker *w = &ws[k];
            FP_CHECK(emit(&out, w, d, s, dp, stepno, FP_WI_EMBEDDING_GRADS_ALL_REDUCE, w->clock,
                          t_emb[d] - w->clock, -1, -1, -1));
            w->clock = t_emb[d];
        }
        FP_CHECK(dp_collective(&out, ws, dp, pp, stepno, FP_WI_GRADS_REDUCE_SCATTER,
                               sp->reduce_scatter));
        double latest = -INFINITY, step_end = -INFINITY;
        for (int k = 0; k < nw; k++)
            latest = fmax(latest, ws[k].clock);
        for (int k = 0; k < nw; k++) {
            worker *w = &ws[k];
            int s = k / dp, d = k % dp;
            double end = latest + sp->clip;
            FP_CHECK(emit(&out, w, d, s, dp, stepno, FP_WI_OPTIMIZER_CLIP_MAIN_GRAD, w->clock,
                          end - w->clock, -1, -1, -1));
            FP_CHECK(emit(&out, w, d, s, dp, stepno, FP_WI_OPTIMIZER, end, sp->optimizer, -1, -1,
                          -1));
            step_end = fmax(step_end, end + sp->optimizer);
        }
        t0 = step_end + 0.005; /* data loading between steps */
    }
    *rows_out = out.v;
    *n_out = out.n;
    out.v = NULL;
cleanup:
    if (ws)
        for (int k = 0; k < nw; k++)
            free(ws[k].prog);
    free(ws);
    free(post_t);
    free(t_emb);
    free(out.v);
    return st;
}
