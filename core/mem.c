#include "fleetprint/mem.h"

#include <errno.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Below this, an array holds too few whole 2 MiB pages to gain. */
#define HUGE_MIN ((size_t)8 << 20)

/* Bytes the kernel holds free in blocks of 2 MiB or more (/proc/buddyinfo:
 * per zone, the free blocks of each order), SIZE_MAX where it cannot say. */
static size_t free_huge_bytes(void)
{
    FILE *f = fopen("/proc/buddyinfo", "r");
    if (!f)
        return SIZE_MAX;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), total = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *s = strstr(line, "zone");
        if (!s)
            continue;
        s += 4;
        while (*s == ' ')
            s++;
        while (*s && *s != ' ') /* the zone's name */
            s++;
        char *end;
        for (int order = 0;; order++, s = end) {
            unsigned long n = strtoul(s, &end, 10);
            if (end == s)
                break;
            size_t block = order < 30 ? page << order : 0;
            if (block >= ((size_t)2 << 20))
                total += n * block;
        }
    }
    fclose(f);
    return total;
}

static void advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (!p || bytes < HUGE_MIN)
        return;
    /* huge pages only where the kernel has them free: where it must first
     * compact memory to make them (madvise defrag), that stalls each fault,
     * and on one VM made detect's load of a run twice as slow */
    if (free_huge_bytes() < 2 * bytes)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)p + bytes) & ~(page - 1);
    (void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* advice: refused is fine */
#else
    (void)p;
    (void)bytes;
#endif
}

void *fp_malloc_huge(size_t bytes)
{
    void *p = malloc(bytes);
    advise_huge(p, bytes);
    return p;
}

void *fp_calloc_huge(size_t n, size_t elem)
{
    void *p = calloc(n, elem);
    advise_huge(p, n * elem); /* calloc checked the product */
    return p;
}

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
    advise_huge(grown, n * elem);
    return grown;
}

void fp_prefault_add(fp_prefault *pf, void *p, size_t bytes)
{
    if (p && bytes >= HUGE_MIN && pf->n < FP_PREFAULT_MAX && !pf->running) {
        pf->range[pf->n].p = p;
        pf->range[pf->n++].bytes = bytes;
    }
}

/* Fault in [p, p + bytes) writable without writing it: false where the
 * kernel lacks the advice (EINVAL). A range freed meanwhile (an array that
 * grew) only makes the advice fail: it never writes. */
static bool populate(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)p + bytes) & ~(page - 1);
    return b <= a || madvise((void *)a, b - a, MADV_POPULATE_WRITE) == 0 || errno != EINVAL;
#else
    (void)p;
    (void)bytes;
    return false;
#endif
}

void fp_populate(void *p, size_t bytes)
{
    (void)populate(p, bytes);
}

static void *prefault_main(void *arg)
{
    const fp_prefault *pf = arg;
    for (int i = 0; i < pf->n && populate(pf->range[i].p, pf->range[i].bytes); i++)
        ; /* an old kernel stops it: the pages fault as they are written */
    return NULL;
}

void fp_prefault_start(fp_prefault *pf)
{
    if (pf->n && !pf->running)
        pf->running = pthread_create(&pf->thread, NULL, prefault_main, pf) == 0;
}

void fp_prefault_wait(fp_prefault *pf)
{
    if (pf->running)
        pthread_join(pf->thread, NULL);
    pf->running = false;
    pf->n = 0;
}

void fp_mem_keep_freed(void)
{
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
    /* one arena: a thread's arrays come from what another freed; no mmap
     * per large array (it would go back at free) and no trimming */
    (void)mallopt(M_ARENA_MAX, 1);
    (void)mallopt(M_MMAP_MAX, 0);
    (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}
