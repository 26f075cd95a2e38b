#ifndef FLEETPRINT_REPORT_H
#define FLEETPRINT_REPORT_H
/* Every output format lives in reports/: measurement code fills fp_run and
 * other records; these functions turn them into text. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "fleetprint/admit.h"
#include "fleetprint/burnin.h"
#include "fleetprint/detect.h"
#include "fleetprint/history.h"
#include "fleetprint/isolate.h"
#include "fleetprint/jsonl.h"
#include "fleetprint/sample.h"
#include "fleetprint/trace.h"
#include "fleetprint/whatif.h"

/* ---- JSON ------------------------------------------------------------------ */

/* {"run": context, "samples": [...]} as a new JSON object. */
json_t *fp_json_run(const fp_run *run);

/* Write root to path ("-" for stdout), indented, keys in insertion order,
 * doubles exact; takes ownership of root (NULL: FP_ENOMEM). Logs one line
 * naming the path and returns FP_EIO when it cannot be written. */
fp_status fp_json_write(json_t *root, const char *path);

/* Write fp_json_run(run) to path ("-" for stdout). */
fp_status fp_report_json(const fp_run *run, const char *path);

/* ---- console ----------------------------------------------------------------- */

/* Summary table: one row per metric key with count, min, median, max over
 * entities and iterations, and the unit with its better direction. */
void fp_report_console(FILE *out, const fp_run *run);

/* ---- pictures and dashboards ------------------------------------------------------ */


/* One self-contained HTML page: run context, verdicts (v may be NULL), the
 * link matrix of the link sweep and the burn-in throughput timeline as inline
 * SVG, and the metric summary. FP_EIO naming the path. */
fp_status fp_report_html(const fp_run *run, const fp_verdicts *v, const char *path);

/* A Prometheus textfile (text exposition format): one gauge family per
 * measurement kind with its base unit in the name (fleetprint_gemm_flops,
 * fleetprint_memory_bandwidth_bytes_per_second, ...), one value per (metric
 * key, entity) labelled as dcgm-exporter labels GPUs (Hostname, gpu, UUID);
 * fleetprint_verdict per entity as a state set (v may be NULL); the run as a
 * whole: fleetprint_run_verdict (-1 unknown, 0 pass, 1 warn, 2 fail),
 * fleetprint_run_duration_seconds, fleetprint_last_success_timestamp_seconds
 * (read from the file at path when this run did not pass or warn) and
 * fleetprint_run_timestamp_seconds. Every series carries run_tag: the run's
 * tag, or default_tag (the command's name) when the run has none. Written to
 * PATH.tmp and renamed over path, as node_exporter's textfile collector
 * needs. FP_EIO naming the path; the list of families is docs/prometheus.md. */
fp_status fp_report_prometheus(const fp_run *run, const fp_verdicts *v, const char *default_tag,
                               const char *path);

/* ---- Prometheus: one textfile per node ------------------------------------------ */

/* A run's textfiles for node_exporter, one per node (docs/prometheus.md, "One
 * file per node"): fleetprint-<node>.prom holds only that node's series (its
 * devices' values, its links' and ranks' values as min/median/max over the
 * passing ones plus every one that does not pass, its verdicts, drift and
 * repeat offences); fleetprint-run.prom the run's (verdict, breaker, counts,
 * confirm pass, communicator groups). No series is in two files. */
typedef struct fp_prom_file {
    char name[FP_NAME_MAX + 16]; /* "fleetprint-n0.prom", "fleetprint-run.prom" */
    char node[FP_NAME_MAX];      /* the node, "" for the run file */
    char *text;
    size_t len;
} fp_prom_file;

typedef struct fp_prom_files {
    size_t n;           /* the nodes' files in run order, then the run file */
    fp_prom_file *file; /* owned */
} fp_prom_files;

/* Whether --prometheus path names a folder (one file per node): it ends in
 * '/' or is an existing directory. */
bool fp_prometheus_is_dir(const char *path);

/* Render run's files (v may be NULL: no verdicts) into *out, which the caller
 * frees with fp_prom_files_free (also after an error). run_tag as
 * fp_report_prometheus; last_success_from: the run file this one replaces
 * (its last success is carried over), or NULL. FP_EINPUT naming a node whose
 * name cannot name its file (empty, a '/', or "run": the run file's), FP_ENOMEM. */
fp_status fp_prom_files_render(const fp_run *run, const fp_verdicts *v, const char *default_tag,
                               const char *last_success_from, fp_prom_files *out);

/* Write files->file[0..n) into the folder dir (made when missing, with the
 * folders above it), all or none: every file goes to NAME.tmp first, and only when
 * all were written and synced are they renamed over their names. A write
 * error logs one line naming the file and the cause, removes the temporaries,
 * leaves the folder's files as they were, and returns FP_EIO. */
fp_status fp_prom_files_write(const fp_prom_files *files, const char *dir);

void fp_prom_files_free(fp_prom_files *files);

/* Render and write run's files into dir (fp_prom_files_render, then
 * fp_prom_files_write), carrying over the last success of dir's run file. */
