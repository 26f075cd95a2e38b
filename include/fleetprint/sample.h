#ifndef FLEETPRINT_SAMPLE_H
#define FLEETPRINT_SAMPLE_H
/* The data model: entities, samples (one measured number each) and runs (a
 * set of samples with the context they were measured in). These are plain
 * records: every module reads their fields. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/status.h"

#define FP_NAME_MAX 64

typedef enum fp_better { FP_BETTER_HIGHER = 0, FP_BETTER_LOWER = 1 } fp_better;

typedef enum fp_entity_kind {
    FP_ENT_NODE,  /* a node:                  "node:n0"            */
    FP_ENT_GPU,   /* a device of a node:      "gpu:n0/3"           */
    FP_ENT_LINK,  /* ordered endpoint pair:   "link:n0~n1", "link:n0/0~n0/1" */
    FP_ENT_RANK,  /* an MPI rank on its node: "rank:5@n1"          */
    FP_ENT_GROUP, /* a communicator group:    "group:world"        */
    FP_ENT_KIND_COUNT
} fp_entity_kind;

typedef struct fp_entity {
    fp_entity_kind kind;
    int dev;                 /* gpu: device index; link: endpoint a's device or -1 */
    int peer_dev;            /* link: endpoint b's device or -1 */
    int rank;                /* rank: the rank; otherwise -1 */
    char node[FP_NAME_MAX];  /* node, gpu, rank, link endpoint a; group: its name */
    char peer[FP_NAME_MAX];  /* link: node of endpoint b */
} fp_entity;

/* Constructors. Names longer than FP_NAME_MAX - 1 are truncated. */
fp_entity fp_entity_node(const char *node);
fp_entity fp_entity_gpu(const char *node, int dev);
fp_entity fp_entity_rank(const char *node, int rank);
fp_entity fp_entity_link(const char *a, int dev_a, const char *b, int dev_b);
fp_entity fp_entity_group(const char *name);

/* Canonical text form (see the kinds above) into buf; returns buf. */
char *fp_entity_format(const fp_entity *e, char *buf, size_t len);
/* Parse the canonical form; false on malformed text. */
bool fp_entity_parse(const char *text, fp_entity *out);
const char *fp_entity_kind_name(fp_entity_kind kind);
/* Whether name can be a node's name on every path it takes (a Slurm hostlist,
 * a drain file, a shell word): 1 to FP_NAME_MAX - 1 characters, letters,
 * digits, '-', '_' and '.', starting with a letter or digit. */
bool fp_node_name_ok(const char *name);

/* A metric as a test declares it: name, unit, and which way is better.
 * Tests keep these in const tables; samples copy them. */
typedef struct fp_metric {
    const char *name;
    const char *unit;
    fp_better better;
} fp_metric;

typedef struct fp_sample {
    char suite[16];     /* kernels, collectives, burnin, ... */
    char test[24];      /* membw, allreduce, links, ... */
    char metric[32];    /* triad_bw, busbw, time, ... */
    char unit[16];      /* GB/s, us, count, ... */
    fp_better better;
    fp_entity entity;
    uint64_t size;      /* message or array size in bytes, 0 when none */
    int32_t iter;       /* iteration or window index, -1 for a summary value */
    double value;
    double t_start;     /* seconds since the run started, on rank 0's clock */
} fp_sample;

/* The bytes of a sample's key text, suite through unit, back to back: what
 * the run's rows compare and the gather sends of a metric key. */
#define FP_SAMPLE_KEY_TEXT (offsetof(fp_sample, better) - offsetof(fp_sample, suite))

/* Metric key "suite.test.metric" or "suite.test.metric@size" into buf. */
char *fp_sample_key(const fp_sample *s, char *buf, size_t len);

/* x in unit, in engineering units into buf: 9.9e5 GFLOP/s is "990
 * TFLOP/s", 0.0123 s "12.3 ms", 2.2e5 us "220 ms". Units without a known
 * ladder are printed as they are ("%.4g unit"). */
char *fp_format_value(double x, const char *unit, char *buf, size_t len);

/* Per-rank context of a run. */
typedef struct fp_rank_info {
    int node;                  /* index into fp_run.nodes */
    int local_rank;            /* index among the ranks of the same node */
    int dev;                   /* device index on its node, -1 on host backends */
    double clock_offset;       /* add to this rank's clock to get rank 0's (s) */
    double clock_error;        /* bound on the offset's error (s) */
    char model[FP_NAME_MAX];   /* device model: the SKU baselines group by */
    char uuid[48];
    char pci_bus[24];
} fp_rank_info;

