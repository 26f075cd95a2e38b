#ifndef FLEETPRINT_MEM_H
#define FLEETPRINT_MEM_H
/* Growing arrays. */
#include <stddef.h>

/* Make room for need elements of elem bytes in array, whose capacity is
 * *cap elements: the capacity doubles from first until it holds need.
 * Returns the array (moved or not), or NULL when memory runs out, leaving
 * array and *cap as they were. */
void *fp_grow(void *array, size_t *cap, size_t need, size_t elem, size_t first);

#endif
