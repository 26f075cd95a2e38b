/* What-if analysis on synthetic 1F1B traces with planted causes: a healthy job,
 * one slow worker, a slow last stage. Also the in-memory row API and its
 * rejections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/whatif.h"

static fp_wi_meta meta_for(const fp_wi_synth *sp)
{
    fp_wi_meta m = {.dp_size = sp->dp, .pp_size = sp->pp, .tp_size = 1, .dsp_size = 1,
                    .vpp_size = 1, .world_size = sp->dp * sp->pp};
    snprintf(m.trial_name, sizeof m.trial_name, "synth");
    return m;
}

static fp_wi_result *run(const fp_wi_synth *sp)
{
    fp_wi_row *rows = NULL;
    size_t n = 0;
    fp_wi_trace *t = NULL;
    fp_wi_result *r = NULL;
    CHECK(fp_wi_synth_rows(sp, &rows, &n) == FP_OK);
    /* per model-parallel group and step: 2M computes + 4M P2P on inner stages, 6 DP/tail
     * ops per stage and 2 embedding all-reduces */
    size_t M = (size_t)sp->microbatches, pp = (size_t)sp->pp;
    size_t per = pp * (2 * M + 6) + (pp - 1) * 4 * M + (pp > 1 ? 2 : 1);
    CHECK(n == per * (size_t)sp->dp * (size_t)sp->steps);
    CHECK(fp_wi_trace_from_rows(rows, n, "synth", &t) == FP_OK);
    fp_wi_meta m = meta_for(sp);
    fp_wi_options opt = fp_wi_options_default();
    CHECK(fp_wi_analyze(t, &m, &opt, &r) == FP_OK);
    fp_wi_trace_free(t);
    free(rows);
    return r;
}

static int argmax_worker(const fp_wi_result *r)
{
    int best = 0, nw = r->meta.dp_size * r->meta.pp_size;
    for (int k = 1; k < nw; k++)
        if (r->worker_slowdown[k] > r->worker_slowdown[best])
            best = k;
    return best;
}

static void healthy(void)
{
    fp_wi_synth sp = fp_wi_synth_default();
    fp_wi_result *r = run(&sp);
    if (!r)
        return;
    /* the replay reproduces the generated schedule exactly */
    CHECK(r->replay_error < 1e-9);
    CHECK(r->blocking_slowdown >= 0.999 && r->blocking_slowdown < 1.03);
    CHECK(!r->blocking[FP_WI_BY_DP_RANK].done); /* below the threshold */
    CHECK(!r->mw.valid || r->mw_nworkers == 0);
    fp_wi_result_free(r);
}

static void slow_worker(void)
{
    fp_wi_synth sp = fp_wi_synth_default();
    sp.dp = 4;
    sp.pp = 4;
    sp.microbatches = 8;
    sp.slow_dp = 2;
    sp.slow_stage = 1;
    sp.slow_factor = 1.5;
    fp_wi_result *r = run(&sp);
    if (!r)
        return;
    CHECK(r->replay_error < 1e-9);
    CHECK(r->blocking_slowdown > 1.2);
    CHECK(r->blocking[FP_WI_BY_DP_RANK].done);
    CHECK(strcmp(r->blocking[FP_WI_BY_DP_RANK].items[0].label, "2") == 0);
    CHECK(strcmp(r->blocking[FP_WI_BY_STAGE].items[0].label, "1") == 0);
    CHECK(argmax_worker(r) == 1 * 4 + 2);
    /* one worker of 16 is fixed for M_W and it explains most of the slowdown */
    CHECK(r->mw_nworkers == 1 && r->mw_workers[0] == 1 * 4 + 2);
    CHECK(r->mw.valid && r->mw.rem > 0.8);
    CHECK(r->ms.valid && r->ms.rem < 0.3);
    /* compute, not communication, is to blame */
    const char *top = r->blocking[FP_WI_BY_OPTYPE].items[0].label;
    CHECK(strcmp(top, "forward-compute") == 0 || strcmp(top, "backward-compute") == 0);
    fp_wi_result_free(r);
}

