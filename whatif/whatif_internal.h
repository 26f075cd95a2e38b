#ifndef FLEETPRINT_DETECT_WHATIF_INTERNAL_H
#define FLEETPRINT_DETECT_WHATIF_INTERNAL_H
/* Shared between the whatif/ files only; not a public header. */
#include "fleetprint/whatif.h"

struct fp_wi_trace {
    char source[256]; /* file name or caller's label, for error messages */
    bool from_file;   /* line[] holds file line numbers (else row numbers) */
    size_t n;
    fp_wi_row *rows;
    int *line; /* [n] line of each row in the source */
};

/* Log one "bad input" line and return FP_EINPUT. */
fp_status fp__wi_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The 1F1B program of one pipeline stage (Megatron's
 * forward_backward_pipelining_without_interleaving): compute items and batches
 * of one or two P2P ops, in the order the stage runs them. */
enum { FP__WI_FS, FP__WI_FR, FP__WI_BS, FP__WI_BR }; /* forward/backward send/recv */
typedef struct fp__wi_item {
    bool compute;
    bool fwd; /* compute: forward or backward */
    int mb;   /* compute: microbatch */
    int nops; /* P2P batch: 1 or 2 ops */
    int kind[2], mbs[2];
} fp__wi_item;

/* Fill prog (room for 6 * M + 4 items) with the program of stage of pp for M
 * microbatches; returns the number of items. */
int fp__wi_1f1b_program(fp__wi_item *prog, int stage, int pp, int M);

/* ---- the dependency model (model.c), replayed by whatif.c ------------------------- */

#define NEG_CLAMP (-1e-2) /* negative delays or transfers beyond this are zeroed */


typedef struct wi_op {
    fp_wi_optype type;
    int stage, seq, mc, gmc, line;
    double ref_start, ref_end; /* in the reference instance */
    int gid;                   /* communication group, -1 for compute-like ops */
    bool in_model;             /* has a place in the dependency model */
    bool noop;                 /* P2P op with no peer (edge of the pipeline) */
    int match;                 /* P2P: matched compute op, -1 when none */
    int ndeps, capdeps, *deps;
    int nnext, capnext, *next;
} wi_op;

typedef struct wi_group {
    int n, cap, *members;
    bool dp_sync;
} wi_group;

typedef struct wi_model {
    const char *src;
    int dp, pp, nsteps, ninst, nops, ngroups, capgroups, vpp;
    int *steps;
    wi_op *ops;
    wi_group *groups;
    int *lk_off, *lk_len, *lk; /* (stage, type, seq) -> op */
    int *sched_op, *sched_fin; /* replay order; group finished after the op, or -1 */
    int *worker_rank;          /* [stage*dp + d] */
    bool use_dp, ovlp_dp;
} wi_model;


/* Check rows against the meta, index steps, ops and instances, and build the
 * dependency model into m. row_of[v*ninst+i] receives the row of op v in
 * instance i (= step_index * dp + dp_rank); *row_of_out is new (caller frees).
 * FP_EINPUT with one logged line naming the row on a bad trace. */
fp_status fp__wi_build_model(const fp_wi_trace *t, const fp_wi_meta *meta, wi_model *m,
                             int **row_of_out);

/* Free what fp__wi_build_model allocated in m. */
void fp__wi_model_free(wi_model *m);

#endif
