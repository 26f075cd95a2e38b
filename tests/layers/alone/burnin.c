/* burnin/ alone: linked with fp_burnin and what it uses (core). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fleetprint/burnin.h"

int main(void)
{
    CHECK(strcmp(fp_burnin_outcome_name(2), "fail") == 0);
    /* 4 ranks x 9 windows; rank 2 loses 30% in its last third, its peers hold */
    enum { R = 4, W = 9 };
    double tput[R * W];
    for (int r = 0; r < R; r++)
        for (int w = 0; w < W; w++)
            tput[r * W + w] = 100.0 * (r == 2 && w >= 6 ? 0.7 : 1.0);
    fp_degrade out[R];
    fp_burnin_degradation(tput, R, W, 0.1, out);
    CHECK(out[2].degraded && !out[0].degraded && !out[1].degraded && !out[3].degraded);
    CHECK_DONE();
}
