#ifndef FPEMU_H
#define FPEMU_H
/* fpemu: a host emulation of the CUDA runtime, cuBLAS/cuBLASLt, NCCL and NVML
 * entry points fleetprint's backends call, for CI without a GPU
 * (-DFLEETPRINT_EMU=ON). The backends' unchanged C code compiles against the
 * real CUDA/NCCL headers and links against libfpemu instead of libcudart,
 * libcublas and libnccl.
 *
 * Kernel twins: every kernels/<name>.cu file has a plain-C twin
 * emu/k_<name>.c that defines the same fp_k_* launchers (same signatures as
 * include/fleetprint/cuda_kernels.h) and runs the same FP_HD element functions
 * in a loop through fpemu_launch. A twin reads like this:
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
 *         return FPEMU_LAUNCH(stream, fill_body, a, "fill_kernel");
 *     }
 *
 * Device memory (cudaMalloc) is mapped PROT_NONE outside the runtime's copy
 * calls and emulated kernels: host code that reads a device pointer (or hands
 * it to MPI) gets SIGSEGV, as on a GPU. A body runs with every device buffer
 * of this process (and IPC-mapped peers' buffers) readable and writable. */
#include <cuda_runtime_api.h>
#include <stddef.h>

#include "fleetprint/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launch an emulated kernel: copy args_size bytes from args (the body gets its
 * own copy, so args may be a local of the caller), and run body(copy) in
 * stream order on stream s (NULL: the legacy default stream), with device
 * memory accessible while it runs. The body may run before this returns or
 * later, when earlier work queued on s (e.g. an NCCL collective waiting for
 * its peers) has completed; it must not call back into the emulated runtime.
 * Returns FP_OK, or FP_ECUDA (logged with what and the CUDA error string) if
 * the stream is invalid, a sticky error is pending, or args_size is too large;
 * the error is also returned by the next cudaGetLastError(), as a failed
 * launch would be. */
fp_status fpemu_launch_named(cudaStream_t s, void (*body)(void *args), const void *args,
                             size_t args_size, const char *what);

/* fpemu_launch_named with the name "emulated kernel". */
fp_status fpemu_launch(cudaStream_t s, void (*body)(void *args), const void *args,
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
