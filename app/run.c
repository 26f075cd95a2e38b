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

/* Total wrong results over all ranks (deadline applies). */
static fp_status count_wrong(fp_ctx *ctx, long long *total)
{
    MPI_Request req;
    long long mine = ctx->wrong;
    if (MPI_Iallreduce(&mine, total, 1, MPI_LONG_LONG, MPI_SUM, fp_world_comm(ctx->world), &req) !=
        MPI_SUCCESS)
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

static fp_status run_main(const void *config, fp_world *w)
{
    const fp_config *cfg = config;
    fp_inject_set inject;
    fp_run local, run;
    fp_ctx ctx;
    fp_run_init(&local);
    fp_run_init(&run);
    long long wrong = 0;
    fp_status st = fp_ctx_open(&ctx, cfg, w, &inject, &local);
    if (st == FP_OK)
        st = fp_run_selected(&ctx);
    if (st != FP_ETIMEOUT)
        st = fp_world_agree(w, st);
    if (st == FP_OK)
        st = count_wrong(&ctx, &wrong);
    if (st == FP_OK)
        st = fp_ctx_gather(&ctx, &run);
    if (st == FP_OK && wrong > 0)
        snprintf(run.status, sizeof run.status, "failed");
    if (st == FP_OK && ctx.rank == 0) {
        if (!cfg->quiet)
            fp_report_console(stdout, &run);
        if (cfg->json)
            st = fp_report_json(&run, cfg->json);
        if (st == FP_OK && cfg->junit)
            st = write_junit(&run, cfg->junit);
        if (st == FP_OK && cfg->store)
            st = fp_store_append_file(cfg->store, &run, cfg->timeout);
        fp_info("run %s: %zu samples from %d %s on %d %s: %s", run.id, run.nsamples, run.nranks,
                fp_plural(run.nranks, "rank", "ranks"), run.nnodes,
                fp_plural(run.nnodes, "node", "nodes"), wrong ? "FAIL" : "pass");
        if (wrong)
            fp_error("%lld wrong results: see the rows with wrong > 0", wrong);
    }
    if (st == FP_OK && wrong > 0)
        st = FP_EFAIL;
    if (st != FP_ETIMEOUT)
        st = fp_world_agree(w, st);
    fp_ctx_close(&ctx);
    fp_run_free(&local);
    fp_run_free(&run);
    return st;
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
