/* Large working arrays (core/mem.c): populated ahead, on this thread or a
 * thread of its own, their contents stay as they were; fresh memory comes
 * in whole and zero, in whichever kind of page each step was timed in; an
 * array grows by doubling and refuses a size past SIZE_MAX. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/mem.h"

#define MB ((size_t)1 << 20)

/* Pages of [p, p + n) in memory now. */
static size_t resident(void *p, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), np = n / page, in = 0;
    unsigned char *v = malloc(np);
    if (!v || mincore(p, n, v) != 0) {
        free(v);
        return 0;
    }
    for (size_t i = 0; i < np; i++)
        in += v[i] & 1;
    free(v);
    return in * page;
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

int main(void)
{
    /* fresh memory, 8 MiB-aligned steps of it timed in either kind of page:
     * every page in memory after, all zero */
    size_t n = 72 * MB;
    unsigned char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    if (m != MAP_FAILED) {
        CHECK(resident(m, n) == 0);
        for (int round = 0; round < 2; round++) { /* the second: nothing fresh */
            fp_populate(m + MB, n - 2 * MB);
            CHECK(resident(m + MB, n - 2 * MB) == n - 2 * MB);
        }
        CHECK(all_zero(m, n));
        munmap(m, n);
    }

    /* an array being written: populating it ahead never writes it */
    unsigned char *a = fp_malloc_huge(40 * MB + 123);
    CHECK(a != NULL);
    if (a) {
        for (size_t i = 0; i < 40 * MB + 123; i++)
            a[i] = (unsigned char)(i * 7 + 3);
        fp_prefault pf = {0};
        fp_prefault_add(&pf, a, 40 * MB + 123);
        fp_prefault_add(&pf, a, 4 * MB); /* too small: ignored */
        CHECK(pf.n == 1);
        fp_prefault_start(&pf);
        fp_populate(a + 5, 20 * MB);
        fp_prefault_wait(&pf);
        CHECK(!pf.running && pf.n == 0);
        bool same = true;
        for (size_t i = 0; i < 40 * MB + 123; i++)
            same = same && a[i] == (unsigned char)(i * 7 + 3);
        CHECK(same);
        free(a);
    }
    unsigned char *z = fp_calloc_huge(3, 9 * MB);
    CHECK(z && all_zero(z, 27 * MB));
    free(z);

    /* growing: doubling from first, left as it was when it cannot */
    size_t cap = 0;
    int *g = fp_grow(NULL, &cap, 5, sizeof *g, 4);
    CHECK(g && cap == 8);
    int *same = fp_grow(g, &cap, 8, sizeof *g, 4);
    CHECK(same == g && cap == 8);
    g = fp_grow(g, &cap, 9, sizeof *g, 4);
    CHECK(g && cap == 16);
    CHECK(fp_grow(g, &cap, SIZE_MAX / 2, sizeof *g, 4) == NULL && cap == 16);
    free(g);
    CHECK_DONE();
}
