#ifndef FLEETPRINT_DEVICE_H
#define FLEETPRINT_DEVICE_H
/* Device backends: a const table of operations per backend (host, cuda),
 * chosen at run time. Suites call only these, never a backend directly. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/hd.h"
#include "fleetprint/sample.h"
#include "fleetprint/status.h"

typedef struct fp_device fp_device;

typedef enum fp_copy_kind { FP_COPY_H2D, FP_COPY_D2H, FP_COPY_D2D } fp_copy_kind;

/* GEMM precisions: the storage type of A and B. C is double for FP_GEMM_F64
 * and float for every other type (fp32 accumulation); TF32 stores A and B as
 * float and lets the tensor cores round them to 10 mantissa bits. FP8 is
 * e4m3. The host backend runs F64 and F32 only. */
typedef enum fp_gemm_type {
    FP_GEMM_F64,
    FP_GEMM_F32,
    FP_GEMM_TF32,
    FP_GEMM_F16,
    FP_GEMM_BF16,
    FP_GEMM_FP8,
    FP_GEMM_TYPE_COUNT
} fp_gemm_type;

/* "f64", "f32", "tf32", "f16", "bf16", "fp8". */
const char *fp_gemm_type_name(fp_gemm_type t);
/* Bytes of one A or B element, and of one C element, for a type. */
size_t fp_gemm_in_size(fp_gemm_type t);
size_t fp_gemm_out_size(fp_gemm_type t);

typedef struct fp_device_info {
    int index;                 /* device index on the node */
    char model[FP_NAME_MAX];   /* "NVIDIA H100 80GB HBM3", "host: AMD EPYC ..." */
    char uuid[48];
    char pci_bus[24];
    uint64_t memory;           /* bytes */
    int sm_count;              /* SMs, or CPU threads on the host backend */
    char runtime_version[32];
    char driver_version[32];   /* NVML's ("580.159.04"), else "13.0 (CUDA driver API)" */
    char nccl_version[32];     /* the NCCL the cuda backend links, "" on the host */
    bool emulated;             /* an emulated device (fpemu, FLEETPRINT_EMU builds) */
    char driver_api_version[32]; /* cudaDriverGetVersion's ("13.0"), "" on the host */
    char blas_version[32];     /* the cuBLAS the cuda backend links ("13.1.0"), "" on the host */
} fp_device_info;

/* The digest of n elements of es bytes (4 float, 8 double) at c, host
 * memory, and their mismatches against ref with tol (ref NULL: 0). The
 * reference implementation: the host backend's digest op, and what the
 * device kernels must agree with (but for the order of the value sums). */
void fp_digest_host(const void *c, const void *ref, size_t n, size_t es, double tol,
                    fp_digest *out);

