#ifndef FLEETPRINT_WHATIF_H
#define FLEETPRINT_WHATIF_H
/* What-if straggler analysis of training traces ("Understanding Stragglers in
 * Large Model Training Using What-if Analysis", arXiv 2505.05713; definitions in
 * shared/ANCHORS.md). A trace is one row per recorded operation of a 3D-parallel
 * training job; the analysis builds a dependency model of one step of one
 * model-parallel group, replays every step of every DP rank on it, and answers:
 * how much slower than ideal did the job run (S = T / T_ideal), and which DP
 * rank, PP stage or operation type is to blame.
 *
 * Module layout: whatif/whatif_trace.c (trace and meta input), whatif/whatif.c
 * (dependency model, replay, analyses), whatif/whatif_synth.c (synthetic 1F1B
 * traces), app/whatif.c (the `whatif` command) and the writers in
 * reports/whatif_*.c declared at the end of this header. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fleetprint/status.h"

/* ---- operation types ---------------------------------------------------------- */

/* X(enum suffix, trace name, conceptually communication) */
#define FP_WI_OPTYPE_MAP(X)                                                                \
    X(FORWARD_COMPUTE, "forward-compute", 0)                                               \
    X(BACKWARD_COMPUTE, "backward-compute", 0)                                             \
    X(FORWARD_SEND, "forward-send", 1)                                                     \
    X(FORWARD_RECV, "forward-recv", 1)                                                     \
    X(BACKWARD_SEND, "backward-send", 1)                                                   \
    X(BACKWARD_RECV, "backward-recv", 1)                                                   \
    X(PARAMS_ALL_GATHER, "params-all-gather", 1)                                           \
    X(GRADS_REDUCE_SCATTER, "grads-reduce-scatter", 1)                                     \
    X(SEPARATE_GRADS_ALL_REDUCE, "separate-grads-all-reduce", 1)                           \
    X(LAYERNORM_GRADS_ALL_REDUCE, "layernorm-grads-all-reduce", 1)                         \
    X(EMBEDDING_GRADS_ALL_REDUCE, "embedding-grads-all-reduce", 1)                         \
    X(OPTIMIZER_CLIP_MAIN_GRAD, "optimizer-clip-main-grad", 1)                             \
    X(OPTIMIZER, "optimizer", 0)                                                           \
    X(GC, "gc", 0)

typedef enum fp_wi_optype {
#define FP__WI_OPTYPE_ENUM(id, name, comm) FP_WI_##id,
    FP_WI_OPTYPE_MAP(FP__WI_OPTYPE_ENUM)
#undef FP__WI_OPTYPE_ENUM
        FP_WI_OPTYPE_COUNT
} fp_wi_optype;

/* Trace name of an op type ("forward-compute"); "?" when out of range. */
const char *fp_wi_optype_name(fp_wi_optype t);

/* Parse len bytes of text as an op type name. Returns false when unknown. */
bool fp_wi_optype_parse(const char *text, size_t len, fp_wi_optype *out);

/* True for op types whose ideal duration is the median transfer time
 * (communication), false for those whose ideal is the mean duration (compute). */
bool fp_wi_optype_is_comm(fp_wi_optype t);

/* ---- input -------------------------------------------------------------------- */

/* One trace row. Times are seconds; start_ts is any clock shared by the ranks. */
typedef struct fp_wi_row {
    int dp_rank, stage, rank, step;
    fp_wi_optype optype;
    double start_ts, duration;
    int seq_id; /* ops of one type in one step on one worker, in start order */
    int mc;     /* model chunk within the stage (-1 when not applicable) */
    int mb_id;  /* microbatch (-1 when not applicable) */
    int gmc;    /* model chunk within the model (-1 when not applicable) */
} fp_wi_row;

/* Job metadata: the YAML `key: value` file next to a trace. */
typedef struct fp_wi_meta {
    char trial_name[64];
    int run_id;
    int dp_size, pp_size, tp_size, dsp_size, vpp_size, world_size;
} fp_wi_meta;

/* A loaded trace (opaque). */
typedef struct fp_wi_trace fp_wi_trace;

