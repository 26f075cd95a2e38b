/* The registry of tests, in the order a suite runs them. */
#include <stddef.h>

#include "fleetprint/suite.h"

extern const fp_test fp_test_membw;
extern const fp_test fp_test_allreduce, fp_test_allgather, fp_test_reduce_scatter,
    fp_test_alltoall, fp_test_broadcast, fp_test_reduce, fp_test_sendrecv, fp_test_links;

const fp_test *const fp_tests[] = {
    &fp_test_membw,
    &fp_test_allreduce,
    &fp_test_allgather,
    &fp_test_reduce_scatter,
    &fp_test_alltoall,
    &fp_test_broadcast,
    &fp_test_reduce,
    &fp_test_sendrecv,
    &fp_test_links,
    NULL,
};
