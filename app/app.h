#ifndef FLEETPRINT_APP_APP_H
#define FLEETPRINT_APP_APP_H
/* What the commands of app/ share. Only app/ includes this header. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "fleetprint/detect.h"
#include "fleetprint/history.h"
#include "fleetprint/store.h"
#include "fleetprint/suite.h"
#include "fleetprint/collectives.h"
#include "fleetprint/kernels.h"
#include "fleetprint/report.h"
#include "fleetprint/world.h"

/* ---- detect, report and preflight: verdicts and their outputs ------------------ */

/* A re-test of the run detect judges (preflight's confirm pass, or the one
 * stored with the run): its run, judged with the same rules and baselines,
 * and what the caller knows of it (info's items are filled by the
 * combination, fp_verdicts_confirm). */
typedef struct detect_confirm {
    const fp_run *retest; /* NULL: none ran (info.note says why) */
    fp_confirm_info info;
} detect_confirm;

typedef struct detect_out {
    const char *rules;
    const char *json;
    const char *drain;
    const char *exclude;
    const char *junit;
    const char *html;
    const char *prometheus;
    const char *explain;
    double max_drain; /* the circuit breaker's share of nodes; 0: the rules' */
    const char *references; /* the reference catalog file; NULL: the built-in one */
    const fp_run *previous; /* the store's previous run (configuration), or NULL */
    bool quiet;
    const char *command; /* the run_tag of a run without a tag (not an option) */
    const fp_history *history; /* judge with this history (not an option; NULL: none) */
    fp_run_verdicts *record;   /* append the verdicts' record here (not an option; NULL: no) */
    const detect_confirm *confirm; /* NULL: the run is judged alone (not an option) */
    const char *retest_args;       /* write the run options of a re-test here (detect) */
    struct fp_detect_prep *prepared; /* the run interned ahead (not an option; NULL: none) */
    /* preflight --prometheus-local DIR: each node's first rank writes its node's
     * file into DIR on its host (%n: the node's name); app/prom_local.c */
    const char *prometheus_local;
    const char *prom_local_dir;   /* rank 0's own DIR, its run file's (not an option) */
    const char *prom_local_node;  /* rank 0's node (not an option) */
    fp_prom_files *prom_local;    /* the report step renders every node's file here, for
                                   * the nodes to write; NULL: rank 0 writes its own
                                   * node's and the run file at once (a timeout's outputs) */
} detect_out;

typedef struct detect_cfg {
    const char *store;
    const char *run;
    const char *tag;
    const char *input;
    detect_out out;
    bool no_baselines;
    bool print_rules;
    bool print_references;
    bool classify;
    bool contended;
    bool record; /* keep the verdicts with the stored run (--record) */
    const char *confirm; /* auto (NULL too) or off: judge a stored run with its re-test */
} detect_cfg;

/* Option rows of the verdict outputs (fields of a detect_out member): the
 * rules, the files for dashboards and CI (detect, report, preflight), and the
 * drain lists and --explain (detect, preflight). */
#define FP_DETECT_REPORT_OPTS(type, member)                                                \
    {"rules", 'r', FP_OPT_STRING, offsetof(type, member.rules), NULL,                      \
     "rules file (JSON; default: the built-in rules, see detect --print-rules)"},          \
        {"json", 0, FP_OPT_STRING, offsetof(type, member.json), NULL,                      \
         "write the verdicts as JSON to FILE ('-' for stdout)"},                           \
        {"junit", 0, FP_OPT_STRING, offsetof(type, member.junit), NULL,                    \
         "write the verdicts as JUnit XML to FILE (a test case per entity)"},              \
        {"html", 0, FP_OPT_STRING, offsetof(type, member.html), NULL,                      \
         "write an HTML page with the verdicts, link matrix and timeline to FILE"},        \
        {"prometheus", 0, FP_OPT_STRING, offsetof(type, member.prometheus), NULL,          \
         "write a Prometheus textfile (node_exporter textfile collector) to FILE, or one " \
         "per node and one for the run into DIR/ (ends in '/' or is a folder)"},          \
        {"references", 0, FP_OPT_STRING, offsetof(type, member.references), NULL,          \
         "reference catalog (JSON; default: the built-in one, see detect --print-references)"}
