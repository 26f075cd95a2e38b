/* Fuzz target: JSON Lines sample and run lines (fingerprint/jsonl.c, fp_jsonl_parse;
 * run contexts through fp_json_parse_context as `store ingest` does).
 * Properties: a rejected line has a message; a sample the fast scanner accepts
 * is valid JSON to jansson too, and formats (fp_jsonl_format_sample) to a line
 * that parses back to the same sample, bit for bit; a run line's context
 * either loads or is rejected with a message. The fast paths of store ingest
 * agree with it: a line fp_jsonl_sample_fast takes is the same sample to
 * fp_jsonl_parse (or one whose entity text is refused: the fast path leaves
 * that to its caller), a line fp_jsonl_run_fast takes the same context to
 * fp_json_parse_context. */
#include <math.h>

#include "fleetprint/report.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static int same_sample(const fp_sample *a, const fp_sample *b)
{
    char ea[4 * FP_NAME_MAX], eb[4 * FP_NAME_MAX];
    return strcmp(a->suite, b->suite) == 0 && strcmp(a->test, b->test) == 0 &&
           strcmp(a->metric, b->metric) == 0 && strcmp(a->unit, b->unit) == 0 &&
           a->better == b->better && a->size == b->size && a->iter == b->iter &&
           same_double(a->value, b->value) && same_double(a->t_start, b->t_start) &&
           strcmp(fp_entity_format(&a->entity, ea, sizeof ea),
                  fp_entity_format(&b->entity, eb, sizeof eb)) == 0;
}

static int span_is(const char *s, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(s, want, n) == 0;
}

/* The fast sample path took line: the full path reads the same sample. */
static void check_fast_sample(const char *line, size_t size, const fp_jsonl_sample_view *v)
{
    fp_jsonl_line l;
    char err[256], ent[4 * FP_NAME_MAX];
    fp_status st = fp_jsonl_parse(line, size, &l, err, sizeof err);
    if (st != FP_OK) {
        FZ_ASSERT(strstr(err, "field 'entity'") != NULL);
        return;
    }
    const fp_sample *s = &l.sample;
    FZ_ASSERT(l.kind == FP_JSONL_SAMPLE && span_is(v->run, v->run_len, l.run_id));
    FZ_ASSERT(span_is(v->suite, v->suite_len, s->suite) && span_is(v->test, v->test_len, s->test));
    FZ_ASSERT(span_is(v->metric, v->metric_len, s->metric) &&
              span_is(v->unit, v->unit_len, s->unit));
    FZ_ASSERT(v->better == s->better && v->size == s->size && v->iter == s->iter);
    FZ_ASSERT(same_double(v->value, s->value) && same_double(v->t, s->t_start));
    fp_entity_format(&s->entity, ent, sizeof ent);
    FZ_ASSERT(v->entity_len < 2 * FP_NAME_MAX + 32); /* canonical or not, it fits */
}

/* The fast run-line path took line: the full path reads the same context. */
static void check_fast_run(const char *line, size_t size, const fp_run *a)
{
    fp_jsonl_line l;
    fp_run b;
    char err[256];
    memset(&b, 0, sizeof b);
    fp_status st = fp_jsonl_parse(line, size, &l, err, sizeof err);
    FZ_ASSERT(st == FP_OK && l.kind == FP_JSONL_RUN);
    st = fp_json_parse_context(l.context, &b, err, sizeof err);
    json_decref(l.context);
    if (st != FP_OK)
        fprintf(stderr, "fast run line refused by the full path (%s)\n", err);
    FZ_ASSERT(st == FP_OK);
    FZ_ASSERT(memcmp(a->id, b.id, sizeof a->id) == 0 && a->nnodes == b.nnodes &&
              a->nranks == b.nranks && a->nconfig == b.nconfig);
    FZ_ASSERT(memcmp(a->command, b.command, sizeof a->command) == 0);
    FZ_ASSERT(same_double(a->time, b.time) && same_double(a->duration, b.duration));
    FZ_ASSERT(!a->nnodes || memcmp(a->nodes, b.nodes, (size_t)a->nnodes * sizeof *a->nodes) == 0);
    FZ_ASSERT(!a->nranks || memcmp(a->ranks, b.ranks, (size_t)a->nranks * sizeof *a->ranks) == 0);
    FZ_ASSERT(!a->nconfig || memcmp(a->config, b.config, a->nconfig * sizeof *a->config) == 0);
    fp_run_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    /* exact-size copy, no terminator: the parser must stay inside len bytes */
    char *line = malloc(size ? size : 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    char err[256];
    fp_jsonl_line l;
    fp_jsonl_sample_view v;
    fp_run fast;
    if (fp_jsonl_sample_fast(line, size, &v))
        check_fast_sample(line, size, &v);
    if (fp_jsonl_run_fast(line, size, &fast)) {
        check_fast_run(line, size, &fast);
        fp_run_free(&fast);
    }
    fp_status st = fp_jsonl_parse(line, size, &l, err, sizeof err);
    if (st != FP_OK) {
        FZ_ASSERT(err[0] != 0 && l.context == NULL);
    } else if (l.kind == FP_JSONL_SAMPLE) {
        json_error_t je;
        json_t *j = json_loadb(line, size, JSON_DECODE_INT_AS_REAL, &je);
        /* jansson refuses numbers beyond a double (valid JSON); the scanner
         * rejects those in known fields and ignores unknown ones */
        if (!j && strncmp(je.text, "real number overflow", 20) != 0) {
            fprintf(stderr, "scanner accepted a line jansson rejects: %s\n", je.text);
            FZ_ASSERT(j != NULL);
        }
        json_decref(j);
        FZ_ASSERT(l.run_id[0] != 0);
        char out[4096];
        int n = fp_jsonl_format_sample(out, sizeof out, l.run_id, &l.sample);
        FZ_ASSERT(n > 0 && (size_t)n < sizeof out && out[n - 1] == '\n');
        fp_jsonl_line back;
        st = fp_jsonl_parse(out, (size_t)n - 1, &back, err, sizeof err);
        if (st != FP_OK)
            fprintf(stderr, "formatted line does not parse (%s): %s", err, out);
        FZ_ASSERT(st == FP_OK && back.kind == FP_JSONL_SAMPLE);
        FZ_ASSERT(strcmp(back.run_id, l.run_id) == 0);
        FZ_ASSERT(same_sample(&l.sample, &back.sample));
    } else if (l.kind == FP_JSONL_RUN) {
        FZ_ASSERT(json_is_object(l.context));
        fp_run run;
        memset(&run, 0, sizeof run);
        st = fp_json_parse_context(l.context, &run, err, sizeof err);
        FZ_ASSERT(st == FP_OK || st == FP_ENOMEM || err[0] != 0);
        if (st == FP_OK) {
            FZ_ASSERT(run.nnodes >= 0 && run.nranks >= 0);
            for (int r = 0; r < run.nranks; r++)
                FZ_ASSERT(run.ranks[r].node >= 0 && run.ranks[r].node < run.nnodes);
        }
        fp_run_free(&run);
        json_decref(l.context);
    } else {
        FZ_ASSERT(l.kind == FP_JSONL_BLANK || l.kind == FP_JSONL_BASELINE);
        FZ_ASSERT(l.context == NULL);
    }
    free(line);
    return 0;
}
