#ifndef FLEETPRINT_SUITE_H
#define FLEETPRINT_SUITE_H
/* Test suites: the shared config of the commands that measure (run,
 * preflight, burnin), the per-rank context a test runs in, and the registry
 * of tests as const descriptors driven by one loop. */
#include <stdbool.h>
#include <stdint.h>

#include "fleetprint/comm.h"
#include "fleetprint/device.h"
#include "fleetprint/inject.h"
#include "fleetprint/opts.h"
#include "fleetprint/sample.h"
#include "fleetprint/world.h"

typedef struct fp_config {
    const char *suite;          /* kernels, collectives, burnin, all */
    fp_strlist tests;           /* --test NAME: only these */
    const char *device;         /* auto, host, cuda */
    const char *comm;           /* auto, mpi, nccl */
    int threads;                /* host worker threads per rank; 0 = cores / local ranks */
    bool shared_cores;          /* ranks share CPU cores (preflight finds it): the
                                   device's share_cores */
    uint64_t min_bytes, max_bytes;
    double step_factor;
    int iters, warmup;
    int check;                  /* verify results (1) or not (0) */
    uint64_t array_bytes;       /* membw: bytes per array */
    const char *pairs;          /* link sweep: all, ring, k=K, random=K */
    double timeout;             /* deadline of every blocking step */
    fp_strlist inject;
    const char *tag;
    const char *json;           /* "-" for stdout */
    const char *store;
    const char *junit;
    bool verbose, quiet;
    double duration, interval;  /* burnin */
    double memory_fraction;
    int gemm_size;              /* gemm: timed problem n = m = k; 0 = per device */
    fp_strlist fused_m;         /* fused: token counts m */
    const char *fused_nk;       /* fused: "N,K" per rank, or auto */
    fp_strlist chunks;          /* fused: chunk counts */
} fp_config;

/* Option rows of the measuring commands, in groups: run takes them all
 * (FP_SUITE_OPTS), burnin only the backends, gemm-size and the run controls.
 * Each command lists only the options it reads (app/). */
#define FP_OPTS_SELECT                                                                     \
    {"suite", 0, FP_OPT_STRING, offsetof(fp_config, suite), "kernels",                     \
     "suite to run: kernels, collectives or all (burn-in: fleetprint burnin)"},           \
        {"test", 't', FP_OPT_LIST, offsetof(fp_config, tests), NULL,                       \
         "run only this test (repeatable)"}
#define FP_OPTS_BACKENDS                                                                   \
    {"device", 0, FP_OPT_STRING, offsetof(fp_config, device), "auto",                      \
     "device backend: auto, host or cuda"},                                               \
        {"comm", 0, FP_OPT_STRING, offsetof(fp_config, comm), "auto",                      \
         "comm backend: auto (nccl with cuda, else mpi), mpi or nccl"},                    \
        {"threads", 0, FP_OPT_INT, offsetof(fp_config, threads), "0",                      \
         "host threads per rank (0: cores / ranks per node)"}
#define FP_OPTS_SIZES                                                                      \
    {"min-bytes", 'b', FP_OPT_BYTES, offsetof(fp_config, min_bytes), "1M",                 \
     "smallest message size"},                                                             \
        {"max-bytes", 'e', FP_OPT_BYTES, offsetof(fp_config, max_bytes), "16M",            \
         "largest message size"},                                                          \
        {"step-factor", 'f', FP_OPT_DOUBLE, offsetof(fp_config, step_factor), "2",         \
         "size multiplier between steps"},                                                 \
        {"iters", 'n', FP_OPT_INT, offsetof(fp_config, iters), "20", "timed iterations"},  \
        {"warmup-iters", 'w', FP_OPT_INT, offsetof(fp_config, warmup), "5",                \
         "untimed warm-up iterations"},                                                    \
        {"check", 'c', FP_OPT_INT, offsetof(fp_config, check), "1",                        \
         "verify results: 1 yes, 0 no"},                                                   \
        {"array-size", 0, FP_OPT_BYTES, offsetof(fp_config, array_bytes), "64M",           \
         "membw: bytes per array"},                                                        \
        {"pairs", 0, FP_OPT_STRING, offsetof(fp_config, pairs), "all",                     \
         "link sweep pairs: all, ring, k=K or random=K"}
#define FP_OPTS_RUN_CONTROL                                                                \
    {"timeout", 0, FP_OPT_SECONDS, offsetof(fp_config, timeout), "120s",                   \
     "deadline of every blocking step"},                                                   \
        {"inject", 0, FP_OPT_LIST, offsetof(fp_config, inject), NULL,                      \
         "inject a fault (repeatable; see README)"},                                       \
        {"tag", 0, FP_OPT_STRING, offsetof(fp_config, tag), "adhoc", "tag of the run"},    \
        {"json", 0, FP_OPT_STRING, offsetof(fp_config, json), NULL,                        \
         "write the run as JSON to FILE ('-' for stdout)"},                                \
        {"store", 0, FP_OPT_STRING, offsetof(fp_config, store), NULL,                      \
         "append the run to this HDF5 store"},                                             \
        {"junit", 0, FP_OPT_STRING, offsetof(fp_config, junit), NULL,                      \
         "write a JUnit XML report to FILE"},                                              \
        {"verbose", 'v', FP_OPT_FLAG, offsetof(fp_config, verbose), NULL,                  \
         "log from every rank"},                                                           \
        {"quiet", 'q', FP_OPT_FLAG, offsetof(fp_config, quiet), NULL, "only warnings and errors"}
#define FP_OPTS_GEMM                                                                       \
    {"gemm-size", 0, FP_OPT_INT, offsetof(fp_config, gemm_size), "0",                      \
     "gemm: timed problem size n=m=k (0: 1024 on host, 8192 on cuda)"}
#define FP_OPTS_FUSED                                                                      \
    {"fused-m", 0, FP_OPT_LIST, offsetof(fp_config, fused_m), NULL,                        \
     "fused: token counts m, e.g. 1024,4096 (default 256,1024 host; 1024,4096,8192 cuda)"}, \
        {"fused-nk", 0, FP_OPT_STRING, offsetof(fp_config, fused_nk), "auto",              \
         "fused: per-rank GEMM n,k (auto: 512,512 host; Flux's GPT-3 shapes cuda)"},        \
        {"chunks", 0, FP_OPT_LIST, offsetof(fp_config, chunks), NULL,                      \
         "fused: chunk counts, e.g. 1,2,4,8 (the default)"}
/* Every row, in the order `run --help` lists them. */
#define FP_SUITE_OPTS                                                                      \
    FP_OPTS_SELECT, FP_OPTS_BACKENDS, FP_OPTS_SIZES, FP_OPTS_RUN_CONTROL, FP_OPTS_GEMM,    \
        FP_OPTS_FUSED

/* Everything a test needs on one rank. */
typedef struct fp_ctx {
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

/* Rank 0's context of the run ctx measures: tag, command line, backends,
 * library versions, injections and the Slurm job; no shape, samples or
 * duration. */
void fp_ctx_describe_run(const fp_ctx *ctx, fp_run *run);

/* Gather the local samples into run on rank 0 and fill its context. */
fp_status fp_ctx_gather(fp_ctx *ctx, fp_run *run);

#endif
