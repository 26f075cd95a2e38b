#ifndef FLEETPRINT_JSONL_H
#define FLEETPRINT_JSONL_H
/* The store's interchange formats (fingerprint/): the JSON schema of a sample
 * and of a run context, JSON Lines (docs/store.md), and run files read whole
 * in either form. */
#include <jansson.h>
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
/* Parse a context object into run (samples untouched). On error err says why:
 * FP_EINPUT naming the bad field, or FP_ENOMEM. */
fp_status fp_json_parse_context(const json_t *j, fp_run *run, char *err, size_t errlen);

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

/* A sample line's fields, read in place: the strings are spans of the line
 * (not NUL-terminated; each shorter than its fp_sample field). */
typedef struct fp_jsonl_sample_view {
    const char *run, *suite, *test, *metric, *unit, *entity;
    size_t run_len, suite_len, test_len, metric_len, unit_len, entity_len;
    fp_better better;
    uint64_t size;
    int32_t iter;
    double value, t;
} fp_jsonl_sample_view;

/* The fast path of a store ingest, for the sample line as
 * fp_jsonl_format_sample writes it (simulate and store export): its keys in
 * that order ("kind" may be left out), no blanks between tokens, strings of
 * printable ASCII without escapes. True with *v filled when the line has that shape and every field
 * is valid, so fp_jsonl_parse would read the same sample (the entity's text
 * is not checked: the caller parses it once per distinct entity). False for
 * any other line, valid or not: fp_jsonl_parse then reads it, or names what
 * is wrong with it. */
bool fp_jsonl_sample_fast(const char *line, size_t len, fp_jsonl_sample_view *v);

/* The fast path of a run line as fp_jsonl_write_run writes it: {"kind":"run",
 * "run":{...}} with the context's keys, "nodes" before "ranks" and "config",
 * each config entry's "entity" before its "fields". True with *run filled
 * (initialised by this call; the caller fp_run_free()s it) when the line has
 * that shape and fp_json_parse_context would read the same context from it;
 * false (and *run freed) for any other line, valid or not, which
 * fp_jsonl_parse and fp_json_parse_context then read or word the error of.
 * Builds no JSON tree: a context of 800,000 ranks costs its fp_run. */
bool fp_jsonl_run_fast(const char *line, size_t len, fp_run *run);

/* Format one sample line, newline included, into buf. Doubles are written so
 * that they read back bit for bit; run_id is at most 47 bytes (fp_run.id). A
 * line is under 2 KB even when every byte of its strings needs escaping.
 * Returns the length of the full line like snprintf: a value >= len means buf
 * was too small (then buf holds a prefix). */
int fp_jsonl_format_sample(char *buf, size_t len, const char *run_id, const fp_sample *s);

/* Write the run line of run's context (samples not included) to out.
 * Returns FP_EIO when the stream fails. */
fp_status fp_jsonl_write_run(FILE *out, const fp_run *run);

/* Write s into buf as a JSON string literal, quotes included, escaping what
 * JSON requires. Returns the length like snprintf. */
int fp_json_quote(char *buf, size_t len, const char *s);

/* ---- run files (fingerprint/runfile.c) ------------------------------------------- */

/* Read one run from the file at path into *run (initialised by this call; the
 * caller fp_run_free()s it, also on error). The format is sniffed: a file
 * holding one JSON object with "samples" is a run as `fleetprint run --json`
 * writes it ({"run": context, "samples": [...]}; which is not used). Anything
 * else is read as JSON Lines (as simulate and store export write them): which
 * picks the run by id, or "latest" is the run of the last run line (in a file
 * without run lines, the run of the first sample). The run's run line gives
 * its context; without one the run keeps fp_run_init's context under its id.
 * Errors are logged naming the file (and the line): FP_EINPUT when the file
 * cannot be read, a line or field is malformed, or the run has no samples;
 * FP_ENOMEM. */
fp_status fp_runfile_read(const char *path, const char *which, fp_run *run);

#endif
