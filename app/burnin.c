/* fleetprint burnin: sustained stress with result checks (SDC), a memory test
 * and telemetry on every rank (burnin/), then the verdicts gathered, printed
 * and stored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fleetprint/burnin.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"

/* burnin's options: burn-in's config, and where the run goes */
typedef struct burnin_cfg {
    fp_burnin_config bi;
    measure_out out;
} burnin_cfg;

typedef struct burnin_state {
    const burnin_cfg *cfg;
    fp_burnin *bi;
    fp_burnin_result res;
    char contended[112]; /* fp_app_contention's note */
} burnin_state;

static fp_status burnin_measure(fp_ctx *ctx, void *arg)
{
    return fp_burnin_run(((burnin_state *)arg)->bi, ctx);
}

static fp_status burnin_collect(fp_ctx *ctx, void *arg)
{
    burnin_state *bs = arg;
    return fp_burnin_verdicts(bs->bi, &bs->res);
}

static fp_status burnin_report(fp_run *run, void *arg)
{
    const burnin_state *bs = arg;
    const measure_out *out = &bs->cfg->out;
    const fp_burnin_result *res = &bs->res;
    fp_status st = FP_OK;
    snprintf(run->status, sizeof run->status, "%s",
             res->interrupted ? "interrupted" : res->failed ? "failed" : "complete");
    snprintf(run->contended, sizeof run->contended, "%s", bs->contended);
    if (!bs->cfg->bi.base.quiet)
        fp_report_console(stdout, run);
    fp_report_burnin_console(stdout, run, res->all, res->nranks, res->interrupted, res->done,
                             res->planned);
    if (out->json)
        st = fp_report_burnin_json(run, res->all, res->nranks, res->interrupted, res->done,
                                   res->planned, out->json);
    if (st == FP_OK && out->junit)
        st = fp_report_burnin_junit(run, res->all, res->nranks, out->junit);
    fp_info("burn-in %s: %zu samples from %d %s: %s%s", run->id, run->nsamples, run->nranks,
            fp_plural(run->nranks, "rank", "ranks"), res->failed ? "FAIL" : "pass",
            res->interrupted ? " (interrupted)" : "");
    /* a failure found is definitive even in a partial run */
    if (st == FP_OK && res->failed)
        return FP_EFAIL;
    return st == FP_OK && res->interrupted ? FP_EINTR : st;
}

/* the device buffers go before the device closes; the signal handlers with them */
static void burnin_release(void *arg)
{
    burnin_state *bs = arg;
    fp_burnin_end(bs->bi);
    bs->bi = NULL;
}

static fp_status burnin_main(const void *config, fp_world *w)
{
    static const fp_measure_steps steps = {.measure = burnin_measure,
                                           .collect = burnin_collect,
                                           .report = burnin_report,
                                           .release = burnin_release};
    burnin_cfg c = *(const burnin_cfg *)config;
    burnin_state bs = {.cfg = &c};
    fp_status st = fp_app_contention(w, &c.bi.base, "burnin", bs.contended, sizeof bs.contended);
    /* the signal handlers are up from before the context opens */
    if (st == FP_OK)
        st = fp_burnin_begin(&c.bi, fp_world_rank(w), &bs.bi);
    if (st == FP_OK)
        st = fp_measure(&c.bi.base, &c.out, w, &steps, &bs);
    fp_burnin_end(bs.bi);
    free(bs.res.all);
    return st;
}

/* burn-in's own rows and, of the suite's, only those it reads */
static const fp_opt burnin_opts[] = {
    FP_OPTS_BACKENDS(burnin_cfg, bi.base),
    FP_OPTS_RUN_CONTROL(burnin_cfg, bi.base, out),
    FP_OPTS_GEMM(burnin_cfg, bi), /* run's row (kernels.h) on burn-in's gemm_size */
    {"duration", 'D', FP_OPT_SECONDS, offsetof(burnin_cfg, bi.duration), "60s",
     "how long to stress (e.g. 30m)"},
    {"interval", 'I', FP_OPT_SECONDS, offsetof(burnin_cfg, bi.interval), "10s",
     "window: one throughput sample, telemetry reading and result check per device"},
    {"memory-fraction", 0, FP_OPT_DOUBLE, offsetof(burnin_cfg, bi.memory_fraction), "-1",
     "device memory for the pattern test (0 skips; -1 auto: 0.5 on cuda, 32 MiB on host)"},
    {"gemm-type", 0, FP_OPT_STRING, offsetof(burnin_cfg, bi.gemm_type), "auto",
     "GEMM precision: auto (bf16 on GPUs, else f64), f64, f32, tf32, f16, bf16, fp8"},
    {"sdc-tolerance", 0, FP_OPT_DOUBLE, offsetof(burnin_cfg, bi.sdc_tol),
     FP_BURNIN_SDC_TOL_DEFAULT, "relative tolerance of result checks (0: bitwise)"},
    {"degrade-threshold", 0, FP_OPT_DOUBLE, offsetof(burnin_cfg, bi.degrade),
     FP_BURNIN_DEGRADE_DEFAULT, "throughput drop (late vs early windows, and vs peers) that fails"},
    {"nvml", 0, FP_OPT_STRING, offsetof(burnin_cfg, bi.nvml), NULL,
     "NVML library to load (default $FLEETPRINT_NVML, else libnvidia-ml.so.1 on cuda)"},
    {0},
};

const fp_command fp_cmd_burnin = {
    .name = "burnin",
    .summary = "sustained stress with result checks (SDC), memory test and telemetry",
    .opts = burnin_opts,
    .config_size = sizeof(burnin_cfg),
    .needs_world = true,
    .run = burnin_main,
};
