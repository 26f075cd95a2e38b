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
#include <time.h>
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

/* ---- huge or small pages, as they cost here -------------------------------------- */

/* Which kind of page fresh memory costs less in is the machine's (mem.h),
 * and even the moment's: in a VM whose balloon hands free 2 MiB blocks back
 * to the host, a huge page freed a moment before costs 0.1 s a GiB and one
 * the host took back 2 s. So the process times what it populates
 * (fp_populate, fp_prefault) and asks for the kind that has cost less per
 * byte so far: cost[1] huge, cost[0] 4 KiB, in thread CPU seconds (a thread
 * descheduled meanwhile does not count) and bytes. */
static pthread_mutex_t cost_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    double s, bytes;
} cost[2];
static unsigned turns;

/* 1 for huge pages, 0 for 4 KiB: each kind tried once (huge first), then the
 * cheaper, and where explore, every eighth turn the other: what memory the
 * kernel has free changes as the process runs. */
static int page_kind(bool explore)
{
    pthread_mutex_lock(&cost_lock);
    int k = 1;
    if (cost[1].bytes > 0 && cost[0].bytes <= 0)
        k = 0;
    else if (cost[1].bytes > 0)
        k = cost[1].s * cost[0].bytes <= cost[0].s * cost[1].bytes;
    if (explore && cost[0].bytes > 0 && ++turns % 8 == 0)
        k = !k;
    pthread_mutex_unlock(&cost_lock);
    return k;
}

static void page_cost(int kind, double s, size_t bytes)
{
    pthread_mutex_lock(&cost_lock);
    cost[kind].s += s;
    cost[kind].bytes += (double)bytes;
    pthread_mutex_unlock(&cost_lock);
}

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Ask for pages of kind (1: huge) on the whole pages of [p, p + bytes):
 * huge only where the kernel has them free, since where it must first
 * compact memory to make them (madvise defrag), that stalls each fault (on
 * one VM it made detect's load of a run twice as slow); 4 KiB asked for
 * outright, for a kernel that gives huge pages unasked. Returns the kind
 * asked for, -1 where the range holds no whole page. */
static int advise(void *p, size_t bytes, int kind)
{
#ifdef MADV_HUGEPAGE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)p + bytes) & ~(page - 1);
    if (b <= a)
        return -1;
    bool huge = kind && free_huge_bytes() >= 2 * bytes;
    (void)madvise((void *)a, b - a, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE); /* refused: fine */
    return huge;
#else
    (void)p;
    (void)bytes;
    (void)kind;
    return -1;
#endif
}

static void advise_array(void *p, size_t bytes)
{
    if (p && bytes >= HUGE_MIN)
        (void)advise(p, bytes, page_kind(false));
}

void *fp_malloc_huge(size_t bytes)
{
    void *p = malloc(bytes);
    advise_array(p, bytes);
    return p;
}

void *fp_calloc_huge(size_t n, size_t elem)
{
    void *p = calloc(n, elem);
    advise_array(p, n * elem); /* calloc checked the product */
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
    advise_array(grown, n * elem);
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
static bool populate_range(void *p, size_t bytes)
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

/* populate_range in steps that end on 8 MiB boundaries, each whole step of
 * fresh memory (its first page not yet in memory) in the kind of page
 * page_kind picks, timed for the next pick. */
static bool populate(void *p, size_t bytes)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), end = (uintptr_t)p + bytes;
    for (uintptr_t q = (uintptr_t)p; q < end;) {
        uintptr_t next = (q | (HUGE_MIN - 1)) + 1;
        size_t n = (next < end ? next : end) - q;
        unsigned char in = 1;
        int kind = -1;
        if (n == HUGE_MIN && mincore((void *)q, page, &in) == 0 && !(in & 1))
            kind = advise((void *)q, n, page_kind(true));
        double t = kind >= 0 ? thread_seconds() : 0;
        if (!populate_range((void *)q, n))
            return false;
        if (kind >= 0)
            page_cost(kind, thread_seconds() - t, n);
        q += n;
    }
    return true;
}

void fp_populate(void *p, size_t bytes)
{
    (void)populate(p, bytes);
}

/* The ranges side by side, since their caller fills them side by side (the
 * interning writes entities, series and values as each comes): each round
 * takes every range to the same share of its bytes (in whole steps of
 * populate), 8 MiB more of the largest. In turn, the interning outran the
 * thread on the later ranges and faulted their pages itself. */
static void *prefault_main(void *arg)
{
    const fp_prefault *pf = arg;
    uintptr_t done[FP_PREFAULT_MAX];
    size_t most = 0;
    for (int i = 0; i < pf->n; i++) {
        done[i] = (uintptr_t)pf->range[i].p;
        most = pf->range[i].bytes > most ? pf->range[i].bytes : most;
    }
    for (size_t at = HUGE_MIN;; at += HUGE_MIN) {
        bool more = false;
        for (int i = 0; i < pf->n; i++) {
            uintptr_t end = (uintptr_t)pf->range[i].p + pf->range[i].bytes;
            /* on populate's 8 MiB boundaries: each step whole, to be timed */
            uintptr_t to = at >= most ? end
                                      : ((uintptr_t)pf->range[i].p +
                                         (uintptr_t)((double)pf->range[i].bytes * at / most)) &
                                            ~(uintptr_t)(HUGE_MIN - 1);
            if (to > done[i] && !populate((void *)done[i], to - done[i]))
                return NULL; /* an old kernel: the pages fault as they are written */
            done[i] = to > done[i] ? to : done[i];
            more = more || done[i] < end;
        }
        if (!more)
            return NULL;
    }
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
