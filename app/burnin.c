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

static fp_status burnin_main(const void *config, fp_world *w)
{
    const fp_burnin_config *cfg = config;
    fp_inject_set inject;
    fp_run local, run;
    fp_ctx ctx;
    fp_burnin *bi = NULL;
    fp_burnin_result res;
    memset(&res, 0, sizeof res);
    memset(&ctx, 0, sizeof ctx);
    fp_run_init(&local);
    fp_run_init(&run);
    fp_status st = fp_burnin_begin(cfg, fp_world_rank(w), &bi);
    if (st != FP_OK)
        return st;
    st = fp_ctx_open(&ctx, &cfg->base, w, &inject, &local);
    if (st == FP_OK)
        st = fp_burnin_run(bi, &ctx);
    if (st != FP_ETIMEOUT)
        st = fp_world_agree(w, st);
    if (st == FP_OK)
        st = fp_burnin_verdicts(bi, &res);
    if (st == FP_OK)
        st = fp_ctx_gather(&ctx, &run);
    if (st == FP_OK && ctx.rank == 0) {
        snprintf(run.status, sizeof run.status, "%s",
                 res.interrupted ? "interrupted" : res.failed ? "failed" : "complete");
        if (!cfg->base.quiet)
            fp_report_console(stdout, &run);
        fp_report_burnin_console(stdout, &run, res.all, res.nranks, res.interrupted, res.done,
                                 res.planned);
        if (cfg->base.json)
            st = fp_report_burnin_json(&run, res.all, res.nranks, res.interrupted, res.done,
                                       res.planned, cfg->base.json);
        if (st == FP_OK && cfg->base.junit)
            st = fp_report_burnin_junit(&run, res.all, res.nranks, cfg->base.junit);
        /* an interrupted run is stored too, marked so: baselines skip it */
        if (st == FP_OK && cfg->base.store)
            st = fp_store_append_file(cfg->base.store, &run, cfg->base.timeout);
        fp_info("burn-in %s: %zu samples from %d %s: %s%s", run.id, run.nsamples, run.nranks,
                fp_plural(run.nranks, "rank", "ranks"), res.failed ? "FAIL" : "pass",
                res.interrupted ? " (interrupted)" : "");
    }
    /* a failure found is definitive even in a partial run */
    if (st == FP_OK && res.failed)
        st = FP_EFAIL;
    else if (st == FP_OK && res.interrupted)
        st = FP_EINTR;
    if (st != FP_ETIMEOUT)
        st = fp_world_agree(w, st);
    fp_burnin_end(bi);
    fp_ctx_close(&ctx);
    free(res.all);
    fp_run_free(&local);
    fp_run_free(&run);
    return st;
}

/* burn-in's own rows and, of the suite's, only those it reads */
static const fp_opt burnin_opts[] = {
    FP_OPTS_BACKENDS,
    FP_OPTS_RUN_CONTROL,
    FP_OPTS_GEMM,
    {"duration", 'D', FP_OPT_SECONDS, offsetof(fp_config, duration), "60s",
     "how long to stress (e.g. 30m)"},
    {"interval", 'I', FP_OPT_SECONDS, offsetof(fp_config, interval), "10s",
     "window: one throughput sample, telemetry reading and result check per device"},
    {"memory-fraction", 0, FP_OPT_DOUBLE, offsetof(fp_config, memory_fraction), "-1",
     "device memory for the pattern test (0 skips; -1 auto: 0.5 on cuda, 32 MiB on host)"},
    {"gemm-type", 0, FP_OPT_STRING, offsetof(fp_burnin_config, gemm_type), "auto",
     "GEMM precision: auto (bf16 on GPUs, else f64), f64, f32, tf32, f16, bf16, fp8"},
    {"sdc-tolerance", 0, FP_OPT_DOUBLE, offsetof(fp_burnin_config, sdc_tol),
     FP_BURNIN_SDC_TOL_DEFAULT, "relative tolerance of result checks (0: bitwise)"},
    {"degrade-threshold", 0, FP_OPT_DOUBLE, offsetof(fp_burnin_config, degrade),
     FP_BURNIN_DEGRADE_DEFAULT, "throughput drop (late vs early windows, and vs peers) that fails"},
    {"nvml", 0, FP_OPT_STRING, offsetof(fp_burnin_config, nvml), NULL,
     "NVML library to load (default $FLEETPRINT_NVML, else libnvidia-ml.so.1 on cuda)"},
    {0},
};

const fp_command fp_cmd_burnin = {
    .name = "burnin",
    .summary = "sustained stress with result checks (SDC), memory test and telemetry",
    .opts = burnin_opts,
    .config_size = sizeof(fp_burnin_config),
    .needs_world = true,
    .run = burnin_main,
};
