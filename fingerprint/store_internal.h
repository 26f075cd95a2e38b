#ifndef FLEETPRINT_STORE_INTERNAL_H
#define FLEETPRINT_STORE_INTERNAL_H
/* Internals shared by the files of fingerprint/ (store.c, baseline.c, the
 * commands). Not a public API: fp__ prefix, not installed. */
#include <hdf5.h>
#include <stdio.h>

#include "fleetprint/store.h"

/* ---- string interning: dense ids 0..n-1 for distinct strings ------------------- */

typedef struct fp__strmap {
    char *pool;         /* all strings, NUL-terminated, back to back */
    size_t pool_len, pool_cap;
    uint32_t *off;      /* id -> offset in pool */
    uint32_t *hash;     /* id -> hash */
    uint32_t n, cap;    /* ids in use / allocated */
    uint32_t *slot;     /* open addressing: id + 1, 0 = empty */
    uint32_t nslots;    /* power of two */
} fp__strmap;

#define FP__NONE UINT32_MAX

/* Find or add the string s[0..len) (no NUL inside). *id gets its id; *added
 * (may be NULL) says whether it was new. FP_ENOMEM on allocation failure. */
fp_status fp__strmap_intern(fp__strmap *m, const char *s, size_t len, uint32_t *id, bool *added);
/* The id of s, or FP__NONE. */
uint32_t fp__strmap_find(const fp__strmap *m, const char *s, size_t len);
/* The string of an id (valid until the next intern). */
static inline const char *fp__strmap_str(const fp__strmap *m, uint32_t id)
{
    return m->pool + m->off[id];
}
/* Longest string length + 1 (at least 2), for fixed-size HDF5 strings. */
size_t fp__strmap_width(const fp__strmap *m);
void fp__strmap_free(fp__strmap *m);

/* A map from 64-bit keys to 32-bit values (open addressing). */
typedef struct fp__u64map {
    uint64_t *key;
    uint32_t *val; /* FP__NONE marks an empty slot */
    size_t nslots, n;
} fp__u64map;

fp_status fp__u64map_reserve(fp__u64map *m, size_t n);
fp_status fp__u64map_put(fp__u64map *m, uint64_t key, uint32_t val);
uint32_t fp__u64map_get(const fp__u64map *m, uint64_t key);
void fp__u64map_free(fp__u64map *m);

/* ---- compact runs: what one /runs/<id> group holds ---------------------------- */

/* A sample as stored: keys into the run's entity and metric tables. */
typedef struct fp__row {
    uint32_t entity;
    uint32_t metric;
    int32_t iter;
    double value;
    double t;
} fp__row;

/* A metric key of a run: suite.test.metric@size with its unit and direction. */
typedef struct fp__metric {
    char suite[16];
    char test[24];
    char metric[32];
    char unit[16];
    uint8_t better;
    uint64_t size;
} fp__metric;

typedef struct fp__runtab {
    fp_run ctx;           /* the context; ctx.samples stays empty */
    fp__strmap entities;  /* canonical entity text */
    fp_entity *ent;       /* parsed entities by id (filled when read from a file) */
    fp__strmap keys;      /* metric identity (suite, test, metric, size) */
    fp__metric *metrics;  /* by key id */
    size_t metric_cap;
    uint32_t last_metric; /* key id of the last sample added */
    fp__row *rows;
    size_t nrows, row_cap;
} fp__runtab;

/* Intern and append one sample. FP_EINPUT with err when the sample's metric
 * was seen before with another unit or direction. */
fp_status fp__runtab_add(fp__runtab *t, const fp_sample *s, char *err, size_t errlen);
/* Build a runtab from a run (context copied, samples interned). */
fp_status fp__runtab_from_run(fp__runtab *t, const fp_run *run);
/* Expand the row i into a full sample. */
void fp__runtab_sample(const fp__runtab *t, size_t i, fp_sample *s);
/* Copy a context (nodes and ranks deep-copied; samples not). */
fp_status fp__run_copy_context(fp_run *dst, const fp_run *src);
void fp__runtab_free(fp__runtab *t);

/* Read /runs/<id> of the current file into t (zeroed first; freed by caller). */
fp_status fp__store_read_runtab(fp_store *s, const char *id, fp__runtab *t);
/* Whether stored run id can be read: FP_OK, or FP_EINPUT with the reason in why
 * (a phrase naming the file). Cheap: its partition file exists. deep: the run is
 * read whole and holds as many samples as the manifest lists (read errors are
 * logged as they happen). */
fp_status fp__store_run_readable(fp_store *s, const char *id, bool deep, char *why, size_t len);
/* Append runtabs in one commit (the engine behind fp_store_append_runs). */
fp_status fp__store_append_runtabs(fp_store *s, fp__runtab *const *tabs, size_t n);

/* ---- transactions ------------------------------------------------------------------ */

/* Open (once; the handle keeps it) the file holding /baselines: *file is
 * H5I_INVALID_HID when the store has no baselines. FP_EINPUT when the file is
 * missing or not a partition. */
