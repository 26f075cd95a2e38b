/* Fuzz target: hostlist expressions (admit/hostlist.c).
 * Properties: an accepted expression compresses to text that expands back to
 * the same hosts in the same order; a rejected one leaves a message naming a
 * position; sort_unique leaves a sorted, duplicate-free list in which every
 * host is found by binary search. */
#include "fleetprint/hostlist.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *expr = fz_cstr(data, size);
    if (!expr)
        return 0;
    char err[200];
    fp_hostlist *hl = NULL, *back = NULL;
    fp_status st = fp_hostlist_parse(expr, &hl, err, sizeof err);
    if (st != FP_OK) {
        FZ_ASSERT(hl == NULL);
        FZ_ASSERT(st != FP_EINPUT || strncmp(err, "position ", 9) == 0);
        goto done;
    }
    size_t n = fp_hostlist_count(hl);
    for (size_t i = 0; i < n; i++)
        FZ_ASSERT(fp_hostlist_get(hl, i) && fp_hostlist_get(hl, i)[0]);
    if (n > 20000)
        goto done; /* the round trip below is quadratic in places; big lists add nothing */

    char *text = fp_hostlist_format(hl);
    FZ_ASSERT(text != NULL);
    st = fp_hostlist_parse(text, &back, err, sizeof err);
    if (st != FP_OK)
        fprintf(stderr, "compressed '%s' does not parse: %s\n", text, err);
    FZ_ASSERT(st == FP_OK);
    FZ_ASSERT(fp_hostlist_count(back) == n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(fp_hostlist_get(hl, i), fp_hostlist_get(back, i)) != 0)
            fprintf(stderr, "host %zu: '%s' came back as '%s' via '%s'\n", i,
                    fp_hostlist_get(hl, i), fp_hostlist_get(back, i), text);
        FZ_ASSERT(strcmp(fp_hostlist_get(hl, i), fp_hostlist_get(back, i)) == 0);
    }
    free(text);

    fp_hostlist_sort_unique(back);
    size_t m = fp_hostlist_count(back);
    FZ_ASSERT(m <= n && (n == 0 || m >= 1));
    for (size_t i = 0; i < m; i++) {
        if (i)
            FZ_ASSERT(strcmp(fp_hostlist_get(back, i - 1), fp_hostlist_get(back, i)) != 0);
        FZ_ASSERT(fp_hostlist_contains_sorted(back, fp_hostlist_get(back, i)));
    }
    for (size_t i = 0; i < n; i++)
        FZ_ASSERT(fp_hostlist_contains_sorted(back, fp_hostlist_get(hl, i)));
done:
    fp_hostlist_free(hl);
    fp_hostlist_free(back);
    free(expr);
    return 0;
}
