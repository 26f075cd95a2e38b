/* The registry of tests, in the order a suite (or --suite all) runs them. */
#include <stddef.h>

#include "fleetprint/suite.h"

/* kernels/ */
extern const fp_test fp_test_membw, fp_test_gemm, fp_test_launch, fp_test_copy, fp_test_p2p,
    fp_test_fused;
/* collectives/ */
extern const fp_test fp_test_allreduce, fp_test_allgather, fp_test_reduce_scatter,
    fp_test_alltoall, fp_test_broadcast, fp_test_reduce, fp_test_sendrecv, fp_test_links;

const fp_test *const fp_tests[] = {
    &fp_test_membw,     &fp_test_gemm,           &fp_test_launch,   &fp_test_copy,
    &fp_test_p2p,       &fp_test_fused,          &fp_test_allreduce, &fp_test_allgather,
    &fp_test_reduce_scatter, &fp_test_alltoall,  &fp_test_broadcast, &fp_test_reduce,
    &fp_test_sendrecv,  &fp_test_links,          NULL,
};
