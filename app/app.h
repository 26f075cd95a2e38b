#ifndef FLEETPRINT_APP_APP_H
#define FLEETPRINT_APP_APP_H
/* What the commands of app/ share. Only app/ includes this header. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "fleetprint/detect.h"
#include "fleetprint/store.h"
#include "fleetprint/suite.h"
#include "fleetprint/collectives.h"
#include "fleetprint/kernels.h"

/* ---- detect, report and preflight: verdicts and their outputs ------------------ */

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
         "write a Prometheus textfile (node_exporter textfile collector) to FILE"}
#define FP_DETECT_DRAIN_OPTS(type, member)                                                 \
    {"drain-file", 0, FP_OPT_STRING, offsetof(type, member.drain), NULL,                   \
     "write the failing nodes as a Slurm hostlist to FILE"},                               \
        {"exclude-file", 0, FP_OPT_STRING, offsetof(type, member.exclude), NULL,           \
         "write the nodes to exclude (srun --exclude) to FILE"},                           \
        {"explain", 0, FP_OPT_STRING, offsetof(type, member.explain), NULL,                \
         "print the evidence chain of ENTITY (node:n3 with its devices, links and ranks)"}
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

/* Write the verdict files o names and log the failing nodes; the worst
 * write status. */
fp_status fp_app_write_outputs(const fp_run *run, const fp_verdicts *v, const detect_out *o);

/* Load the rules file at path (NULL: the built-in rules) into *out; logs one
 * line naming the file and the field on error. */
fp_status fp_app_load_rules(const char *path, fp_rules **out);

/* The detect command's work for c, run as command ("detect", "report"): loads
 * the run and baselines from the store or --input, then
 * fp_app_detect_and_report; command is the run_tag of an untagged run in
 * the Prometheus output. */
fp_status fp_app_detect_as(const detect_cfg *c, const char *command);

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
    /* Rank 0, with the gathered run: set its status, print and write it.
     * Returns FP_OK, FP_EFAIL (something failed), FP_EINTR or an error. */
    fp_status (*report)(fp_run *run, void *arg);
    /* NULL, or every rank at the end, before the context (its device) closes:
     * free what measure holds on the device. */
    void (*release)(void *arg);
} fp_measure_steps;

/* Open the test context of cfg on every rank, run steps->measure, agree on
 * the status, steps->collect, gather the run to rank 0 tagged out->tag,
 * steps->report there and append the run to out->store when the report
 * passed, failed or was interrupted; every rank returns the worst status. A
 * timeout is returned at once without agreeing (the ranks that hang cannot). */
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
 * do); why says so. */
bool fp_app_isolate_wanted(const fp_run *run, const fp_rules *rules, const fp_baselines *base,
                           const char *contended_note, char *why, size_t len);

/* preflight --isolate's value: NULL or a strategy; else FP_EUSAGE with one
 * line when speak. */
fp_status fp_app_isolate_check(const char *strategy, bool speak);

/* After preflight ended with st on every rank: when strategy is set and rank
 * 0's why says isolation is wanted, isolate with it (fp_app_isolate, the run
 * tagged "isolate") and return that status; else st. */
fp_status fp_app_isolate_after(const char *strategy, const fp_config *rt, const measure_out *mo,
                               const detect_out *o, fp_world *w, fp_status st, const char *why);

/* ---- the manual (app/manual.c) ------------------------------------------------- */

/* The man page (roff, section 1) of every command and option, from the tables. */
void fp_print_man(FILE *out);

/* A bash completion script: the commands, and each command's own options. */
void fp_print_bash_completion(FILE *out);

#endif