/* Read job metadata from a YAML file of `key: value` lines (comments with #).
 * Known keys: trial_name, run_id, dp_size, pp_size, tp_size, dsp_size,
 * vpp_size, world_size; sizes default to 1, world_size to the product
 * dp*pp*tp*dsp. Unknown keys are ignored with a warning. On error logs one line
 * naming the file, line and key and returns FP_EINPUT (also when the file
 * cannot be opened; FP_EIO when reading fails). */
fp_status fp_wi_meta_load(const char *path, fp_wi_meta *out);

/* Check a meta record on its own: sizes positive and world_size equal to
 * dp*pp*tp*dsp. source names it in the one-line error; FP_EINPUT on error. */
fp_status fp_wi_meta_check(const fp_wi_meta *meta, const char *source);

/* Load a CSV trace: a header row naming the columns dp_rank, stage, rank, step,
 * optype, start_ts, duration, seq_id, mc, mb_id, gmc in any order (extra
 * columns are ignored), then one row per op. On success *out owns the trace
 * (free with fp_wi_trace_free). On a bad file logs one line naming the file,
 * line and field and returns FP_EINPUT (also when the file cannot be opened;
 * FP_EIO when reading fails); *out is NULL. */
fp_status fp_wi_trace_load_csv(const char *path, fp_wi_trace **out);

/* Build a trace from n in-memory rows (copied), e.g. per-rank timings that
 * fleetprint's own suites export in the trace schema. source names the trace
 * in error messages (rows are then numbered from 1). FP_EINPUT when a row is
 * invalid (negative rank or id, non-finite time, negative duration). */
fp_status fp_wi_trace_from_rows(const fp_wi_row *rows, size_t n, const char *source,
                                fp_wi_trace **out);

/* Number of rows in a trace. */
size_t fp_wi_trace_rows(const fp_wi_trace *trace);

/* The rows of a trace, valid until fp_wi_trace_free. */
const fp_wi_row *fp_wi_trace_data(const fp_wi_trace *trace);

/* Free a trace; NULL is fine. */
void fp_wi_trace_free(fp_wi_trace *trace);

/* Write n rows as a CSV trace (header first) to path. FP_EIO on failure. */
fp_status fp_wi_write_csv(const fp_wi_row *rows, size_t n, const char *path);

/* Write meta as the YAML fp_wi_meta_load reads, after a "# comment" line
 * (none when comment is NULL). FP_EIO on failure. */
fp_status fp_wi_write_meta(const fp_wi_meta *meta, const char *comment, const char *path);

/* ---- analysis ------------------------------------------------------------------ */

typedef struct fp_wi_options {
    /* attribute the slowdown (by DP rank, stage, op type) only when it is at
     * least this large; the artifact's default is 1.03 */
    double decompose_threshold;
    /* share of workers fixed for M_W (the paper's 3%) */
    double worker_share;
    /* keep per-op start and end times of the original and the ideal replay,
     * for fp_wi_write_timeline */
    bool keep_timeline;
} fp_wi_options;

/* Defaults: threshold 1.03, worker share 0.03, no timeline. */
fp_wi_options fp_wi_options_default(void);

typedef enum fp_wi_dim { FP_WI_BY_DP_RANK, FP_WI_BY_STAGE, FP_WI_BY_OPTYPE, FP_WI_DIM_COUNT } fp_wi_dim;

/* Slowdown when only one group of ops (a DP rank, a stage or an op type) keeps
 * its measured behaviour and every other op is ideal. */
typedef struct fp_wi_attr {
    char label[40];   /* "3" for a rank or stage; an op type name, where the P2P
                         types are merged into forward-pp-comm / backward-pp-comm */
    double slowdown;  /* mean step time of that replay / mean ideal step time */
    double *per_step; /* the same per step, in fp_wi_result.steps order */
} fp_wi_attr;

typedef struct fp_wi_attribution {
    bool done; /* false when the slowdown was below the threshold */
    int n;
    fp_wi_attr *items; /* sorted by slowdown, largest first */
} fp_wi_attribution;

/* What fixing a set of ops explains (the artifact's explain_slowdown): tori and
 * tideal are the mean step times without launch delays and ideal; trem is with
 * the set made ideal, tadd with only the set measured. rem = (tori - trem) /
 * (tori - tideal) is M_S or M_W; add = (tadd - tideal) / (tori - tideal). */
