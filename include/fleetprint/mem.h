#ifndef FLEETPRINT_MEM_H
#define FLEETPRINT_MEM_H
/* Growing arrays, and large working arrays on huge pages. */
#include <stddef.h>

/* Make room for need elements of elem bytes in array, whose capacity is
 * *cap elements: the capacity doubles from first until it holds need.
 * Returns the array (moved or not), or NULL when memory runs out, leaving
 * array and *cap as they were. */
void *fp_grow(void *array, size_t *cap, size_t need, size_t elem, size_t first);

/* malloc and calloc for arrays of many MiB that are filled soon after: the
 * memory is marked for transparent huge pages where the kernel offers them
 * on request (madvise mode). Each fresh 4 KiB page costs a fault, ~20 us in a
 * VM: detect at 10,000 nodes x 8 touched ~1 GB of them and spent 38% of its
 * time there. Free with free(). */
void *fp_malloc_huge(size_t bytes);
void *fp_calloc_huge(size_t n, size_t elem);

#endif
