#ifndef FLEETPRINT_SUITE_H
#define FLEETPRINT_SUITE_H
/* Test suites: the runtime's settings that every suite's config embeds
 * first, the size and iteration sweep the kernels and collectives suites
 * share, the per-rank context a test runs in, and tests as const
 * descriptors. */
#include <stdbool.h>
#include <stdint.h>

#include "fleetprint/comm.h"
#include "fleetprint/device.h"
#include "fleetprint/inject.h"
#include "fleetprint/opts.h"
#include "fleetprint/sample.h"
#include "fleetprint/world.h"

/* What the runtime reads (fp_ctx_open, fp_threads_per_rank). A suite's
 * config embeds it as its first member, base (fp_kernels_config,
 * fp_coll_config, fp_burnin_config), and adds its own settings. */
typedef struct fp_config {
    const char *device;         /* auto, host, cuda */
    const char *comm;           /* auto, mpi, nccl */
    int threads;                /* host worker threads per rank; 0 = cores / local ranks */
    bool shared_cores;          /* ranks share CPU cores (preflight finds it): the
                                   device's share_cores */
    double timeout;             /* deadline of every blocking step */
    fp_strlist inject;
    bool verbose, quiet;
} fp_config;

/* The sizes and iterations a test loops over: the kernels and collectives
 * suites embed it in their configs; the runtime does not read it. */
typedef struct fp_sweep {
    uint64_t min_bytes, max_bytes;
    double step_factor;
    int iters, warmup;
    int check;                  /* verify results (1) or not (0) */
} fp_sweep;

/* Option rows of these settings: type is the command's config struct and
 * member names the fp_config (fp_sweep) in it. Commands compose their tables
 * from these and the suites' rows (app/), each listing only what it reads. */
#define FP_OPTS_BACKENDS(type, member)                                                     \
    {"device", 0, FP_OPT_STRING, offsetof(type, member.device), "auto",                    \
     "device backend: auto, host or cuda"},                                               \
        {"comm", 0, FP_OPT_STRING, offsetof(type, member.comm), "auto",                    \
         "comm backend: auto (nccl with cuda, else mpi), mpi or nccl"},                    \
        {"threads", 0, FP_OPT_INT, offsetof(type, member.threads), "0",                    \
         "host threads per rank (0: cores / ranks per node)"}
#define FP_OPTS_SWEEP(type, member)                                                        \
    {"min-bytes", 'b', FP_OPT_BYTES, offsetof(type, member.min_bytes), "1M",               \
     "smallest message size"},                                                             \
        {"max-bytes", 'e', FP_OPT_BYTES, offsetof(type, member.max_bytes), "16M",          \
         "largest message size"},                                                          \
        {"step-factor", 'f', FP_OPT_DOUBLE, offsetof(type, member.step_factor), "2",       \
         "size multiplier between steps"},                                                 \
        {"iters", 'n', FP_OPT_INT, offsetof(type, member.iters), "20", "timed iterations"}, \
        {"warmup-iters", 'w', FP_OPT_INT, offsetof(type, member.warmup), "5",              \
         "untimed warm-up iterations"},                                                    \
        {"check", 'c', FP_OPT_INT, offsetof(type, member.check), "1",                      \
         "verify results: 1 yes, 0 no"}
#define FP_OPTS_DEADLINE(type, member)                                                     \
    {"timeout", 0, FP_OPT_SECONDS, offsetof(type, member.timeout), "120s",                 \
     "deadline of every blocking step"},                                                   \
        {"inject", 0, FP_OPT_LIST, offsetof(type, member.inject), NULL,                    \
         "inject a fault (repeatable; see README)"}
#define FP_OPTS_LOGGING(type, member)                                                      \
    {"verbose", 'v', FP_OPT_FLAG, offsetof(type, member.verbose), NULL,                    \
     "log from every rank"},                                                               \
        {"quiet", 'q', FP_OPT_FLAG, offsetof(type, member.quiet), NULL,                    \
         "only warnings and errors"}

/* Everything a test needs on one rank. */
typedef struct fp_ctx {
    /* The settings of the suite whose test runs, seen through their common
     * part: a test's cfg is the base of its suite's config (the kernels
     * suite's tests: an fp_kernels_config), set by whoever runs the test.
     * The test reads the whole as FP_SUITE_CFG. */
    const fp_config *cfg;
    fp_world *world;
    int rank, nranks;
    const fp_inject_set *inject;
    const fp_device_ops *dev_ops;
    fp_device *dev;
    fp_device_info dev_info;
    const fp_comm_ops *comm_ops;
    fp_comm *comm;
    fp_entity self;      /* this rank's device: gpu:<node>/<index> */
    fp_run *local;       /* this rank's samples, gathered to rank 0 at the end */
    long long wrong;     /* wrong results found on this rank so far */
} fp_ctx;

/* The config of the suite whose test runs in ctx, as that suite's type (for
 * example fp_kernels_config): ctx->cfg is its first member, base. */
#define FP_SUITE_CFG(type, ctx) ((const type *)(const void *)(ctx)->cfg)

typedef struct fp_test fp_test;
struct fp_test {
    const char *suite;
    const char *name;
    const char *summary;
    /* Run on every rank; emits samples into ctx->local, counts wrong results
     * in ctx->wrong. Returns FP_OK unless the test could not run. */
    fp_status (*run)(fp_ctx *ctx, const fp_test *self);
};

/* Record a sample of this rank, stamped with the common clock. */
fp_status fp_emit(fp_ctx *ctx, const fp_test *t, const fp_metric *m, const fp_entity *e,
                  uint64_t size, int iter, double value);

