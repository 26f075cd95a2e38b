/* fleetprint preflight: quick checks on every rank before a job starts, then
 * detect: exit 0 = go; drain and exclude lists. */
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

/* ==== fleetprint preflight ============================================================== */

typedef struct preflight_cfg {
    tests_cfg tests;
    measure_out run; /* the tag and store (its outputs are the verdicts') */
    detect_out out;
    const char *run_json;
    bool no_baselines;
    const char *isolate; /* --isolate STRATEGY: isolation when no culprit is named */
} preflight_cfg;

/* The quick default set, in registry order; tests not in this build are
 * skipped with a note. */
static const char *const quick_tests[] = {"membw", "gemm", "allreduce", "alltoall", "links", NULL};

#define PF(field) offsetof(preflight_cfg, tests.base.field)
#define PF_SWEEP(field) offsetof(preflight_cfg, tests.sweep.field)
static const fp_opt preflight_opts[] = {
    {"test", 't', FP_OPT_LIST, offsetof(preflight_cfg, tests.tests), NULL,
     "run only this test (repeatable; default: membw gemm allreduce alltoall links)"},
    {"device", 0, FP_OPT_STRING, PF(device), "auto", "device backend: auto, host or cuda"},
    {"comm", 0, FP_OPT_STRING, PF(comm), "auto", "comm backend: auto, mpi or nccl"},
    {"threads", 0, FP_OPT_INT, PF(threads), "1", "host threads per rank (0: cores / ranks)"},
    {"min-bytes", 'b', FP_OPT_BYTES, PF_SWEEP(min_bytes), "1M", "smallest message size"},
    {"max-bytes", 'e', FP_OPT_BYTES, PF_SWEEP(max_bytes), "4M", "largest message size"},
    {"step-factor", 'f', FP_OPT_DOUBLE, PF_SWEEP(step_factor), "4",
     "size multiplier between steps"},
    {"iters", 'n', FP_OPT_INT, PF_SWEEP(iters), "6", "timed iterations (the detector's windows)"},
    {"warmup-iters", 'w', FP_OPT_INT, PF_SWEEP(warmup), "2", "untimed warm-up iterations"},
    {"check", 'c', FP_OPT_INT, PF_SWEEP(check), "1", "verify results: 1 yes, 0 no"},
    {"array-size", 0, FP_OPT_BYTES, offsetof(preflight_cfg, tests.kernels.array_bytes), "8M",
     "membw: bytes per array"},
    {"pairs", 0, FP_OPT_STRING, offsetof(preflight_cfg, tests.coll.pairs), "auto",
     "link sweep pairs: auto (all up to 32 nodes, else random=8), all, ring, k=K, random=K"},
    {"timeout", 0, FP_OPT_SECONDS, PF(timeout), "60s", "deadline of every blocking step"},
    {"inject", 0, FP_OPT_LIST, PF(inject), NULL, "inject a fault (repeatable; see README)"},
    {"tag", 0, FP_OPT_STRING, offsetof(preflight_cfg, run.tag), "preflight", "tag of the run"},
    {"store", 0, FP_OPT_STRING, offsetof(preflight_cfg, run.store), NULL,
     "HDF5 store: compare with its baselines, then append the run to it"},
    {"no-baselines", 0, FP_OPT_FLAG, offsetof(preflight_cfg, no_baselines), NULL,
     "peer evidence only, even with a store"},
    FP_DETECT_OUT_OPTS(preflight_cfg, out),
    {"run-json", 0, FP_OPT_STRING, offsetof(preflight_cfg, run_json), NULL,
     "also write the run's samples as JSON to FILE"},
    {"isolate", 0, FP_OPT_STRING, offsetof(preflight_cfg, isolate), NULL,
     "when a whole-job collective fails and no culprit is named, isolate in rounds: grid, "
     "bisect or auto (docs/isolate.md)"},
    {"verbose", 'v', FP_OPT_FLAG, PF(verbose), NULL, "log from every rank"},
    {"quiet", 'q', FP_OPT_FLAG, PF(quiet), NULL, "only warnings, errors and the verdict"},
    {0},
};
#undef PF
#undef PF_SWEEP

/* Whether ranks share CPU cores: each rank tells its host and cores, and a
 * host whose ranks want more threads than it has cores is contended (many
 * emulated nodes on one machine). Timings there are only roughly comparable.
 * Fills note with "12 threads on 2 cores of host x" when so. */
typedef struct host_info {
    char host[56];
    int cores, threads;
} host_info;