fp_status fp__store_baselines_file(fp_store *s, hid_t *file);

/* Start replacing the baselines: *tmp is a new, empty partition file, open
 * read-write, into which the caller writes /baselines. */
fp_status fp__store_tx_begin(fp_store *s, hid_t *tmp);
/* Close and fsync the new file and commit a manifest naming it as the
 * baselines (the old baselines file is removed). On failure the store is as
 * it was and the new file is removed. tmp is closed either way. */
fp_status fp__store_tx_commit(fp_store *s, hid_t tmp);
/* Drop the new file. */
void fp__store_tx_abort(fp_store *s, hid_t tmp);

/* ---- HDF5 helpers ------------------------------------------------------------------ */

/* A fixed-size NUL-terminated string type of width bytes (caller closes). */
hid_t fp__h5_str_type(size_t width);
/* Scalar attributes. */
fp_status fp__h5_attr_str(hid_t obj, const char *name, const char *value);
fp_status fp__h5_attr_double(hid_t obj, const char *name, double value);
fp_status fp__h5_attr_i64(hid_t obj, const char *name, long long value);
/* Read attributes; a missing one gives "" / 0 and FP_OK when optional. */
fp_status fp__h5_read_attr_str(hid_t obj, const char *name, char *buf, size_t len);
fp_status fp__h5_read_attr_double(hid_t obj, const char *name, double *out);
fp_status fp__h5_read_attr_i64(hid_t obj, const char *name, long long *out);

/* Write n rows of memtype as dataset name (file type filetype), chunked along
 * an unlimited dimension and compressed (shuffle + deflate). n may be 0. */
fp_status fp__h5_write_table(hid_t loc, const char *name, hid_t filetype, hid_t memtype,
                             const void *data, size_t n);
/* Read a 1-D dataset into a new array of *n rows of memtype (caller frees).
 * FP_EINPUT naming the dataset when it is missing or not 1-D. */
fp_status fp__h5_read_table(hid_t loc, const char *name, hid_t memtype, size_t rowsize,
                            void **out, size_t *n);
/* Read a 1-D fixed-string dataset into a strmap (ids = row numbers; repeated
 * strings are an error). */
fp_status fp__h5_read_strings(hid_t loc, const char *name, fp__strmap *m);
/* Write a strmap as a 1-D fixed-string dataset (row = id). */
fp_status fp__h5_write_strings(hid_t loc, const char *name, const fp__strmap *m);

/* ---- the store handle and catalog (store.c), shared with store_runs.c ---------------- */

#define PART_NAME_MAX 24

/* One run as the manifest lists it (/catalog row): its summary and the
 * partition file that holds it. */
typedef struct cat_row {
    char id[48];
    char file[PART_NAME_MAX]; /* under FILE.d/; "" is FILE itself (a schema-1 store) */
    char tag[32];
    char status[16];
    double time, duration;
    int32_t nranks, nnodes;
    uint64_t nsamples;
    uint8_t injected;
    uint8_t emulated; /* ran on an emulated device: baselines never use it */
} cat_row;

struct fp_store {
    char *path;      /* FILE: the manifest (schema 2) or the whole store (schema 1) */
    char *lock_path; /* FILE.lock */
    char *tmp_path;  /* FILE.tmp: the next manifest while it is written */
    char *dir;       /* the directory holding FILE */
    char *parts;     /* FILE.d: the partition files */
    char *parts_rel; /* the same, relative to dir (what the external links name) */
    fp_store_mode mode;
    int lock_fd;
    int schema;      /* of the committed FILE: 0 none yet, 1 one file, 2 manifest */
    cat_row *cat;    /* the committed runs (plus the change being made, while it is) */
    size_t ncat, catcap;
    fp__strmap ids;  /* run id -> catalog row */
    bool has_baselines;
    char baselines[PART_NAME_MAX]; /* the file holding /baselines ("" = FILE) */
    char pending[PART_NAME_MAX];   /* the baselines file being written */
    long long next_part;           /* number of the next partition file */
    hid_t bfile;                   /* the baselines file, opened on first use */
};

/* store.c's steps that store_runs.c uses; each is documented where it is defined. */
void fp__store_cat_row_of(cat_row *r, const fp_run *c, uint64_t nsamples, const char *file);
fp_status fp__store_finish_change(fp_store *s, fp_status st);
fp_status fp__store_make_partitioned(fp_store *s);
fp_status fp__store_part_create(fp_store *s, char kind, char *name, hid_t *out);
fp_status fp__store_part_finish(fp_store *s, hid_t f, const char *name);
bool fp__store_valid_run_id(const char *id);
fp_status fp__store_cat_push(fp_store *s, const cat_row *r);
fp_status fp__store_open_part(const fp_store *s, const char *file, const char *what, hid_t *out);
void fp__store_part_path(const fp_store *s, const char *file, char *buf, size_t len);
fp_status fp__store_read_context(hid_t g, fp_run *c);

#endif
