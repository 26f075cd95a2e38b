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

/* Write {"run": context, "samples": [...]} to path ("-" for stdout). */
fp_status fp_report_json(const fp_run *run, const char *path);

/* ---- console ----------------------------------------------------------------- */

/* Summary table: one row per metric key with count, min, median, max over
 * entities and iterations, and the unit with its better direction. */
void fp_report_console(FILE *out, const fp_run *run);

/* nccl-tests-shaped tables of the collective suite's samples in run: one per
 * collective test (size, count, type, redop; time, algbw, busbw, #wrong and
 * late rank, out-of-place and in-place), then the link sweep's table.
 * Prints nothing and returns false when run has no collective samples. */
bool fp_report_collectives(FILE *out, const fp_run *run);

#endif