static fp_status check_contention(fp_world *w, int threads, bool *contended, char *note, size_t len)
{
    fp_status st = FP_OK;
    host_info mine, *all = NULL;
    memset(&mine, 0, sizeof mine);
    gethostname(mine.host, sizeof mine.host - 1);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    mine.cores = cores > 0 ? (int)cores : 1;
    mine.threads = threads;
    int n = fp_world_size(w);
    all = calloc((size_t)n, sizeof *all);
    FP_CHECK_ALLOC(all);
    st = fp_world_allgather(w, &mine, all, (int)sizeof mine, "checking for shared cores");
    *contended = false;
    for (int i = 0; st == FP_OK && i < n && !*contended; i++) {
        int want = 0;
        for (int j = 0; j < n; j++)
            if (strcmp(all[i].host, all[j].host) == 0)
                want += all[j].threads;
        if (want > all[i].cores) {
            *contended = true;
            snprintf(note, len, "%d threads on %d cores of host %.40s", want, all[i].cores,
                     all[i].host);
        }
    }
cleanup:
    free(all);
    return st;
}

/* What preflight writes when a step times out (fp_world_on_timeout): the
 * verdict outputs with the missing ranks' nodes failing, so the drain file,
 * JSON and HTML name the node that most needs draining. ctx is the run's
 * context only, made before the tests start: the hook may run on the
 * watchdog thread while the tests' samples are still being written. */
typedef struct hang_out {
    detect_out out;
    fp_run ctx;
} hang_out;

static fp_status hang_prepare(hang_out *h, const fp_ctx *ctx, const char *tag)
{
    const fp_world *w = ctx->world;
    fp_status st = fp_run_set_shape(&h->ctx, fp_world_nnodes(w), fp_world_size(w));
    if (st != FP_OK)
        return st;
    for (int i = 0; i < fp_world_nnodes(w); i++)
        snprintf(h->ctx.nodes[i], FP_NAME_MAX, "%s", fp_world_node_name(w, i));
    for (int r = 0; r < fp_world_size(w); r++) {
        h->ctx.ranks[r].node = fp_world_node_of(w, r);
        h->ctx.ranks[r].dev = -1;
    }
    fp_ctx_describe_run(ctx, tag, &h->ctx);
    snprintf(h->ctx.status, sizeof h->ctx.status, "timeout");
    return FP_OK;
}

static void hang_write(const fp_world *w, void *arg)
{
    hang_out *h = arg;
    const int *ranks;
    const char *step;
    size_t n = fp_world_missing(w, &ranks, &step);
    h->ctx.duration = fp_world_now(w);
    fp_verdicts *v = NULL;
    if (fp_verdicts_hung(&h->ctx, ranks, n, step, &v) != FP_OK) {
        fp_error("preflight: no memory to write the verdicts of the timeout");
        return;
    }
    if (!h->out.quiet)
        fp_verdicts_print(stdout, v, &h->ctx);
    (void)fp_app_write_outputs(&h->ctx, v, &h->out); /* each write logs its own error */
    fflush(stdout);
    fp_verdicts_free(v);
}

static bool registered(const char *name)
{
    for (int k = 0; fp_tests[k]; k++)
        if (strcmp(fp_tests[k]->name, name) == 0)
            return true;
    return false;
}

typedef struct pf_state {
    const preflight_cfg *pc;
    const tests_cfg *tests;   /* the tests to run: pc's, with the quick set filled in */
    const fp_rules *rules;
    const fp_baselines *base; /* NULL: peer evidence only */
    const detect_out *out;
    const char *contended;    /* NULL, or why the timings are only roughly comparable */
    double t0;
    hang_out hang;            /* rank 0: the outputs of a timeout */
    char isolate_why[160];    /* rank 0: why isolation is wanted (--isolate), or "" */
} pf_state;

static fp_status pf_measure(fp_ctx *ctx, void *arg)
{
    pf_state *ps = arg;
    if (ctx->rank == 0) {
        ps->hang.out = *ps->out;
        fp_status st = hang_prepare(&ps->hang, ctx, ps->pc->run.tag);
        if (st != FP_OK)
            return st;
        fp_world_on_timeout(ctx->world, hang_write, &ps->hang);
    }
    return fp_run_selected(ctx, ps->tests);
}