/* Timed device region. stop waits for the work, applies an injected slowdown
 * (the region then takes factor times as long, really) and is an injection
 * point for hangs and crashes. */
fp_status fp_timed_start(fp_ctx *ctx);
fp_status fp_timed_stop(fp_ctx *ctx, double *seconds);

/* Run one collective to completion with the deadline, with the injections
 * of fp_collective_timed: fp_collective_timed(ctx, a, what, 0, NULL, NULL). */
fp_status fp_collective(fp_ctx *ctx, const fp_coll_args *a, const char *what);

/* A collective in flight, started by fp_coll_start. An injected slow link
 * among its members stretches it: it completes factor times as late as the
 * transfer really did, so code that overlaps it with compute can hide the
 * extra time as it would hide a slow wire. */
typedef struct fp_coll_op {
    fp_comm_req *req;
    double t0;       /* fp_clock() at start */
    double factor;   /* >= 1: stretch of the slowest injected link it crosses */
    double ready;    /* when it counts as complete; 0 until the transfer finished */
} fp_coll_op;

/* Start a collective (an injection point); op is valid until fp_coll_wait,
 * which must be called exactly once after a successful start. */
fp_status fp_coll_start(fp_ctx *ctx, const fp_coll_args *a, fp_coll_op *op);
/* Drive progress; *done is true once the (stretched) collective completed. */
fp_status fp_coll_test(fp_ctx *ctx, fp_coll_op *op, bool *done);
/* Wait for completion with the deadline (what names it on timeout) and
 * release the request either way. */
fp_status fp_coll_wait(fp_ctx *ctx, fp_coll_op *op, const char *what);
/* fp_collective with per-call timing for straggler attribution. typical is
 * the caller's estimate of one call's duration on this rank (s; <= 0: 1 ms),
 * best its shortest call so far: an injected slow rank (slow:rank=R,factor=F)
 * arrives (F - 1) * typical late, so the collective takes about F times as
 * long for everyone; an injected slow link (link:ranks=A-B,factor=F) makes a
 * sendrecv between A and B carry F times the data (partners exchanging both
 * ways) or wait (F - 1) * min(elapsed, typical) more (a ring). *enter and *exit
 * (either may be NULL) get this rank's arrival, after any injected delay, and
 * completion on the common clock (fp_world_now). An injected corrupt rank
 * (corrupt:rank=R) has one element of its result perturbed after completion
 * (after *exit), so the caller's check must find it. Injections happen
 * outside the stamped call. With a backend that has a blocking run (MPI) the
 * call between the stamps is that one blocking call, its deadline kept by
 * the world's watchdog; otherwise it spins on the backend's test for up to
 * 1 s or a quarter of the deadline, then the backend's wait with the deadline.
 * Returns the status of the wait, or of the corruption's device copy. */
fp_status fp_collective_timed(fp_ctx *ctx, const fp_coll_args *a, const char *what, double typical,
                              double *enter, double *exit);

/* One collective on a group communicator (comm.h, open_group) of the world
 * ranks members[0..n), with the injections judged within the group: an
 * injection point (hang, crash); an injected slow rank, or the lower end of
 * an injected slow link with both ends in the group, arrives (F - 1) x
 * typical late (typical <= 0: on time, for warm-up calls): with typical
 * the group's period (from one call's end to the next one's), its calls
 * take about F times as long. (On shared cores the period is mostly waits
 * for a core, which neither a multiple of the rank's own call nor F
 * repeats of the call show: both run within the time slices the group
 * gets anyway.) An injected corrupt rank has an element of its result
 * perturbed (after *exit). *enter and *exit get this rank's arrival and
 * completion on the common clock. Returns the group's wait: FP_ETIMEOUT at
 * the group's deadline (nothing named, nothing ended: the caller abandons
 * the group). */
fp_status fp_group_collective(fp_ctx *ctx, fp_comm *group, const int *members, int n,
                              const fp_coll_args *a, double typical, double *enter, double *exit);

/* Barrier with the deadline; an injection point. */
fp_status fp_ctx_barrier(fp_ctx *ctx, const char *what);

/* The barrier right before a timed loop: as fp_ctx_barrier, but through the
 * comm backend's blocking run where it has one, so every rank leaves it as
 * soon as the last one arrives (fp_ctx_barrier's polling wait may sleep past
 * that, and the skew would count in the first timed call). Spins while it
 * waits: for ranks that arrive together, not to wait out long compute. */
fp_status fp_ctx_sync(fp_ctx *ctx, const char *what);

/* Host worker threads per rank: --threads, else the cores of this host
 * over the ranks of this node (of an emulated node: all of them). */
int fp_threads_per_rank(const fp_config *cfg, const fp_world *w);

/* Set up a context: parse injections, choose and open the backends. All
 * ranks return the same status. On error logs one line (rank 0 for usage). */
fp_status fp_ctx_open(fp_ctx *ctx, const fp_config *cfg, fp_world *w, fp_inject_set *inject,
                      fp_run *local);
void fp_ctx_close(fp_ctx *ctx);

/* Rank 0's context of the run ctx measures: tag (the caller's, e.g. the
 * command's --tag), command line, backends, library versions, injections and
 * the Slurm job; no shape, samples or duration. */
void fp_ctx_describe_run(const fp_ctx *ctx, const char *tag, fp_run *run);

/* Gather the local samples into run on rank 0 and fill its context, tagged
 * tag (fp_ctx_describe_run). */
fp_status fp_ctx_gather(fp_ctx *ctx, const char *tag, fp_run *run);

#endif
