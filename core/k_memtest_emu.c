/* Emulation twin of core/k_memtest.cu: the same fp_k_* launchers, the same
 * fp_mem_word per word, run by fpemu_launch in stream order. Built only in
 * the emulated build (-DFLEETPRINT_EMU=ON). */
#include "fleetprint/cuda_kernels.h"
#include "fleetprint/hd.h"
#include "fpemu.h"

struct mem_args {
    int p;
    uint64_t *region;
    size_t words;
    uint64_t seed;
    fp_mem_check *out;
};

static void mem_write_body(void *v)
{
    const struct mem_args *a = v;
    const uint64_t base = (uint64_t)(uintptr_t)a->region;
    for (size_t i = 0; i < a->words / 2 * 2; i++)
        a->region[i] = fp_mem_word(a->p, base, i, a->seed);
}

static void mem_verify_body(void *v)
{
    const struct mem_args *a = v;
    const uint64_t base = (uint64_t)(uintptr_t)a->region;
    fp_mem_check *out = a->out;
    for (size_t i = 0; i < a->words / 2 * 2; i++) {
        uint64_t got = a->region[i], want = fp_mem_word(a->p, base, i, a->seed);
        if (got == want)
            continue;
        if (out->naddr < FP_MEM_ADDRS) {
            out->addr[out->naddr] = base + 8 * i;
            out->got[out->naddr] = got;
            out->want[out->naddr] = want;
        }
        out->naddr++;
        out->errors++;
    }
}

fp_status fp_k_mem_write(int p, uint64_t *region, size_t words, uint64_t seed,
                         cudaStream_t stream)
{
    struct mem_args a = {p, region, words, seed, NULL};
    cudaError_t e = FPEMU_LAUNCH(stream, mem_write_body, a, "mem_write_kernel");
    return FP_K_STATUS(e, "mem_write_kernel");
}

fp_status fp_k_mem_verify(int p, const uint64_t *region, size_t words, uint64_t seed,
                          fp_mem_check *out, cudaStream_t stream)
{
    struct mem_args a = {p, (uint64_t *)(uintptr_t)region, words, seed, out};
    cudaError_t e = FPEMU_LAUNCH(stream, mem_verify_body, a, "mem_verify_kernel");
    return FP_K_STATUS(e, "mem_verify_kernel");
}
