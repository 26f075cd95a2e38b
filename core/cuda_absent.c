/* Linked instead of the cuda and nccl backends when fleetprint is built
 * without CUDA: they exist, and say why they cannot run. */
#include <stdio.h>

#include "fleetprint/comm.h"
#include "fleetprint/device.h"

static fp_status absent_probe(int *count, char *why, size_t len)
{
    *count = 0;
    snprintf(why, len, "this fleetprint was built without CUDA (FLEETPRINT_CUDA=OFF)");
    return FP_ENODEV;
}

static fp_status absent_open(fp_device **out, int index, int threads)
{
    return FP_ENODEV;
}

static fp_status absent_comm_open(fp_comm **out, fp_world *w, fp_device *dev)
{
    return FP_ENODEV;
}

const fp_device_ops fp_device_cuda = {.name = "cuda", .probe = absent_probe, .open = absent_open};
const fp_comm_ops fp_comm_nccl = {.name = "nccl", .device_buffers = true, .open = absent_comm_open};
