#ifndef FLEETPRINT_HOSTLIST_H
#define FLEETPRINT_HOSTLIST_H
/* Hostlist expressions with Slurm's grammar, and their inverse.
 *
 *   list   := expr { sep expr }        sep: ',' or whitespace, repeated freely
 *   expr   := text { '[' ranges ']' text }
 *   ranges := range { ',' range }
 *   range  := digits [ '-' digits ]    lo <= hi
 *
 * Several bracket groups in one expression expand as a product, the leftmost
 * group varying slowest: "r[1-2]n[1-2]" is r1n1,r1n2,r2n1,r2n2. A range's
 * width is the number of digits of its low bound, so leading zeros fix the
 * width ("n[08-10]" is n08,n09,n10) and "n[8-10]" is n8,n9,n10. Hosts keep
 * the order written and duplicates are kept (Slurm's hostlist_create).
 *
 * fp_hostlist is an ordered list of host names owned by the handle. */
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/status.h"

typedef struct fp_hostlist fp_hostlist;

/* Most hosts one expression may expand to; more is an input error (a typo
 * such as n[0-99999999] must not exhaust memory). */
#define FP_HOSTLIST_MAX_HOSTS (1u << 22)

/* A new empty list, or NULL when out of memory. Free with fp_hostlist_free. */
fp_hostlist *fp_hostlist_new(void);

/* Free the list and every name in it. NULL is fine. */
void fp_hostlist_free(fp_hostlist *hl);

/* Expand expr and append its hosts to hl. On bad syntax returns FP_EINPUT and
 * writes a one-line message naming the 1-based character position into err
 * ("position 4: range 9-3 goes backwards"); hl is then left as it was.
 * FP_ENOMEM when out of memory. err may be NULL. */
fp_status fp_hostlist_append(fp_hostlist *hl, const char *expr, char *err, size_t errlen);

/* Append the hosts of a command-line argument: a hostlist expression, or
 * "@FILE" ("@-": standard input) holding expressions separated by
 * whitespace, commas or newlines, '#' starting a comment to the end of its
 * line (what `scontrol show hostnames` or `sinfo -h -o %N` print, beyond the
 * 128 KiB one argument may hold). Errors as fp_hostlist_append's, the message
 * prefixed "FILE:LINE: " for a file; FP_EINPUT naming the file when it
 * cannot be read. */
fp_status fp_hostlist_append_arg(fp_hostlist *hl, const char *arg, char *err, size_t errlen);

/* Convenience: a new list holding the expansion of expr (see
 * fp_hostlist_append). On error *out is NULL. */
fp_status fp_hostlist_parse(const char *expr, fp_hostlist **out, char *err, size_t errlen);

/* Append one literal host name (copied). FP_EINPUT when the name is empty or
 * contains a separator or bracket, FP_ENOMEM when out of memory. */
fp_status fp_hostlist_push(fp_hostlist *hl, const char *host);

/* Number of hosts, and the i-th host (0 <= i < count; the list owns it). */
size_t fp_hostlist_count(const fp_hostlist *hl);
const char *fp_hostlist_get(const fp_hostlist *hl, size_t i);

/* True when host is in the list (linear scan; for many look-ups sort with
 * fp_hostlist_sort_unique and use fp_hostlist_contains_sorted). */
bool fp_hostlist_contains(const fp_hostlist *hl, const char *host);

/* Sort hosts in natural order (prefix, then number, then suffix) and drop
 * duplicates, as `scontrol show hostlistsorted` does. */
void fp_hostlist_sort_unique(fp_hostlist *hl);

/* Binary search in a list sorted by fp_hostlist_sort_unique. */
bool fp_hostlist_contains_sorted(const fp_hostlist *hl, const char *host);

/* Compress n names, keeping their order, into the shortest-run expression
 * Slurm would write: consecutive hosts that count up by one with the same
 * prefix, suffix and width become a range, and adjacent ranges with the same
 * prefix and suffix share a bracket ("n[1-3,7],m5"). Expanding the result
 * gives back exactly the names in the same order. Returns a malloc'd string
 * the caller frees, or NULL when out of memory; "" for n == 0. */
char *fp_hostlist_compress(const char *const *names, size_t n);

/* fp_hostlist_compress of a list's hosts. */
char *fp_hostlist_format(const fp_hostlist *hl);

#endif
