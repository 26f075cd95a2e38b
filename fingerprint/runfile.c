/* Run files: a run read whole from a file, as `detect --input` takes it. The
 * format is sniffed: one JSON object with "samples" is a run as `fleetprint
 * run --json` writes it; anything else is JSON Lines (simulate, store export). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/jsonl.h"
#include "fleetprint/log.h"

/* A run JSON's context and samples into run. */
static fp_status read_run_json(const char *path, json_t *root, fp_run *run)
{
    char err[256];
    const json_t *ctx = json_object_get(root, "run");
    const json_t *samples = json_object_get(root, "samples");
    if (!json_is_object(ctx) || !json_is_array(samples)) {
        fp_error("%s: not a fleetprint run file (needs \"run\" and \"samples\")", path);
        return FP_EINPUT;
    }
    fp_status st = fp_json_parse_context(ctx, run, err, sizeof err);
    if (st != FP_OK) {
        fp_error("%s: run: %s", path, err);
        return st;
    }
    size_t i;
    const json_t *js;
    json_array_foreach(samples, i, js) {
        fp_sample s;
        if (fp_json_parse_sample(js, &s, err, sizeof err) != FP_OK) {
            fp_error("%s: samples[%zu]: %s", path, i, err);
            return FP_EINPUT;
        }
        st = fp_run_add(run, &s);
        if (st != FP_OK) {
            fp_error("%s: samples[%zu]: out of memory", path, i);
            return st;
        }
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
                fp_run_free(&ctx);
                break;
            }
            if (!want[0]) /* first run when no run lines preceded */
                snprintf(want, sizeof want, "%s", ctx.id);
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
            if (strcmp(l.run_id, want) == 0 && (st = fp_run_add(run, &l.sample)) != FP_OK)
                fp_error("%s:%zu: out of memory", path, lineno);
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

fp_status fp_runfile_read(const char *path, const char *which, fp_run *run)
{
    fp_run_init(run);
    run->id[0] = 0;
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
