/* Confirmation before acting, the parts the commands share (docs/confirm.md):
 * the link list of a re-test, judging a re-test beside the run it confirms,
 * finding the re-test stored with a run, and the `run` options of a re-test
 * for the CI gate (detect --retest-args). Preflight's own confirm pass (the
 * plan, its budget, the broadcast and the second measurement) is in
 * preflight.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fleetprint/collectives.h"
#include "fleetprint/log.h"
#include "fleetprint/outfile.h"

fp_status fp_app_confirm_pairs(const fp_confirm_plan *p, const fp_run *run, char **list,
                               fp_link_plan *lp)
{
    fp_status st = FP_OK;
    char err[160];
    size_t len = 0;
    FILE *mem = NULL;
    *list = NULL;
    memset(lp, 0, sizeof *lp);
    int ninside = 0;
    for (int i = 0; i < run->nnodes; i++)
        ninside += p->inside[i];
    if (p->npairs == 0 && ninside == 0)
        return FP_OK;
    if (p->npairs > 0) {
        st = fp_link_plan_pairs((const int (*)[2])p->pairs, p->npairs, run->nnodes, p->spare, lp,
                                err, sizeof err);
        if (st == FP_EUSAGE) /* the plan names its own nodes: not the user's doing */
            FP_FAIL(FP_EINTERNAL, "confirm: %s", err);
        FP_CHECK(st);
    }
    mem = open_memstream(list, &len);
    FP_CHECK_ALLOC(mem);
    for (int i = 0; i < lp->npairs; i++)
        fprintf(mem, "%s%s~%s", i ? "," : "", run->nodes[lp->pair[i][0]],
                run->nodes[lp->pair[i][1]]);
    for (int i = 0, k = lp->npairs; i < run->nnodes; i++)
        if (p->inside[i])
            fprintf(mem, "%s%s", k++ ? "," : "", run->nodes[i]);
    if (fclose(mem) != 0) {
        mem = NULL;
        FP_FAIL(FP_ENOMEM, "confirm: no memory for the list of %d node pairs", lp->npairs);
    }
    mem = NULL;
cleanup:
    if (mem)
        fclose(mem);
    if (st != FP_OK) {
        free(*list);
        *list = NULL;
        fp_link_plan_free(lp);
    }
    return st;
}

fp_status fp_app_confirm_apply(const fp_detect_opts *d, const detect_confirm *c,
                               fp_verdicts **v)
{
    fp_status st = FP_OK;
    fp_verdicts *rv = NULL, *cv = NULL;
    if (c->retest) {
        fp_detect_opts rd = *d;
        rd.explain = NULL; /* the evidence chain is the run's; the re-test adds its failures */
        rd.confirmed = true; /* it is the re-test: a host-side deficit it sees again fails */
        if (c->retest->contended[0]) {
            rd.contended = true;
            rd.contended_note = c->retest->contended;
        }
        FP_CHECK(fp_detect(c->retest, &rd, &rv));
    }
    FP_CHECK(fp_verdicts_confirm(*v, rv, &c->info, &cv));
    fp_verdicts_free(*v);
    *v = cv;
cleanup:
    fp_verdicts_free(rv);
    return st;
}

fp_status fp_app_find_retest(fp_store *store, const fp_run *run, fp_run *retest, bool *found)
{
    fp_status st = FP_OK;
    fp_run_summary *rows = NULL;
    size_t n = 0;
    *found = false;
    memset(retest, 0, sizeof *retest);
    FP_CHECK(fp_store_list(store, &rows, &n));
    /* a re-test is stored in the commit of its run, so it is listed after it */
    size_t at = 0;
    while (at < n && strcmp(rows[at].id, run->id) != 0)
        at++;
    for (size_t i = at + 1; i < n && !*found; i++) {
        if (strcmp(rows[i].status, FP_RUN_RETEST) != 0)
            continue;
        fp_run_free(retest);
        FP_CHECK(fp_store_load_run(store, rows[i].id, NULL, retest));
        *found = strcmp(retest->confirms, run->id) == 0;
    }
    if (!*found)
        fp_run_free(retest);
cleanup:
    free(rows);
    return st;
}

/* A test's samples in run: how many windows (iterations) it timed and the
 * span of its samples' start times, a lower bound of its time. */
static void test_timing(const fp_run *run, const char *test, int *windows, double *span)
{
    double lo = INFINITY, hi = -INFINITY;
    int w = 0;
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        if (strcmp(s.key->test, test) != 0)
            continue;
        w = s.iter + 1 > w ? s.iter + 1 : w;
        lo = s.t_start < lo ? s.t_start : lo;
        hi = s.t_start > hi ? s.t_start : hi;
    }
    *windows = w;
    *span = hi > lo ? hi - lo : 0;
}

fp_status fp_app_write_retest_args(const fp_run *run, const fp_verdicts *v, const fp_rules *rules,
                                   const char *path)
{
    fp_status st = FP_OK;
    fp_confirm_plan plan = {0};
    char *pairs = NULL;
    FILE *f = NULL;
    fp_link_plan lp = {0};
    /* what failed, and what warns until a re-test confirms it */
    fp_verdict overall = fp_verdicts_overall(v);
    if (overall == FP_FAIL || overall == FP_WARN)
        FP_CHECK(fp_confirm_plan_make(v, run, rules, &plan));
    /* the iterations that keep the re-test within a quarter of the run: each
     * test's time scales with its windows */
    int most = 2;
    double spans = 0, budget = 0.25 * run->duration;
    for (int t = 0; t < plan.ntests; t++) {
        int w;
        double span;
        test_timing(run, plan.tests[t], &w, &span);
        most = w > most ? w : most;
        spans += span;
    }
    int iters = 2;
    for (int n = most; n > 2; n--) {
        double cost = 0;
        for (int t = 0; t < plan.ntests; t++) {
            int w;
            double span;
            test_timing(run, plan.tests[t], &w, &span);
            cost += w > 0 ? span * (n < w ? n : w) / w : span;
        }
        if (cost <= budget) {
            iters = n;
            break;
        }
    }
    bool links = false;
    for (int t = 0; t < plan.ntests; t++)
        links |= strcmp(plan.tests[t], "links") == 0;
    if (links)
        FP_CHECK(fp_app_confirm_pairs(&plan, run, &pairs, &lp));
    f = fp_outfile_open(path, &st);
    if (!f)
        goto cleanup;
    for (int t = 0; t < plan.ntests; t++)
        fprintf(f, "%s--test %s", t ? " " : "", plan.tests[t]);
    if (plan.ntests)
        fprintf(f, " --iters %d%s%s\n", iters, pairs ? " --pairs " : "", pairs ? pairs : "");
    st = fp_outfile_close(f, path, true);
    if (st == FP_OK && plan.ntests)
        fp_info("detect: a re-test of %d %s (%d iterations; the run's tests took %.1f of its "
                "%.1f s) in %s",
                plan.ntests, fp_plural(plan.ntests, "test", "tests"), iters, spans,
                run->duration, path);
cleanup:
    free(pairs);
    fp_link_plan_free(&lp);
    fp_confirm_plan_free(&plan);
    return st;
}
