/* The registry of tests, in the order a suite (or --suite all) runs them, and
 * the loop that runs a selection of them. */
#include <stddef.h>
#include <string.h>

#include "app.h"
#include "fleetprint/log.h"

/* kernels/ */
extern const fp_test fp_test_membw, fp_test_gemm, fp_test_launch, fp_test_copy, fp_test_p2p,
    fp_test_fused;
/* collectives/ */
extern const fp_test fp_test_allreduce, fp_test_allgather, fp_test_reduce_scatter,
    fp_test_alltoall, fp_test_broadcast, fp_test_reduce, fp_test_sendrecv, fp_test_links;

const fp_test *const fp_tests[] = {
    &fp_test_membw,     &fp_test_gemm,           &fp_test_launch,   &fp_test_copy,
    &fp_test_p2p,       &fp_test_fused,          &fp_test_allreduce, &fp_test_allgather,
    &fp_test_reduce_scatter, &fp_test_alltoall,  &fp_test_broadcast, &fp_test_reduce,
    &fp_test_sendrecv,  &fp_test_links,          NULL,
};

/* ---- the test loop ------------------------------------------------------------- */

static bool selected(const tests_cfg *cfg, const fp_test *t)
{
    if (cfg->tests.n > 0) {
        for (int i = 0; i < cfg->tests.n; i++)
            if (strcmp(cfg->tests.item[i], t->name) == 0)
                return true;
        return false;
    }
    return strcmp(cfg->suite, "all") == 0 || strcmp(cfg->suite, t->suite) == 0;
}

fp_status fp_selection_check(const tests_cfg *cfg, bool speak)
{
    if (cfg->sweep.iters < 1) {
        if (speak)
            fp_error("--iters must be at least 1");
        return FP_EUSAGE;
    }
    for (int i = 0; i < cfg->tests.n; i++) {
        bool known = false;
        for (int k = 0; fp_tests[k]; k++)
            known |= strcmp(fp_tests[k]->name, cfg->tests.item[i]) == 0;
        if (!known) {
            if (speak)
                fp_error("unknown test '%s' (see fleetprint run --help)", cfg->tests.item[i]);
            return FP_EUSAGE;
        }
    }
    bool suite_known = strcmp(cfg->suite, "all") == 0;
    for (int k = 0; fp_tests[k]; k++)
        suite_known |= strcmp(fp_tests[k]->suite, cfg->suite) == 0;
    if (!suite_known) {
        if (speak) {
            /* the names offered are the registry's, so none of them is refused;
             * burn-in is its own command (its windows, SDC votes and telemetry) */
            char names[256] = "";
            size_t len = 0;
            for (int k = 0; fp_tests[k]; k++)
                if (k == 0 || strcmp(fp_tests[k]->suite, fp_tests[k - 1]->suite) != 0)
                    len += (size_t)snprintf(names + len, len < sizeof names ? sizeof names - len : 0,
                                            "%s, ", fp_tests[k]->suite);
            fp_error("unknown suite '%s' (%sor all; burn-in is its own command: fleetprint burnin)",
                     cfg->suite, names);
        }
        return FP_EUSAGE;
    }
    return FP_OK;
}

fp_status fp_run_selected(fp_ctx *ctx, const tests_cfg *cfg)
{
    if (fp_selection_check(cfg, ctx->rank == 0) != FP_OK)
        return FP_EUSAGE;
    /* each suite's tests read their own config (kernels.h, collectives.h):
     * the common part, then the suite's own settings */
    fp_kernels_config kernels = cfg->kernels;
    fp_coll_config coll = cfg->coll;
    kernels.base = coll.base = cfg->base;
    kernels.sweep = coll.sweep = cfg->sweep;
    const fp_config *opened = ctx->cfg;
    fp_status st = FP_OK;
    int ran = 0;
    for (int k = 0; fp_tests[k] && st == FP_OK; k++) {
        const fp_test *t = fp_tests[k];
        if (!selected(cfg, t))
            continue;
        if (strcmp(t->suite, "kernels") == 0)
            ctx->cfg = &kernels.base;
        else if (strcmp(t->suite, "collectives") == 0)
            ctx->cfg = &coll.base;
        else
            FP_FAIL(FP_EINTERNAL, "test %s: no config for its suite '%s'", t->name, t->suite);
        fp_info("test %s/%s: %s", t->suite, t->name, t->summary);
        st = fp_ctx_barrier(ctx, t->name);
        if (st == FP_OK)
            st = t->run(ctx, t);
        ran++;
    }
    if (st == FP_OK && ran == 0) {
        if (ctx->rank == 0)
            fp_error("no test selected in suite '%s'", cfg->suite);
        st = FP_EUSAGE;
    }
cleanup:
    ctx->cfg = opened;
    return st;
}
