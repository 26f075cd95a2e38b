#ifndef FLEETPRINT_COLLECTIVES_H
#define FLEETPRINT_COLLECTIVES_H
/* The collective suite: allreduce, allgather, reduce_scatter, alltoall,
 * broadcast, reduce and sendrecv, driven by one loop over sizes x data types
 * x reductions x placement (out-of-place, in-place), with nccl-tests'
 * figures (time, algbw, busbw, #wrong), per-call late rank and lateness; and
 * the pairwise link sweep ("links").
 *
 * Sample metric names carry the variant: "<figure>_<type>_<op>_<place>",
 * e.g. "busbw_f32_sum_oop", "lateness_bf16_none_ip". Figures:
 *   time      per rank, loop time / iterations (us, entity gpu)
 *   time_max  max of time over ranks (us, group:world)
 *   algbw     bytes / time_max (GB/s, group:world)
 *   busbw     algbw x the nccl-tests factor (GB/s, group:world)
 *   wrong     wrong result elements on this rank (count, entity gpu)
 *   lateness  per call: this rank's arrival minus the median arrival (us,
 *             entity rank; iter = call index)
 *   late_rank per call: the last rank to arrive (value = rank, entity that
 *             rank; iter = call index)
 * Sizes are nccl-tests': bytes of the whole buffer (allgather: the output;
 * reduce_scatter, alltoall: the input), rounded down to whole elements per
 * rank; samples carry the size actually used. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/comm.h"
#include "fleetprint/suite.h"

/* ---- the suite's settings ----------------------------------------------------- */

/* The collectives suite's config: the runtime's settings first (fp_ctx_open
 * reads them), the sweep, then the link sweep's own. A collectives test reads
 * it as FP_SUITE_CFG(fp_coll_config, ctx). */
typedef struct fp_coll_config {
    fp_config base;
    fp_sweep sweep;
    const char *pairs;          /* link sweep: all, ring, k=K, random=K, or a list of
                                   node pairs A~B,... (fp_link_pairs_parse) */
    int link_passes;            /* link sweep: passes over its rounds (0: FP_LINK_PASSES) */
    int link_min_passes;        /* link sweep: passes run whatever the deadline (0: 1) */
    double deadline;            /* > 0: a sweep stops early rather than run past this time
                                   on the run's clock (fp_world_now): the link sweep between
                                   passes, a collective between its variants (data type x
                                   reduction), rank 0 deciding from the one before; the
                                   first always runs (a re-test's budget) */
} fp_coll_config;

/* Option row of the suite's own setting; type is the command's config
 * struct, member names the fp_coll_config in it. */
#define FP_OPTS_PAIRS(type, member)                                                        \
    {"pairs", 0, FP_OPT_STRING, offsetof(type, member.pairs), "all",                       \
     "link sweep pairs: all, ring, k=K, random=K, or node pairs A~B,C~D (A alone: the "    \
     "links inside node A)"}

/* ---- variants and metric names ----------------------------------------------- */

/* op == FP_REDOP_COUNT: a collective without reduction ("none"). */
typedef struct fp_coll_variant {
    fp_dtype dtype;
    fp_redop op;
    bool in_place;
} fp_coll_variant;

/* "f32", "f64", "f16", "bf16" ("?" when out of range). */
const char *fp_dtype_short(fp_dtype t);

/* "<fig>_<type>_<op>_<place>" into buf (truncated to len); returns buf. */
char *fp_coll_metric_name(char *buf, size_t len, const char *fig, const fp_coll_variant *v);

/* Split a metric name made by fp_coll_metric_name into figure (copied into
 * fig, at most len bytes) and variant. False when metric is not of that form. */
bool fp_coll_metric_parse(const char *metric, char *fig, size_t len, fp_coll_variant *v);

/* ---- sizes and figures ------------------------------------------------------- */

/* nccl-tests' bus bandwidth factor of a collective on n ranks: allreduce
 * 2(n-1)/n; allgather, reduce_scatter, alltoall (n-1)/n; broadcast, reduce,
 * sendrecv 1. */
double fp_coll_bus_factor(fp_coll c, int n);

/* Buffer geometry of one collective at a requested size. */
typedef struct fp_coll_geom {
    size_t count;       /* the count of fp_coll_args (comm.h semantics) */
    size_t send_elems;  /* elements of the send buffer */
    size_t recv_elems;  /* elements of the receive buffer */
    uint64_t bytes;     /* the size actually measured (nccl-tests' size) */
} fp_coll_geom;

/* Geometry of collective c for a requested size in bytes, elements of esz
 * bytes, n ranks: the count is rounded down to whole elements per rank. */
fp_coll_geom fp_coll_geometry(fp_coll c, uint64_t bytes, size_t esz, int n);

/* The size sweep of -b/-e/-f: min, min*f, ... up to max (0 steps to 1).
 * Writes at most cap sizes into sizes and their number into *n. Returns
 * FP_EUSAGE with err naming the option when min > max, f <= 1 or the sweep
 * has more than cap sizes. */
fp_status fp_coll_sizes(uint64_t min, uint64_t max, double factor, uint64_t *sizes, int cap,
                        int *n, char *err, size_t len);

