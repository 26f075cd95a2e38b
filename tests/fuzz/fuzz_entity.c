/* Fuzz target: entity text (core/sample.c, fp_entity_parse / fp_entity_format).
 * Properties: text that parses formats to canonical text that parses to the
 * same entity, and formatting into any smaller buffer stays inside it and
 * yields a prefix of the full text. */
#include "fleetprint/sample.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_entity(const fp_entity *a, const fp_entity *b)
{
    return a->kind == b->kind && a->dev == b->dev && a->peer_dev == b->peer_dev &&
           a->rank == b->rank && strcmp(a->node, b->node) == 0 && strcmp(a->peer, b->peer) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 512)
        return 0;
    char *text = fz_cstr(data, size);
    if (!text)
        return 0;
    fp_entity e, back;
    if (fp_entity_parse(text, &e)) {
        char full[4 * FP_NAME_MAX];
        fp_entity_format(&e, full, sizeof full);
        size_t n = strlen(full);
        FZ_ASSERT(n + 1 < sizeof full);
        if (!fp_entity_parse(full, &back))
            fprintf(stderr, "'%s' formats as '%s', which does not parse\n", text, full);
        FZ_ASSERT(fp_entity_parse(full, &back));
        FZ_ASSERT(same_entity(&e, &back));
        for (size_t len = 1; len <= n; len++) {
            char *small = malloc(len); /* exact size: ASan sees any overrun */
            if (!small)
                break;
            fp_entity_format(&e, small, len);
            FZ_ASSERT(strlen(small) < len && strncmp(small, full, strlen(small)) == 0);
            free(small);
        }
    }
    free(text);
    return 0;
}
