/* fleetprint simulate: simulated fleet runs with noise and known faults. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "fleetprint/detect.h"
#include "fleetprint/hostlist.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"
#include "fleetprint/suite.h"
#include "fleetprint/timer.h"
#include "fleetprint/outfile.h"

/* ==== fleetprint simulate ================================================================== */

typedef struct simulate_cfg {
    int nodes, gpus, seed, runs, windows, partners;
    double shift;
    const char *faults;
    const char *out;
    const char *truth;
} simulate_cfg;

static const fp_opt simulate_opts[] = {
    {"nodes", 'N', FP_OPT_INT, offsetof(simulate_cfg, nodes), "1000", "nodes in the fleet"},
    {"gpus-per-node", 'G', FP_OPT_INT, offsetof(simulate_cfg, gpus), "8", "devices per node"},
    {"seed", 0, FP_OPT_INT, offsetof(simulate_cfg, seed), "1", "random seed"},
    {"faults", 0, FP_OPT_STRING, offsetof(simulate_cfg, faults), NULL,
     "fault mix: kind=N or kind=P% (of nodes), comma-separated, or none; kinds slow-gpu, "
     "slow-node, bad-link, sdc, throttle, intermittent, host-dip (a healthy node's host-side "
     "dip), fail-slow, slow-launch (in every run), split (2x slow together) (default: see "
     "docs/detect.md)"},
    {"shift", 0, FP_OPT_DOUBLE, offsetof(simulate_cfg, shift), "1",
     "every device's GEMM and memory bandwidth times this in the last run (0.85: a fleet-wide "
     "shift after the baselines)"},
    {"runs", 0, FP_OPT_INT, offsetof(simulate_cfg, runs), "4", "runs (the last has the faults)"},
    {"windows", 0, FP_OPT_INT, offsetof(simulate_cfg, windows), "6", "iterations per run"},
    {"partners", 0, FP_OPT_INT, offsetof(simulate_cfg, partners), "4",
     "link sweep partners per node beyond 32 nodes"},
    {"out", 'o', FP_OPT_STRING, offsetof(simulate_cfg, out), NULL,
     "write the runs as JSON Lines (store ingest format) to FILE ('-' for stdout)"},
    {"truth", 0, FP_OPT_STRING, offsetof(simulate_cfg, truth), NULL,
     "write the injected faults (ground truth) as JSON to FILE"},
    {0},
};

static fp_status simulate_main(const void *config, fp_world *w)
{
    const simulate_cfg *c = config;
    fp_status st = FP_OK;
    fp_sim *sim = NULL;
    FILE *f = NULL;
    char *buf = NULL;
    if (!c->out)
        FP_FAIL(FP_EUSAGE, "simulate needs --out FILE");
    fp_sim_opts o = {.nodes = c->nodes, .gpus_per_node = c->gpus, .runs = c->runs,
                     .windows = c->windows, .link_partners = c->partners,
                     .seed = (uint64_t)(unsigned)c->seed, .faults = c->faults,
                     .shift = c->shift};
    char err[256];
    st = fp_sim_open(&o, &sim, err, sizeof err);
    if (st != FP_OK)
        FP_FAIL(st, "%s", err);
    f = fp_outfile_open(c->out, &st);
    if (!f)
        goto cleanup;
    if (f != stdout)
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    size_t cap = 4096, total = 0;
    buf = malloc(cap);
    FP_CHECK_ALLOC(buf);
    for (int r = 0; r < fp_sim_runs(sim); r++) {
        fp_run run;
        st = fp_sim_run(sim, r, &run);
        if (st == FP_OK)
            st = fp_jsonl_write_run(f, &run);
        for (size_t i = 0; st == FP_OK && i < run.nsamples; i++) {
            int n = fp_jsonl_format_sample(buf, cap, run.id, &run.samples[i]);
            if (n < 0 || (size_t)n >= cap)
                st = FP_EINTERNAL;
            else
                fwrite(buf, 1, (size_t)n, f); /* a write error shows at the close */
        }
        total += run.nsamples;
        fp_run_free(&run);
        if (st == FP_EINTERNAL)
            FP_FAIL(st, "%s: a sample line does not fit %zu bytes", c->out, cap);
        if (st == FP_EIO)
            break; /* the stream failed: the close names why */
        FP_CHECK(st);
    }
    st = fp_outfile_close(f, c->out, true);
    f = NULL;
    FP_CHECK(st);
    if (c->truth)
        FP_CHECK(fp_sim_write_truth(sim, c->truth));
    const fp_sim_fault *faults;
    size_t nf = fp_sim_faults(sim, &faults);
    fp_info("simulate: %d %s, %zu samples of %d %s x %d %s, %zu %s in the last run",
            fp_sim_runs(sim), fp_plural(fp_sim_runs(sim), "run", "runs"), total, c->nodes,
            fp_plural(c->nodes, "node", "nodes"), c->gpus, fp_plural(c->gpus, "device", "devices"),
            nf, fp_plural((long long)nf, "fault", "faults"));
cleanup:
    if (f)
        fp_outfile_close(f, c->out, false);
    free(buf);
    fp_sim_free(sim);
    return st;
}

const fp_command fp_cmd_simulate = {
    .name = "simulate",
    .summary = "simulated fleet runs with noise and known faults (JSON Lines + truth)",
    .opts = simulate_opts,
    .config_size = sizeof(simulate_cfg),
    .needs_world = false,
    .run = simulate_main,
};
