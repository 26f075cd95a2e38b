#ifndef FLEETPRINT_REPORT_H
#define FLEETPRINT_REPORT_H
/* Every output format lives in reports/: measurement code fills fp_run and
 * other records; these functions turn them into text. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "fleetprint/sample.h"

/* ---- JSON ------------------------------------------------------------------ */

/* The run context (everything but the samples) as a new JSON object. */
json_t *fp_json_context(const fp_run *run);
/* One sample as a new JSON object:
 * {"suite","test","metric","unit","better":"higher|lower","entity","size","iter","value","t"} */
json_t *fp_json_sample(const fp_sample *s);
/* Parse a sample object. On error returns FP_EINPUT with the bad field named in err. */
fp_status fp_json_parse_sample(const json_t *j, fp_sample *out, char *err, size_t errlen);
/* Parse a context object into run (samples untouched). FP_EINPUT with err on error. */
fp_status fp_json_parse_context(const json_t *j, fp_run *run, char *err, size_t errlen);

/* {"run": context, "samples": [...]} as a new JSON object. */
json_t *fp_json_run(const fp_run *run);

/* Write root to path ("-" for stdout), indented, keys in insertion order,
 * doubles exact; takes ownership of root (NULL: FP_ENOMEM). Logs one line
 * naming the path and returns FP_EIO when it cannot be written. */
fp_status fp_json_write(json_t *root, const char *path);

/* Write fp_json_run(run) to path ("-" for stdout). */
fp_status fp_report_json(const fp_run *run, const char *path);

/* ---- JSON Lines ------------------------------------------------------------------
 * The store's interchange format (docs/store.md): one JSON object per line.
 *   {"kind":"run","run":{context as fp_json_context}}     a run's context
 *   {"kind":"sample","run":"<id>","suite":...,"t":...}    one sample of run <id>
 *   {"kind":"baseline",...}                               export only (not ingested)
 * "kind" may be left out of sample lines. Unknown keys are ignored. */

typedef enum fp_jsonl_kind {
    FP_JSONL_BLANK,    /* an empty or all-blank line */
    FP_JSONL_SAMPLE,   /* run_id and sample are set */
    FP_JSONL_RUN,      /* context is set (a new reference the caller must json_decref) */
    FP_JSONL_BASELINE, /* a baseline row from an export; nothing else is set */
} fp_jsonl_kind;

typedef struct fp_jsonl_line {
    fp_jsonl_kind kind;
    char run_id[48];
    fp_sample sample;
    json_t *context;
} fp_jsonl_line;

/* Parse one line (len bytes, no need for a terminating NUL or newline). Sample
 * lines take a fast path that does not build a JSON tree; lines with nested
 * values go through jansson. On bad input returns FP_EINPUT with a message
 * naming the field, or the column of a syntax error, in err (the caller adds
 * the file name and line number); out->context is then NULL. */
fp_status fp_jsonl_parse(const char *line, size_t len, fp_jsonl_line *out, char *err,
                         size_t errlen);

/* Format one sample line, newline included, into buf. Doubles are written so
 * that they read back bit for bit; run_id is at most 47 bytes (fp_run.id). A
 * line is under 2 KB even when every byte of its strings needs escaping. Returns the length of the full line like
 * snprintf: a value >= len means buf was too small (then buf holds a prefix). */
int fp_jsonl_format_sample(char *buf, size_t len, const char *run_id, const fp_sample *s);

/* Write the run line of run's context (samples not included) to out.
 * Returns FP_EIO when the stream fails. */
fp_status fp_jsonl_write_run(FILE *out, const fp_run *run);

/* Write s into buf as a JSON string literal, quotes included, escaping what
 * JSON requires. Returns the length like snprintf. */
int fp_json_quote(char *buf, size_t len, const char *s);

/* ---- console ----------------------------------------------------------------- */

/* Summary table: one row per metric key with count, min, median, max over
 * entities and iterations, and the unit with its better direction. */
void fp_report_console(FILE *out, const fp_run *run);

/* ---- pictures and dashboards ------------------------------------------------------ */

typedef struct fp_verdicts fp_verdicts; /* fleetprint/detect.h */

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

#endif
