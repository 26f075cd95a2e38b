#ifndef FLEETPRINT_FINGERPRINT_STORE_HANDLE_H
#define FLEETPRINT_FINGERPRINT_STORE_HANDLE_H
/* The store handle and its catalog (store.c), and the steps of store.c that
 * store_runs.c takes: shared by these two files and history.c only. Private to
 * fingerprint/: fp__ prefix, not installed. */
#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleetprint/store.h"
#include "intern.h"
#include "runtab.h"

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

/* store.c's steps that store_runs.c and history.c use; each is documented
 * where it is defined. */
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
/* store_runs.c: the file type of a sample row (docs/store.md; the caller
 * closes it), and the rest of a run's group g: the context's attributes
 * (nsamples among them), nodes, ranks, configuration, entity and metric
 * tables. The samples are written by the caller (store_append.c streams
 * them). */
hid_t fp__store_sample_type(void);
fp_status fp__store_write_run_tables(hid_t g, const fp__runtab *t, uint64_t nsamples);
/* store_runs.c: copy the runs at catalog rows idx[0..n) into one new
 * partition; their rows then name it (committed by the caller's
 * fp__store_finish_change). */
fp_status fp__store_copy_into_part(fp_store *s, const size_t *idx, size_t n);

#endif
