#ifndef FLEETPRINT_FINGERPRINT_BASELINE_BUILD_H
#define FLEETPRINT_FINGERPRINT_BASELINE_BUILD_H
/* The baseline builder (baseline.c) as baseline_update.c uses it: runs are
 * reduced one at a time to per-(metric key, entity) records (what one run says
 * of a group), the records of every run in the window give the baselines, and
 * the records, compressed, are the update state kept beside them
 * (docs/store.md). Private to fingerprint/: fp__ prefix, not installed. */
#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/store.h"
#include "intern.h"
#include "runtab.h"

#define FP__KEY_WIDTH 96

/* What one run says of one (metric key, entity) group. */
typedef struct fp__grun {
    uint32_t group; /* entity group id (fp__builder.eg) */
    uint32_t sku;   /* the entity's SKU in this run */
    uint32_t nw;    /* windows (iteration >= 0) */
    uint32_t ns;    /* run summaries (iteration -1) */
    double med;     /* median of the windows (of the summaries when none) */
    double wsp;     /* within-run spread of those values, NaN below 3 */
    double sum;     /* median of the summaries, NaN when none */
} fp__grun;

/* One run's records, sorted by group, and their values: the windows of every
 * record back to back in w (record order, each record's sorted), the
 * summaries likewise in s. */
typedef struct fp__rblock {
    uint32_t run; /* id in fp__builder.runs */
    fp__grun *rec;
    size_t n;
    double *w, *s;
    size_t nw, ns;
} fp__rblock;

/* (key, who) pairs with dense ids in order of first use. */
typedef struct fp__groups {
    fp__u64map map;
    uint64_t *pair; /* id -> key << 32 | who */
    size_t n, cap;
} fp__groups;

/* Run sets: distinct sorted lists of run ids with dense ids in order of
 * first use. */
typedef struct fp__runsets {
    fp__strmap text; /* more than 64 runs: by the list's text */
    fp__u64map mask; /* up to 64 runs: by the bit mask of the list */
    char *buf;
    size_t bufcap;
    uint32_t *off, *member; /* set i: member[off[i] .. off[i+1]) */
    size_t nsets, offcap, nmember, memcap;
    uint8_t *seen; /* scratch, one per run */
    size_t seencap;
} fp__runsets;

/* A metric key row of /baselines/keys. */
typedef struct fp__bkey {
    char key[FP__KEY_WIDTH];
    char unit[16];
    uint8_t better;
} fp__bkey;

/* A baseline row as built: the ids it is for, then the statistic and its
 * range (a loaded row has no range: fp_baselines keeps them apart). */
typedef struct fp__brow {
    uint32_t key;
    uint32_t who; /* entity or SKU id */
    fp_baseline b;
    fp_baseline_range q;
} fp__brow;

/* A run's distinct (entity, metric) pairs, what its rows say of each, and the
 * scratch that finds them: all of it from the run alone, so it is worked out
 * where the run is read, beside the builder (baseline.c). Kept from run to
 * run. */
typedef struct fp__pairs {
    uint32_t *ent, *metric, *first, *group, *row; /* per pair; row: by pair */
    size_t *off;                                  /* pair p's rows: row[off[p] .. off[p+1]) */
    size_t n;
    fp__grun *rec;     /* per pair: its record but the group and the SKU */
    double *w, *s;     /* per pair, back to back: sorted windows, sorted summaries */
    uint32_t *order, *rp, *mslot; /* rows by entity, the pair of each; by metric */
    size_t *estart;
    size_t cap_pair[6], cap_row[4], cap_off, cap_estart, cap_mslot;
} fp__pairs;

typedef struct fp__builder {
    fp__strmap keys, entities, skus, runs;
    fp__bkey *key_rows;
    size_t key_cap;
    fp__groups eg, sg; /* (key, entity) and (key, sku) */
    fp__rblock *blk;   /* one per run, in run order */
    size_t nblk, blkcap;
    fp__runsets rs;
    fp__brow *erows, *srows;
    uint64_t rejected; /* entity-level values dropped as outliers */
    uint32_t *byg;     /* scratch of adding a run: group -> pair */
    size_t cap_byg;
} fp__builder;

void fp__builder_free(fp__builder *b);
/* The id of the group (key, who), added when new. */
fp_status fp__group_id(fp__groups *g, uint32_t key, uint32_t who, uint32_t *id);
/* Intern metric key text with its unit and direction into b->keys and
 * b->key_rows (a unit that differs from the one kept is warned about, naming
 * run). */
fp_status fp__builder_key(fp__builder *b, const char *key, const char *unit, uint8_t better,
                          const char *run, uint32_t *id);
/* Add the stored runs ids[0..n), in order, interning their ids into b->runs:
 * each run is read while the one before it is added. */
fp_status fp__builder_add_runs(fp_store *s, fp__builder *b, const char *const *ids, size_t n);
/* Reduce every block to the entity and SKU rows and write them, the update
 * state included (written while the rows are reduced), as s's new baselines
 * in one atomic commit; on failure the store is as it was. */
fp_status fp__builder_commit(fp_store *s, fp__builder *b, const fp_baseline_opts *o);

/* baseline_update.c: write the update state (b's blocks, compressed) into
 * /baselines g. */
fp_status fp__baseline_state_write(hid_t g, const fp__builder *b);

#endif
