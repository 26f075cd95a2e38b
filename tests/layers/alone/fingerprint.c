/* fingerprint/ alone: linked with fp_fingerprint and what it uses (core). */
#include <string.h>

#include "check.h"
#include "fleetprint/jsonl.h"

int main(void)
{
    fp_run run;
    fp_run_init(&run);
    CHECK(fp_runfile_read(FP_TEST_DATA "/gpu-h100/kernels-3runs.jsonl", "latest", &run) == FP_OK);
    CHECK(strcmp(run.id, "20261123T061819Z-458360") == 0);
    CHECK(run.nranks == 1 && run.nsamples > 100);
    CHECK(strstr(run.ranks[0].model, "H100") != NULL);
    fp_run_free(&run);
    CHECK_DONE();
}