static fp_status pf_report(fp_run *run, void *arg)
{
    pf_state *ps = arg;
    fp_info("preflight: %zu samples from %d %s on %d %s in %.1f s", run->nsamples, run->nranks,
            fp_plural(run->nranks, "rank", "ranks"), run->nnodes,
            fp_plural(run->nnodes, "node", "nodes"), fp_clock() - ps->t0);
    fp_status st = FP_OK;
    /* recorded, so that detect on the stored run judges it as contended too */
    snprintf(run->contended, sizeof run->contended, "%s", ps->contended ? ps->contended : "");
    if (ps->pc->run_json)
        st = fp_report_json(run, ps->pc->run_json);
    if (st == FP_OK)
        st = fp_app_detect_and_report(run, ps->rules, ps->base, ps->out, ps->contended);
    if (st == FP_EFAIL && ps->pc->isolate)
        fp_app_isolate_wanted(run, ps->rules, ps->base, ps->contended, ps->isolate_why,
                              sizeof ps->isolate_why);
    return st;
}

static fp_status preflight_main(const void *config, fp_world *w)
{
    const preflight_cfg *pc = config;
    tests_cfg tc = pc->tests;
    const fp_config *rt = &tc.base; /* the runtime's settings */
    const char *stored = pc->run.store;
    fp_status st = FP_OK;
    fp_rules *rules = NULL;
    fp_store *store = NULL;
    fp_baselines *base = NULL;
    static const fp_measure_steps steps = {.measure = pf_measure, .report = pf_report};
    int rank = fp_world_rank(w);
    double t0 = fp_clock();
    detect_out out = pc->out;
    out.quiet = out.quiet || rt->quiet;
    out.command = "preflight";
    pf_state ps = {.pc = pc, .tests = &tc, .out = &out, .t0 = t0};
    fp_run_init(&ps.hang.ctx);

    /* inputs first, so a bad rules file or store fails before any test runs */
    fp_world_configure(w, rt->timeout, rt->verbose, rt->quiet);
    if (rank == 0) {
        st = fp_app_load_rules(out.rules, &rules);
        bool exists = stored && access(stored, F_OK) == 0;
        if (stored && !exists)
            fp_info("preflight: %s does not exist yet: peer evidence only; the run starts it",
                    stored);
        if (st == FP_OK && exists && !pc->no_baselines) {
            st = fp_store_open(&store, stored, FP_STORE_READ, 0);
            if (st == FP_OK)
                st = fp_store_load_baselines(store, &base);
        }
    }
    st = fp_world_agree(w, st);
    if (st != FP_OK)
        goto cleanup;

    /* the quick set: what this build has */
    tc.suite = "all";
    if (tc.tests.n == 0) {
        for (int i = 0; quick_tests[i]; i++) {
            if (registered(quick_tests[i]))
                tc.tests.item[tc.tests.n++] = quick_tests[i];
            else if (rank == 0)
                fp_info("preflight: test '%s' is not in this build: skipped", quick_tests[i]);
        }
        if (tc.tests.n == 0)
            FP_FAIL(FP_EUSAGE, "preflight: none of its tests is in this build");
    }
    if (strcmp(tc.coll.pairs, "auto") == 0)
        tc.coll.pairs = fp_world_nnodes(w) <= 32 ? "all" : "random=8";
    bool contended = false;
    char note[112] = "";
    st = check_contention(w, fp_threads_per_rank(rt, w), &contended, note, sizeof note);
    if (st != FP_OK)
        goto cleanup;
    if (contended && rank == 0)
        fp_warn("preflight: ranks share CPU cores (%s): host kernels are timed without "
                "their waits for a core, and timing rules use the contended thresholds",
                note);
    tc.base.shared_cores = contended;
    ps.rules = rules;
    ps.base = base;
    ps.contended = contended ? note : NULL;
    st = fp_measure(rt, &pc->run, w, &steps, &ps);
    st = fp_app_isolate_after(pc->isolate, rt, &pc->run, &out, w, st, ps.isolate_why);
cleanup:
    fp_world_on_timeout(w, NULL, NULL);
    fp_run_free(&ps.hang.ctx);
    fp_baselines_free(base);
    fp_store_close(store);
    fp_rules_free(rules);
    return st;
}

static fp_status preflight_check(const void *config, bool speak)
{
    return fp_app_isolate_check(((const preflight_cfg *)config)->isolate, speak);
}

const fp_command fp_cmd_preflight = {
    .name = "preflight",
    .summary = "quick checks before a job starts, then detect: exit 0 = go; drain lists",
    .opts = preflight_opts,
    .config_size = sizeof(preflight_cfg),
    .needs_world = true,
    .run = preflight_main,
    .check = preflight_check,
};