#define FP_DETECT_DRAIN_OPTS(type, member)                                                 \
    {"drain-file", 0, FP_OPT_STRING, offsetof(type, member.drain), NULL,                   \
     "write the failing nodes as a Slurm hostlist to FILE"},                               \
        {"exclude-file", 0, FP_OPT_STRING, offsetof(type, member.exclude), NULL,           \
         "write the nodes to exclude (srun --exclude) to FILE"},                           \
        {"explain", 0, FP_OPT_STRING, offsetof(type, member.explain), NULL,                \
         "print the evidence chain of ENTITY (node:n3 with its devices, links and ranks)"},  \
        {"max-drain", 0, FP_OPT_DOUBLE, offsetof(type, member.max_drain), "0",             \
         "circuit breaker: drain nothing when more than this share of the nodes fails "    \
         "(and more than the rules' breaker.max_nodes); 0: the rules' (0.05); 1: off"}
#define FP_DETECT_OUT_OPTS(type, member)                                                   \
    FP_DETECT_REPORT_OPTS(type, member), FP_DETECT_DRAIN_OPTS(type, member)
/* Where detect and report read the run from (fields of detect_cfg). */
#define FP_DETECT_INPUT_OPTS                                                               \
    {"store", 0, FP_OPT_STRING, offsetof(detect_cfg, store), NULL,                         \
     "HDF5 store: the run and its baselines come from it"},                                \
        {"run", 0, FP_OPT_STRING, offsetof(detect_cfg, run), "latest", "run id or 'latest'"}, \
        {"tag", 0, FP_OPT_STRING, offsetof(detect_cfg, tag), NULL,                         \
         "latest: only runs with this tag"},                                               \
        {"input", 'i', FP_OPT_STRING, offsetof(detect_cfg, input), NULL,                   \
         "read the run from a file instead: run JSON (run --json) or JSON Lines (simulate)"}, \
        {"no-baselines", 0, FP_OPT_FLAG, offsetof(detect_cfg, no_baselines), NULL,         \
         "peer evidence only, even with a store"}

/* Detect on run with optional baselines (base may be NULL), print the verdicts
 * unless o->quiet, write the outputs o names. contended: the note that the
 * ranks shared CPU cores, or NULL: the run's own record of it (run->contended,
 * "" when they did not). Returns FP_EFAIL when something failed,
 * FP_OK when all passed, or the first error. */
fp_status fp_app_detect_and_report(const fp_run *run, const fp_rules *rules,
                                   const fp_baselines *base, const detect_out *o,
                                   const char *contended);

/* ---- preflight --prometheus-local (app/prom_local.c) ------------------------------ */

/* pattern with each "%n" replaced by node and "%%" by "%" into buf[len].
 * False (buf undefined) when pattern holds another '%' or the result does not fit. */
bool fp_app_prom_local_dir(const char *pattern, const char *node, char *buf, size_t len);

/* Rank 0, as the verdict outputs are written: render every node's textfile
 * into o->prom_local for fp_app_prom_local_write, or, when o->prom_local is
 * NULL, write rank 0's own node's file and the run file into o->prom_local_dir
 * now. FP_EIO, FP_ENOMEM, FP_EINPUT (a node name that cannot be a file name). */
fp_status fp_app_prom_local_render(const fp_run *run, const fp_verdicts *v, const detect_out *o);

/* Every rank, after the report step (collective, with the world's deadline):
 * rank 0 hands each node's first rank its node's text from files (rendered by
 * fp_app_prom_local_render; n 0: nothing was rendered, nothing is written),
 * which writes it as fleetprint-<node>.prom into pattern's folder for its
 * node; rank 0 writes the run file there too. Returns the worst status over
 * every rank (FP_EIO after a write error: that node's old file is left). */
fp_status fp_app_prom_local_write(fp_world *w, const char *pattern, const fp_prom_files *files);

