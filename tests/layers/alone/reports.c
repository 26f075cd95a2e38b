/* reports/ alone: linked with fp_reports and what it uses (detect, whatif,
 * admit, fingerprint, core). A run's JSON report holds its samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/report.h"

int main(void)
{
    fp_run run;
    fp_run_init(&run);
    CHECK(fp_run_set_shape(&run, 1, 1) == FP_OK);
    snprintf(run.nodes[0], FP_NAME_MAX, "n0");
    fp_sample s = {.suite = "kernels", .test = "launch", .metric = "latency", .unit = "us",
                   .better = FP_BETTER_LOWER, .iter = -1, .value = 3.25};
    s.entity = fp_entity_gpu("n0", 0);
    CHECK(fp_run_add(&run, &s) == FP_OK);
    char path[] = "/tmp/fp_alone_reports_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK(fp_report_json(&run, path) == FP_OK);
    char buf[8192] = "";
    FILE *f = fopen(path, "r");
    CHECK(f && fread(buf, 1, sizeof buf - 1, f) > 0);
    if (f)
        fclose(f);
    CHECK(strstr(buf, "\"latency\"") && strstr(buf, "3.25"));
    unlink(path);
    fp_run_free(&run);
    CHECK_DONE();
}
