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

typedef struct run_state {
    const fp_config *cfg;
    long long wrong; /* wrong results over all ranks */
} run_state;

static fp_status run_measure(fp_ctx *ctx, void *arg)
{
    return fp_run_selected(ctx);
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
    const fp_config *cfg = rs->cfg;
    fp_status st = FP_OK;
    if (rs->wrong > 0)
        snprintf(run->status, sizeof run->status, "failed");
    if (!cfg->quiet)
        fp_report_console(stdout, run);
    if (cfg->json)
        st = fp_report_json(run, cfg->json);
    if (st == FP_OK && cfg->junit)
        st = write_junit(run, cfg->junit);
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
    run_state rs = {.cfg = config};
    return fp_measure(config, w, &steps, &rs);
}

static const fp_opt run_opts[] = {FP_SUITE_OPTS, {0}};

static fp_status run_check(const void *config, bool speak)
{
    return fp_selection_check(config, speak);
}

const fp_command fp_cmd_run = {
    .name = "run",
    .summary = "run test suites on every rank and record their samples",
    .opts = run_opts,
    .config_size = sizeof(fp_config),
    .needs_world = true,
    .run = run_main,
    .check = run_check,
};
