/* Backend registries. CMake decides which backend files are compiled: a
 * build without CUDA links core/cuda_absent.c, whose backends report that. */
#include <string.h>

#include "fleetprint/comm.h"
#include "fleetprint/device.h"

const fp_device_ops *const fp_device_backends[] = {&fp_device_host, &fp_device_cuda, NULL};
const fp_comm_ops *const fp_comm_backends[] = {&fp_comm_mpi, &fp_comm_nccl, NULL};

const fp_device_ops *fp_device_find(const char *name)
{
    for (int i = 0; fp_device_backends[i]; i++)
        if (strcmp(fp_device_backends[i]->name, name) == 0)
            return fp_device_backends[i];
    return NULL;
}

const fp_comm_ops *fp_comm_find(const char *name)
{
    for (int i = 0; fp_comm_backends[i]; i++)
        if (strcmp(fp_comm_backends[i]->name, name) == 0)
            return fp_comm_backends[i];
    return NULL;
}

size_t fp_dtype_size(fp_dtype t)
{
    static const size_t sizes[FP_DTYPE_COUNT] = {4, 8, 2, 2};
    return (int)t >= 0 && t < FP_DTYPE_COUNT ? sizes[t] : 0;
}

const char *fp_dtype_name(fp_dtype t)
{
    static const char *const names[FP_DTYPE_COUNT] = {"float", "double", "half", "bfloat16"};
    return (int)t >= 0 && t < FP_DTYPE_COUNT ? names[t] : "?";
}

const char *fp_redop_name(fp_redop op)
{
    static const char *const names[FP_REDOP_COUNT] = {"sum", "max", "min"};
    return (int)op >= 0 && op < FP_REDOP_COUNT ? names[op] : "?";
}

const char *fp_coll_name(fp_coll c)
{
    static const char *const names[FP_COLL_COUNT] = {
        "allreduce", "allgather", "reduce_scatter", "alltoall",
        "broadcast", "reduce",    "sendrecv",       "barrier"};
    return (int)c >= 0 && c < FP_COLL_COUNT ? names[c] : "?";
}
