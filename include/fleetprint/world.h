#ifndef FLEETPRINT_WORLD_H
#define FLEETPRINT_WORLD_H
/* The MPI world as fleetprint sees it: ranks, node identity and the
 * rank -> node map, a common clock, and deadlines on every blocking step.
 *
 * Node identity is FLEETPRINT_NODE when set, else SLURMD_NODENAME, else the
 * host name. Ranks are grouped into nodes by that name. */
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "fleetprint/sample.h"
#include "fleetprint/status.h"

typedef struct fp_world fp_world;

/* Start MPI (works as a singleton without mpirun), learn node identity, build
 * the rank -> node map and estimate clock offsets. Set-up steps use a 60 s
 * deadline. On error *out is still a world that fp_world_close can end. */
fp_status fp_world_open(fp_world **out, int *argc, char ***argv);

/* A second world over base, a communicator of an MPI already started (the
 * overhead bench's oversubscribed table: its own ranks merged with spawned
 * ones). As fp_world_open otherwise; fp_world_close frees the world's
 * communicators but leaves MPI running. */
fp_status fp_world_open_comm(fp_world **out, MPI_Comm base);

/* Set the deadline of every later blocking step and the logging mode. */
void fp_world_configure(fp_world *w, double timeout_s, bool verbose, bool quiet);

/* End the world after a command returned st. Returns true when the process
 * must call MPI_Abort instead of MPI_Finalize (a peer is stuck or gone);
 * otherwise finalizes MPI. Frees w. */
bool fp_world_close(fp_world *w, fp_status st);

int fp_world_rank(const fp_world *w);
int fp_world_size(const fp_world *w);
int fp_world_nnodes(const fp_world *w);
int fp_world_node_of(const fp_world *w, int rank);       /* node index of a rank */
const char *fp_world_node_name(const fp_world *w, int node);
const char *fp_world_my_node(const fp_world *w);
int fp_world_local_rank(const fp_world *w);               /* among ranks of my node */
int fp_world_local_size(const fp_world *w);
int fp_world_node_size(const fp_world *w, int node);      /* ranks on a node */
int fp_world_node_leader(const fp_world *w, int node);    /* lowest rank on a node */
double fp_world_timeout(const fp_world *w);
MPI_Comm fp_world_comm(const fp_world *w);                /* for data traffic */

/* Seconds since the world started, on rank 0's clock (offset-corrected). */
double fp_world_now(const fp_world *w);
/* Offset of a rank's clock against rank 0's (s) and the bound on its error. */
double fp_world_clock_offset(const fp_world *w, int rank);
double fp_world_clock_error(const fp_world *w, int rank);
/* Largest clock-offset error bound over all ranks. */
double fp_world_clock_error_max(const fp_world *w);

/* Wait for n requests until the deadline. On expiry, finds out which ranks
 * never arrived at this step (what names it in messages), logs it on rank 0
 * and returns FP_ETIMEOUT. Polls, so injected hangs and slow peers never
 * block it beyond the deadline. */
fp_status fp_world_wait(fp_world *w, MPI_Request *reqs, int n, const char *what);

/* A blocking step (a blocking MPI call, e.g. a timed collective) keeps the
 * deadline without polling: begin arms the world's watchdog thread with
 * now + timeout, end disarms it; between them the caller may block in MPI.
 * When the deadline passes first, the watchdog names the ranks that never
 * arrived (rank 0 logs it, as fp_world_wait does) and ends the job with
 * MPI_Abort and exit code 4: a blocked MPI call cannot be returned from.
 * One blocking step at a time per world; what is copied. Cost: one
 * uncontended mutex and a clock read each. */
void fp_world_step_begin(fp_world *w, const char *what);
void fp_world_step_end(fp_world *w);

/* For backends with their own waits (NCCL): after their deadline expired,
 * name the ranks that never arrived, as fp_world_wait does; returns FP_ETIMEOUT. */
fp_status fp_world_timed_out(fp_world *w, const char *what);

