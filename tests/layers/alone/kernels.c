/* kernels/ alone: linked with fp_kernels and what it uses (core). */
#include "check.h"
#include "fleetprint/kernels.h"

int main(void)
{
    /* Flux: E = 1 - ECT_overlap / ECT_sequential */
    CHECK_NEAR(fp_flux_efficiency(0.25, 1.0), 0.75, 1e-12);
    CHECK_NEAR(fp_flux_ect(3.0, 2.0), 1.0, 1e-12);
    double in[4] = {0.5, -0.25, 15.0 / 16, -15.0 / 16};
    uint16_t packed[4];
    fp_gemm_pack(FP_GEMM_BF16, in, packed, 4);
    for (int i = 0; i < 4; i++) /* burn-in's exact inputs survive bf16 */
        CHECK(fp_gemm_unpack(FP_GEMM_BF16, packed, (size_t)i) == in[i]);
    CHECK_DONE();
}
