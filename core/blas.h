#ifndef FLEETPRINT_CORE_BLAS_H
#define FLEETPRINT_CORE_BLAS_H
/* The host backend's BLAS (OpenBLAS), loaded the first time a GEMM needs it.
 * OpenBLAS starts its thread pool in its library constructor: linked
 * directly, every command paid for it at start-up, also those that multiply
 * no matrix (detect, whatif, store ...: 40-90 ms beside load on 2 cores).
 * Private to core/. */
#include "fleetprint/status.h"

/* Load the library once (thread-safe) and give its pool `threads` threads.
 * FP_ENODEV naming the library when it cannot be loaded. */
fp_status fp__blas_load(int threads);

/* C = A B, column-major, no transposes (cblas_dgemm / cblas_sgemm with
 * alpha 1, beta 0). fp__blas_load must have succeeded. */
void fp__blas_dgemm(int m, int n, int k, const double *a, int lda, const double *b, int ldb,
                    double *c, int ldc);
void fp__blas_sgemm(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                    float *c, int ldc);

#endif
