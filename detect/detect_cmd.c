/* fleetprint detect, preflight and simulate: the detector's commands. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleetprint/cli.h"
#include "fleetprint/detect.h"
#include "fleetprint/hostlist.h"
#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"
#include "fleetprint/suite.h"
#include "fleetprint/timer.h"
#include "fleetprint/outfile.h"

/* ==== shared: rules, baselines, outputs ============================================ */

typedef struct detect_out {
    const char *rules;
    const char *json;
    const char *drain;
    const char *exclude;
    const char *junit;
    const char *html;
    const char *prometheus;
    const char *explain;
    bool quiet;
    const char *command; /* the run_tag of a run without a tag (not an option) */
} detect_out;

/* Write the verdict files o asks for and log the failing nodes; the worst
 * write status. */
static fp_status write_outputs(const fp_run *run, const fp_verdicts *v, const detect_out *o)
{
    fp_status st = FP_OK;
    if (o->json)
        st = fp_status_worst(st, fp_verdicts_write_json(v, run, o->json));
    if (o->drain)
        st = fp_status_worst(st, fp_verdicts_write_hostlist(v, o->drain));
    if (o->exclude)
        st = fp_status_worst(st, fp_verdicts_write_hostlist(v, o->exclude));
    if (o->junit)
        st = fp_status_worst(st, fp_verdicts_write_junit(v, run, o->junit));
    if (o->html)
        st = fp_status_worst(st, fp_report_html(run, v, o->html));
    if (o->prometheus)
        st = fp_status_worst(st, fp_report_prometheus(run, v, o->command, o->prometheus));
    const char *const *names;
    size_t nfail = fp_verdicts_nodes_at(v, FP_FAIL, &names);
    if (fp_verdicts_overall(v) == FP_FAIL) {
        char *expr = fp_hostlist_compress(names, nfail);
        fp_error("detect: FAIL -- %zu failing node%s%s%s", nfail, nfail == 1 ? "" : "s",
                 nfail ? ": " : " (a link or group fails; see above)", expr ? expr : "");
        free(expr);
    }
    return st;
}

/* Detect on run with optional baselines, print, write the outputs. Returns
 * FP_EFAIL when something failed, FP_OK when all passed, or an error. */
static fp_status detect_and_report(const fp_run *run, const fp_rules *rules,
                                   const fp_baselines *base, const detect_out *o,
                                   const char *contended)
{
    fp_verdicts *v = NULL;
    fp_detect_opts d = {.rules = rules, .baselines = base, .contended = contended != NULL,
                        .contended_note = contended, .explain = o->explain};
    double t0 = fp_clock();
    fp_status st = fp_detect(run, &d, &v);
    if (st != FP_OK)
        return st;
    double secs = fp_clock() - t0;
    if (!o->quiet)
        fp_verdicts_print(stdout, v, run);
    if (o->explain)
        st = fp_verdicts_explain(stdout, v, o->explain);
    fp_info("detect: %zu samples, %zu entities in %.3f s (%s evidence)", run->nsamples,
            fp_verdicts_count(v), secs, base ? "peer, drift and fleet" : "peer");
    st = fp_status_worst(st, write_outputs(run, v, o));
    if (st == FP_OK)
        st = fp_verdicts_status(v);
    fp_verdicts_free(v);
    return st;
}

static fp_status load_rules(const char *path, fp_rules **out)
{
    char err[512];
    fp_status st = fp_rules_load(path, out, err, sizeof err);
    if (st != FP_OK)
        fp_error("%s", err);
    return st;
}

/* ==== run files (--input) ============================================================ */

static fp_status read_run_json(const char *path, json_t *root, fp_run *run)
{
    char err[256];
    const json_t *ctx = json_object_get(root, "run");
    const json_t *samples = json_object_get(root, "samples");
    if (!json_is_object(ctx) || !json_is_array(samples)) {
        fp_error("%s: not a fleetprint run file (needs \"run\" and \"samples\")", path);
        return FP_EINPUT;
    }
    if (fp_json_parse_context(ctx, run, err, sizeof err) != FP_OK) {
        fp_error("%s: run: %s", path, err);
        return FP_EINPUT;
    }
    size_t i;
    const json_t *js;
    json_array_foreach(samples, i, js) {
        fp_sample s;
        if (fp_json_parse_sample(js, &s, err, sizeof err) != FP_OK) {
            fp_error("%s: samples[%zu]: %s", path, i, err);
            return FP_EINPUT;
        }
        fp_status st = fp_run_add(run, &s);
        if (st != FP_OK)
            return st;
    }
    return FP_OK;
}

