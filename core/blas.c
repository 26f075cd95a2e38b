/* OpenBLAS through dlopen, on first use (core/blas.h says why). */
#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "blas.h"
#include "fleetprint/log.h"

static struct {
    pthread_once_t once;
    void *lib;
    char why[256];
    __typeof__(cblas_dgemm) *dgemm;
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(openblas_set_num_threads) *set_threads;
} blas = {.once = PTHREAD_ONCE_INIT};

static void open_blas(void)
{
    /* the run-time name first (found on LD_LIBRARY_PATH or in ld.so's
     * cache), then the library CMake linked against at build time */
    static const char *const names[] = {"libopenblas.so.0", FP_BLAS_LIBRARY};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !blas.lib; i++)
        blas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!blas.lib) {
        snprintf(blas.why, sizeof blas.why, "%s", dlerror());
        return;
    }
    *(void **)&blas.dgemm = dlsym(blas.lib, "cblas_dgemm");
    *(void **)&blas.sgemm = dlsym(blas.lib, "cblas_sgemm");
    *(void **)&blas.set_threads = dlsym(blas.lib, "openblas_set_num_threads");
    if (!blas.dgemm || !blas.sgemm || !blas.set_threads) {
        snprintf(blas.why, sizeof blas.why, "no cblas_dgemm, cblas_sgemm or "
                                            "openblas_set_num_threads in it");
        dlclose(blas.lib);
        blas.lib = NULL;
    }
}

fp_status fp__blas_load(int threads)
{
    pthread_once(&blas.once, open_blas);
    if (!blas.lib) {
        fp_error("host GEMM: cannot load OpenBLAS (libopenblas.so.0): %s", blas.why);
        return FP_ENODEV;
    }
    blas.set_threads(threads);
    return FP_OK;
}

void fp__blas_dgemm(int m, int n, int k, const double *a, int lda, const double *b, int ldb,
                    double *c, int ldc)
{
    blas.dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, 0.0, c,
               ldc);
}

void fp__blas_sgemm(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                    float *c, int ldc)
{
    blas.sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
               ldc);
}
