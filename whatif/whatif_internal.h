#ifndef FLEETPRINT_DETECT_WHATIF_INTERNAL_H
#define FLEETPRINT_DETECT_WHATIF_INTERNAL_H
/* Shared between the detect/whatif*.c files only; not a public header. */
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

#endif
