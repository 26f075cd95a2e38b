#ifndef FLEETPRINT_MEM_H
#define FLEETPRINT_MEM_H
/* Growing arrays, and large working arrays faulted in ahead in the kind of
 * page (huge or 4 KiB) that costs less on this machine. */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Make room for need elements of elem bytes in array, whose capacity is
 * *cap elements: the capacity doubles from first until it holds need.
 * Returns the array (moved or not), or NULL when memory runs out, leaving
 * array and *cap as they were. */
void *fp_grow(void *array, size_t *cap, size_t need, size_t elem, size_t first);

/* malloc and calloc for arrays of many MiB that are filled soon after: the
 * memory is asked for in the kind of page (transparent huge or 4 KiB) that
 * fresh memory has cost this process less in so far (timed by fp_populate
 * and fp_prefault, huge first). Which is cheaper is the machine's: on one
 * VM, where a 4 KiB page's fault took ~20 us, a fresh GiB took 3.2-4.0 s in
 * 4 KiB pages and 0.4-2.8 s in huge ones; on another, whose balloon hands
 * free 2 MiB blocks back to the host, 0.45-0.63 s in 4 KiB pages and
 * 1.9-2.6 s in huge ones. Huge pages only where the kernel holds twice the
 * array free in blocks of 2 MiB (no fault waits for compaction). Free with
 * free(). */
void *fp_malloc_huge(size_t bytes);
void *fp_calloc_huge(size_t n, size_t elem);

/* Fault in the pages of arrays about to be written, on a thread of its own,
 * while the caller goes on: the kernel clears each fresh page on a core the
 * caller leaves idle, a range at a time (MADV_POPULATE_WRITE), where the
 * caller's writes would each stop to fault. The pages' contents are not
 * touched, so the caller may write them meanwhile. Up to FP_PREFAULT_MAX
 * ranges of at least 8 MiB (smaller ones are ignored); on a kernel without
 * the advice the pages fault as they are written. Call fp_prefault_wait
 * before pf goes: an array freed or moved meanwhile only makes the advice
 * fail, since it never writes. */
#define FP_PREFAULT_MAX 4
typedef struct fp_prefault {
    struct {
        void *p;
        size_t bytes;
    } range[FP_PREFAULT_MAX];
    int n;
    bool running;
    pthread_t thread;
} fp_prefault;

void fp_prefault_add(fp_prefault *pf, void *p, size_t bytes);
/* Fault in the whole pages of [p, p + bytes) now, writable (one
 * MADV_POPULATE_WRITE per 8 MiB step) instead of a fault per page as they
 * are written: for a caller about to fill a range of fresh memory. On a VM
 * where a 4 KiB page's fault took 10 us, filling a fresh GiB took 3.4 s,
 * populated a few MiB at a time before it was filled 1.4-1.9 s. A step
 * that is fresh is asked for in the cheaper kind of page (every eighth in
 * the other, since what memory the kernel holds free changes) and its time
 * counted for the next choice. The contents are not touched; without the
 * advice this does nothing. */
void fp_populate(void *p, size_t bytes);
void fp_prefault_start(fp_prefault *pf);
void fp_prefault_wait(fp_prefault *pf);

/* Keep the memory freed in this process for its later allocations, every
 * thread's from one heap, instead of handing it back to the kernel and
 * faulting fresh pages for the next array: for a short command that builds
 * and frees arrays of megabytes phase by phase (detect). Peak memory stays
 * the largest held at once; none is returned before exit. Call before a
 * second thread starts; glibc only (elsewhere it does nothing). */
void fp_mem_keep_freed(void);

#endif
