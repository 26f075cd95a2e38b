/* Fuzz target: the what-if trace CSV loader (whatif/whatif_trace.c,
 * fp_wi_trace_load_csv), then the analysis of small accepted traces against
 * the meta their ranks imply (fp_wi_analyze must accept or reject, never crash).
 * Properties: every accepted row satisfies the documented constraints. */
#include <math.h>

#include "fleetprint/whatif.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    char path[64];
    int fd = fz_memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    fp_wi_trace *t = NULL;
    fp_status st = fp_wi_trace_load_csv(path, &t);
    close(fd);
    if (st != FP_OK) {
        FZ_ASSERT(t == NULL && st == FP_EINPUT);
        return 0;
    }
    size_t n = fp_wi_trace_rows(t);
    const fp_wi_row *rows = fp_wi_trace_data(t);
    FZ_ASSERT(n >= 1);
    int dp = 0, pp = 0;
    for (size_t i = 0; i < n; i++) {
        const fp_wi_row *r = &rows[i];
        FZ_ASSERT(r->dp_rank >= 0 && r->stage >= 0 && r->rank >= 0 && r->seq_id >= 0);
        FZ_ASSERT((int)r->optype >= 0 && r->optype < FP_WI_OPTYPE_COUNT);
        FZ_ASSERT(isfinite(r->start_ts) && isfinite(r->duration) && r->duration >= 0);
        if (r->dp_rank >= dp)
            dp = r->dp_rank + 1;
        if (r->stage >= pp)
            pp = r->stage + 1;
    }
    if (n <= 512 && dp <= 64 && pp <= 64) {
        fp_wi_meta meta = {.dp_size = dp, .pp_size = pp, .tp_size = 1, .dsp_size = 1,
                           .vpp_size = 1, .world_size = dp * pp};
        snprintf(meta.trial_name, sizeof meta.trial_name, "fuzz");
        fp_wi_options opt = fp_wi_options_default();
        opt.keep_timeline = (size & 1) != 0;
        fp_wi_result *res = NULL;
        st = fp_wi_analyze(t, &meta, &opt, &res);
        FZ_ASSERT(st == FP_OK || st == FP_EINPUT);
        FZ_ASSERT((st == FP_OK) == (res != NULL));
        if (res) {
            FZ_ASSERT(res->nsteps >= 1 && res->nops >= 1);
            FZ_ASSERT(!isnan(res->blocking_slowdown) || res->nrows == n);
        }
        fp_wi_result_free(res);
    }
    fp_wi_trace_free(t);
    return 0;
}