/* One field of a node's or a device's configuration record (what
 * fleetprint/config.h collects: kernel, driver, power limit, PCIe link...).
 * A field the platform lacks has no item: absent, never zero. */
typedef struct fp_cfg_item {
    int32_t node;    /* index into fp_run.nodes */
    int32_t dev;     /* device index on the node; -1: a field of the node */
    char field[32];  /* "kernel", "driver_version", "ib_rate.mlx5_0/1", ... */
    char value[96];
} fp_cfg_item;

/* A sample as a row of its run's tables (fp_run_rows): what the store keeps
 * but its start time (fp_run_rows.t), 24 bytes where an fp_sample takes 280. */
typedef struct fp_sample_row {
    uint32_t entity; /* into fp_run_rows.ents */
    uint32_t key;    /* into fp_run_rows.keys */
    int32_t iter;
    double value;
} fp_sample_row;

/* What a metric key's rows hold, counted as the run was stored: its largest
 * window (-1: none), and its rows of window 0 and of a summary (iter < 0).
 * Interning a run a chunk at a time lays out each key's values from it. */
typedef struct fp_key_shape {
    int32_t last;
    uint32_t firsts, summaries;
} fp_key_shape;

/* Count a row of window iter (< 0: a summary) into sh (from {.last = -1}). */
static inline void fp_key_shape_add(fp_key_shape *sh, int32_t iter)
{
    sh->last = iter > sh->last ? iter : sh->last;
    sh->firsts += iter == 0;
    sh->summaries += iter < 0;
}

/* A run's samples in compact form: rows into a table of metric keys (one
 * sample each, whose suite, test, metric, unit, better and size are the key's;
 * its entity, iter and value mean nothing) and a table of entities. A run
 * read this way (fp_store_load_run_rows) has rows and no samples, until
 * fp_run_expand. */
typedef struct fp_run_rows {
    fp_sample_row *row;
    double *t; /* row i's t_start; NULL when read without them (detect: 179 MB at
                  100,000 nodes x 8), when samples read from the rows have NaN */
    size_t n;
    fp_sample *keys;
    size_t nkeys;
    fp_key_shape *shapes; /* by key; NULL where the store did not count them (older runs) */
    fp_entity *ents;
    size_t nents;
} fp_run_rows;

typedef struct fp_run {
    char id[48];               /* unique: UTC time + random suffix */
    char tag[32];              /* nightly, preflight, ci, ... */
    char status[16];           /* complete, failed, interrupted, timeout */
    double time;               /* start, seconds since the Unix epoch (UTC) */
    double duration;           /* seconds */
    char command[1024];        /* the command line */
    char device_backend[16];
    char comm_backend[16];
    char fleetprint_version[16];
    char mpi_version[64];
    char cuda_version[32];     /* runtime version, "" when none */
    char driver_version[32];
    char nccl_version[32];
    char injections[512];      /* the --inject specs in force, ";"-separated */
    char slurm_job_id[32];     /* SLURM_JOB_ID of the launch, "" outside Slurm */
    char slurm_partition[64];  /* SLURM_JOB_PARTITION */
    char slurm_job_name[128];  /* SLURM_JOB_NAME */
    char contended[112];       /* why its timings are only roughly comparable (run,
                                  preflight, burnin: "12 threads on 2 cores of host
                                  x"), "" when not */
    char confirms[48];         /* a re-test (status "retest"): the id of the run whose
                                  failures it measured again; "" otherwise */
    int nranks;
    int nnodes;
    char (*nodes)[FP_NAME_MAX]; /* nnodes names, in order of first rank */
    fp_rank_info *ranks;        /* nranks entries */
    fp_sample *samples;
    size_t nsamples;            /* samples, or rows when there are rows */
    size_t cap;
    fp_run_rows *rows;          /* the samples in compact form instead, or NULL */
    fp_cfg_item *config;        /* the configuration records of its nodes and devices */
    size_t nconfig;             /* (0: none recorded, as in runs of older versions) */
} fp_run;

/* The status of a re-test run: failures of the run named by its confirms
 * field, measured again (preflight's confirm pass). Baselines skip it (its
 * status is not "complete") and "latest" never picks it. */
#define FP_RUN_RETEST "retest"

/* The run context's text fields besides id, in one list for every format
 * that writes or reads them (HDF5 attributes, JSON): X(field) per field. */
