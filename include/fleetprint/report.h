#ifndef FLEETPRINT_REPORT_H
#define FLEETPRINT_REPORT_H
/* Every output format lives in reports/: measurement code fills fp_run and
 * other records; these functions turn them into text. */
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
/* Parse a context object into run (samples untouched). FP_EINPUT with err on error. */
fp_status fp_json_parse_context(const json_t *j, fp_run *run, char *err, size_t errlen);

/* Write {"run": context, "samples": [...]} to path ("-" for stdout). */
fp_status fp_report_json(const fp_run *run, const char *path);

/* ---- console ----------------------------------------------------------------- */

/* Summary table: one row per metric key with count, min, median, max over
 * entities and iterations, and the unit with its better direction. */
void fp_report_console(FILE *out, const fp_run *run);

/* ---- JUnit XML ------------------------------------------------------------------ */

/* One test case of a JUnit report: a check that passed or failed. */
typedef struct fp_junit_case {
    char classname[64];  /* "fleetprint.kernels.membw" */
    char name[320];      /* "kernels.membw.wrong@1048576 gpu:n0/0" */
    bool failed;
    char message[512];   /* on failure: metric, value, expected */
    double seconds;
} fp_junit_case;

/* Write cases as a JUnit XML file (one <testsuite> named suite). Text is
 * XML-escaped. FP_EIO when the file cannot be written. */
fp_status fp_report_junit(const char *path, const char *suite, const fp_junit_case *cases,
                          size_t n);

/* The verification cases of a run: one per sample whose metric is "wrong",
 * failing when the count is not 0. *out is a new array the caller frees. */
fp_status fp_junit_from_checks(const fp_run *run, fp_junit_case **out, size_t *n);

#endif
