/* The emulator's own semantics, the ones that bit on the H100 (issue 12):
 * device memory is unreadable by host code, copies and streams order work,
 * events time it, NCCL refuses p2p on a one-rank communicator, an error
 * poisons the communicator until it is aborted, and a non-blocking
 * communicator reports its state through ncclCommGetAsyncError. */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/cuda_kernels.h"

/* Host code reading a device pointer dies with SIGSEGV (a child process). */
static void test_device_memory_unreadable(void)
{
    double *d = NULL;
    CHECK(cudaMalloc((void **)&d, 4096) == cudaSuccess);
    pid_t pid = fork();
    if (pid == 0) {
        volatile double v = d[1];
        (void)v;
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
    cudaFree(d);
}

/* A kernel twin, copies and an event pair in stream order. */
static void test_stream_order(void)
{
    cudaStream_t s = NULL;
    cudaEvent_t a = NULL, b = NULL;
    double *d = NULL, h[64];
    float ms = -1;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess);
    CHECK(cudaMalloc((void **)&d, sizeof h) == cudaSuccess);
    CHECK(cudaEventRecord(a, s) == cudaSuccess);
    CHECK(fp_k_fill(d, 64, 2.5, s) == FP_OK);
    CHECK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    CHECK(cudaEventRecord(b, s) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(h[0] == 2.5 && h[63] == 2.5);
    CHECK(cudaEventElapsedTime(&ms, a, b) == cudaSuccess && ms >= 0);
    /* a host pointer where a device one is due is refused, as by the runtime */
    CHECK(cudaMemcpyAsync(h, h + 1, 8, cudaMemcpyDeviceToHost, s) == cudaErrorInvalidValue);
    cudaGetLastError();
    cudaFree(d);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaStreamDestroy(s);
}

static void test_nccl_rules(void)
{
    ncclUniqueId id;
    ncclComm_t c = NULL;
    ncclResult_t state = ncclInProgress;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    float *buf = NULL;
    cfg.blocking = 0;
    CHECK(cudaMalloc((void **)&buf, 64 * sizeof *buf) == cudaSuccess);
    CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    ncclResult_t r = ncclCommInitRankConfig(&c, 1, id, 0, &cfg);
    CHECK(r == ncclSuccess || r == ncclInProgress);
    for (int i = 0; i < 1000 && state == ncclInProgress; i++)
        CHECK(ncclCommGetAsyncError(c, &state) == ncclSuccess);
    CHECK(state == ncclSuccess);
    /* collectives work; a host buffer is refused */
    CHECK(ncclAllReduce(buf, buf, 64, ncclFloat32, ncclSum, c, NULL) == ncclSuccess);
    CHECK(cudaStreamSynchronize(NULL) == cudaSuccess);
    /* failure 1: p2p with the rank itself on a one-rank communicator */
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclSend(buf, 8, ncclFloat32, 0, c, NULL) == ncclInvalidArgument);
    CHECK(ncclGroupEnd() == ncclInvalidArgument);
    /* failure 2: the communicator is poisoned until aborted */
    CHECK(ncclAllReduce(buf, buf, 64, ncclFloat32, ncclSum, c, NULL) == ncclInvalidUsage);
    CHECK(ncclCommGetAsyncError(c, &state) == ncclSuccess && state == ncclInvalidArgument);
    CHECK(ncclCommAbort(c) == ncclSuccess);
    cudaFree(buf);
}

int main(void)
{
    test_device_memory_unreadable();
    test_stream_order();
    test_nccl_rules();
    CHECK_DONE();
}
