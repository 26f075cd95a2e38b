/* launch: latency of starting work on the device. cuda: empty kernels
 * launched one by one and through a CUDA graph; host: waking the worker
 * pool for an empty parallel region. Host wall time per launch over a
 * batch, the final synchronize included. */
#include "fleetprint/kernels.h"
#include "fleetprint/log.h"
#include "fleetprint/timer.h"

enum { BATCH = 200 };

static const fp_metric lat_metric[2] = {
    {"launch_us", "us", FP_BETTER_LOWER},
    {"graph_launch_us", "us", FP_BETTER_LOWER},
};

static fp_status launch_run(fp_ctx *ctx, const fp_test *t)
{
    fp_status st = FP_OK;
    const fp_device_ops *d = ctx->dev_ops;
    const fp_sweep *sw = &FP_SUITE_CFG(fp_kernels_config, ctx)->sweep;
    for (int graph = 0; graph < 2; graph++) {
        st = d->launch(ctx->dev, graph, 1);
        if (st == FP_EUNSUPPORTED) { /* the same on every rank: one backend */
            if (ctx->rank == 0)
                fp_info("launch: %s has no %s launches", d->name, graph ? "graph" : "direct");
            st = FP_OK;
            continue;
        }
        FP_CHECK(st);
        FP_CHECK(d->sync(ctx->dev));
        double best = 1e30;
        int total = sw->warmup + sw->iters;
        for (int it = 0; it < total; it++) {
            FP_CHECK(fp_ctx_barrier(ctx, "launch"));
            double t0 = fp_clock();
            FP_CHECK(d->launch(ctx->dev, graph, BATCH));
            FP_CHECK(d->sync(ctx->dev));
            double us = (fp_clock() - t0) / BATCH * 1e6;
            if (it < sw->warmup)
                continue;
            best = us < best ? us : best;
            FP_CHECK(fp_emit(ctx, t, &lat_metric[graph], &ctx->self, 0, it - sw->warmup, us));
        }
        FP_CHECK(fp_emit(ctx, t, &lat_metric[graph], &ctx->self, 0, -1, best));
    }
cleanup:
    return st;
}

const fp_test fp_test_launch = {
    .suite = "kernels",
    .name = "launch",
    .summary = "kernel launch latency (direct and CUDA graph) or worker-pool dispatch",
    .run = launch_run,
};