/* The id of the last run line of a JSONL file ("" when none). */
static fp_status last_run_id(FILE *f, const char *path, char *id, size_t len)
{
    char *line = NULL, err[256];
    size_t cap = 0, lineno = 0;
    ssize_t n;
    id[0] = 0;
    fp_status st = FP_OK;
    while ((n = getline(&line, &cap, f)) >= 0 && st == FP_OK) {
        lineno++;
        if (!strstr(line, "\"kind\":\"run\"") && !strstr(line, "\"kind\": \"run\""))
            continue;
        fp_jsonl_line l;
        if (fp_jsonl_parse(line, (size_t)n, &l, err, sizeof err) != FP_OK) {
            fp_error("%s:%zu: %s", path, lineno, err);
            st = FP_EINPUT;
        } else if (l.kind == FP_JSONL_RUN) {
            const char *s = json_string_value(json_object_get(l.context, "id"));
            snprintf(id, len, "%s", s ? s : "");
            json_decref(l.context);
        }
    }
    free(line);
    rewind(f);
    return st;
}

/* Read run `which` (id or latest) from a JSON Lines file (the store's
 * interchange format, as fleetprint simulate writes it). */
static fp_status read_run_jsonl(const char *path, FILE *f, const char *which, fp_run *run)
{
    char want[48], err[256];
    snprintf(want, sizeof want, "%s", which);
    fp_status st = FP_OK;
    if (strcmp(which, "latest") == 0) {
        st = last_run_id(f, path, want, sizeof want);
        if (st != FP_OK)
            return st;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    bool have_ctx = false;
    while ((n = getline(&line, &cap, f)) >= 0 && st == FP_OK) {
        lineno++;
        fp_jsonl_line l;
        if (fp_jsonl_parse(line, (size_t)n, &l, err, sizeof err) != FP_OK) {
            fp_error("%s:%zu: %s", path, lineno, err);
            st = FP_EINPUT;
            break;
        }
        if (l.kind == FP_JSONL_RUN) {
            fp_run ctx;
            memset(&ctx, 0, sizeof ctx);
            st = fp_json_parse_context(l.context, &ctx, err, sizeof err);
            json_decref(l.context);
            if (st != FP_OK) {
                fp_error("%s:%zu: %s", path, lineno, err);
                break;
            }
            if (!want[0])
                snprintf(want, sizeof want, "%s", ctx.id); /* first run when no run lines preceded */
            if (strcmp(ctx.id, want) == 0 && !have_ctx) {
                /* the context replaces run's; samples read so far stay */
                ctx.samples = run->samples;
                ctx.nsamples = run->nsamples;
                ctx.cap = run->cap;
                run->samples = NULL;
                run->nsamples = run->cap = 0;
                fp_run_free(run);
                *run = ctx;
                have_ctx = true;
            } else {
                fp_run_free(&ctx);
            }
        } else if (l.kind == FP_JSONL_SAMPLE) {
            if (!want[0])
                snprintf(want, sizeof want, "%s", l.run_id);
            if (strcmp(l.run_id, want) == 0)
                st = fp_run_add(run, &l.sample);
        }
    }
    free(line);
    if (st == FP_OK && run->nsamples == 0) {
        fp_error("%s: no samples of run '%s'", path, want[0] ? want : which);
        st = FP_EINPUT;
    }
    if (st == FP_OK && !run->id[0])
        snprintf(run->id, sizeof run->id, "%s", want);
    return st;
}

static fp_status read_run_file(const char *path, const char *which, fp_run *run)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fp_error("%s: cannot read: %s", path, strerror(errno));
        return FP_EINPUT;
    }
    /* a whole-file JSON object is a run file; otherwise JSON Lines */
    json_error_t je;
    json_t *root = json_loadf(f, JSON_DISABLE_EOF_CHECK, &je);
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t') {
    }
    bool whole = root && c == EOF && json_object_get(root, "samples");
    fp_status st;
    if (whole) {
        st = read_run_json(path, root, run);
    } else {
        rewind(f);
        st = read_run_jsonl(path, f, which, run);
    }
    json_decref(root);
    fclose(f);
    return st;
}

