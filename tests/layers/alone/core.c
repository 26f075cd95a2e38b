/* core/ alone: linked with fp_core only (and the system libraries). */
#include "check.h"
#include "fleetprint/sample.h"
#include "fleetprint/stats.h"

int main(void)
{
    CHECK(fp_node_name_ok("gpu-node_01.rack3"));
    CHECK(!fp_node_name_ok("n2 State=RESUME;touch /tmp/x"));
    CHECK(!fp_node_name_ok("-n1"));
    double v[] = {5, 1, 4, 2, 3};
    CHECK(fp_median(v, 5) == 3);
    fp_entity e = fp_entity_gpu("n7", 3), back;
    char text[FP_NAME_MAX * 2];
    CHECK(fp_entity_parse(fp_entity_format(&e, text, sizeof text), &back));
    CHECK(back.kind == FP_ENT_GPU && back.dev == 3);
    CHECK_DONE();
}