/* Write the verdict files o names and log the failing nodes; the worst
 * write status. */
fp_status fp_app_write_outputs(const fp_run *run, const fp_verdicts *v, const detect_out *o);

/* Load the rules file at path (NULL: the built-in rules) into *out; logs one
 * line naming the file and the field on error. */
fp_status fp_app_load_rules(const char *path, fp_rules **out);

/* The run before run in store for its configuration records: the newest
 * stored run that started before it and had no fault injected, its nodes and
 * records only (fp_store_load_run_config), into *prev (fp_run_free it); FP_OK
 * with *found false when there is none. */
fp_status fp_app_previous_run(fp_store *store, const fp_run *run, fp_run *prev, bool *found);

/* --max-drain's value: FP_OK in 0..1, else FP_EUSAGE with one line. */
fp_status fp_app_check_max_drain(double max_drain);

/* The history that detect evidence of a run in store reads under rules
 * (fp_rules_history: its tag and how many runs back): the judged runs
 * stored before run before (NULL: every run, for a run not stored yet).
 * *out is NULL when the rules turn history off ("runs": 0). Logs one line
 * on error. */
fp_status fp_app_load_history(fp_store *store, const fp_rules *rules, const char *before,
                              fp_history **out);

/* The detect command's work for c, run as command ("detect", "report"): loads
 * the run and baselines from the store or --input, then
 * fp_app_detect_and_report; command is the run_tag of an untagged run in
 * the Prometheus output. */
fp_status fp_app_detect_as(const detect_cfg *c, const char *command);

/* ---- confirmation before acting (app/confirm.c, docs/confirm.md) ---------------- */

/* The --pairs list of a re-test's link sweep for plan p of run: its node
 * pairs, then in each round the nodes that passed and are idle paired among
 * themselves (reference links), as "A~B,C~D,..." in round order, and "A"
 * for a node whose inner links failed. *list is new (the caller frees it;
 * NULL when the plan has no link to measure), *lp the inter-node plan the
 * sweep will run (the caller frees it with fp_link_plan_free). FP_ENOMEM. */
fp_status fp_app_confirm_pairs(const fp_confirm_plan *p, const fp_run *run, char **list,
                               fp_link_plan *lp);

/* Judge c's re-test as d judges (with the re-test's own record of shared
 * cores) and replace *v, the verdicts of run, by the confirmed ones
 * (fp_verdicts_confirm). Without a re-test (c->retest NULL) *v only gets
 * c's info. On error *v is left as it was. */
fp_status fp_app_confirm_apply(const fp_detect_opts *d, const detect_confirm *c,
                               fp_verdicts **v);

/* The re-test stored with run (status FP_RUN_RETEST, confirms run's id): the
 * newest into *retest (initialised here; the caller frees it) and *found
 * true, else *found false. */
fp_status fp_app_find_retest(fp_store *store, const fp_run *run, fp_run *retest, bool *found);

/* Write the options of `fleetprint run` that re-test what failed in run (v:
 * its verdicts): "--test NAME ... [--pairs LIST] --iters N", one line, or an
 * empty file when nothing failed that a re-test can judge. N keeps the
 * re-test within a quarter of the run's time by the run's own timings (the
 * span of each test's samples over its windows), at least 2. FP_EIO. */
fp_status fp_app_write_retest_args(const fp_run *run, const fp_verdicts *v, const fp_rules *rules,
                                   const char *path);

/* ---- the measuring commands: run, preflight, burnin ----------------------------- */

/* Where a measuring command's run goes: the app's settings, not the runtime's. */
typedef struct measure_out {
    const char *tag;   /* the run's tag */
    const char *json;  /* write the run as JSON to this file ("-" for stdout) */
    const char *store; /* append the run to this HDF5 store */
    const char *junit; /* write a JUnit XML report to this file */
} measure_out;

/* Option rows of the run controls: the deadline and injections (member base,
 * an fp_config), the run's tag and outputs (member out, a measure_out) and
 * the logging, in the order run --help lists them. */
