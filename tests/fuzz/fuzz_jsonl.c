/* Fuzz target: JSON Lines sample and run lines (fingerprint/jsonl.c, fp_jsonl_parse;
 * run contexts through fp_json_parse_context as `store ingest` does).
 * Properties: a rejected line has a message; a sample the fast scanner accepts
 * is valid JSON to jansson too, and formats (fp_jsonl_format_sample) to a line
 * that parses back to the same sample, bit for bit; a run line's context
 * either loads or is rejected with a message. */
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
