/* Original and ideal timelines of a what-if analysis as Chrome trace JSON
 * (Perfetto, chrome://tracing). Streams with fprintf: traces can be large. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/report.h"
#include "fleetprint/outfile.h"

enum { CLS_COMPUTE, CLS_PP, CLS_DP, CLS_N };
static const char *const cls_name[CLS_N] = {"compute", "pp-comm", "dp-comm"};

static int op_class(fp_wi_optype t)
{
    switch (t) {
    case FP_WI_FORWARD_COMPUTE:
    case FP_WI_BACKWARD_COMPUTE:
    case FP_WI_OPTIMIZER:
    case FP_WI_GC:
        return CLS_COMPUTE;
    case FP_WI_FORWARD_SEND:
    case FP_WI_FORWARD_RECV:
    case FP_WI_BACKWARD_SEND:
    case FP_WI_BACKWARD_RECV:
        return CLS_PP;
    default:
        return CLS_DP;
    }
}

fp_status fp_wi_write_timeline(const fp_wi_result *r, const char *path)
{
    const fp_wi_timeline *tl = r->timeline;
    if (!tl) {
        fp_error("timeline requested but the analysis did not keep per-op times");
        return FP_EUSAGE;
    }
    const int dp = r->meta.dp_size, pp = r->meta.pp_size, ni = tl->ninst;
    double *offset = malloc((size_t)r->nsteps * sizeof *offset);
    if (!offset) {
        fp_error("%s: out of memory for the step offsets", path);
        return FP_ENOMEM;
    }
    /* steps end to end, each as long as the longer of original and ideal + 10% */
    double at = 0;
    for (int s = 0; s < r->nsteps; s++) {
        double hi = 0;
        for (int v = 0; v < tl->nops; v++)
            for (int d = 0; d < dp; d++) {
                size_t k = (size_t)v * ni + (size_t)s * dp + d;
                hi = fmax(hi, fmax(tl->orig_end[k], tl->ideal_end[k]));
            }
        offset[s] = at;
        at += 1.1 * hi;
    }
    fp_status open_st;
    FILE *f = fp_outfile_open(path, &open_st);
    if (!f) {
        free(offset);
        return open_st;
    }
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    bool first = true;
    for (int kind = 0; kind < 2; kind++)
        for (int d = 0; d < dp; d++) {
            int pid = kind * dp + d;
            fprintf(f,
                    "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                    "\"args\":{\"name\":\"%s, DP rank %d\"}}",
                    first ? "" : ",\n", pid, kind ? "ideal" : "original", d);
            first = false;
            fprintf(f,
                    ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,"
                    "\"args\":{\"sort_index\":%d}}",
                    pid, d * 2 + kind);
            for (int s = 0; s < pp; s++)
                for (int c = 0; c < CLS_N; c++)
                    fprintf(f,
                            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                            "\"args\":{\"name\":\"PP stage %d, %s\"}}",
                            pid, s * CLS_N + c, s, cls_name[c]);
        }
    for (int kind = 0; kind < 2; kind++) {
        const double *st = kind ? tl->ideal_start : tl->orig_start;
        const double *en = kind ? tl->ideal_end : tl->orig_end;
        const double *co = kind ? tl->ideal_cost : tl->orig_cost;
        for (int v = 0; v < tl->nops; v++) {
            int tid = tl->stage[v] * CLS_N + op_class(tl->optype[v]);
            for (int i = 0; i < ni; i++) {
                size_t k = (size_t)v * ni + i;
                int s = i / dp, d = i % dp;
                /* communication shows its transfer, not the wait before it */
                double t0 = tl->is_comm[v] ? en[k] - co[k] : st[k];
                double dur = en[k] - t0;
                fprintf(f,
                        ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                        "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%d,\"seq_id\":%d}}",
                        fp_wi_optype_name(tl->optype[v]), cls_name[op_class(tl->optype[v])],
                        kind * dp + d, tid, (offset[s] + t0) * 1e6, dur * 1e6, r->steps[s],
                        tl->seq[v]);
            }
        }
    }
    fprintf(f, "\n]}\n");
    free(offset);
    return fp_outfile_close(f, path, true);
}
