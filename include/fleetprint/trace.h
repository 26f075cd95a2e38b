#ifndef FLEETPRINT_TRACE_H
#define FLEETPRINT_TRACE_H
/* Traces of live jobs: the per-rank JSON Lines files that the NCCL profiler
 * plugin (profiler/, libnccl-profiler-fleetprint.so) writes, read back and
 * turned into what-if traces, fleetprint samples and a timeline (docs/trace.md).
 * whatif/trace_job.c reads and converts, app/trace.c is `fleetprint
 * trace`, reports/trace_timeline.c writes the Chrome trace. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/sample.h"
#include "fleetprint/status.h"
#include "fleetprint/whatif.h"

/* One NCCL operation of one rank: a collective, a send or a receive. */
typedef struct fp_tr_op {
    int rank;  /* world rank (the file's) */
    int comm;  /* index into the job's communicators */
    int crank; /* rank in that communicator */
    int peer;  /* send/recv: the peer's rank in the communicator; else -1 */
    bool p2p, send;
    char op[24];  /* NCCL's name: AllReduce, Send, Recv, ... */
    uint64_t seq; /* collective: NCCL's sequence number; p2p: order among this
                     rank's ops of the same direction with the same peer */
    uint64_t bytes;
    double t_enq;   /* s since the job's first anchor: startEvent of the op */
    double t_start; /* the op ran: first kernel channel or proxy op start (t_enq if none) */
    double t_end;   /* last stop of the op or its children */
} fp_tr_op;

/* A communicator as its members reported it. */
typedef struct fp_tr_comm {
    uint64_t hash;
    int nranks;
    int *members; /* [nranks]: world rank by communicator rank, -1 unknown */
    char name[64];
} fp_tr_comm;

typedef struct fp_tr_job {
    int nranks;                /* world ranks: one file each */
    char (*host)[FP_NAME_MAX]; /* [nranks] host of each rank */
    size_t nops;
    fp_tr_op *ops; /* sorted by rank, then t_enq */
    int ncomms;
    fp_tr_comm *comms;
    uint64_t dropped;  /* events the plugin dropped, over all files */
    double wall_start; /* Unix time of t = 0 */
} fp_tr_job;

/* Read every *.jsonl file of dir (one per rank). Ranks come from the files'
 * world_rank (else the order of the file names). On success *out owns a new job
 * (free with fp_tr_job_free). A bad line logs one message naming the file, line
 * and field and returns FP_EINPUT; no trace files: FP_EINPUT; FP_EIO, FP_ENOMEM. */
fp_status fp_tr_load_dir(const char *dir, fp_tr_job **out);

/* Free a job; NULL is fine. */
void fp_tr_job_free(fp_tr_job *job);

/* DP x PP layout of a job: dp and pp 0 means find it from the communicators. */
typedef struct fp_tr_layout {
    int dp, pp;
} fp_tr_layout;

/* Turn the job into what-if rows (1F1B pipeline, as `fleetprint whatif` reads
 * them): P2P ops become forward/backward send/recv, DP collectives
 * params-all-gather / grads-reduce-scatter / separate-grads-all-reduce, the
 * collective of the first and last stage embedding-grads-all-reduce, the one
 * spanning every stage optimizer-clip-main-grad; forward and backward compute
 * fill the gaps the stage's 1F1B program puts them in. With layout dp = pp = 0
 * the stage of a rank is its rank in its send/recv communicator and its DP rank
 * its rank in the largest collective communicator within one stage; otherwise
 * rank = stage * dp + dp_rank. *rows is a new array of *n rows; *meta is
 * filled. FP_EINPUT with one line saying why when the layout cannot be told or
 * the ops do not fit a 1F1B schedule. */
fp_status fp_tr_whatif_rows(const fp_tr_job *job, const fp_tr_layout *layout, fp_wi_row **rows,
                            size_t *n, fp_wi_meta *meta);

/* A run of the job (tag "job") with samples under suite "collectives" and the
 * op's test name (allreduce, allgather, reduce_scatter, sendrecv, ...), so the
 * detector's straggler rules judge them:
 *   time_behind (us): per call, a member's arrival minus the median arrival of
 *     the call's members (not judged: a rank waiting on a slow peer upstream
 *     arrives late too);
 *   lateness_self (us): per op position in the program of a pipeline stage,
 *     the time a rank spent since its previous op ended minus the median of
 *     the same over the stage's DP peers: the lateness the rank caused itself.
 * The layout is found as for fp_tr_whatif_rows; without one only time_behind
 * is written (with a warning). run is initialised here; the caller frees it
 * with fp_run_free (also on error). FP_ENOMEM. */
fp_status fp_tr_job_run(const fp_tr_job *job, const fp_tr_layout *layout, const char *command,
                        fp_run *run);

#endif
