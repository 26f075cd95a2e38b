#include "fleetprint/mem.h"

#include <stdint.h>
#include <stdlib.h>

void *fp_grow(void *array, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap && array)
        return array;
    size_t n = *cap ? *cap : first ? first : 1;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (elem && n > SIZE_MAX / elem)
        return NULL;
    void *grown = realloc(array, n * elem);
    if (grown)
        *cap = n;
    return grown;
}
