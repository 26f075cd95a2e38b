/* whatif/ alone: linked with fp_whatif and what it uses (fingerprint, core). */
#include <string.h>

#include "check.h"
#include "fleetprint/whatif.h"

int main(void)
{
    fp_wi_optype t;
    CHECK(fp_wi_optype_parse("grads-reduce-scatter", 20, &t) && fp_wi_optype_is_comm(t));
    CHECK(strcmp(fp_wi_optype_name(FP_WI_FORWARD_COMPUTE), "forward-compute") == 0);
    fp_wi_meta meta;
    fp_wi_trace *trace = NULL;
    fp_wi_result *r = NULL;
    fp_wi_options opt = fp_wi_options_default();
    CHECK(fp_wi_meta_load(FP_TEST_DATA "/whatif/meta-ST.yaml", &meta) == FP_OK);
    CHECK(fp_wi_trace_load_csv(FP_TEST_DATA "/whatif/trace-ST.csv", &trace) == FP_OK);
    CHECK(trace && fp_wi_analyze(trace, &meta, &opt, &r) == FP_OK);
    CHECK(r && r->blocking_slowdown > 1.1 && r->blocking_slowdown < 1.25); /* the artifact: 1.17 */
    fp_wi_result_free(r);
    fp_wi_trace_free(trace);
    CHECK_DONE();
}
