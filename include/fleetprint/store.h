#ifndef FLEETPRINT_STORE_H
#define FLEETPRINT_STORE_H
/* The fingerprint store: HDF5 files holding every run (context and samples)
 * and the baselines built from them. FILE (--store) is a small manifest
 * listing the runs; their data lives in partition files under FILE.d/, one
 * written per commit and never changed after. Layout and guarantees are in
 * docs/store.md.
 *
 * Integrity: a change (append, remove, compact, baseline build) writes new
 * partition files, fsyncs them, then writes a new manifest beside FILE
 * (FILE.tmp), fsyncs it and renames it over FILE: the change lands whole or
 * not at all, even under kill -9, and costs the same at any store size.
 * Writers serialise on an advisory lock (flock on FILE.lock); readers take no
 * lock and always see a committed manifest. Only one process (rank 0) should
 * write. A schema-1 store (one file) is read as one partition and becomes a
 * manifest with its first change. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/sample.h"
#include "fleetprint/status.h"

/* The on-disk schema version of the manifest this build writes (root
 * attribute "fleetprint_schema"); partition files, and whole stores written
 * before manifests, are version 1, which this build also reads. */
#define FP_STORE_SCHEMA 2

typedef struct fp_store fp_store;

typedef enum fp_store_mode {
    FP_STORE_READ,   /* read only; FILE must exist */
    FP_STORE_APPEND, /* takes the writer lock; FILE is created on the first commit */
} fp_store_mode;

/* Once per process, before any other store call (main does it): keep HDF5
 * from closing still-open files at exit. A close that failed on a full disk
 * leaves HDF5 a file it would retry, and crash in, at exit; the store closes
 * every file it commits itself, and an abandoned working copy is unlinked. */
void fp_store_process_init(void);

/* Open the store at path. FP_STORE_APPEND first takes the writer lock, waiting
 * up to lock_timeout_s seconds (0: do not wait) and saying once that it waits
 * and for whom; the lock is held until fp_store_close. On success *out is a new
 * handle the caller closes. Errors (one line logged, *out NULL):
 *   FP_EINPUT  no such file (READ), not HDF5, truncated, not a fleetprint store,
 *              other schema version, directory not writable (APPEND);
 *   FP_ETIMEOUT the lock was not free in time; FP_ENOMEM, FP_EIO. */
fp_status fp_store_open(fp_store **out, const char *path, fp_store_mode mode,
                        double lock_timeout_s);

/* Close the handle and release the lock. NULL is a no-op. */
void fp_store_close(fp_store *store);

/* The path the store was opened with. */
const char *fp_store_path(const fp_store *store);

/* ---- writing (FP_STORE_APPEND handles only) ------------------------------------- */

/* Append n runs (context and samples) in one atomic commit: after a crash the
 * store holds all of them or none. Runs are copied; the caller keeps ownership.
 * FP_EINPUT (nothing written) when a run id is empty, not a valid name
 * (no '/', printable, < 48 bytes), repeated, or already stored; FP_EUSAGE on a
 * read-only handle; FP_EH5/FP_EIO when writing fails (nothing written). */
fp_status fp_store_append_runs(fp_store *store, const fp_run *const *runs, size_t n);

/* fp_store_append_runs for one run. */
fp_status fp_store_append(fp_store *store, const fp_run *run);

/* Open path for append (waiting up to lock_timeout_s for the lock), append
 * run, close: what a measuring command does with --store. Logs one line on
 * success ("stored run ID in FILE") and on error; statuses as above. */
fp_status fp_store_append_file(const char *path, const fp_run *run, double lock_timeout_s);

/* Remove runs by id in one atomic commit: partitions that keep some of their
 * runs are rewritten without the others, those left empty are deleted.
 * Baselines are kept as they were (rebuild them). FP_EINPUT when an id is not
 * stored (nothing removed). */
fp_status fp_store_remove(fp_store *store, const char *const *ids, size_t n);

/* What fp_store_compact did. */
typedef struct fp_compact_summary {
    size_t files_before, files_after; /* partition files holding runs */
    size_t runs_moved;
} fp_compact_summary;

/* Merge the runs of partition files smaller than target bytes, oldest first,
 * into new partitions of about target bytes each, in one atomic commit (the
 * old files are then deleted); baselines sharing a file with runs get one of
 * their own. FP_EUSAGE when target is 0; summary may be NULL. */
