/* fleetprint run: run the selected suites on every rank, gather the samples
 * to rank 0, print and write them. Exit 1 when a result was wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"
#include "fleetprint/suite.h"

/* run's options: the tests and their settings, and where the run goes */
typedef struct run_cfg {
    tests_cfg tests;
    measure_out out;
    const char *confirms; /* this run re-tests the run of this id (ci/gpu-regression.sh) */
} run_cfg;

typedef struct run_state {
    const run_cfg *cfg;
    long long wrong;    /* wrong results over all ranks */
    char contended[112]; /* fp_app_contention's note */
} run_state;

static fp_status run_measure(fp_ctx *ctx, void *arg)
{
    return fp_run_selected(ctx, &((const run_state *)arg)->cfg->tests);
}

/* Total wrong results over all ranks (deadline applies). */
static fp_status count_wrong(fp_ctx *ctx, void *arg)
{
    run_state *rs = arg;
    MPI_Request req;
    long long mine = ctx->wrong;
    if (MPI_Iallreduce(&mine, &rs->wrong, 1, MPI_LONG_LONG, MPI_SUM, fp_world_comm(ctx->world),
                       &req) != MPI_SUCCESS)
        return FP_EMPI;
    return fp_world_wait(ctx->world, &req, 1, "counting wrong results");
}

static fp_status write_junit(const fp_run *run, const char *path)
{
    fp_junit_case *cases = NULL;
    size_t n = 0;
    fp_status st = fp_junit_from_checks(run, &cases, &n);
    if (st == FP_OK)
        st = fp_report_junit(path, "fleetprint run", run, cases, n);
    free(cases);
    return st;
}

static fp_status run_report(fp_run *run, void *arg)
{
    const run_state *rs = arg;
    const measure_out *out = &rs->cfg->out;
    fp_status st = FP_OK;
    if (rs->wrong > 0)
        snprintf(run->status, sizeof run->status, "failed");
    snprintf(run->contended, sizeof run->contended, "%s", rs->contended);
    if (rs->cfg->confirms) { /* part of the run it re-tests: judged with it, never a baseline */
        snprintf(run->status, sizeof run->status, "%s", FP_RUN_RETEST);
        snprintf(run->confirms, sizeof run->confirms, "%s", rs->cfg->confirms);
    }
    if (!rs->cfg->tests.base.quiet)
        fp_report_console(stdout, run);
    if (out->json)
        st = fp_report_json(run, out->json);
    if (st == FP_OK && out->junit)
        st = write_junit(run, out->junit);
    fp_info("run %s: %zu samples from %d %s on %d %s: %s", run->id, run->nsamples, run->nranks,
            fp_plural(run->nranks, "rank", "ranks"), run->nnodes,
            fp_plural(run->nnodes, "node", "nodes"), rs->wrong ? "FAIL" : "pass");
    if (rs->wrong)
        fp_error("%lld wrong results: see the rows with wrong > 0", rs->wrong);
    return st == FP_OK && rs->wrong > 0 ? FP_EFAIL : st;
}

static fp_status run_main(const void *config, fp_world *w)
{
    static const fp_measure_steps steps = {
        .measure = run_measure, .collect = count_wrong, .report = run_report};
    run_cfg c = *(const run_cfg *)config;
    run_state rs = {.cfg = &c};
    fp_status st = fp_app_contention(w, &c.tests.base, "run", rs.contended, sizeof rs.contended);
    return st == FP_OK ? fp_measure(&c.tests.base, &c.out, w, &steps, &rs) : st;
}

/* Every row, in the order `run --help` lists them. */
static const fp_opt run_opts[] = {
    {"suite", 0, FP_OPT_STRING, offsetof(run_cfg, tests.suite), "kernels",
     "suite to run: kernels, collectives or all (burn-in: fleetprint burnin)"},
    {"test", 't', FP_OPT_LIST, offsetof(run_cfg, tests.tests), NULL,
     "run only this test (repeatable)"},
    FP_OPTS_BACKENDS(run_cfg, tests.base),
    FP_OPTS_SWEEP(run_cfg, tests.sweep),
    FP_OPTS_ARRAY_SIZE(run_cfg, tests.kernels),
    FP_OPTS_PAIRS(run_cfg, tests.coll),
    FP_OPTS_RUN_CONTROL(run_cfg, tests.base, out),
    {"confirms", 0, FP_OPT_STRING, offsetof(run_cfg, confirms), NULL,
     "this run re-tests the stored run ID: stored with status retest, and detect --store "
     "judges ID with it (docs/confirm.md)"},
    FP_OPTS_GEMM(run_cfg, tests.kernels),
    FP_OPTS_FUSED(run_cfg, tests.kernels),
    {0},
};

static fp_status run_check(const void *config, bool speak)
{
    const run_cfg *c = config;
    const char *id = c->confirms;
    if (id && (!id[0] || strlen(id) >= sizeof(((fp_run *)0)->confirms) || strpbrk(id, " /\t\n"))) {
        if (speak)
            fp_error("--confirms '%s': not a run id", id);
        return FP_EUSAGE;
    }
    return fp_selection_check(&c->tests, speak);
}

const fp_command fp_cmd_run = {
    .name = "run",
    .summary = "run test suites on every rank and record their samples",
    .opts = run_opts,
    .config_size = sizeof(run_cfg),
    .needs_world = true,
    .run = run_main,
    .check = run_check,
};