static void slow_last_stage(void)
{
    fp_wi_synth sp = fp_wi_synth_default();
    sp.dp = 4;
    sp.pp = 4;
    sp.microbatches = 8;
    sp.last_stage_factor = 1.4;
    fp_wi_result *r = run(&sp);
    if (!r)
        return;
    CHECK(r->blocking_slowdown > 1.05);
    CHECK(r->blocking[FP_WI_BY_STAGE].done);
    CHECK(strcmp(r->blocking[FP_WI_BY_STAGE].items[0].label, "3") == 0);
    CHECK(r->ms.valid && r->ms.rem > 0.8);
    CHECK(r->mw.valid && r->mw.rem < 0.3);
    /* the whole last row is hot, the rest is not */
    for (int d = 0; d < 4; d++)
        CHECK(r->worker_slowdown[3 * 4 + d] > r->worker_slowdown[0 * 4 + d]);
    fp_wi_result_free(r);
}

static void rejections(void)
{
    fp_wi_synth sp = fp_wi_synth_default();
    fp_wi_row *rows = NULL;
    size_t n = 0;
    fp_wi_trace *t = NULL;
    fp_wi_result *r = NULL;
    fp_wi_meta m = meta_for(&sp);
    CHECK(fp_wi_synth_rows(&sp, &rows, &n) == FP_OK);
    /* a negative duration */
    rows[5].duration = -1;
    CHECK(fp_wi_trace_from_rows(rows, n, "bad", &t) == FP_EINPUT && t == NULL);
    rows[5].duration = 0.001;
    /* a missing op: the last row dropped */
    CHECK(fp_wi_trace_from_rows(rows, n - 1, "short", &t) == FP_OK);
    CHECK(fp_wi_analyze(t, &m, NULL, &r) == FP_EINPUT && r == NULL);
    fp_wi_trace_free(t);
    /* meta that disagrees with the trace */
    CHECK(fp_wi_trace_from_rows(rows, n, "ok", &t) == FP_OK);
    fp_wi_meta bad = m;
    bad.dp_size = 1;
    bad.world_size = bad.pp_size;
    CHECK(fp_wi_analyze(t, &bad, NULL, &r) == FP_EINPUT && r == NULL);
    bad = m;
    bad.world_size = 7;
    CHECK(fp_wi_analyze(t, &bad, NULL, &r) == FP_EINPUT && r == NULL);
    bad = m;
    bad.dp_size = 4;
    bad.world_size = 16;
    CHECK(fp_wi_analyze(t, &bad, NULL, &r) == FP_EINPUT && r == NULL);
    /* the good case still works and finds nothing to attribute */
    CHECK(fp_wi_analyze(t, &m, NULL, &r) == FP_OK && r != NULL);
    fp_wi_result_free(r);
    fp_wi_trace_free(t);
    /* op type names round-trip */
    for (int k = 0; k < FP_WI_OPTYPE_COUNT; k++) {
        fp_wi_optype o;
        const char *name = fp_wi_optype_name((fp_wi_optype)k);
        CHECK(fp_wi_optype_parse(name, strlen(name), &o) && o == (fp_wi_optype)k);
    }
    fp_wi_optype o;
    CHECK(!fp_wi_optype_parse("optimiser", 9, &o));
    free(rows);
}

/* Found by tests/fuzz/fuzz_whatif_meta (UBSan): the size product overflowed,
 * as int when world_size was left out and as long long in fp_wi_meta_check. */
static void meta_overflow(void)
{
    char path[] = "/tmp/fp_meta_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fputs("dp_size: 100000\npp_size: 100000\n", f);
    fclose(f);
    fp_wi_meta m;
    CHECK(fp_wi_meta_load(path, &m) == FP_EINPUT);
    remove(path);
    fp_wi_meta big = {.run_id = 0, .dp_size = 2000000000, .pp_size = 2000000000,
                      .tp_size = 2000000000, .dsp_size = 2000000000, .vpp_size = 1,
                      .world_size = 5};
    CHECK(fp_wi_meta_check(&big, "big") == FP_EINPUT);
    fp_wi_meta ok = {.run_id = 0, .dp_size = 1024, .pp_size = 16, .tp_size = 8,
                     .dsp_size = 1, .vpp_size = 1, .world_size = 131072};
    CHECK(fp_wi_meta_check(&ok, "ok") == FP_OK);
}

int main(void)
{
    healthy();
    slow_worker();
    slow_last_stage();
    rejections();
    meta_overflow();
    CHECK_DONE();
}