/* ==== fleetprint detect ================================================================ */

typedef struct detect_cfg {
    const char *store;
    const char *run;
    const char *tag;
    const char *input;
    detect_out out;
    bool no_baselines;
    bool print_rules;
    bool classify;
    bool contended;
} detect_cfg;

#define FP_DETECT_OUT_OPTS(type, member)                                                   \
    {"rules", 'r', FP_OPT_STRING, offsetof(type, member.rules), NULL,                      \
     "rules file (JSON; default: the built-in rules, see --print-rules)"},                 \
        {"json", 0, FP_OPT_STRING, offsetof(type, member.json), NULL,                      \
         "write the verdicts as JSON to FILE ('-' for stdout)"},                           \
        {"drain-file", 0, FP_OPT_STRING, offsetof(type, member.drain), NULL,               \
         "write the failing nodes as a Slurm hostlist to FILE"},                           \
        {"exclude-file", 0, FP_OPT_STRING, offsetof(type, member.exclude), NULL,           \
         "write the nodes to exclude (srun --exclude) to FILE"},                           \
        {"junit", 0, FP_OPT_STRING, offsetof(type, member.junit), NULL,                    \
         "write the verdicts as JUnit XML to FILE (a test case per entity)"},              \
        {"html", 0, FP_OPT_STRING, offsetof(type, member.html), NULL,                      \
         "write an HTML page with the verdicts, link matrix and timeline to FILE"},        \
        {"prometheus", 0, FP_OPT_STRING, offsetof(type, member.prometheus), NULL,          \
         "write a Prometheus textfile (node_exporter textfile collector) to FILE"},         \
        {"explain", 0, FP_OPT_STRING, offsetof(type, member.explain), NULL,                \
         "print the evidence chain of ENTITY (node:n3 with its devices, links and ranks)"}

static const fp_opt detect_opts[] = {
    {"store", 0, FP_OPT_STRING, offsetof(detect_cfg, store), NULL,
     "HDF5 store: the run and its baselines come from it"},
    {"run", 0, FP_OPT_STRING, offsetof(detect_cfg, run), "latest", "run id or 'latest'"},
    {"tag", 0, FP_OPT_STRING, offsetof(detect_cfg, tag), NULL, "latest: only runs with this tag"},
    {"input", 'i', FP_OPT_STRING, offsetof(detect_cfg, input), NULL,
     "read the run from a file instead: run JSON (run --json) or JSON Lines (simulate)"},
    {"no-baselines", 0, FP_OPT_FLAG, offsetof(detect_cfg, no_baselines), NULL,
     "peer evidence only, even with a store"},
    FP_DETECT_OUT_OPTS(detect_cfg, out),
    {"contended", 0, FP_OPT_FLAG, offsetof(detect_cfg, contended), NULL,
     "the run's ranks shared CPU cores: use the rules' contended thresholds"},
    {"classify", 0, FP_OPT_FLAG, offsetof(detect_cfg, classify), NULL,
     "read metric keys (suite.test.metric@size), one a line, from stdin and print the rule "
     "that judges each"},
    {"print-rules", 0, FP_OPT_FLAG, offsetof(detect_cfg, print_rules), NULL,
     "print the default rules file and exit"},
    {"quiet", 'q', FP_OPT_FLAG, offsetof(detect_cfg, out.quiet), NULL,
     "no per-entity lines, only the verdict"},
    {0},
};

