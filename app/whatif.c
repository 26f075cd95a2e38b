/* `fleetprint whatif`: what-if straggler analysis of a training trace. */
#include <stddef.h>

#include "cli.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"

typedef struct whatif_cfg {
    const char *trace;
    const char *meta;
    const char *json;
    const char *heatmap;
    const char *timeline;
    double threshold;
    double worker_share;
    bool quiet;
} whatif_cfg;

static const fp_opt whatif_opts[] = {
    {"trace", 0, FP_OPT_STRING, offsetof(whatif_cfg, trace), NULL,
     "trace CSV: dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc"},
    {"meta", 'm', FP_OPT_STRING, offsetof(whatif_cfg, meta), NULL,
     "job meta YAML (dp_size, pp_size, tp_size, vpp_size, world_size)"},
    {"json", 0, FP_OPT_STRING, offsetof(whatif_cfg, json), NULL,
     "write the full result as JSON to this file ('-' for stdout)"},
    {"heatmap", 0, FP_OPT_STRING, offsetof(whatif_cfg, heatmap), NULL,
     "write a DP x PP heat map of per-worker slowdown (SVG)"},
    {"timeline", 0, FP_OPT_STRING, offsetof(whatif_cfg, timeline), NULL,
     "write original and ideal timelines as Chrome trace JSON (Perfetto)"},
    {"decompose-threshold", 0, FP_OPT_DOUBLE, offsetof(whatif_cfg, threshold), "1.03",
     "attribute the slowdown only when S is at least this"},
    {"worker-share", 0, FP_OPT_DOUBLE, offsetof(whatif_cfg, worker_share), "0.03",
     "share of slowest workers fixed for M_W"},
    {"quiet", 'q', FP_OPT_FLAG, offsetof(whatif_cfg, quiet), NULL,
     "no summary on stdout (files only)"},
    {0},
};

static fp_status whatif_run(const void *config, fp_world *world)
{
    const whatif_cfg *c = config;
    fp_status st = FP_OK;
    fp_wi_trace *trace = NULL;
    fp_wi_result *res = NULL;
    if (!c->trace || !c->meta) {
        fp_error("whatif needs --trace FILE.csv and --meta FILE.yaml");
        return FP_EUSAGE;
    }
    if (!(c->threshold > 0) || !(c->worker_share > 0 && c->worker_share <= 1)) {
        fp_error("--decompose-threshold must be > 0 and --worker-share in (0, 1]");
        return FP_EUSAGE;
    }
    fp_wi_meta meta;
    FP_CHECK(fp_wi_meta_load(c->meta, &meta));
    FP_CHECK(fp_wi_trace_load_csv(c->trace, &trace));
    fp_wi_options opt = fp_wi_options_default();
    opt.decompose_threshold = c->threshold;
    opt.worker_share = c->worker_share;
    opt.keep_timeline = c->timeline != NULL;
    FP_CHECK(fp_wi_analyze(trace, &meta, &opt, &res));
    if (!c->quiet)
        fp_wi_print_summary(stdout, res);
    if (c->json)
        FP_CHECK(fp_wi_write_json(res, c->json));
    if (c->heatmap)
        FP_CHECK(fp_wi_write_heatmap_svg(res, c->heatmap));
    if (c->timeline)
        FP_CHECK(fp_wi_write_timeline(res, c->timeline));
cleanup:
    fp_wi_result_free(res);
    fp_wi_trace_free(trace);
    return st;
}

const fp_command fp_cmd_whatif = {
    .name = "whatif",
    .summary = "what-if straggler analysis of a training trace",
    .opts = whatif_opts,
    .config_size = sizeof(whatif_cfg),
    .needs_world = false,
    .run = whatif_run,
};
