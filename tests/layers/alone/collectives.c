/* collectives/ alone: linked with fp_collectives and what it uses (core). */
#include "check.h"
#include "fleetprint/collectives.h"

int main(void)
{
    CHECK_NEAR(fp_coll_bus_factor(FP_ALLREDUCE, 8), 2.0 * 7 / 8, 1e-12);
    fp_link_plan p;
    char err[128];
    CHECK(fp_link_plan_make("all", 6, 0, &p, err, sizeof err) == FP_OK);
    CHECK(p.npairs == 15 && p.nrounds == 5); /* 6 endpoints: 5 rounds of 3 disjoint pairs */
    fp_link_plan_free(&p);
    CHECK(fp_link_plan_make("sometimes", 6, 0, &p, err, sizeof err) == FP_EUSAGE);
    CHECK_DONE();
}
