#ifndef FLEETPRINT_APP_APP_H
#define FLEETPRINT_APP_APP_H
/* What the commands of app/ share. Only app/ includes this header. */
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/cli.h"
#include "fleetprint/detect.h"
#include "fleetprint/store.h"
#include "fleetprint/suite.h"

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
 * unless o->quiet, write the outputs o names. contended: NULL, or the note
 * that the ranks shared CPU cores. Returns FP_EFAIL when something failed,
 * FP_OK when all passed, or the first error. */
fp_status fp_app_detect_and_report(const fp_run *run, const fp_rules *rules,
                                   const fp_baselines *base, const detect_out *o,
                                   const char *contended);

/* Load the rules file at path (NULL: the built-in rules) into *out; logs one
 * line naming the file and the field on error. */
fp_status fp_app_load_rules(const char *path, fp_rules **out);

/* The detect command (a detect_cfg): loads the run and baselines from the
 * store or --input, then fp_app_detect_and_report. */
fp_status fp_app_detect_main(const void *config, fp_world *w);

/* ---- the measuring commands: run, preflight, burnin ----------------------------- */

/* The registry of tests (kernels/ and collectives/), NULL-terminated. */
extern const fp_test *const fp_tests[];

/* Every --test name of cfg is a test of this build and its --suite is known:
 * FP_OK, else FP_EUSAGE with a one-line error when speak. Needs no world, so
 * commands check before MPI and devices start. */
fp_status fp_selection_check(const fp_config *cfg, bool speak);

/* Run the tests cfg selects (suite and --test), in registry order. */
fp_status fp_run_selected(fp_ctx *ctx);

#endif
