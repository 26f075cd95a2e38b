/* detect/ alone: linked with fp_detect and what it uses (fingerprint, core).
 * Eight GPUs, one at 0.6x its peers' memory bandwidth: that node fails. */
#include <string.h>

#include "check.h"
#include "fleetprint/detect.h"

int main(void)
{
    fp_run run;
    fp_rules *rules = NULL;
    fp_verdicts *v = NULL;
    char err[256];
    fp_run_init(&run);
    CHECK(fp_run_set_shape(&run, 8, 8) == FP_OK);
    for (int n = 0; n < 8; n++) {
        snprintf(run.nodes[n], FP_NAME_MAX, "n%d", n);
        run.ranks[n].node = n;
        run.ranks[n].dev = 0;
        snprintf(run.ranks[n].model, FP_NAME_MAX, "test GPU");
        for (int w = 0; w < 6; w++) {
            fp_sample s = {.suite = "kernels", .test = "membw", .metric = "triad_bw",
                           .unit = "GB/s", .better = FP_BETTER_HIGHER, .iter = w};
            s.entity = fp_entity_gpu(run.nodes[n], 0);
            s.value = (n == 5 ? 600.0 : 1000.0) * (1 + 0.002 * ((n + w) % 3));
            CHECK(fp_run_add(&run, &s) == FP_OK);
        }
    }
    CHECK(fp_rules_parse(fp_rules_default_text(), "defaults", &rules, err, sizeof err) == FP_OK);
    fp_detect_opts o = {.rules = rules};
    CHECK(fp_detect(&run, &o, &v) == FP_OK);
    CHECK(v && fp_verdicts_node(v, "n5") == FP_FAIL && fp_verdicts_node(v, "n4") == FP_PASS);
    fp_verdicts_free(v);
    fp_rules_free(rules);
    fp_run_free(&run);
    CHECK_DONE();
}