/* What rank 0 does once a timeout is diagnosed, before the job ends: write
 * the verdict outputs that name the missing ranks (preflight's drain file).
 * Called once, on rank 0 only, from the thread that diagnosed the timeout
 * (the watchdog thread when the main thread is blocked inside MPI), so it
 * must only read data that does not change while tests run, and must not
 * call MPI. fn NULL removes the hook; arg belongs to the caller and must
 * outlive the hook. */
typedef void (*fp_world_timeout_fn)(const fp_world *w, void *arg);
void fp_world_on_timeout(fp_world *w, fp_world_timeout_fn fn, void *arg);

/* After a diagnosed timeout on rank 0: the ranks that never arrived (in
 * rank order; the array belongs to w) and the step they never arrived in
 * (*step, "" before any timeout). Returns their count, 0 elsewhere. */
size_t fp_world_missing(const fp_world *w, const int **ranks, const char **step);

/* Barrier with the deadline. */
fp_status fp_world_barrier(fp_world *w, const char *what);

/* Allgather of fixed-size blocks with the deadline. */
fp_status fp_world_allgather(fp_world *w, const void *mine, void *all, int bytes, const char *what);

/* Broadcast bytes of buf from rank 0 to every rank, with the deadline (what
 * names the step in a timeout's message). Every rank passes the same bytes. */
fp_status fp_world_bcast(fp_world *w, void *buf, int bytes, const char *what);

/* Gather every rank's rank info and samples to rank 0, which fills run's
 * nodes, ranks and samples (replacing any it held; run context strings are
 * the caller's). Other ranks leave run untouched. The samples arrive as rows
 * (run->rows, no run->samples; fp_run_sample reads either): each rank sends
 * its samples as rows into its own tables of keys and entities, and rank 0
 * merges the tables, a batch of ranks at a time, into one run whose samples
 * are every rank's in rank order. Up to INT_MAX - 1 samples a rank
 * (FP_ENOMEM beyond). */
fp_status fp_world_gather_run(fp_world *w, const fp_rank_info *mine, const fp_sample *samples,
                              size_t n, fp_run *run);

/* Every rank contributes its status; all get the worst one (deadline applies).
 * Use before returning from a command so every rank exits alike. */
fp_status fp_world_agree(fp_world *w, fp_status st);

/* ---- groups of the world (core/group.c): steps without the other ranks ---------- */

/* Wait for n requests until deadline (an fp_clock() time) without naming or
 * ending anything: FP_OK when all completed, FP_ETIMEOUT when the deadline
 * came first (the requests stay pending: the caller cancels or abandons
 * them), FP_EMPI. Polls as fp_world_wait does, yielding the core after the
 * first millisecond. */
fp_status fp_world_poll(MPI_Request *reqs, int n, double deadline);

/* The index of rank in members[0..n) (its rank in the group), or -1. */
int fp_world_group_rank(const int *members, int n, int rank);

/* The world ranks members[0..n) (ascending, this rank among them) meet
 * without the rest of the world, over point-to-point messages on the data
 * communicator: each greets the leader (members[0]); the leader, once every
 * member greeted it with time to spare before deadline (a fifth of what was
 * left when it began, at most 1 s), answers each with its payload[0..bytes),
 * which every member receives into payload. FP_ETIMEOUT, naming nobody, when
 * the deadline comes first on this rank (a member or the leader never came;
 * its messages are abandoned). tag (0..999) keeps one meeting's messages
 * from another's: the members of one meeting pass the same tag, and a rank
 * never takes one tag twice. Every member that returns FP_OK knows the others
 * reached the meeting. */
fp_status fp_world_meet(fp_world *w, const int *members, int n, int tag, double deadline,
                        void *payload, int bytes);

/* The command line this process was started with (for run contexts). */
const char *fp_world_command_line(const fp_world *w);

/* "rank 2 (node n2)" into buf. */
const char *fp_world_describe(const fp_world *w, int rank, char *buf, size_t len);

#endif