fp_status fp_store_compact(fp_store *store, uint64_t target, fp_compact_summary *summary);

/* ---- reading ---------------------------------------------------------------------- */

/* One row of fp_store_list. */
typedef struct fp_run_summary {
    char id[48];
    char tag[32];
    char status[16];
    double time;
    double duration;
    int nranks;
    int nnodes;
    uint64_t nsamples;
    bool injected; /* fault injections were in force */
    bool emulated; /* ran on an emulated device (device backend "... (emulated)") */
} fp_run_summary;

/* List the stored runs, oldest first (by time, then id). *out is a new array of
 * *n rows the caller frees (NULL when n is 0). */
fp_status fp_store_list(fp_store *store, fp_run_summary **out, size_t *n);

/* Load one run into *run (initialised by this call; the caller fp_run_free()s
 * it, also on error). which is a run id or "latest" (the newest run, counting
 * only runs tagged tag when tag is non-NULL and non-empty, and never a
 * re-test: status FP_RUN_RETEST). FP_EINPUT naming
 * the id when there is no such run. */
fp_status fp_store_load_run(fp_store *store, const char *which, const char *tag, fp_run *run);
/* The same, with the samples as rows (run->rows; see fp_run_rows): a ninth of
 * the memory, for what reads them through fp_run_sample or detect; their
 * start times (rows->t) only when times is true. */
fp_status fp_store_load_run_rows(fp_store *store, const char *which, const char *tag, bool times,
                                 fp_run *run);
/* A run's samples kept as the store holds them, compressed: for a reader
 * that takes them once, in order, a chunk at a time (detect's interning),
 * where rows held whole take 24 bytes each (537 MB at 100,000 nodes x 8). */
typedef struct fp_row_pack fp_row_pack;
typedef struct fp_row_reader fp_row_reader;
/* fp_store_load_run_rows (without start times), the rows packed into *pack
 * (the caller frees it; run->rows->row is NULL) -- or, where the table's
 * layout is not one kept packed, *pack NULL and the rows read whole. */
fp_status fp_store_load_run_packed(fp_store *store, const char *which, const char *tag,
                                   fp_run *run, fp_row_pack **pack);
size_t fp_row_pack_chunks(const fp_row_pack *p);
/* Rows a chunk holds (the last may hold fewer): chunk c's first is c times this. */
size_t fp_row_pack_chunk_rows(const fp_row_pack *p);
/* A reader of p's chunks (one thread's). FP_ENOMEM. */
fp_status fp_row_reader_open(const fp_row_pack *p, fp_row_reader **out);
/* Chunk c's rows into *rows (the reader's, until its next call), *n of them;
 * FP_EINPUT (logged) where the chunk will not decode or a row refers past
 * the run's entity or metric table. */
fp_status fp_row_reader_chunk(fp_row_reader *r, size_t c, const fp_sample_row **rows, size_t *n);
/* The same, saying nothing (for a thread that decodes ahead of another):
 * false where fp_row_reader_chunk would fail. */
bool fp_row_reader_try(fp_row_reader *r, size_t c, const fp_sample_row **rows, size_t *n);
void fp_row_reader_free(fp_row_reader *r);
/* The rows whole after all, into run->rows->row (run: the one p was read
 * with), for what reads samples by index; decoded on two threads. */
fp_status fp_row_pack_unpack(const fp_row_pack *p, fp_run *run);
void fp_row_pack_free(fp_row_pack *p);
/* Run id's context only (nodes, ranks, configuration records; no samples). */
fp_status fp_store_load_run_context(fp_store *store, const char *id, fp_run *run);
/* Run id's nodes and configuration records only (no ranks: nranks 0), what
 * a later run's configuration is compared with (the 800,000 ranks of a
 * 100,000-node run took detect half a second to read). */
fp_status fp_store_load_run_config(fp_store *store, const char *id, fp_run *run);

/* The SKU an entity of a run belongs to, for per-SKU baselines: the device
 * model (fp_rank_info.model) of the rank that owns it -- a gpu by node and
 * device, a rank by number, a link by its first endpoint, a node by its ranks,
 * a group by all ranks. Several models give "mixed"; none known gives
 * "unknown". The index makes each lookup O(1) for runs of any size. */
typedef struct fp_sku_index fp_sku_index;

/* Build the index of a run (which must outlive it). *out is freed by the
 * caller with fp_sku_index_free. FP_ENOMEM on allocation failure. */