#define FP_OPTS_RUN_CONTROL(type, base, out)                                               \
    FP_OPTS_DEADLINE(type, base),                                                          \
        {"tag", 0, FP_OPT_STRING, offsetof(type, out.tag), "adhoc", "tag of the run"},     \
        {"json", 0, FP_OPT_STRING, offsetof(type, out.json), NULL,                         \
         "write the run as JSON to FILE ('-' for stdout)"},                                \
        {"store", 0, FP_OPT_STRING, offsetof(type, out.store), NULL,                       \
         "append the run to this HDF5 store"},                                             \
        {"junit", 0, FP_OPT_STRING, offsetof(type, out.junit), NULL,                       \
         "write a JUnit XML report to FILE"},                                              \
        FP_OPTS_LOGGING(type, base)

/* The tests of the registry that run and preflight run, and their settings.
 * The options fill base and sweep once, and each suite's own settings into
 * its config; fp_run_selected gives every suite's config that base and
 * sweep. */
typedef struct tests_cfg {
    const char *suite;         /* kernels, collectives, all */
    fp_strlist tests;          /* --test NAME: only these */
    fp_config base;            /* the runtime's (the context is opened with it) */
    fp_sweep sweep;            /* the sizes and iterations of both suites */
    fp_kernels_config kernels; /* the kernels suite's own settings */
    fp_coll_config coll;       /* the collectives suite's own settings */
} tests_cfg;

/* The registry of tests (kernels/ and collectives/), NULL-terminated. */
extern const fp_test *const fp_tests[];

/* Every --test name of c is a test of this build and its --suite is known:
 * FP_OK, else FP_EUSAGE with a one-line error when speak. Needs no world, so
 * commands check before MPI and devices start. */
fp_status fp_selection_check(const tests_cfg *c, bool speak);

/* Run the tests c selects (suite and --test), in registry order, each with
 * its suite's config as ctx->cfg (restored before returning). */
fp_status fp_run_selected(fp_ctx *ctx, const tests_cfg *c);

/* What a measuring command does at each step of fp_measure; arg is its own. */
typedef struct fp_measure_steps {
    /* Every rank, in the open context: the measurement. */
    fp_status (*measure)(fp_ctx *ctx, void *arg);
    /* NULL, or every rank once all measured without error: a collective
     * step before the gather (counting wrong results, gathering verdicts). */
    fp_status (*collect)(fp_ctx *ctx, void *arg);
    /* NULL, or every rank after the gather (run is filled on rank 0 only), in
     * the open context: a second measurement that rank 0 decides from the run
     * (preflight's re-test of what failed). Returns the status every rank
     * agrees on (a timeout at once, as measure). */
    fp_status (*confirm)(fp_ctx *ctx, fp_run *run, void *arg);
    /* NULL, or rank 0 when the run is stored: another run to append in the
     * same commit (the re-test), or NULL. */
    const fp_run *(*also_store)(void *arg);
    /* Rank 0, with the gathered run: set its status, print and write it.
     * Returns FP_OK, FP_EFAIL (something failed), FP_EINTR or an error. */
    fp_status (*report)(fp_run *run, void *arg);
    /* NULL, or every rank at the end, before the context (its device) closes:
     * free what measure holds on the device. */
    void (*release)(void *arg);
    /* NULL, or rank 0 after report: the verdicts to store with the run in
     * the same commit (NULL: none). */
    const fp_run_verdicts *(*verdicts)(void *arg);
} fp_measure_steps;

/* Where a rank runs, for telling whether ranks share CPU cores. */
typedef struct fp_app_host {
    char host[56];
    int cores, threads; /* the host's online cores; the rank's threads (cfg) */
} fp_app_host;

/* This rank's host, cores and threads under cfg. */
void fp_app_host_of(const fp_config *cfg, const fp_world *w, fp_app_host *h);

/* Whether the ranks of some host (all: n ranks' records) want more threads
 * than it has cores; note then says "12 threads on 2 cores of host x" for
 * the first such host, else it is left as it is. */
