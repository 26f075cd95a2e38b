/* JUnit XML, the format CI systems read: one <testcase> per check. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/outfile.h"

static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            /* XML 1.0 forbids most control characters */
            if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
                fputc(*s, f);
        }
    }
}

/* The first line of text without its indent, escaped. */
static void put_first_line(FILE *f, const char *text)
{
    text += strspn(text, " ");
    size_t n = strcspn(text, "\n");
    char *line = strndup(text, n);
    put_escaped(f, line ? line : "");
    free(line);
}

fp_status fp_report_junit(const char *path, const char *suite, const fp_run *run,
                          const fp_junit_case *cases, size_t n)
{
    fp_status st;
    FILE *f = fp_outfile_open(path, &st);
    if (!f)
        return st;
    size_t failures = 0, skipped = 0;
    double total = 0, share = run && n ? run->duration / (double)n : 0;
    for (size_t i = 0; i < n; i++) {
        failures += cases[i].failed;
        skipped += !cases[i].failed && cases[i].skipped;
        total += cases[i].seconds > 0 ? cases[i].seconds : share;
    }
    char host[256] = "localhost", when[32] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "localhost");
    time_t t = run && run->time > 0 ? (time_t)run->time : time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    fprintf(f, "  <testsuite name=\"");
    put_escaped(f, suite);
    fprintf(f,
            "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\" "
            "timestamp=\"%s\" hostname=\"",
            n, failures, skipped, run ? run->duration : total, when);
    put_escaped(f, host);
    fprintf(f, "\">\n");
    for (size_t i = 0; i < n; i++) {
        const fp_junit_case *c = &cases[i];
        fprintf(f, "    <testcase classname=\"");
        put_escaped(f, c->classname);
        fprintf(f, "\" name=\"");
        put_escaped(f, c->name);
        fprintf(f, "\" time=\"%.3f\"", c->seconds > 0 ? c->seconds : share);
        if (!c->failed && !c->skipped && !c->out) {
            fprintf(f, "/>\n");
            continue;
        }
        fprintf(f, ">\n");
        const char *text = c->details ? c->details : c->message;
        if (c->failed) {
            fprintf(f, "      <failure type=\"");
            put_escaped(f, c->type ? c->type : "fail");
            fprintf(f, "\" message=\"");
            put_first_line(f, text);
            fprintf(f, "\">");
            put_escaped(f, text);
            fprintf(f, "</failure>\n");
        } else if (c->skipped) {
            fprintf(f, "      <skipped message=\"");
            put_first_line(f, text);
            fprintf(f, "\"/>\n");
        }
        if (c->out) {
            fprintf(f, "      <system-out>");
            put_escaped(f, c->out);
            fprintf(f, "</system-out>\n");
        }
        fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    return fp_outfile_close(f, path, true);
}

/* A verification count: wrong elements of a checked result ("wrong",
 * "f64_wrong", "wrong_f32_sum_oop"), as the detector's wrong-results rule
 * matches them. Summary values only: per-iteration counts add up to them. */
static bool is_check(const fp_sample_ref *s)
{
    return strstr(s->key->metric, "wrong") != NULL && s->iter < 0;
}

fp_status fp_junit_from_checks(const fp_run *run, fp_junit_case **out, size_t *n)
{
    fp_status st = FP_OK;
    size_t m = 0;
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        m += is_check(&s);
    }
    fp_junit_case *cases = calloc(m ? m : 1, sizeof *cases);
    FP_CHECK_ALLOC(cases);
    size_t k = 0;
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample_ref s = fp_run_ref(run, i);
        if (!is_check(&s))
            continue;
        fp_junit_case *c = &cases[k++];
        char ent[2 * FP_NAME_MAX + 32], key[128];
        fp_entity_format(s.entity, ent, sizeof ent);
        fp_sample_key(s.key, key, sizeof key);
        snprintf(c->classname, sizeof c->classname, "fleetprint.%s.%s", s.key->suite,
                 s.key->test);
        snprintf(c->name, sizeof c->name, "%s %s", key, ent);
        c->failed = s.value != 0;
        c->type = "wrong-results";
        if (c->failed)
            snprintf(c->message, sizeof c->message, "%s on %s: value %g %s, expected 0", key, ent,
                     s.value, s.key->unit);
    }
    *out = cases;
    *n = k;
cleanup:
    return st;
}
