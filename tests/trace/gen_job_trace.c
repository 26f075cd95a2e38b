/* Write the per-rank NCCL traces (the plugin's format, through its own
 * formatter) of a synthetic DP x PP 1F1B training job with one slow worker:
 * the job of fp_wi_synth_rows, with the ops NCCL sees (sends and receives on a
 * pipeline communicator per DP replica, all-gather and reduce-scatter on a DP
 * communicator per stage, the embedding all-reduce of the first and last
 * stage, the clip all-reduce on the world communicator). Compute is what NCCL
 * never sees: it is left out, and `fleetprint trace` must infer it.
 * With TRUTH, the job's own what-if trace (compute included) goes to
 * TRUTH.csv and TRUTH.yaml, to compare with what `fleetprint trace` infers.
 * usage: gen_job_trace DIR [dp pp microbatches steps slow_dp slow_stage factor [TRUTH]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/whatif.h"
#include "record.h"

enum { PP_COMM = 0xA000, DP_COMM = 0xB000, EMB_COMM = 0xC000, WORLD_COMM = 0xD000 };

static int cmp_start(const void *a, const void *b)
{
    const fp_wi_row *x = a, *y = b;
    if (x->rank != y->rank) return x->rank - y->rank;
    return x->start_ts < y->start_ts ? -1 : x->start_ts > y->start_ts;
}

static void put_line(FILE *f, const char *line, size_t n)
{
    if (!n || fwrite(line, 1, n, f) != n) {
        fprintf(stderr, "gen_job_trace: write failed\n");
        exit(4);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: gen_job_trace DIR [dp pp mb steps slow_dp slow_stage factor [TRUTH]]\n");
        return 2;
    }
    fp_wi_synth sp = fp_wi_synth_default();
    sp.dp = argc > 2 ? atoi(argv[2]) : 4;
    sp.pp = argc > 3 ? atoi(argv[3]) : 4;
    sp.microbatches = argc > 4 ? atoi(argv[4]) : 8;
    sp.steps = argc > 5 ? atoi(argv[5]) : 4;
    sp.slow_dp = argc > 6 ? atoi(argv[6]) : 2;
    sp.slow_stage = argc > 7 ? atoi(argv[7]) : 1;
    sp.slow_factor = argc > 8 ? atof(argv[8]) : 1.5;
    fp_wi_row *rows = NULL;
    size_t n = 0;
    if (fp_wi_synth_rows(&sp, &rows, &n) != FP_OK) return 4;
    if (argc > 9) {
        char p[4096];
        fp_wi_meta meta = {.dp_size = sp.dp,
                           .pp_size = sp.pp,
                           .tp_size = 1,
                           .dsp_size = 1,
                           .vpp_size = 1,
                           .world_size = sp.dp * sp.pp};
        snprintf(meta.trial_name, sizeof meta.trial_name, "truth");
        snprintf(p, sizeof p, "%s.csv", argv[9]);
        if (fp_wi_write_csv(rows, n, p) != FP_OK) return 4;
        snprintf(p, sizeof p, "%s.yaml", argv[9]);
        if (fp_wi_write_meta(&meta, "the synthetic job as generated", p) != FP_OK) return 4;
    }
    qsort(rows, n, sizeof *rows, cmp_start);
    const int dp = sp.dp, pp = sp.pp, world = dp * pp;
    uint64_t *seq = calloc((size_t)world * 4, sizeof *seq); /* per rank and comm kind */
    char line[1024], path[4096];
    uint64_t id = 1;
    size_t i = 0;
    for (int r = 0; r < world; r++) {
        int s = r / dp, d = r % dp;
        snprintf(path, sizeof path, "%s/fleetprint-trace.r%05d.jsonl", argv[1], r);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "gen_job_trace: cannot write %s\n", path);
            return 4;
        }
        char host[16];
        snprintf(host, sizeof host, "n%02d", r);
        /* every rank's clock anchor differs; wall - mono is what aligns them */
        uint64_t mono = 5000000000ull * (uint64_t)(r + 1), wall = 1700000000000000000ull;
        put_line(
            f, line,
            fpp_format_header(line, sizeof line, host, 1000 + r, r, mono, wall, 0x5f, 16384, 4096));
        put_line(f, line,
                 fpp_format_comm(line, sizeof line, PP_COMM + d, "pp", s, pp, pp, 5, mono));
        put_line(f, line,
                 fpp_format_comm(line, sizeof line, DP_COMM + s, "dp", d, dp, dp, 5, mono));
        put_line(f, line,
                 fpp_format_comm(line, sizeof line, WORLD_COMM, "world", r, world, world, 5, mono));
        if (s == 0 || s == pp - 1)
            put_line(f, line,
                     fpp_format_comm(line, sizeof line, EMB_COMM + d, "emb", s == 0 ? 0 : 1, 2, 2,
                                     5, mono));
        for (; i < n && rows[i].rank == r; i++) {
            const fp_wi_row *w = &rows[i];
            fpp_rec rec = {.rank = s, .peer = -1, .count = 1 << 20, .dtype = "ncclBfloat16"};
            int ck = 0;
            switch (w->optype) {
            case FP_WI_FORWARD_SEND:
            case FP_WI_BACKWARD_SEND:
            case FP_WI_FORWARD_RECV:
            case FP_WI_BACKWARD_RECV: {
                bool send = w->optype == FP_WI_FORWARD_SEND || w->optype == FP_WI_BACKWARD_SEND;
                bool fwd = w->optype == FP_WI_FORWARD_SEND || w->optype == FP_WI_FORWARD_RECV;
                rec.kind = FPP_P2P;
                rec.func = send ? "Send" : "Recv";
                rec.comm = PP_COMM + (uint64_t)d;
                rec.peer = s + ((send == fwd) ? 1 : -1);
                break;
            }
            case FP_WI_PARAMS_ALL_GATHER:
            case FP_WI_GRADS_REDUCE_SCATTER:
                rec.kind = FPP_COLL;
                rec.func = w->optype == FP_WI_PARAMS_ALL_GATHER ? "AllGather" : "ReduceScatter";
                rec.comm = DP_COMM + (uint64_t)s;
                rec.rank = d;
                ck = 1;
                break;
            case FP_WI_EMBEDDING_GRADS_ALL_REDUCE:
                rec.kind = FPP_COLL;
                rec.func = "AllReduce";
                rec.comm = EMB_COMM + (uint64_t)d;
                rec.rank = s == 0 ? 0 : 1;
                ck = 2;
                break;
            case FP_WI_OPTIMIZER_CLIP_MAIN_GRAD:
                rec.kind = FPP_COLL;
                rec.func = "AllReduce";
                rec.comm = WORLD_COMM;
                rec.rank = r;
                ck = 3;
                break;
            default:
                continue; /* compute, gc, layernorm, optimizer: NCCL sees none */
            }
            if (rec.kind == FPP_COLL) rec.seq = seq[(size_t)r * 4 + (size_t)ck]++;
            /* the host enqueues 50 us before the kernel runs; the kernel channel says when */
            uint64_t t0 = mono + (uint64_t)((w->start_ts - 900.0) * 1e9);
            uint64_t t1 = t0 + (uint64_t)(w->duration * 1e9);
            rec.id = id++;
            rec.t0 = t0 - 50000;
            rec.t1 = t1;
            fpp_rec ch = {.kind = FPP_KERNEL_CH,
                          .id = id++,
                          .parent = rec.id,
                          .comm = rec.comm,
                          .rank = rec.rank,
                          .t0 = t0,
                          .t1 = t1,
                          .gpu0 = t0,
                          .gpu1 = t1};
            put_line(f, line, fpp_format(&ch, line, sizeof line));
            put_line(f, line, fpp_format(&rec, line, sizeof line));
        }
        put_line(f, line,
                 (size_t)snprintf(line, sizeof line,
                                  "{\"ev\":\"end\",\"written\":0,\"ring_dropped\":0}\n"));
        fclose(f);
    }
    free(seq);
    free(rows);
    printf("gen_job_trace: %d ranks (DP %d x PP %d), slow worker dp %d stage %d (rank %d) x%g\n",
           world, dp, pp, sp.slow_dp, sp.slow_stage, sp.slow_stage * dp + sp.slow_dp,
           sp.slow_factor);
    return 0;
}