bool fp_app_contended(const fp_app_host *all, int n, char *note, size_t len);

/* Whether ranks share CPU cores (every rank calls it): each tells its host
 * and cores, and a host whose ranks want more threads than it has cores is
 * contended (many emulated nodes on one machine), its timings only roughly
 * comparable. Sets cfg->shared_cores (host kernels are then timed without
 * their waits for a core) and fills note with "12 threads on 2 cores of host
 * x", or "" where no host is; rank 0 warns, naming command. The measuring
 * commands record the note in the run (fp_run.contended), so that detect
 * judges it, then or later, with the contended thresholds. */
fp_status fp_app_contention(fp_world *w, fp_config *cfg, const char *command, char *note,
                            size_t len);

/* Open the test context of cfg on every rank, run steps->measure, agree on
 * the status, steps->collect, gather the run to rank 0 tagged out->tag,
 * steps->confirm, steps->report there and append the run (with
 * steps->verdicts, and steps->also_store's run, in one commit) to out->store
 * when the report passed, failed or was interrupted; every rank returns the
 * worst status. A timeout is returned at once without agreeing (the ranks
 * that hang cannot). */
fp_status fp_measure(const fp_config *cfg, const measure_out *out, fp_world *w,
                     const fp_measure_steps *steps, void *arg);

/* ---- isolation in rounds (app/isolate.c) ---------------------------------------- */

/* The settings of an isolation besides the runtime's. */
typedef struct isolate_opts {
    const char *strategy;    /* grid, bisect, auto */
    const char *collective;  /* the check: allreduce, allgather, reduce_scatter, alltoall */
    uint64_t bytes;          /* its size; 0: 64 MiB on devices with their own memory, else 1 MiB */
    double warm, window;     /* seconds of warm-up and timed calls per round */
    int max_rounds;
    const char *rounds_json; /* the round table as JSON, or NULL */
    const char *run_json;    /* the run as JSON, or NULL */
    bool results_only;       /* judge wrong results and hangs, not slowness (preflight's
                                check returned wrong results: what failed is isolated) */
} isolate_opts;

/* Isolate on every rank of w (docs/isolate.md): open the test context of
 * rt, run the rounds, then the writer (rank 0 unless its node hangs) prints
 * the round table and the verdicts of what was named and writes o's outputs
 * and the run (tag and store of mo), and every rank not on a hung node
 * finishes. Returns, on every rank that returns: FP_OK nothing named,
 * FP_EFAIL named, FP_ETIMEOUT a rank hangs (the job must end by abort),
 * or an error. */
fp_status fp_app_isolate(const fp_config *rt, const isolate_opts *io, const measure_out *mo,
                         const detect_out *o, fp_world *w);

/* Preflight's test (rank 0, its run and rules): whether a collective of the
 * whole job failed without a culprit named (no node fails, or more than half
 * do); why says so, and *wrong whether its results were wrong (then
 * isolation judges results and hangs only, not timings). */
bool fp_app_isolate_wanted(const fp_run *run, const fp_rules *rules, const fp_baselines *base,
                           const char *contended_note, char *why, size_t len, bool *wrong);

/* preflight --isolate's value: NULL or a strategy; else FP_EUSAGE with one
 * line when speak. */
fp_status fp_app_isolate_check(const char *strategy, bool speak);

/* After preflight ended with st on every rank: when strategy is set and rank
 * 0's why says isolation is wanted, isolate with it (fp_app_isolate, the run
 * tagged "isolate"; rank 0's wrong: results and hangs only) and return that
 * status; else st. */
fp_status fp_app_isolate_after(const char *strategy, const fp_config *rt, const measure_out *mo,
                               const detect_out *o, fp_world *w, fp_status st, const char *why,
                               bool wrong);

/* ---- the manual (app/manual.c) ------------------------------------------------- */

/* The man page (roff, section 1) of every command and option, from the tables. */
void fp_print_man(FILE *out);

/* A bash completion script: the commands, and each command's own options. */
void fp_print_bash_completion(FILE *out);

#endif
