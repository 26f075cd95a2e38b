/* Fuzz target: the what-if job meta YAML loader (whatif/whatif_trace.c,
 * fp_wi_meta_load). Properties: an accepted file gives a record that passes
 * fp_wi_meta_check; a rejected one is FP_EINPUT. */
#include "fleetprint/whatif.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char path[64];
    int fd = fz_memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    fp_wi_meta m;
    fp_status st = fp_wi_meta_load(path, &m);
    close(fd);
    FZ_ASSERT(st == FP_OK || st == FP_EINPUT);
    if (st == FP_OK) {
        FZ_ASSERT(fp_wi_meta_check(&m, "fuzz") == FP_OK);
        FZ_ASSERT(m.trial_name[0] != 0 && strlen(m.trial_name) < sizeof m.trial_name);
    }
    return 0;
}
