/* Appends, streamed: the runs of one commit go into a new partition while
 * their samples arrive, a chunk of rows at a time (rowsink.c), so neither a
 * store ingest nor rank 0's append holds a run's rows whole: a run of
 * 22.4 M samples costs its entity and metric tables and a few MiB of chunks.
 * The commit is the store's (store.c): the partition is finished and fsynced,
 * then the manifest renamed over FILE; an append abandoned before that (an
 * error, a kill) leaves a partition no manifest lists, which is removed. */
#include <stdlib.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "h5.h"
#include "rowsink.h"
#include "store_handle.h"
#include "store_internal.h"

#define ROW_BYTES 28 /* a sample row in the file: entity, metric, iter, value, t */
/* Runs whose samples may come interleaved and keep their chunk buffers and
 * filter thread; a run beyond them (a file of hundreds of runs, one after
 * the other) is parked: it keeps only its rows not yet written. */
#define ACTIVE_MAX 4

struct fp__apprun {
    fp__runtab tab;     /* the context and the entity and metric tables (rows stream) */
    hid_t g;            /* the run's group in the partition */
    fp__rowsink *rows;  /* its samples */
    fp__append *a;
};

struct fp__append {
    fp_store *s;
    hid_t part, runs, rowtype;
    char name[PART_NAME_MAX];  /* the partition's file */
    fp__apprun **run;          /* in the order started */
    size_t n, cap;
    fp__strmap ids;            /* the runs started */
    fp__apprun *active[ACTIVE_MAX]; /* the runs not parked, the last added to first */
    bool started;              /* the store is being changed: ends in finish_change */
    bool done;                 /* committed, or the commit failed and was undone */
};

/* ---- rows ----------------------------------------------------------------------------- */

static void put32(unsigned char *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    memcpy(p, &v, 4);
}

