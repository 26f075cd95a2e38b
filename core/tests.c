/* The registry of tests, in the order a suite runs them. */
#include <stddef.h>

#include "fleetprint/suite.h"

extern const fp_test fp_test_membw, fp_test_gemm, fp_test_launch,
    fp_test_copy, fp_test_p2p, fp_test_fused;

const fp_test *const fp_tests[] = {
    &fp_test_membw,
    &fp_test_gemm,
    &fp_test_launch,
    &fp_test_copy,
    &fp_test_p2p,
    &fp_test_fused,
    NULL,
};