typedef struct fp_wi_explain {
    bool valid; /* false when there is no slowdown to explain or no attribution */
    double tori, tideal, trem, tadd, rem, add;
} fp_wi_explain;

/* Per-op times of the original trace and of the ideal replay, step-relative. */
typedef struct fp_wi_timeline {
    int nops, ninst;           /* ops of one model-parallel group and step; dp*steps */
    fp_wi_optype *optype;      /* [nops] */
    int *stage, *seq;          /* [nops] */
    bool *is_comm;             /* [nops]: synchronising op; cost is a transfer time */
    double *orig_start, *orig_end, *orig_cost; /* [nops*ninst], inst = step_index*dp + dp_rank */
    double *ideal_start, *ideal_end, *ideal_cost;
} fp_wi_timeline;

typedef struct fp_wi_result {
    fp_wi_meta meta;
    size_t nrows;
    int nops; /* ops per model-parallel group per step */
    int nsteps;
    int *steps;         /* step numbers, ascending */
    double *t_base;     /* measured step time (last end - first start) */
    double *t_replay;   /* replay with the measured launch delays (model check) */
    double *t_nodelay;  /* replay without launch delays */
    double *t_ideal;    /* replay with every op ideal (T_ideal) */
    double replay_error; /* mean |t_replay - t_base| / t_base */
    double launch_slowdown, blocking_slowdown; /* mean ratios; blocking is S */
    double *launch_step, *blocking_step;       /* per step */
    fp_wi_attribution blocking[FP_WI_DIM_COUNT];
    fp_wi_attribution launch[FP_WI_DIM_COUNT];
    /* per worker slowdown S_w ~ min(S_dp, S_stage) as in the artifact's heat
     * map, [stage * dp_size + dp_rank]; NaN when not attributed */
    double *worker_slowdown;
    int *worker_rank; /* global rank of each worker, same layout */
    fp_wi_explain ms; /* fixing the last stage */
    fp_wi_explain mw; /* fixing the slowest worker_share of workers */
    int mw_nworkers;
    int *mw_workers; /* indices into worker_slowdown, slowest first */
    fp_wi_timeline *timeline; /* NULL unless options.keep_timeline */
} fp_wi_result;

/* Analyse a trace against its metadata. On success *out owns a new result (free
 * with fp_wi_result_free). Inconsistent meta (ranks or stages out of range, a
 * rank count that disagrees), a trace whose steps or DP ranks do not share one
 * set of ops, or a schedule the dependency model cannot express logs one line
 * and returns FP_EINPUT; FP_ENOMEM on allocation failure. */
fp_status fp_wi_analyze(const fp_wi_trace *trace, const fp_wi_meta *meta,
                        const fp_wi_options *options, fp_wi_result **out);

/* Free a result; NULL is fine. */
void fp_wi_result_free(fp_wi_result *result);

/* The attribution item with the given label, or NULL. */
const fp_wi_attr *fp_wi_attr_find(const fp_wi_attribution *a, const char *label);

/* ---- synthetic traces ---------------------------------------------------------- */

/* A Megatron-style 1F1B job (no VPP) with planted slowness, for tests, benches
 * and demonstrations. Times in seconds. */
typedef struct fp_wi_synth {
    int dp, pp, microbatches, steps;
    double fwd, bwd;      /* compute time per microbatch */
    double p2p;           /* transfer time of one activation or gradient */
    double allgather, reduce_scatter, embedding, clip, optimizer;
    double last_stage_factor;   /* compute multiplier of the last stage (>= 1) */
    int slow_dp, slow_stage;    /* one slow worker, or -1 */
    double slow_factor;         /* its compute multiplier */
    double jitter;              /* relative uniform noise on compute times */
    uint64_t seed;
} fp_wi_synth;

/* Defaults: dp 2, pp 4, 4 microbatches, 4 steps, fwd 60 ms, bwd 120 ms, p2p 1 ms,
 * DP and embedding collectives a few ms, no planted slowness, jitter 1%. */
fp_wi_synth fp_wi_synth_default(void);

/* Generate the trace of such a job by playing its schedule: *rows is a new
 * array of *n rows (free with free()). FP_EUSAGE for sizes < 1, FP_ENOMEM. */
fp_status fp_wi_synth_rows(const fp_wi_synth *spec, fp_wi_row **rows, size_t *n);

#endif