static void put_double(unsigned char *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

/* Make r the first of the active runs, parking the one that was added to
 * least recently when there are too many. */
static fp_status activate(fp__apprun *r)
{
    fp__apprun **act = r->a->active;
    size_t i = 0;
    while (i < ACTIVE_MAX - 1 && act[i] && act[i] != r)
        i++;
    fp_status st = act[i] && act[i] != r ? fp__rowsink_park(act[i]->rows) : FP_OK;
    memmove(act + 1, act, i * sizeof *act);
    act[0] = r;
    return st;
}

/* One sample row in the file's layout (little-endian, packed). */
static fp_status put_row(fp__apprun *r, uint32_t eid, uint32_t mid, int32_t iter, double value,
                         double t)
{
    if (r->a->active[0] != r) {
        fp_status st = activate(r);
        if (st != FP_OK)
            return st;
    }
    unsigned char *p = fp__rowsink_next(r->rows);
    if (!p)
        return fp__rowsink_status(r->rows);
    fp_key_shape_add(&r->tab.metrics[mid].shape, iter);
    put32(p, eid);
    put32(p + 4, mid);
    put32(p + 8, (uint32_t)iter);
    put_double(p + 12, value);
    put_double(p + 20, t);
    return FP_OK;
}

fp_status fp__apprun_add(fp__apprun *r, const fp_sample *s, char *err, size_t errlen)
{
    uint32_t eid, mid;
    fp_status st = fp__runtab_intern(&r->tab, s, &eid, &mid, err, errlen);
    return st != FP_OK ? st : put_row(r, eid, mid, s->iter, s->value, s->t_start);
}

fp_status fp__apprun_add_view(fp__apprun *r, const fp_jsonl_sample_view *v, bool *taken)
{
    uint32_t eid, mid;
    fp_status st = fp__runtab_intern_view(&r->tab, v, &eid, &mid, taken);
    return st != FP_OK || !*taken ? st : put_row(r, eid, mid, v->iter, v->value, v->t);
}

fp_run *fp__apprun_context(fp__apprun *r)
{
    return &r->tab.ctx;
}

uint64_t fp__apprun_samples(const fp__apprun *r)
{
    return fp__rowsink_rows(r->rows);
}

/* ---- the append ------------------------------------------------------------------------ */

static void apprun_close(fp__apprun *r)
{
    fp__rowsink_free(r->rows); /* its dataset first: it is in the group */
    r->rows = NULL;
    if (r->g >= 0)
        H5Gclose(r->g);
    r->g = H5I_INVALID_HID;
}

static void apprun_free(fp__apprun *r)
{
    if (!r)
        return;
    apprun_close(r);
    fp__runtab_free(&r->tab);
    free(r);
}

/* Close everything open in the partition, and the partition. */
static void close_all(fp__append *a)
{
    for (size_t i = 0; i < a->n; i++)
        apprun_close(a->run[i]);
    if (a->runs >= 0)
        H5Gclose(a->runs);
    if (a->part >= 0)
        H5Fclose(a->part);
    a->runs = a->part = H5I_INVALID_HID;
}

fp_status fp__append_begin(fp_store *s, fp__append **out)
{
    fp_status st = FP_OK;
    fp__append *a = NULL;
    *out = NULL;
    if (s->mode != FP_STORE_APPEND)
        FP_FAIL(FP_EUSAGE, "%s was opened read-only", s->path);
    a = calloc(1, sizeof *a);
    FP_CHECK_ALLOC(a);
    a->s = s;
    a->part = a->runs = H5I_INVALID_HID;
    FP_CHECK_H5(a->rowtype = fp__store_sample_type());
    if (H5Tget_size(a->rowtype) != ROW_BYTES)
        FP_FAIL(FP_EINTERNAL, "a sample row is %zu bytes, not %d", H5Tget_size(a->rowtype),
                ROW_BYTES);
    *out = a;
    a = NULL;
cleanup:
    fp__append_free(a);
    return st;
}

fp_status fp__append_run(fp__append *a, const char *id, fp__apprun **out, char *err,
                         size_t errlen)
{
    fp_status st = FP_OK;
    fp__apprun *r = NULL;
    uint32_t k;
    *out = NULL;
    if (!fp__store_valid_run_id(id)) {
        snprintf(err, errlen, "run id '%s' is not valid (1-47 printable characters, no '/', "
                              "not 'latest' or 'all')", id);
        return FP_EINPUT;
    }
    if (fp__strmap_find(&a->ids, id, strlen(id)) != FP__NONE) {
        snprintf(err, errlen, "run %s is given twice", id);
        return FP_EINPUT;
    }
    if (fp__strmap_find(&a->s->ids, id, strlen(id)) != FP__NONE) {
        snprintf(err, errlen, "run %s is already in %s (nothing written)", id, a->s->path);
        return FP_EINPUT;
    }
    if (!a->started) {
        a->started = true;
        FP_CHECK(fp__store_make_partitioned(a->s));
        FP_CHECK(fp__store_part_create(a->s, 'p', a->name, &a->part));
        FP_CHECK_H5(a->runs = H5Gopen2(a->part, "runs", H5P_DEFAULT));
    }
    fp__apprun **grown = fp_grow(a->run, &a->cap, a->n + 1, sizeof *grown, 8);
    FP_CHECK_ALLOC(grown);
    a->run = grown;
    FP_CHECK(fp__strmap_intern(&a->ids, id, strlen(id), &k, NULL));
    r = calloc(1, sizeof *r);
    FP_CHECK_ALLOC(r);
    r->g = H5I_INVALID_HID;
    r->a = a;
    snprintf(r->tab.ctx.id, sizeof r->tab.ctx.id, "%s", id);
    snprintf(r->tab.ctx.status, sizeof r->tab.ctx.status, "complete");
    FP_CHECK_H5(r->g = H5Gcreate2(a->runs, id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    FP_CHECK(fp__rowsink_open(r->g, "samples", a->rowtype, &r->rows));
    a->run[a->n++] = r;
    *out = r;
    r = NULL;
cleanup:
    apprun_free(r);
    return st;
}

fp_status fp__append_commit(fp__append *a, const fp_run_verdicts *const *judged)
{
    fp_status st = FP_OK;
    if (!a->started) {
        a->done = true;
        return FP_OK;
    }
    for (size_t i = 0; i < a->n; i++) {
        fp__apprun *r = a->run[i];
        cat_row row;
        FP_CHECK(fp__rowsink_close(r->rows));
        uint64_t n = fp__rowsink_rows(r->rows);
        FP_CHECK(fp__store_write_run_tables(r->g, &r->tab, n));
        apprun_close(r);
        if (judged && judged[i])
            FP_CHECK(fp__store_write_verdicts(a->runs, r->tab.ctx.id, judged[i], "append"));
        fp__store_cat_row_of(&row, &r->tab.ctx, n, a->name);
        FP_CHECK(fp__store_cat_push(a->s, &row));
    }
    H5Gclose(a->runs);
    a->runs = H5I_INVALID_HID;
    st = fp__store_part_finish(a->s, a->part, a->name);
    a->part = H5I_INVALID_HID;
cleanup:
    close_all(a);
    a->done = true;
    return fp__store_finish_change(a->s, st);
}

void fp__append_free(fp__append *a)
{
    if (!a)
        return;
    close_all(a);
    if (a->started && !a->done)
        fp__store_finish_change(a->s, FP_EINPUT); /* back to the committed state */
    for (size_t i = 0; i < a->n; i++)
        apprun_free(a->run[i]);
    free(a->run);
    fp__strmap_free(&a->ids);
    if (a->rowtype >= 0)
        H5Tclose(a->rowtype);
    free(a);
}

/* ---- the public appends ------------------------------------------------------------- */

/* A run's samples into r, of either form. A run of rows (rank 0's gathered
 * run) streams as it is, never expanded: each of its keys and entities is
 * interned when a row first names it, as its samples would be in the same
 * order, so the tables and rows stored are those of its samples. */
static fp_status add_samples(fp__apprun *r, const fp_run *run, char *err, size_t errlen)
{
    fp_status st = FP_OK;
    const fp_run_rows *rows = run->rows;
    uint32_t *kmap = NULL, *emap = NULL;
    for (size_t j = 0; !rows && j < run->nsamples; j++) {
        st = fp__apprun_add(r, &run->samples[j], err, errlen);
        if (st == FP_EINPUT)
            FP_FAIL(FP_EINPUT, "run %s, sample %zu: %s", run->id, j, err);
        FP_CHECK(st);
    }
    if (!rows)
        goto cleanup;
    if (!rows->t && rows->n)
        FP_FAIL(FP_EINTERNAL, "run %s was read without its samples' start times: it cannot be "
                              "stored", run->id);
    /* by the run's key (entity) id: the store's, FP__NONE until met */
    kmap = malloc((rows->nkeys + 1) * sizeof *kmap);
    emap = fp_malloc_huge((rows->nents + 1) * sizeof *emap);
    FP_CHECK_ALLOC(kmap);
    FP_CHECK_ALLOC(emap);
    memset(kmap, 0xff, (rows->nkeys + 1) * sizeof *kmap);
    memset(emap, 0xff, (rows->nents + 1) * sizeof *emap);
    for (size_t j = 0; j < rows->n; j++) {
        const fp_sample_row *x = &rows->row[j];
        uint32_t *mid = &kmap[x->key], *eid = &emap[x->entity];
        if (*mid == FP__NONE || *eid == FP__NONE) {
            fp_sample s;
            fp_run_sample(run, j, &s);
            st = fp__runtab_intern(&r->tab, &s, eid, mid, err, errlen);
            if (st == FP_EINPUT)
                FP_FAIL(FP_EINPUT, "run %s, sample %zu: %s", run->id, j, err);
            FP_CHECK(st);
        }
        FP_CHECK(put_row(r, *eid, *mid, x->iter, x->value, rows->t[j]));
    }
cleanup:
    free(kmap);
    free(emap);
    return st;
}

fp_status fp_store_append_judged_runs(fp_store *s, const fp_run *const *runs,
                                      const fp_run_verdicts *const *v, size_t n)
{
    fp_status st = FP_OK;
    fp__append *a = NULL;
    fp__apprun **r = calloc(n ? n : 1, sizeof *r);
    char err[512];
    FP_CHECK_ALLOC(r);
    FP_CHECK(fp__append_begin(s, &a));
    /* every run is checked before any sample is written */
    for (size_t i = 0; i < n; i++) {
        fp_status rs = fp__append_run(a, runs[i]->id, &r[i], err, sizeof err);
        if (rs == FP_EINPUT)
            FP_FAIL(FP_EINPUT, "%s", err);
        FP_CHECK(rs);
        fp_run *ctx = fp__apprun_context(r[i]);
        fp_run_free(ctx);
        FP_CHECK(fp__run_copy_context(ctx, runs[i]));
    }
    for (size_t i = 0; i < n; i++)
        FP_CHECK(add_samples(r[i], runs[i], err, sizeof err));
    st = fp__append_commit(a, v);
cleanup:
    fp__append_free(a);
    free(r);
    return st;
}

fp_status fp_store_append_runs(fp_store *s, const fp_run *const *runs, size_t n)
{
    return fp_store_append_judged_runs(s, runs, NULL, n);
}

fp_status fp_store_append(fp_store *s, const fp_run *run)
{
    return fp_store_append_runs(s, &run, 1);
}

fp_status fp_store_append_file(const char *path, const fp_run *run, double lock_timeout_s)
{
    return fp_store_append_judged_file(path, run, NULL, lock_timeout_s);
}