/* ---- the driver -------------------------------------------------------------- */

/* With a deadline (fp_coll_config.deadline > 0): whether another step that
 * began at t0 and takes as long as the one that ended now still ends in
 * time, as rank 0 says to every rank (a broadcast: every rank calls it at the
 * same point). Without one, *go is true and nothing is sent. */
fp_status fp_coll_in_time(fp_ctx *ctx, double t0, bool *go);

/* Run collective test t (one of the suite's descriptors) on every rank over
 * the configured sizes; only != NULL restricts it to that one variant (the
 * bench uses this), else every data type and reduction the comm backend
 * supports, out of place and in place where the collective has it. Emits
 * the samples above into ctx->local and adds wrong elements to ctx->wrong.
 * All ranks return the same status; usage problems (sizes, memory) are one
 * line on one rank and FP_EUSAGE. */
fp_status fp_coll_sweep(fp_ctx *ctx, const fp_test *t, const fp_coll_variant *only);

/* The suite's tests, also registered in app/tests.c. */
extern const fp_test fp_test_allreduce, fp_test_allgather, fp_test_reduce_scatter,
    fp_test_alltoall, fp_test_broadcast, fp_test_reduce, fp_test_sendrecv, fp_test_links;

/* ---- the link sweep's schedule ------------------------------------------------- */

/* Passes of the link sweep over its rounds unless fp_coll_config.link_passes
 * asks for fewer: each link's figures are medians over every pass. */
#define FP_LINK_PASSES 7

/* A set of pairs of endpoints 0..n-1 scheduled in rounds of disjoint pairs. */
typedef struct fp_link_plan {
    int n;          /* endpoints */
    int npairs;
    int nrounds;
    int (*pair)[2]; /* npairs pairs, a < b, in round order */
    int *round;     /* round of each pair, nondecreasing */
} fp_link_plan;

/* Plan the pairs of n endpoints for --pairs mode:
 *   all       every pair, as a round-robin tournament: n-1 rounds of n/2
 *             disjoint pairs (n odd: n rounds, one endpoint resting in each)
 *   ring      i with i+1 (mod n)
 *   k=K       i with i+1 .. i+K (mod n)
 *   random=K  each endpoint with K partners drawn from a fixed seed
 * Bounded sets are packed greedily into rounds of disjoint pairs. pass 0 is
 * the canonical plan; pass p > 0 has the same pairs in other rounds (all: the
 * endpoints relabeled; bounded sets: packed from a shuffled order), so
 * repeated passes measure each pair beside other pairs. Deterministic: every
 * rank computes the same plan. On a bad mode returns FP_EUSAGE with err
 * naming it; on allocation failure FP_ENOMEM. The plan owns its arrays:
 * free with fp_link_plan_free. */
fp_status fp_link_plan_make(const char *mode, int n, int pass, fp_link_plan *plan, char *err,
                            size_t len);
void fp_link_plan_free(fp_link_plan *plan);

/* Plan np given pairs of endpoints 0..n-1 (two distinct endpoints each; a
 * pair given again is measured again), packed in their order into rounds of
 * disjoint pairs: each goes into the first round where both its endpoints
 * are free (a list in round order keeps its rounds). With spare (NULL, or n
 * flags), each round then also pairs up the spare endpoints it leaves idle,
 * the same pairs in every round where they can be: reference links,
 * measured beside the listed ones under the same load over most rounds,
 * which give a re-test healthy peers. Every pass of a list has the same
 * rounds. FP_EUSAGE with err naming the bad pair; FP_ENOMEM. The plan owns
 * its arrays (fp_link_plan_free). */
fp_status fp_link_plan_pairs(const int (*pairs)[2], int np, int n, const bool *spare,
                             fp_link_plan *plan, char *err, size_t len);

/* Whether a --pairs value is a list of nodes (not all, ring, k=K or random=K). */
bool fp_link_pairs_is_list(const char *mode);

/* Parse a --pairs list "A~B,C~D,E" against the run's nn node names (names[i]
 * of node i): A~B measures the link between nodes A and B, E alone the links
 * inside node E. *pairs gets a new array of *np node-index pairs (the caller
 * frees it) and inside[i] (nn flags, cleared first) which nodes' inner links
 * to measure; a pair given again is measured again. FP_EUSAGE with err
 * naming the entry: an unknown node, A~A, a node alone given twice, an empty
 * entry; FP_ENOMEM. */
fp_status fp_link_pairs_parse(const char *list, const char *const *names, int nn,
                              int (**pairs)[2], int *np, bool *inside, char *err, size_t len);

/* ---- 16-bit floating point on the host (checks of NCCL's half types) -------- */

/* IEEE binary16 and bfloat16 from and to double, rounding to nearest even
 * (binary16 through float: double rounding can differ in the last bit for
 * values that are not floats; the suite only uses small integers). */
uint16_t fp_half_from_double(double v);
double fp_half_to_double(uint16_t h);
uint16_t fp_bf16_from_double(double v);
double fp_bf16_to_double(uint16_t h);

#endif
