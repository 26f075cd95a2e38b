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

typedef struct fp_device_info {
    int index;                 /* device index on the node */
    char model[FP_NAME_MAX];   /* "NVIDIA H100 80GB HBM3", "host: AMD EPYC ..." */
    char uuid[48];
    char pci_bus[24];
    uint64_t memory;           /* bytes */
    int sm_count;              /* SMs, or CPU threads on the host backend */
    char runtime_version[32];
    char driver_version[32];
} fp_device_info;

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