#define FP_RUN_TEXT_FIELDS(X)                                                              \
    X(tag) X(status) X(command) X(device_backend) X(comm_backend) X(fleetprint_version)    \
        X(mpi_version) X(cuda_version) X(driver_version) X(nccl_version) X(injections)     \
            X(slurm_job_id) X(slurm_partition) X(slurm_job_name) X(contended) X(confirms)

/* Zero a run and give it a fresh id (time-based plus random). */
void fp_run_init(fp_run *run);
/* Free everything a run owns; leaves it zeroed. */
void fp_run_free(fp_run *run);
/* Size the nodes and ranks arrays (zeroed). */
fp_status fp_run_set_shape(fp_run *run, int nnodes, int nranks);
/* Sample i of run, of either form (samples or rows), into *out. */
void fp_run_sample(const fp_run *run, size_t i, fp_sample *out);
/* Sample i of run, of either form, without copying it: key and entity point
 * into run (valid while run is unchanged). key is a sample whose suite, test,
 * metric, unit, better and size are sample i's; in a run of rows its other
 * fields are not sample i's: read entity, iter, value and t_start here. */
typedef struct fp_sample_ref {
    const fp_sample *key;
    const fp_entity *entity;
    int32_t iter;
    double value;
    double t_start;
} fp_sample_ref;
fp_sample_ref fp_run_ref(const fp_run *run, size_t i);
/* Sample i's start time, of either form, moved by dt seconds (a run of rows
 * read without times has none to move). */
void fp_run_shift_t(fp_run *run, size_t i, double dt);
/* Make rows the run's samples (taking them; any samples are freed). */
void fp_run_set_rows(fp_run *run, fp_run_rows *rows);
/* Give a run read as rows its samples (and free the rows): for what reads
 * run->samples. FP_ENOMEM when they do not fit; a run of samples is left as
 * it is. */
fp_status fp_run_expand(fp_run *run);
/* Append one sample (copied). A run of rows takes none: FP_EUSAGE. */
fp_status fp_run_add(fp_run *run, const fp_sample *s);
/* Replace run's configuration records by a copy of items[0..n). */
fp_status fp_run_set_config(fp_run *run, const fp_cfg_item *items, size_t n);
/* Append n samples (copied). */
fp_status fp_run_add_many(fp_run *run, const fp_sample *s, size_t n);
/* Index of a node name in run->nodes, or -1. */
int fp_run_node_index(const fp_run *run, const char *node);
/* Record the Slurm job this process runs in (SLURM_JOB_ID, SLURM_JOB_PARTITION,
 * SLURM_JOB_NAME from the environment) in run's context; fields of variables
 * that are not set are left as they are. */
void fp_run_slurm_context(fp_run *run);

/* ---- building rows (core/rows.c) -------------------------------------------------- */

/* An fp_run_rows being built: each metric key (suite, test, metric, unit,
 * better and size) and entity gets one id, in the order first met; two are
 * one when they are equal byte for byte, so that fp_run_sample gives back
 * every sample as it was added. Zero it to start. */
typedef struct fp_rows_builder {
    fp_run_rows rows;
    size_t row_cap, t_cap, key_cap, ent_cap;
    uint32_t *key_slot, *ent_slot; /* open addressing: id + 1, 0 = empty */
    size_t key_mask, ent_mask;     /* slots - 1, a power of two less one */
} fp_rows_builder;

/* The id of a metric key (s's key fields; the rest is ignored), of an
 * entity: added when new. FP_ENOMEM. */
fp_status fp_rows_builder_key(fp_rows_builder *b, const fp_sample *s, uint32_t *id);
fp_status fp_rows_builder_entity(fp_rows_builder *b, const fp_entity *e, uint32_t *id);
/* Append s as a row, its key and entity interned. FP_ENOMEM. */
fp_status fp_rows_builder_add(fp_rows_builder *b, const fp_sample *s);
/* The rows built (the caller's to free, with fp_run_set_rows and
 * fp_run_free), NULL when out of memory; b is emptied either way. */
fp_run_rows *fp_rows_builder_take(fp_rows_builder *b);
void fp_rows_builder_free(fp_rows_builder *b);

/* Fill a sample from a metric and the measurement. */
void fp_sample_make(fp_sample *s, const char *suite, const char *test, const fp_metric *m,
                    const fp_entity *e, uint64_t size, int iter, double value, double t_start);

#endif
