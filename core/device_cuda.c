/* The cuda device backend: control code in plain C over the CUDA runtime's C
 * API (streams, events, memory, device properties); the kernels are behind
 * the launchers of cuda_kernels.h. Every call is checked. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/cuda_kernels.h"
#include "fleetprint/device.h"
#include "fleetprint/log.h"

struct fp_device {
    int index;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    unsigned long long *count; /* device counter for count_wrong */
};

static fp_status cuda_probe(int *count, char *why, size_t len)
{
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        snprintf(why, len, "no CUDA device visible (%s)", cudaGetErrorString(e));
        *count = 0;
        return FP_ENODEV;
    }
    if (*count == 0)
        snprintf(why, len, "no CUDA device visible");
    return *count > 0 ? FP_OK : FP_ENODEV;
}

static void cuda_close(fp_device *d)
{
    if (!d)
        return;
    if (d->count)
        cudaFree(d->count);
    if (d->start)
        cudaEventDestroy(d->start);
    if (d->stop)
        cudaEventDestroy(d->stop);
    if (d->stream)
        cudaStreamDestroy(d->stream);
    free(d);
}

static fp_status cuda_open(fp_device **out, int index, int threads)
{
    fp_status st = FP_OK;
    fp_device *d = calloc(1, sizeof *d);
    FP_CHECK_ALLOC(d);
    d->index = index;
    FP_CHECK_CUDA(cudaSetDevice(index));
    FP_CHECK_CUDA(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    FP_CHECK_CUDA(cudaEventCreate(&d->start));
    FP_CHECK_CUDA(cudaEventCreate(&d->stop));
    FP_CHECK_CUDA(cudaMalloc((void **)&d->count, sizeof *d->count));
cleanup:
    if (st != FP_OK) {
        cuda_close(d);
        d = NULL;
    }
    *out = d;
    return st;
}

static fp_status cuda_query(fp_device *d, fp_device_info *info)
{
    fp_status st = FP_OK;
    struct cudaDeviceProp p;
    int rt = 0, drv = 0;
    memset(info, 0, sizeof *info);
    FP_CHECK_CUDA(cudaGetDeviceProperties(&p, d->index));
    FP_CHECK_CUDA(cudaRuntimeGetVersion(&rt));
    FP_CHECK_CUDA(cudaDriverGetVersion(&drv));
    info->index = d->index;
    snprintf(info->model, sizeof info->model, "%.63s", p.name);
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    snprintf(info->uuid, sizeof info->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    snprintf(info->pci_bus, sizeof info->pci_bus, "%08x:%02x:%02x.0", (unsigned)p.pciDomainID,
             (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
    info->memory = p.totalGlobalMem;
    info->sm_count = p.multiProcessorCount;
    snprintf(info->runtime_version, sizeof info->runtime_version, "%d.%d", rt / 1000,
             rt % 1000 / 10);
    snprintf(info->driver_version, sizeof info->driver_version, "%d.%d", drv / 1000,
             drv % 1000 / 10);
cleanup:
    return st;
}

static fp_status cuda_alloc(fp_device *d, size_t bytes, void **ptr)
{
    fp_status st = FP_OK;
    *ptr = NULL;
    FP_CHECK_CUDA(cudaMalloc(ptr, bytes ? bytes : 1));
cleanup:
    return st;
}

static void cuda_free_mem(fp_device *d, void *ptr)
{
    cudaError_t e = cudaFree(ptr);
    if (e != cudaSuccess)
        fp_warn("cudaFree: %s", cudaGetErrorString(e));
}

static fp_status cuda_copy(fp_device *d, void *dst, const void *src, size_t bytes, fp_copy_kind k)
{
    static const enum cudaMemcpyKind kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                                cudaMemcpyDeviceToDevice};
    fp_status st = FP_OK;
    FP_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, kinds[k], d->stream));
    FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
cleanup:
    return st;
}

static fp_status cuda_sync(fp_device *d)
{
    fp_status st = FP_OK;
    FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
cleanup:
    return st;
}

static fp_status cuda_timer_start(fp_device *d)
{
    fp_status st = FP_OK;
    FP_CHECK_CUDA(cudaEventRecord(d->start, d->stream));
cleanup:
    return st;
}

static fp_status cuda_timer_stop(fp_device *d, double *seconds)
{
    fp_status st = FP_OK;
    float ms = 0;
    FP_CHECK_CUDA(cudaEventRecord(d->stop, d->stream));
    FP_CHECK_CUDA(cudaEventSynchronize(d->stop));
    FP_CHECK_CUDA(cudaEventElapsedTime(&ms, d->start, d->stop));
    *seconds = ms * 1e-3;
cleanup:
    return st;
}

static fp_status cuda_fill(fp_device *d, double *x, size_t n, double v)
{
    return fp_k_fill(x, n, v, d->stream);
}

static fp_status cuda_stream_op(fp_device *d, fp_stream_op op, double *dst, const double *x,
                                const double *y, double s, size_t n)
{
    return fp_k_stream((int)op, dst, x, y, s, n, d->stream);
}

static fp_status cuda_count_wrong(fp_device *d, const double *x, size_t n, double expect,
                                  double tol, size_t *wrong)
{
    fp_status st = FP_OK;
    unsigned long long count = 0;
    FP_CHECK_CUDA(cudaMemsetAsync(d->count, 0, sizeof *d->count, d->stream));
    FP_CHECK(fp_k_count_wrong(x, n, expect, tol, d->count, d->stream));
    FP_CHECK_CUDA(cudaMemcpyAsync(&count, d->count, sizeof count, cudaMemcpyDeviceToHost,
                                  d->stream));
    FP_CHECK_CUDA(cudaStreamSynchronize(d->stream));
    *wrong = (size_t)count;
cleanup:
    return st;
}

const fp_device_ops fp_device_cuda = {
    .name = "cuda",
    .probe = cuda_probe,
    .open = cuda_open,
    .close = cuda_close,
    .query = cuda_query,
    .alloc = cuda_alloc,
    .free = cuda_free_mem,
    .copy = cuda_copy,
    .sync = cuda_sync,
    .timer_start = cuda_timer_start,
    .timer_stop = cuda_timer_stop,
    .fill = cuda_fill,
    .stream = cuda_stream_op,
    .count_wrong = cuda_count_wrong,
};