typedef struct fp_device_ops {
    const char *name;
    /* How many devices this process can see. 0 with a reason in why when none. */
    fp_status (*probe)(int *count, char *why, size_t len);
    /* Open device index with threads worker threads (host; 0 = automatic). */
    fp_status (*open)(fp_device **out, int index, int threads);
    void (*close)(fp_device *d);
    fp_status (*query)(fp_device *d, fp_device_info *info);
    /* Device memory; on the host backend plain aligned host memory. */
    fp_status (*alloc)(fp_device *d, size_t bytes, void **ptr);
    void (*free)(fp_device *d, void *ptr);
    fp_status (*copy)(fp_device *d, void *dst, const void *src, size_t bytes, fp_copy_kind kind);
    fp_status (*sync)(fp_device *d);
    /* Timed region: start, enqueue work, stop waits for it and gives seconds. */
    fp_status (*timer_start)(fp_device *d);
    fp_status (*timer_stop)(fp_device *d, double *seconds);
    /* ---- kernels (element logic in hd.h) ---- */
    fp_status (*fill)(fp_device *d, double *x, size_t n, double v);
    fp_status (*stream)(fp_device *d, fp_stream_op op, double *dst, const double *x,
                        const double *y, double s, size_t n);
    /* Count elements of x that differ from expect by more than tol (relative). */
    fp_status (*count_wrong)(fp_device *d, const double *x, size_t n, double expect, double tol,
                             size_t *wrong);
    /* ---- memory test and result checks, on the device (element logic in hd.h) ---- */
    /* Write fp_mem_word(p, region, i, seed) to every 8-byte word i of bytes
     * (a multiple of 16) at region; enqueued. */
    fp_status (*mem_write)(fp_device *d, int p, void *region, size_t bytes, uint64_t seed);
    /* Read every word back and compare with the pattern; waits, then *out
     * holds the errors and first bad words of this pass. */
    fp_status (*mem_verify)(fp_device *d, int p, const void *region, size_t bytes, uint64_t seed,
                            fp_mem_check *out);
    /* fp_digest of n elements of es bytes at c (device memory) against ref
     * (device memory, or NULL); waits for the work before it and itself. */
    fp_status (*digest)(fp_device *d, const void *c, const void *ref, size_t n, size_t es,
                        double tol, fp_digest *out);
    /* dst[i] = fp_gemm_operand(seed, i, exact) stored as type t
     * (fp_gemm_store), i < n: GEMM operands made on the device, no host
     * array or copy; enqueued. */
    fp_status (*fill_gemm)(fp_device *d, fp_gemm_type t, void *dst, size_t n, uint64_t seed,
                           bool exact);
    /* ---- compute suite ---- */
    /* Whether gemm runs type t on this device (false, not an error, when not). */
    bool (*gemm_supports)(fp_device *d, fp_gemm_type t);
    /* C = A * B, column-major: A m x k (lda >= m), B k x n (ldb >= k), C m x n
     * (ldc >= m), all in device memory, types as fp_gemm_type says; for
     * FP_GEMM_FP8 A is given transposed, k x m with lda >= k (the only layout
     * fp8 tensor-core kernels take). Enqueued in
     * stream order (the host backend returns when done). FP_EUNSUPPORTED for a
     * type gemm_supports rejects. */
    fp_status (*gemm)(fp_device *d, fp_gemm_type t, int m, int n, int k, const void *a, int lda,
                      const void *b, int ldb, void *c, int ldc);
    /* Enqueue count empty kernel launches (graph: one CUDA graph holding
     * count empty kernels, built once per count and reused); on the host the
     * dispatch of count empty parallel regions to the worker pool. Modes a
     * backend lacks return FP_EUNSUPPORTED. Time it with timer_start/stop. */
    fp_status (*launch)(fp_device *d, bool graph, int count);
    /* Host memory for copies to and from the device, page-locked when pinned.
     * NULL on backends whose device memory is host memory. */
    fp_status (*host_alloc)(fp_device *d, size_t bytes, bool pinned, void **ptr);
    void (*host_free)(fp_device *d, void *ptr, bool pinned);
    /* Peer copy bandwidth between devices src and dst of this node, seen
     * from this process: iters copies of bytes (both ways at once when bidir)
     * after one warm-up; *seconds is the time of the iters. FP_EUNSUPPORTED
     * when the pair has no peer access. NULL on the host backend (ranks of a
     * node exchange through the comm backend there). */
    fp_status (*peer_copy)(fp_device *d, int src, int dst, size_t bytes, bool bidir, int iters,
                           double *seconds);
    /* The backend's native work queue (cudaStream_t), for comm backends that
     * order their work after the device's; NULL op on the host backend. */
    void *(*native_stream)(fp_device *d);
    /* The run's ranks share this host's CPU cores: timed regions leave out
     * the time this thread waited for a core (the scheduler's share, not the
     * device's). NULL where timings are the device's own (CUDA events). */
    void (*share_cores)(fp_device *d);
} fp_device_ops;

extern const fp_device_ops fp_device_host, fp_device_cuda;

/* Registry, NULL-terminated: host first. */
extern const fp_device_ops *const fp_device_backends[];

/* Backend by name ("host", "cuda"), or NULL. */
const fp_device_ops *fp_device_find(const char *name);

/* Resolve --device auto|host|cuda: auto picks cuda when a GPU is visible and
 * host otherwise, and logs which and why. Explicit cuda with no GPU returns
 * FP_ENODEV with a one-line reason logged. */
fp_status fp_device_choose(const char *want, const fp_device_ops **out);

#endif