static fp_status detect_as(const detect_cfg *c, const char *command)
{
    fp_status st = FP_OK;
    fp_rules *rules = NULL;
    fp_store *store = NULL;
    fp_baselines *base = NULL;
    fp_run run;
    fp_run_init(&run);
    run.id[0] = 0;
    if (c->print_rules) {
        fputs(fp_rules_default_text(), stdout);
        goto cleanup;
    }
    if (c->classify) {
        char line[256];
        FP_CHECK(load_rules(c->out.rules, &rules));
        while (fgets(line, sizeof line, stdin)) {
            line[strcspn(line, "\r\n")] = 0;
            const char *rule = line[0] ? fp_rules_classify(rules, line) : NULL;
            if (line[0])
                printf("%s %s\n", line, rule ? rule : "-");
        }
        goto cleanup;
    }
    if (!c->store == !c->input)
        FP_FAIL(FP_EUSAGE, "detect needs one of --store FILE or --input FILE");
    FP_CHECK(load_rules(c->out.rules, &rules));
    if (c->store) {
        FP_CHECK(fp_store_open(&store, c->store, FP_STORE_READ, 0));
        fp_run_free(&run);
        FP_CHECK(fp_store_load_run(store, c->run, c->tag, &run));
        if (!c->no_baselines) {
            FP_CHECK(fp_store_load_baselines(store, &base));
            if (fp_baselines_entity_count(base) + fp_baselines_sku_count(base) == 0) {
                fp_info("%s has no baselines (fleetprint baseline build): peer evidence only",
                        c->store);
                fp_baselines_free(base);
                base = NULL;
            }
        }
    } else {
        FP_CHECK(read_run_file(c->input, c->run, &run));
    }
    detect_out out = c->out;
    out.command = command;
    st = detect_and_report(&run, rules, base, &out, c->contended ? "--contended" : NULL);
cleanup:
    fp_baselines_free(base);
    fp_store_close(store);
    fp_rules_free(rules);
    fp_run_free(&run);
    return st;
}

static fp_status detect_main(const void *config, fp_world *w)
{
    (void)w;
    return detect_as(config, "detect");
}

/* `report` is detect's loading and outputs for people and dashboards: it
 * renders a run whatever its verdict, then exits as detect does (1 when the
 * verdict it printed is fail), so its exit code never contradicts its output. */
static fp_status report_main(const void *config, fp_world *w)
{
    const detect_cfg *c = config;
    if (!c->print_rules && !c->out.html && !c->out.prometheus && !c->out.json && !c->out.junit) {
        fp_error("report: nothing to write: give --html FILE, --prometheus FILE, --json or --junit");
        return FP_EUSAGE;
    }
    (void)w;
    return detect_as(c, "report");
}

const fp_command fp_cmd_report = {
    .name = "report",
    .summary = "render a run: HTML (verdicts, link matrix, timeline), Prometheus textfile",
    .opts = detect_opts,
    .config_size = sizeof(detect_cfg),
    .needs_world = false,
    .run = report_main,
};

const fp_command fp_cmd_detect = {
    .name = "detect",
    .summary = "verdicts for a stored run: peers, drift and fleet evidence; drain lists",
    .opts = detect_opts,
    .config_size = sizeof(detect_cfg),
    .needs_world = false,
    .run = detect_main,
};

/* ==== fleetprint preflight ============================================================== */

typedef struct preflight_cfg {
    fp_config base; /* first: the suite's option rows address it */
    detect_out out;
    const char *run_json;
    bool no_baselines;
} preflight_cfg;

/* The quick default set, in registry order; tests not in this build are
 * skipped with a note. */
static const char *const quick_tests[] = {"membw", "gemm", "allreduce", "alltoall", "links", NULL};

