// CUDA kernels of burn-in's memory test: one kernel per pass over the whole
// region, grid-stride with 16-byte loads and stores, the words generated and
// compared on the device (fp_mem_word), errors counted and the first bad
// words kept on the device. No data crosses to the host.
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/hd.h"

namespace {

const int kThreads = 256;
const unsigned kMaxBlocks = 132 * 16; // a few waves on the largest GPUs; grid-stride beyond

unsigned blocks_for(size_t n)
{
    size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < kMaxBlocks ? (b ? b : 1) : kMaxBlocks);
}

__global__ void mem_write_kernel(int p, ulonglong2 *__restrict__ region, size_t pairs,
                                 uint64_t base, uint64_t seed)
{
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < pairs;
         j += (size_t)gridDim.x * blockDim.x) {
        ulonglong2 v;
        v.x = fp_mem_word(p, base, 2 * j, seed);
        v.y = fp_mem_word(p, base, 2 * j + 1, seed);
        region[j] = v;
    }
}

// Count a bad word; keep it while fewer than FP_MEM_ADDRS are kept (the
// unguarded atomic only runs while there is room, so a dead region does not
// serialise every thread on one counter).
__device__ void record(fp_mem_check *out, uint64_t addr, uint64_t got, uint64_t want)
{
    if (*(volatile uint64_t *)&out->naddr >= FP_MEM_ADDRS)
        return;
    unsigned long long slot = atomicAdd((unsigned long long *)&out->naddr, 1ULL);
    if (slot < FP_MEM_ADDRS) {
        out->addr[slot] = addr;
        out->got[slot] = got;
        out->want[slot] = want;
    }
}

__global__ void mem_verify_kernel(int p, const ulonglong2 *__restrict__ region, size_t pairs,
                                  uint64_t base, uint64_t seed, fp_mem_check *out)
{
    unsigned long long bad = 0;
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < pairs;
         j += (size_t)gridDim.x * blockDim.x) {
        ulonglong2 v = region[j];
        uint64_t w0 = fp_mem_word(p, base, 2 * j, seed), w1 = fp_mem_word(p, base, 2 * j + 1, seed);
        if (v.x != w0) {
            bad++;
            record(out, base + 16 * j, v.x, w0);
        }
        if (v.y != w1) {
            bad++;
            record(out, base + 16 * j + 8, v.y, w1);
        }
    }
    if (bad)
        atomicAdd((unsigned long long *)&out->errors, bad);
}

} // namespace

extern "C" fp_status fp_k_mem_write(int p, uint64_t *region, size_t words, uint64_t seed,
                                    cudaStream_t stream)
{
    size_t pairs = words / 2;
    mem_write_kernel<<<blocks_for(pairs), kThreads, 0, stream>>>(
        p, (ulonglong2 *)region, pairs, (uint64_t)(uintptr_t)region, seed);
    return FP_K_LAUNCHED("mem_write_kernel");
}

extern "C" fp_status fp_k_mem_verify(int p, const uint64_t *region, size_t words, uint64_t seed,
                                     fp_mem_check *out, cudaStream_t stream)
{
    size_t pairs = words / 2;
    mem_verify_kernel<<<blocks_for(pairs), kThreads, 0, stream>>>(
        p, (const ulonglong2 *)region, pairs, (uint64_t)(uintptr_t)region, seed, out);
    return FP_K_LAUNCHED("mem_verify_kernel");
}
