#ifndef FPEMU_INTERNAL_H
#define FPEMU_INTERNAL_H
/* Internals shared by the emulator's files: streams of queued operations, a
 * progress engine, device memory that is PROT_NONE outside it, and the
 * memfd handles that let other rank processes map a buffer (IPC, NCCL).
 * The emulator is a stand-in for a process-wide runtime, so unlike
 * fleetprint's code it keeps process state (one mutex guards it). */
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One queued operation. step runs with device memory accessible and returns
 * true when the operation is complete (false: try again on the next
 * progress, e.g. an NCCL operation waiting for its peers). */
typedef struct emu_op {
    bool (*step)(struct emu_op *op);
    void (*drop)(struct emu_op *op); /* free what blob points to; NULL: nothing */
    void *blob;
    size_t blob_size;
    struct emu_op *next;
} emu_op;

/* Where a device buffer lives, for another process to map it. */
typedef struct emu_where {
    int pid, fd;
    size_t size, offset;
} emu_where;

/* Queue op (taken over) on stream s (NULL: the default stream) and progress. */
cudaError_t emu_enqueue(cudaStream_t s, emu_op *op);
/* A new op with a copy of blob. NULL on allocation failure. */
emu_op *emu_op_new(bool (*step)(emu_op *), const void *blob, size_t size);
/* Run every stream's ready operations. */
void emu_progress(void);
/* The allocation holding [p, p + bytes) and its location; false if p is not device memory. */
bool emu_device_range(const void *p, size_t bytes, emu_where *where);
/* Map another process's buffer (PROT_NONE outside progress); NULL on failure. */
void *emu_map_remote(const emu_where *w);
void emu_unmap_remote(void *p);
/* This process's node name (FLEETPRINT_NODE, else the host name) and current device. */
const char *emu_node(void);
int emu_current_device(void);
double emu_now(void);
void emu_sleep(double seconds);
/* Host-side access to device memory from inside the emulator (NCCL reading
 * peers' buffers from a step is already covered: steps run unprotected). */

#endif