fp_status fp_report_prometheus_dir(const fp_run *run, const fp_verdicts *v,
                                   const char *default_tag, const char *dir);

/* ---- JUnit XML ------------------------------------------------------------------ */

/* One test case of a JUnit report: a check that passed, failed or could not
 * be judged (skipped). */
typedef struct fp_junit_case {
    char classname[64];  /* "fleetprint.kernels.membw" */
    char name[320];      /* "kernels.membw.wrong@1048576 gpu:n0/0" */
    bool failed;
    bool skipped;        /* nothing could be judged: <skipped> */
    char message[512];   /* on failure or skip: metric, value, expected */
    const char *type;    /* failure type ("compute", "wrong-results"); NULL: "fail" */
    const char *details; /* NULL, or the full text (one reason a line): the failure's
                            body, and its first line the message; owned by the caller */
    const char *out;     /* NULL, or a note for <system-out> (a warn's reasons) */
    double seconds;      /* <= 0: an equal share of run's duration */
} fp_junit_case;

/* Write cases as a JUnit XML file (one <testsuite> named suite, with run's
 * start as its timestamp, run's duration as its time, and this host's name;
 * run may be NULL: now, the cases' sum). Text is XML-escaped; control
 * characters XML forbids are dropped. FP_EIO when the file cannot be written. */
fp_status fp_report_junit(const char *path, const char *suite, const fp_run *run,
                          const fp_junit_case *cases, size_t n);

/* The verification cases of a run: one per summary sample counting wrong
 * results (a metric named *wrong*), failing when the count is not 0. *out is
 * a new array the caller frees. */
fp_status fp_junit_from_checks(const fp_run *run, fp_junit_case **out, size_t *n);
/* nccl-tests-shaped tables of the collective suite's samples in run: one per
 * collective test (size, count, type, redop; time, algbw, busbw, #wrong and
 * late rank, out-of-place and in-place), then the link sweep's table.
 * Prints nothing and returns false when run has no collective samples. */
bool fp_report_collectives(FILE *out, const fp_run *run);

/* ---- burn-in ----------------------------------------------------------------------- */

/* Print the throughput timeline (one row per rank, a column per window, from
 * run's burnin.gemm.gflops samples), one verdict line per rank with its
 * reasons, and a summary line to out. */
void fp_report_burnin_console(FILE *out, const fp_run *run, const fp_burnin_verdict *v, int nranks,
                              bool interrupted, int windows, int planned);

/* Write the verdicts as JUnit XML (timestamp and duration from run): one test
 * case per rank (its device), failing with the rank's reasons when its
 * outcome is fail, passing with them in <system-out> when it warns. FP_EIO. */
fp_status fp_report_burnin_junit(const fp_run *run, const fp_burnin_verdict *v, int nranks,
                                 const char *path);

/* Write {"run": context, "burnin": {verdicts}, "samples": [...]} to path
 * ("-" for stdout). FP_EIO when it cannot be written. */
fp_status fp_report_burnin_json(const fp_run *run, const fp_burnin_verdict *v, int nranks,
                                bool interrupted, int windows, int planned, const char *path);

/* ---- verdicts (reports/verdict.c) --------------------------------------------------------------------------- */

/* Human summary: one line per non-passing entity with its reasons, then a
 * total line. Nodes that pass are counted, not listed. */
void fp_verdicts_print(FILE *out, const fp_verdicts *v, const fp_run *run);

/* The evidence chain of one entity (canonical text: "node:n3", "gpu:n3/1",
 * "link:n2~n6"; a node also shows its devices, links and ranks): each
 * entity's verdict, then every piece of evidence -- peers, drift, fleet,
 * value, missing, and what demarcation concluded -- with the value, expected
 * +- band, the runs x windows or peers behind it, z, the windows out of
 * bounds and the rule. Passing evidence is listed only when fp_detect ran
 * with opts.explain naming this entity. FP_EINPUT (one line logged) when the
 * run has no such entity. */
fp_status fp_verdicts_explain(FILE *out, const fp_verdicts *v, const char *entity);

/* Write {"run", "verdict", "nodes", "failing_nodes", "entities":[...],
 * "blind_spots":[...]} to path ("-": stdout).
 * Every node is listed; other entities only when not passing. FP_EIO naming
 * the path when it cannot be written. */
fp_status fp_verdicts_write_json(const fp_verdicts *v, const fp_run *run, const char *path);

/* Write the failing nodes as one hostlist expression and a newline (Slurm
 * syntax: scontrol update NodeName=$(cat F) State=DRAIN), or an empty file
 * when none fail or the circuit breaker tripped (fp_verdicts_breaker). The
 * exclude file is the same list, for srun --exclude and mpirun --host
 * filtering. FP_EIO naming the path on error; FP_EINPUT, writing nothing,
 * when a node name is not a host name (fp_node_name_ok). */
fp_status fp_verdicts_write_hostlist(const fp_verdicts *v, const char *path);

