#ifndef FPEMU_H
#define FPEMU_H
/* fpemu: a host emulation of the CUDA runtime, cuBLAS/cuBLASLt, NCCL and NVML
 * entry points fleetprint's backends call, for CI without a GPU
 * (-DFLEETPRINT_EMU=ON). The backends' unchanged C code compiles against the
 * real CUDA/NCCL headers and links against libfpemu instead of libcudart,
 * libcublas and libnccl. Like those vendor libraries, fpemu uses nothing of
 * fleetprint (ci/check-layers.sh: emu/ is a leaf below core/): it reports
 * errors as the CUDA runtime does, with a cudaError_t that the next
 * cudaGetLastError() also returns.
 *
 * Kernel twins: every core/k_<name>.cu and kernels/<name>.cu file has a
 * plain-C twin beside it (core/k_<name>_emu.c, kernels/<name>_emu.c, chosen
 * by that folder's CMakeLists.txt) that defines the same fp_k_* launchers and
 * runs the same FP_HD element functions in a loop through fpemu_launch. A
 * twin reads like this (FP_K_STATUS, of cuda_kernels.h, turns the
 * cudaError_t into fleetprint's status, as FP_K_LAUNCHED does after a
 * real launch):
 *
 *     struct fill_args { double *x; size_t n; double v; };
 *     static void fill_body(void *p)
 *     {
 *         struct fill_args *a = p;
 *         for (size_t i = 0; i < a->n; i++)
 *             a->x[i] = a->v;
 *     }
 *     fp_status fp_k_fill(double *x, size_t n, double v, cudaStream_t stream)
 *     {
 *         struct fill_args a = {x, n, v};
 *         cudaError_t e = FPEMU_LAUNCH(stream, fill_body, a, "fill_kernel");
 *         return FP_K_STATUS(e, "fill_kernel");
 *     }
 *
 * Device memory (cudaMalloc) is mapped PROT_NONE outside the runtime's copy
 * calls and emulated kernels: host code that reads a device pointer (or hands
 * it to MPI) gets SIGSEGV, as on a GPU. A body runs with every device buffer
 * of this process (and IPC-mapped peers' buffers) readable and writable. */
#include <cuda_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launch an emulated kernel named what (kept with the queued launch, as a
 * debugger would show a kernel's name): copy args_size bytes from args (the
 * body gets its own copy, so args may be a local of the caller), and run
 * body(copy) in stream order on stream s (NULL: the legacy default stream),
 * with device memory accessible while it runs. The body may run before this
 * returns or later, when earlier work queued on s (e.g. an NCCL collective
 * waiting for its peers) has completed; it must not call back into the
 * emulated runtime. Returns cudaSuccess, or, as cudaLaunchKernel would,
 * cudaErrorInvalidValue (args_size too large), the pending sticky error
 * (cudaErrorIllegalAddress) or cudaErrorMemoryAllocation (nothing is
 * queued); the error is also recorded as the last error, returned by the next
 * cudaGetLastError(). Prints nothing. */
cudaError_t fpemu_launch_named(cudaStream_t s, void (*body)(void *args), const void *args,
                               size_t args_size, const char *what);

/* fpemu_launch_named with the name "emulated kernel". */
cudaError_t fpemu_launch(cudaStream_t s, void (*body)(void *args), const void *args,
                         size_t args_size);

/* Launch body on stream with a struct args (an lvalue) named what. */
#define FPEMU_LAUNCH(stream, body, args, what)                                             \
    fpemu_launch_named((stream), (body), &(args), sizeof(args), (what))

/* Atomic float/double/u64 adds for kernel bodies whose targets peers may write
 * at the same time (IPC-mapped buffers of other ranks' processes). */
void fpemu_atomic_add_f32(float *p, float v);
void fpemu_atomic_add_f64(double *p, double v);
void fpemu_atomic_add_u64(unsigned long long *p, unsigned long long v);

#ifdef __cplusplus
}
#endif

#endif
