/* emu/ alone: linked with fpemu only (no fleetprint library): a device
 * buffer round trip through the emulated CUDA runtime. */
#include <cuda_runtime_api.h>

#include "check.h"

int main(void)
{
    double host[4] = {1, 2, 3, 4}, back[4] = {0};
    void *dev = NULL;
    CHECK(cudaMalloc(&dev, sizeof host) == cudaSuccess);
    CHECK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[3] == 4 && back[0] == 1);
    CHECK(cudaFree(dev) == cudaSuccess);
    CHECK_DONE();
}