/* Write the verdicts as JUnit XML for CI (timestamp, duration from run): one
 * test case per judged entity. A failing one has a failure typed by its first
 * failing rule, one line per failing reason (metric, value, expected value,
 * deviation, evidence, rule) as fp_verdicts_print shows it; a warning one
 * passes with its reasons in <system-out>; an unknown one is <skipped>.
 * FP_EIO; FP_ENOMEM. */
fp_status fp_verdicts_write_junit(const fp_verdicts *v, const fp_run *run, const char *path);

/* ---- history (reports/history.c) ------------------------------------------------ */

/* The record the store keeps of v (fleetprint/history.h) appended to *out:
 * every judged node, and every other entity that does not pass, each with
 * its verdict on the run's own evidence (fp_verdicts_own), whether history
 * flagged it, and its first reason in one line. FP_ENOMEM. */
fp_status fp_verdicts_record(const fp_verdicts *v, fp_run_verdicts *out);

/* What `fleetprint store history ENTITY` lists. */
typedef struct fp_history_listing {
    const char *entity, *store;
    const char *tag;                  /* the runs' tag; NULL: any */
    const fp_history_entry *entries;  /* the runs that judged it, oldest first */
    size_t n;
    int last;                         /* show only the newest last of them (0: all) */
    bool offender;                    /* a repeat offender now (of the last nrule runs) */
    fp_offense now;                   /* the counts behind it */
    int k, nrule;                     /* the rule: k of nrule */
} fp_history_listing;

/* A header line, one line per run (time UTC, run id, tag, verdict, first
 * reason; "[repeat offender]" where history flagged it then), and whether
 * it is a repeat offender now with the counts and the rule. */
void fp_report_history(FILE *out, const fp_history_listing *l);

/* ---- isolation in rounds (reports/isolate_report.c) ------------------------------------ */

/* The round table of isolation plan p over run's nodes (units are run->nodes
 * indices): one row per group with its round, role, nodes (a hostlist),
 * outcome, busbw against the median of its round's other groups and time
 * per call; then the findings, the suspicions that ended without one, and
 * the rounds and seconds it took (strategy names it). */
void fp_report_isolate_console(FILE *out, const fp_iso_plan *p, const fp_run *run,
                               const char *strategy);

/* The same as JSON to path ("-": stdout): {"strategy", "rounds_to_isolate",
 * "rounds", "seconds_to_isolate", "seconds", "findings": [...], "notes":
 * [...], "table": [{"round", "started", "ended", "groups": [{"role",
 * "nodes", "outcome", "busbw", "expected", "seconds", "wrong"}]}]}. FP_EIO
 * naming the path. */
fp_status fp_report_isolate_json(const fp_iso_plan *p, const fp_run *run, const char *strategy,
                                 const char *path);

/* ---- what-if (reports/whatif_*.c) ------------------------------------------------ */

/* The result as JSON with the artifact's field names (step_t_base,
 * blocking_slowdown, blocking_decompose_by_stage, ...) plus "ms", "mw",
 * "worker_slowdown" and "replay_error"; path "-" is stdout. FP_EIO on failure. */
fp_status fp_wi_write_json(const fp_wi_result *result, const char *path);

/* A short human summary: S, T, T_ideal, GPU waste, top attributions, M_W, M_S
 * and what the pattern suggests. */
void fp_wi_print_summary(FILE *out, const fp_wi_result *result);

/* DP x PP heat map of per-worker slowdown as a standalone SVG file: one
 * <rect class="cell"> per worker, rows are stages, columns DP ranks, colour
 * from 1.0 (white) to 1.5 and above (dark red). FP_EIO on failure. */
fp_status fp_wi_write_heatmap_svg(const fp_wi_result *result, const char *path);

/* The original and the ideal timelines as one Chrome trace JSON file (open in
 * Perfetto or chrome://tracing): a process per DP rank and kind, a thread per
 * stage and op class, steps laid end to end. Needs result->timeline (FP_EUSAGE
 * when absent); FP_EIO on write failure. */
fp_status fp_wi_write_timeline(const fp_wi_result *result, const char *path);

/* ---- job traces (reports/trace_timeline.c) ------------------------------------------ */

/* The job's NCCL ops as a Chrome trace JSON file (Perfetto): a process per
 * rank, a thread per communicator. FP_EIO on write failure. */
fp_status fp_tr_write_timeline(const fp_tr_job *job, const char *path);

/* ---- admission (reports/admit.c) ------------------------------------------------------- */

/* The hostlist, the job's shape and rank order, and the scores of ours and
 * first-fit as a table. */
void fp_report_admit_console(FILE *out, const fp_admit_shape *sh, const char *hostlist,
                             const fp_placement *ours, const fp_placement *ff);

/* The same as JSON (topology: the topology file's path; the nodes of ours in
 * rank order) to path ("-": stdout). FP_EIO naming the path. */
fp_status fp_report_admit_json(const char *path, const char *topology, const fp_admit_shape *sh,
                               const fp_topology *t, const fp_placement *ours,
                               const fp_placement *ff, const char *hostlist);

#endif
