/* Fuzz target: the detector rules JSON (detect/rules.c, fp_rules_parse).
 * Properties: a rejected file has a message naming the origin; accepted rules
 * answer look-ups of metric keys (the user's glob patterns against real keys). */
#include "detect_internal.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    char *text = fz_cstr(data, size);
    if (!text)
        return 0;
    char err[512];
    fp_rules *r = NULL;
    fp_status st = fp_rules_parse(text, "fuzz.json", &r, err, sizeof err);
    if (st == FP_OK) {
        static const char *const keys[] = {"kernels.gemm.tflops@1048576",
                                           "collectives.allreduce.busbw@8388608",
                                           "burnin.sdc.wrong", "", "a@b@c"};
        FZ_ASSERT(r != NULL);
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            const fp_rule_class *c = fp__rules_class(r, keys[i]);
            FZ_ASSERT(!c || c->patterns.n >= 1);
            (void)fp__rules_value(r, keys[i]);
        }
    } else
        FZ_ASSERT(r == NULL && strncmp(err, "fuzz.json", 9) == 0);
    fp_rules_free(r);
    free(text);
    return 0;
}
