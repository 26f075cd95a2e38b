/* Fuzz target: --inject specs (core/inject.c, fp_inject_parse). The input is
 * up to FP_LIST_MAX specs, one per line.
 * Properties: a rejected spec gives a message that fits the caller's buffer;
 * accepted specs have valid ranks, factors and times, and their description
 * (fp_inject_describe, recorded in run contexts) parses back to the same set
 * (numbers there have %g precision: 6 significant digits). */
#include <math.h>

#include "fleetprint/inject.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Split s in place at each sep into list (at most FP_LIST_MAX items). */
static void split(char *s, char sep, fp_strlist *list)
{
    list->n = 0;
    for (char *p = s; list->n < FP_LIST_MAX;) {
        list->item[list->n++] = p;
        char *q = strchr(p, sep);
        if (!q)
            break;
        *q = 0;
        p = q + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = fz_cstr(data, size);
    if (!text)
        return 0;
    fp_strlist specs;
    split(text, '\n', &specs);
    fp_inject_set set, back;
    char *err = malloc(128); /* heap, exact size: ASan sees an overrun */
    if (!err) {
        free(text);
        return 0;
    }
    err[0] = 0;
    fp_status st = fp_inject_parse(&specs, &set, err, 128);
    if (st != FP_OK) {
        FZ_ASSERT(st == FP_EUSAGE && err[0] != 0 && strlen(err) < 128);
        goto done;
    }
    FZ_ASSERT(set.n == specs.n);
    for (int i = 0; i < set.n; i++) {
        const fp_injection *in = &set.item[i];
        FZ_ASSERT(in->kind >= 0 && in->kind < FP_INJ_KIND_COUNT);
        FZ_ASSERT(in->rank >= 0);
        FZ_ASSERT(in->kind == FP_INJ_LINK ? in->rank_b >= 0 && in->rank_b != in->rank
                                          : in->rank_b == -1);
        FZ_ASSERT(in->factor >= 1 && in->factor <= 1000);
        FZ_ASSERT(isfinite(in->after) && in->after >= 0);
        FZ_ASSERT(in->until == 0 || (in->kind == FP_INJ_SLOW && in->until > in->after));
    }
    char desc[FP_LIST_MAX * 96];
    fp_inject_describe(&set, desc, sizeof desc);
    FZ_ASSERT(strlen(desc) + 1 < sizeof desc);
    fp_strlist again;
    split(desc, ';', &again);
    if (set.n == 0)
        again.n = 0;
    st = fp_inject_parse(&again, &back, err, 128);
    if (st != FP_OK)
        fprintf(stderr, "description does not parse back: %s\n", err);
    FZ_ASSERT(st == FP_OK && back.n == set.n);
    for (int i = 0; i < set.n; i++) {
        const fp_injection *a = &set.item[i], *b = &back.item[i];
        FZ_ASSERT(a->kind == b->kind && a->rank == b->rank && a->rank_b == b->rank_b &&
                  a->input == b->input);
        FZ_ASSERT(fabs(a->factor - b->factor) <= 1e-5 * a->factor);
        FZ_ASSERT(fabs(a->after - b->after) <= 1e-5 * a->after);
        FZ_ASSERT(a->until == b->until); /* described exactly: until= stays after after= */
    }
done:
    free(err);
    free(text);
    return 0;
}
