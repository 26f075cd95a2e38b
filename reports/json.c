/* The run as one JSON document (fp_report_json) and the JSON file writer the
 * other JSON outputs share. The schema of a sample and a run context is the
 * store's interchange format: fingerprint/json_schema.c. */
#include "fleetprint/report.h"

#include <errno.h>
#include <string.h>

#include "fleetprint/jsonl.h"
#include "fleetprint/log.h"
#include "fleetprint/outfile.h"

json_t *fp_json_run(const fp_run *run)
{
    json_t *root = json_object();
    json_object_set_new(root, "run", fp_json_context(run));
    json_t *samples = json_array();
    for (size_t i = 0; i < run->nsamples; i++) {
        fp_sample s;
        fp_run_sample(run, i, &s);
        json_array_append_new(samples, fp_json_sample(&s));
    }
    json_object_set_new(root, "samples", samples);
    return root;
}

fp_status fp_json_write(json_t *root, const char *path)
{
    if (!root) {
        fp_error("%s: out of memory building the JSON", path);
        return FP_ENOMEM;
    }
    const size_t flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);
    fp_status st;
    FILE *f = fp_outfile_open(path, &st);
    if (f) {
        bool ok = json_dumpf(root, f, flags) == 0 && fputc('\n', f) != EOF;
        int err = errno;
        st = fp_outfile_close(f, path, ok);
        if (!ok) {
            fp_error("%s: cannot write: %s (the file is left as it was)", path, strerror(err));
            st = FP_EIO;
        }
    }
    json_decref(root);
    return st;
}

fp_status fp_report_json(const fp_run *run, const char *path)
{
    return fp_json_write(fp_json_run(run), path);
}