fp_status fp_sku_index_build(const fp_run *run, fp_sku_index **out);
/* The SKU of e: a string owned by the run or the index, never NULL. */
const char *fp_sku_index_get(const fp_sku_index *ix, const fp_entity *e);
void fp_sku_index_free(fp_sku_index *ix);

/* ---- baselines ---------------------------------------------------------------------- */

typedef struct fp_baseline_opts {
    const char *tag;  /* only runs with this tag; NULL or "" for all */
    int last;         /* only the newest N runs (after the tag filter); 0 for all */
    double since;     /* only runs started at or after this Unix time; 0 for all */
    double reject;    /* drop values farther than reject * 1.4826 * MAD from the
                         median before the statistics; 0 keeps everything */
} fp_baseline_opts;

/* What fp_store_build_baselines did. */
typedef struct fp_baseline_summary {
    size_t runs_used;
    size_t runs_skipped;   /* selected but not complete, or with injections */
    size_t entity_rows;
    size_t sku_rows;
    uint64_t values_rejected; /* entity-level values dropped as outliers */
    size_t runs_added;     /* fp_store_update_baselines: runs folded in */
    size_t runs_dropped;   /* fp_store_update_baselines: oldest runs out of the --last window */
} fp_baseline_summary;

/* Compute baselines over the selected runs and replace /baselines in one
 * atomic commit (FP_STORE_APPEND handle). Runs that are not "complete" or had
 * fault injections are skipped. Per (metric key, entity) the statistics are
 * over all its samples; per (metric key, SKU) over the per-run medians of each
 * entity of that SKU, so a few bad nodes are rejected as outliers and cannot
 * move the SKU's median. FP_EINPUT when no run is selected. summary may be
 * NULL. */
fp_status fp_store_build_baselines(fp_store *store, const fp_baseline_opts *opts,
                                   fp_baseline_summary *summary);

/* What fp_store_update_baselines folds in, and what the caller expects of
 * the stored baselines (a mismatch is FP_EINPUT telling to run a build). */
typedef struct fp_baseline_update_opts {
    const char *run; /* a run id, or "latest" (NULL too): the newest run of the baselines'
                        tag that is not a re-test */
    const char *tag; /* NULL, or the tag the baselines must have been built for */
    int last;        /* 0, or the --last N they must have been built with */
} fp_baseline_update_opts;

/* Fold the run o->run into the stored baselines without reading the runs
 * before it: from the update state every build and update keeps beside
 * /baselines (each baseline run's per-(key, entity) medians, spreads, counts
 * and windows, compressed to at most 16 values a run; docs/store.md), the
 * run's own samples, and the selection the baselines were built with (tag,
 * --since, --last N: the oldest runs past N drop out; runs the selection
 * skips are not folded in). Eligible runs stored between the baselines'
 * newest run and o->run are folded in too, as a build would take them. The
 * result matches fp_store_build_baselines over the same runs within the
 * tolerance docs/store.md gives; it replaces /baselines in one atomic commit
 * (FP_STORE_APPEND handle), and a failed or killed update leaves the store
 * as it was. A run already in the baselines, or one the selection skips,
 * changes nothing (FP_OK, said on the log). FP_EINPUT with one line telling
 * to run `baseline build` when the store has no baselines or no update state
 * (built before updates existed), when o's tag or last differ from the
 * baselines', or when o->run is older than their newest run; FP_EINPUT too
 * for an unknown run. summary may be NULL. */
fp_status fp_store_update_baselines(fp_store *store, const fp_baseline_update_opts *o,
                                    fp_baseline_summary *summary);

/* One baseline statistic. The centre is over every value (windows and run
 * summaries pooled); the spreads say how much a value
 * varies, as fractions of the centre (1.4826 x MAD / median, a robust
 * relative standard deviation), NaN where too few values exist:
 *   run_spread     run to run: of the per-run medians (needs 2 runs). For a
 *                  SKU row: the median of its entities' run_spread.
 *   window_spread  within a run: of the windows of one run (needs 3), the
 *                  median over runs. For a SKU row: over its entities.
 *   summary        the median over runs of each run's summary value (iteration
 *                  -1: best of the run, median over passes), NaN when none;
 *                  summary_spread its run-to-run spread. For a SKU row: the
 *                  median over its entities, and the spread between them.
 * A SKU row's mad is the spread between entities (of their per-run medians). */
