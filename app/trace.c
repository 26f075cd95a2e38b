/* `fleetprint trace DIR`: a live job's per-rank NCCL traces (written by
 * libnccl-profiler-fleetprint.so) into what-if traces, a stored run of
 * straggler samples, and a timeline. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fleetprint/log.h"
#include "fleetprint/store.h"
#include "fleetprint/report.h"

typedef struct trace_cfg {
    const char *dir;
    const char *out;
    const char *store;
    const char *timeline;
    const char *id;
    int dp, pp;
} trace_cfg;

static const fp_opt trace_opts[] = {
    {"DIR", 0, FP_OPT_POSITIONAL, offsetof(trace_cfg, dir), NULL,
     "directory of per-rank trace files (the job's FLEETPRINT_TRACE_DIR)"},
    {"out", 'o', FP_OPT_STRING, offsetof(trace_cfg, out), NULL,
     "write the what-if trace to OUT.csv and its meta to OUT.yaml"},
    {"store", 0, FP_OPT_STRING, offsetof(trace_cfg, store), NULL,
     "append the job's straggler samples as a run tagged job to this store"},
    {"id", 0, FP_OPT_STRING, offsetof(trace_cfg, id), NULL, "run id for --store (default: fresh)"},
    {"timeline", 0, FP_OPT_STRING, offsetof(trace_cfg, timeline), NULL,
     "write the NCCL ops as Chrome trace JSON (Perfetto)"},
    {"dp", 0, FP_OPT_INT, offsetof(trace_cfg, dp), "0",
     "data-parallel size (with --pp; rank = stage * dp + dp_rank); 0: from the communicators"},
    {"pp", 0, FP_OPT_INT, offsetof(trace_cfg, pp), "0", "pipeline stages (with --dp)"},
    {0},
};

static fp_status trace_run(const void *config, fp_world *world)
{
    const trace_cfg *c = config;
    fp_status st = FP_OK;
    fp_tr_job *job = NULL;
    fp_wi_row *rows = NULL;
    fp_run run = {0};
    if (!c->dir) {
        fp_error("trace needs the directory of trace files (fleetprint trace DIR)");
        return FP_EUSAGE;
    }
    if (!c->out && !c->store && !c->timeline) {
        fp_error("trace: nothing to write; give --out PREFIX, --store FILE or --timeline FILE");
        return FP_EUSAGE;
    }
    if ((c->dp > 0) != (c->pp > 0) || c->dp < 0 || c->pp < 0) {
        fp_error("--dp and --pp go together and must be positive");
        return FP_EUSAGE;
    }
    FP_CHECK(fp_tr_load_dir(c->dir, &job));
    fp_tr_layout lay = {c->dp, c->pp};
    fp_info("%s: %d ranks, %zu NCCL ops on %d communicators", c->dir, job->nranks, job->nops,
            job->ncomms);
    if (c->out) {
        fp_wi_meta meta;
        size_t n = 0;
        FP_CHECK(fp_tr_whatif_rows(job, &lay, &rows, &n, &meta));
        char path[4096];
        snprintf(path, sizeof path, "%s.csv", c->out);
        FP_CHECK(fp_wi_write_csv(rows, n, path));
        snprintf(path, sizeof path, "%s.yaml", c->out);
        char note[4200];
        snprintf(note, sizeof note, "written by fleetprint trace from %s", c->dir);
        FP_CHECK(fp_wi_write_meta(&meta, note, path));
        fp_info("what-if trace: %s.csv (%zu rows, DP %d x PP %d), meta %s", c->out, n, meta.dp_size,
                meta.pp_size, path);
    }
    if (c->store) {
        FP_CHECK(fp_tr_job_run(job, &lay, "fleetprint trace", &run));
        if (c->id) snprintf(run.id, sizeof run.id, "%s", c->id);
        FP_CHECK(fp_store_append_file(c->store, &run, 30));
    }
    if (c->timeline) FP_CHECK(fp_tr_write_timeline(job, c->timeline));
cleanup:
    fp_run_free(&run);
    free(rows);
    fp_tr_job_free(job);
    return st;
}

const fp_command fp_cmd_trace = {
    .name = "trace",
    .summary = "turn a live job's NCCL traces into what-if traces, samples and a timeline",
    .opts = trace_opts,
    .config_size = sizeof(trace_cfg),
    .needs_world = false,
    .run = trace_run,
};