#define PF(field) offsetof(preflight_cfg, base.field)
static const fp_opt preflight_opts[] = {
    {"test", 't', FP_OPT_LIST, PF(tests), NULL,
     "run only this test (repeatable; default: membw gemm allreduce alltoall links)"},
    {"device", 0, FP_OPT_STRING, PF(device), "auto", "device backend: auto, host or cuda"},
    {"comm", 0, FP_OPT_STRING, PF(comm), "auto", "comm backend: auto, mpi or nccl"},
    {"threads", 0, FP_OPT_INT, PF(threads), "1", "host threads per rank (0: cores / ranks)"},
    {"min-bytes", 'b', FP_OPT_BYTES, PF(min_bytes), "1M", "smallest message size"},
    {"max-bytes", 'e', FP_OPT_BYTES, PF(max_bytes), "4M", "largest message size"},
    {"step-factor", 'f', FP_OPT_DOUBLE, PF(step_factor), "4", "size multiplier between steps"},
    {"iters", 'n', FP_OPT_INT, PF(iters), "6", "timed iterations (the detector's windows)"},
    {"warmup-iters", 'w', FP_OPT_INT, PF(warmup), "2", "untimed warm-up iterations"},
    {"check", 'c', FP_OPT_INT, PF(check), "1", "verify results: 1 yes, 0 no"},
    {"array-size", 0, FP_OPT_BYTES, PF(array_bytes), "8M", "membw: bytes per array"},
    {"pairs", 0, FP_OPT_STRING, PF(pairs), "auto",
     "link sweep pairs: auto (all up to 32 nodes, else random=8), all, ring, k=K, random=K"},
    {"timeout", 0, FP_OPT_SECONDS, PF(timeout), "60s", "deadline of every blocking step"},
    {"inject", 0, FP_OPT_LIST, PF(inject), NULL, "inject a fault (repeatable; see README)"},
    {"tag", 0, FP_OPT_STRING, PF(tag), "preflight", "tag of the run"},
    {"store", 0, FP_OPT_STRING, PF(store), NULL,
     "HDF5 store: compare with its baselines, then append the run to it"},
    {"no-baselines", 0, FP_OPT_FLAG, offsetof(preflight_cfg, no_baselines), NULL,
     "peer evidence only, even with a store"},
    FP_DETECT_OUT_OPTS(preflight_cfg, out),
    {"run-json", 0, FP_OPT_STRING, offsetof(preflight_cfg, run_json), NULL,
     "also write the run's samples as JSON to FILE"},
    {"verbose", 'v', FP_OPT_FLAG, PF(verbose), NULL, "log from every rank"},
    {"quiet", 'q', FP_OPT_FLAG, PF(quiet), NULL, "only warnings, errors and the verdict"},
    {0},
};
#undef PF

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
    host_info mine, *all = NULL;
    memset(&mine, 0, sizeof mine);
    gethostname(mine.host, sizeof mine.host - 1);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    mine.cores = cores > 0 ? (int)cores : 1;
    mine.threads = threads > 0 ? threads : 1;
    int n = fp_world_size(w);
    all = calloc((size_t)n, sizeof *all);
    if (!all)
        return FP_ENOMEM;
    fp_status st = fp_world_allgather(w, &mine, all, (int)sizeof mine, "checking for shared cores");
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