typedef struct fp_baseline {
    uint32_t count;    /* values used */
    uint32_t rejected; /* values dropped as outliers */
    uint32_t nruns;    /* runs the values came from */
    uint32_t runset;   /* index for fp_baselines_runs */
    uint32_t windows;  /* windows per run (median over runs; 1: summaries only) */
    double median, mad;
    double run_spread, window_spread;
    double summary, summary_spread;
} fp_baseline;

/* The range of a baseline's values (the same values as its centre): for
 * display only, so kept apart from what judging reads (141 MB of
 * 100,000 nodes x 8's baselines). */
typedef struct fp_baseline_range {
    double p05, p95, min, max;
} fp_baseline_range;

typedef struct fp_baselines fp_baselines;

/* Load /baselines into memory with an index of each entity's (and SKU's)
 * rows for fp_baselines_entity and fp_baselines_sku. *out is a new object the caller frees with
 * fp_baselines_free. A store without baselines gives an empty object (FP_OK). */
fp_status fp_store_load_baselines(fp_store *store, fp_baselines **out);

void fp_baselines_free(fp_baselines *b);

/* Read the ranges of b's rows from the store b came from (what
 * fp_store_load_baselines leaves out). FP_EINPUT when they cannot be read. */
fp_status fp_store_load_baseline_ranges(fp_store *store, fp_baselines *b);
/* The range of row (a row of b), NULL until they are loaded. */
const fp_baseline_range *fp_baselines_range(const fp_baselines *b, const fp_baseline *row);

/* The baseline of metric key (fp_sample_key) for an entity (canonical text,
 * fp_entity_format) or for a SKU; NULL when there is none. A hash of the name,
 * then a binary search among that entity's few keys. */
const fp_baseline *fp_baselines_entity(const fp_baselines *b, const char *key,
                                       const char *entity);
const fp_baseline *fp_baselines_sku(const fp_baselines *b, const char *key, const char *sku);

/* fp_baselines_entity in two steps, for a caller that asks of many entities
 * and keys: the id of a key and of an entity in b (FP_BASELINE_NONE when no
 * baseline has it), then the baseline of the pair; NULL when there is none. */
#define FP_BASELINE_NONE UINT32_MAX
uint32_t fp_baselines_key_id(const fp_baselines *b, const char *key);
uint32_t fp_baselines_entity_id(const fp_baselines *b, const char *entity);
/* The same, trying id guess first: for a caller that walks entities in about
 * the baselines' order (the last id found + 1), a comparison instead of a
 * hash and a probe. */
uint32_t fp_baselines_entity_id_near(const fp_baselines *b, const char *entity, uint32_t guess);
const fp_baseline *fp_baselines_entity_at(const fp_baselines *b, uint32_t key, uint32_t entity);

/* The i-th per-SKU baseline (i < fp_baselines_sku_count), with its metric
 * key and SKU (strings owned by b); NULL past the end. */
const fp_baseline *fp_baselines_sku_row(const fp_baselines *b, size_t i, const char **key,
                                        const char **sku);

/* Number of rows of each kind, and when the baselines were built (Unix time). */
size_t fp_baselines_entity_count(const fp_baselines *b);
size_t fp_baselines_sku_count(const fp_baselines *b);
double fp_baselines_built(const fp_baselines *b);

/* The ids of the runs a baseline came from: up to max pointers into b are
 * stored in ids; returns how many there are in all. */
size_t fp_baselines_runs(const fp_baselines *b, const fp_baseline *row, const char **ids,
                         size_t max);

/* ---- the store command's actions ------------------------------------------------ */

/* What `fleetprint store` was asked to do (app/store.c fills it from its options). */
typedef struct fp_store_action {
    const char *action; /* ls | check | show | export | ingest | rm | compact */
    const char *arg;    /* run id, latest, all; a JSONL file or -; ids a,b */
    const char *store;
    const char *tag;
    const char *out;
    bool baselines;
    const char *before;
    uint64_t target;
    double lock_timeout;
} fp_store_action;

/* Check the action and its arguments (FP_EUSAGE with one logged line naming
 * what is wrong), open the store (read-only unless the action writes) and run
 * it; prints listings to stdout. Returns the action's status. */
fp_status fp_store_run_action(const fp_store_action *a);

/* "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS]", optional trailing Z, UTC, as Unix
 * time in *out; false when text is not such a date. */
bool fp_store_parse_date(const char *text, double *out);

#endif