static fp_status hang_prepare(hang_out *h, const fp_ctx *ctx, const fp_config *cfg)
{
    const fp_world *w = ctx->world;
    fp_run_init(&h->ctx);
    fp_status st = fp_run_set_shape(&h->ctx, fp_world_nnodes(w), fp_world_size(w));
    if (st != FP_OK)
        return st;
    for (int i = 0; i < fp_world_nnodes(w); i++)
        snprintf(h->ctx.nodes[i], FP_NAME_MAX, "%s", fp_world_node_name(w, i));
    for (int r = 0; r < fp_world_size(w); r++) {
        h->ctx.ranks[r].node = fp_world_node_of(w, r);
        h->ctx.ranks[r].dev = -1;
    }
    snprintf(h->ctx.tag, sizeof h->ctx.tag, "%s", cfg->tag);
    snprintf(h->ctx.status, sizeof h->ctx.status, "timeout");
    snprintf(h->ctx.command, sizeof h->ctx.command, "%s", fp_world_command_line(w));
    snprintf(h->ctx.device_backend, sizeof h->ctx.device_backend, "%s", ctx->dev_ops->name);
    snprintf(h->ctx.comm_backend, sizeof h->ctx.comm_backend, "%s", ctx->comm_ops->name);
    snprintf(h->ctx.fleetprint_version, sizeof h->ctx.fleetprint_version, "%s", FP_VERSION);
    fp_inject_describe(ctx->inject, h->ctx.injections, sizeof h->ctx.injections);
    fp_run_slurm_context(&h->ctx);
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
    (void)write_outputs(&h->ctx, v, &h->out); /* each write logs its own error */
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

static fp_status preflight_main(const void *config, fp_world *w)
{
    const preflight_cfg *pc = config;
    fp_config cfg = pc->base;
    fp_status st = FP_OK;
    fp_rules *rules = NULL;
    fp_store *store = NULL;
    fp_baselines *base = NULL;
    fp_inject_set inject;
    fp_run local, run;
    fp_ctx ctx;
    hang_out hang;
    bool opened = false;
    fp_run_init(&local);
    fp_run_init(&run);
    fp_run_init(&hang.ctx);
    int rank = fp_world_rank(w);
    double t0 = fp_clock();
    detect_out out = pc->out;
    out.quiet = out.quiet || cfg.quiet;
    out.command = "preflight";

    /* inputs first, so a bad rules file or store fails before any test runs */
    fp_world_configure(w, cfg.timeout, cfg.verbose, cfg.quiet);
    if (rank == 0) {
        st = load_rules(out.rules, &rules);
        bool exists = cfg.store && access(cfg.store, F_OK) == 0;
        if (cfg.store && !exists)
            fp_info("preflight: %s does not exist yet: peer evidence only; the run starts it",
                    cfg.store);
        if (st == FP_OK && exists && !pc->no_baselines) {
            st = fp_store_open(&store, cfg.store, FP_STORE_READ, 0);
            if (st == FP_OK)
                st = fp_store_load_baselines(store, &base);
        }
    }
    st = fp_world_agree(w, st);
    if (st != FP_OK)
        goto cleanup;

    /* the quick set: what this build has */
    cfg.suite = "all";
    if (cfg.tests.n == 0) {
        for (int i = 0; quick_tests[i]; i++) {
            if (registered(quick_tests[i]))
                cfg.tests.item[cfg.tests.n++] = quick_tests[i];
            else if (rank == 0)
                fp_info("preflight: test '%s' is not in this build: skipped", quick_tests[i]);
        }
        if (cfg.tests.n == 0)
            FP_FAIL(FP_EUSAGE, "preflight: none of its tests is in this build");
    }
    if (strcmp(cfg.pairs, "auto") == 0)
        cfg.pairs = fp_world_nnodes(w) <= 32 ? "all" : "random=8";
    bool contended = false;
    char note[112] = "";
    st = check_contention(w, cfg.threads > 0 ? cfg.threads : 1, &contended, note, sizeof note);
    if (st != FP_OK)
        goto cleanup;
    if (contended && rank == 0)
        fp_warn("preflight: ranks share CPU cores (%s): timing rules use the contended "
                "thresholds", note);
    st = fp_ctx_open(&ctx, &cfg, w, &inject, &local);
    opened = true;
    if (st == FP_OK && rank == 0) {
        hang.out = out;
        st = hang_prepare(&hang, &ctx, &cfg);
        if (st == FP_OK)
            fp_world_on_timeout(w, hang_write, &hang);
    }
    if (st == FP_OK)
        st = fp_run_selected(&ctx);
    if (st != FP_ETIMEOUT)
        st = fp_world_agree(w, st);
    if (st == FP_OK)
        st = fp_ctx_gather(&ctx, &run);
    if (st == FP_OK && rank == 0) {
        fp_info("preflight: %zu samples from %d %s on %d %s in %.1f s", run.nsamples, run.nranks,
                fp_plural(run.nranks, "rank", "ranks"), run.nnodes,
                fp_plural(run.nnodes, "node", "nodes"), fp_clock() - t0);
        if (pc->run_json)
            st = fp_report_json(&run, pc->run_json);
        if (st == FP_OK)
            st = detect_and_report(&run, rules, base, &out, contended ? note : NULL);
        /* the run joins the store whatever its verdict: history, and the
         * health that admit --store --tag preflight reads */
        if ((st == FP_OK || st == FP_EFAIL) && cfg.store) {
            fp_status stored = fp_store_append_file(cfg.store, &run, cfg.timeout);
            st = stored == FP_OK ? st : stored;
        }
    }
    /* every rank exits with the verdict's code */
    if (st != FP_ETIMEOUT)
        st = fp_world_agree(w, st);
cleanup:
    fp_world_on_timeout(w, NULL, NULL);
    fp_run_free(&hang.ctx);
    if (opened)
        fp_ctx_close(&ctx);
    fp_baselines_free(base);
    fp_store_close(store);
    fp_rules_free(rules);
    fp_run_free(&local);
    fp_run_free(&run);
    return st;
}

const fp_command fp_cmd_preflight = {
    .name = "preflight",
    .summary = "quick checks before a job starts, then detect: exit 0 = go; drain lists",
    .opts = preflight_opts,
    .config_size = sizeof(preflight_cfg),
    .needs_world = true,
    .run = preflight_main,
};

/* ==== fleetprint simulate ================================================================== */

typedef struct simulate_cfg {
    int nodes, gpus, seed, runs, windows, partners;
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
     "slow-node, bad-link, sdc, throttle, intermittent (default: see docs/detect.md)"},
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
                     .seed = (uint64_t)(unsigned)c->seed, .faults = c->faults};
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
