/* A run in the store: its group in a partition file (samples, metrics, ranks
 * and context), written by appends, read back by id, listed, removed and
 * compacted into fewer partition files. The store handle, catalog and
 * commits: store.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleetprint/mem.h"
#include "fleetprint/log.h"
#include "h5.h"
#include "intern.h"
#include "runtab.h"
#include "store_handle.h"
#include "store_internal.h"

/* ---- record types ----------------------------------------------------------------- */

/* A rank's record is read and written as fp_rank_info itself: no copy of
 * 800,000 of them (134 MB) on the way. */
_Static_assert(sizeof(int) == 4, "fp_rank_info's ints are the file's 32-bit members");

/* Build the memory (native, padded) or file (little-endian, packed) compound
 * type for one of the record kinds below. */
typedef enum { REC_ROW, REC_TIME, REC_METRIC, REC_RANK, REC_CONFIG } rec_kind;

static hid_t rec_type(rec_kind kind, bool file)
{
    hid_t t = H5I_INVALID_HID, s16 = fp__h5_str_type(16), s24 = fp__h5_str_type(24),
          s32 = fp__h5_str_type(32), s48 = fp__h5_str_type(48),
          s64 = fp__h5_str_type(FP_NAME_MAX), s96 = fp__h5_str_type(96);
    hid_t u8 = file ? H5T_STD_U8LE : H5T_NATIVE_UINT8, u32 = file ? H5T_STD_U32LE : H5T_NATIVE_UINT32,
          i32 = file ? H5T_STD_I32LE : H5T_NATIVE_INT32, u64 = file ? H5T_STD_U64LE : H5T_NATIVE_UINT64,
          f64 = file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
    size_t off = 0;
    bool ok = true;
#define FIELD(name, type, memoff, size)                                                    \
    do {                                                                                   \
        ok = ok && H5Tinsert(t, name, file ? off : (memoff), type) >= 0;                   \
        off += (size);                                                                     \
    } while (0)
    switch (kind) {
    case REC_ROW: /* a file row holds its start time; in memory that is REC_TIME's */
        t = H5Tcreate(H5T_COMPOUND, file ? 28 : sizeof(fp__row));
        FIELD("entity", u32, HOFFSET(fp__row, entity), 4);
        FIELD("metric", u32, HOFFSET(fp__row, key), 4);
        FIELD("iter", i32, HOFFSET(fp__row, iter), 4);
        FIELD("value", f64, HOFFSET(fp__row, value), 8);
        if (file)
            FIELD("t", f64, 0, 8);
        break;
    case REC_TIME: /* the rows' start times alone, read only where wanted */
        t = H5Tcreate(H5T_COMPOUND, sizeof(double));
        FIELD("t", f64, 0, 8);
        break;
    case REC_METRIC: /* the shape: since 2026-11-28 (older runs lack it) */
        t = H5Tcreate(H5T_COMPOUND, file ? 16 + 24 + 32 + 16 + 1 + 8 + 12 : sizeof(fp__metric));
        FIELD("suite", s16, HOFFSET(fp__metric, suite), 16);
        FIELD("test", s24, HOFFSET(fp__metric, test), 24);
        FIELD("metric", s32, HOFFSET(fp__metric, metric), 32);
        FIELD("unit", s16, HOFFSET(fp__metric, unit), 16);
        FIELD("better", u8, HOFFSET(fp__metric, better), 1);
        FIELD("size", u64, HOFFSET(fp__metric, size), 8);
        FIELD("last_window", i32, HOFFSET(fp__metric, shape.last), 4);
        FIELD("first_windows", u32, HOFFSET(fp__metric, shape.firsts), 4);
        FIELD("summaries", u32, HOFFSET(fp__metric, shape.summaries), 4);
        break;
    case REC_RANK:
        t = H5Tcreate(H5T_COMPOUND, file ? 12 + 16 + FP_NAME_MAX + 48 + 24 : sizeof(fp_rank_info));
        FIELD("node", i32, HOFFSET(fp_rank_info, node), 4);
        FIELD("local_rank", i32, HOFFSET(fp_rank_info, local_rank), 4);
        FIELD("dev", i32, HOFFSET(fp_rank_info, dev), 4);
        FIELD("clock_offset", f64, HOFFSET(fp_rank_info, clock_offset), 8);
        FIELD("clock_error", f64, HOFFSET(fp_rank_info, clock_error), 8);
        FIELD("model", s64, HOFFSET(fp_rank_info, model), FP_NAME_MAX);
        FIELD("uuid", s48, HOFFSET(fp_rank_info, uuid), 48);
        FIELD("pci_bus", s24, HOFFSET(fp_rank_info, pci_bus), 24);
        break;
    case REC_CONFIG: /* the configuration record: one row per field (fp_cfg_item) */
        t = H5Tcreate(H5T_COMPOUND, file ? 8 + 32 + 96 : sizeof(fp_cfg_item));
        FIELD("node", i32, HOFFSET(fp_cfg_item, node), 4);
        FIELD("dev", i32, HOFFSET(fp_cfg_item, dev), 4);
        FIELD("field", s32, HOFFSET(fp_cfg_item, field), 32);
        FIELD("value", s96, HOFFSET(fp_cfg_item, value), 96);
        break;
    }
#undef FIELD
    H5Tclose(s16);
    H5Tclose(s24);
    H5Tclose(s32);
    H5Tclose(s48);
    H5Tclose(s64);
    H5Tclose(s96);
    if (!ok && t >= 0) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

/* ==== run groups ===================================================================== */

hid_t fp__store_sample_type(void)
{
    return rec_type(REC_ROW, true);
}

fp_status fp__store_write_run_tables(hid_t g, const fp__runtab *t, uint64_t nsamples)
{
    fp_status st = FP_OK;
    hid_t ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    hid_t nodet = H5I_INVALID_HID;
    const fp_run *c = &t->ctx;
#define STR(field) FP_CHECK(fp__h5_attr_str(g, #field, c->field));
    STR(id)
    FP_RUN_TEXT_FIELDS(STR)
#undef STR
    FP_CHECK(fp__h5_attr_double(g, "time", c->time));
    FP_CHECK(fp__h5_attr_double(g, "duration", c->duration));
    FP_CHECK(fp__h5_attr_i64(g, "nranks", c->nranks));
    FP_CHECK(fp__h5_attr_i64(g, "nnodes", c->nnodes));
    FP_CHECK(fp__h5_attr_i64(g, "nsamples", (long long)nsamples));

    FP_CHECK_H5(nodet = fp__h5_str_type(FP_NAME_MAX));
    FP_CHECK(fp__h5_write_table(g, "nodes", nodet, nodet, c->nodes, (size_t)c->nnodes));

    FP_CHECK_H5(ft = rec_type(REC_RANK, true));
    FP_CHECK_H5(mt = rec_type(REC_RANK, false));
    FP_CHECK(fp__h5_write_table(g, "ranks", ft, mt, c->ranks, (size_t)c->nranks));
    H5Tclose(ft);
    H5Tclose(mt);
    ft = mt = H5I_INVALID_HID;

    if (c->nconfig) { /* runs without a record (older versions) have no table */
        FP_CHECK_H5(ft = rec_type(REC_CONFIG, true));
        FP_CHECK_H5(mt = rec_type(REC_CONFIG, false));
        FP_CHECK(fp__h5_write_table(g, "config", ft, mt, c->config, c->nconfig));
        H5Tclose(ft);
        H5Tclose(mt);
        ft = mt = H5I_INVALID_HID;
    }

    FP_CHECK(fp__h5_write_strings(g, "entities", &t->entities));

    FP_CHECK_H5(ft = rec_type(REC_METRIC, true));
    FP_CHECK_H5(mt = rec_type(REC_METRIC, false));
    FP_CHECK(fp__h5_write_table(g, "metrics", ft, mt, t->metrics, t->keys.n));
cleanup:
    if (nodet >= 0)
        H5Tclose(nodet);
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    return st;
}

static uint32_t find_run(const fp_store *s, const char *id)
{
    return fp__strmap_find(&s->ids, id, strlen(id));
}

fp_status fp__store_run_readable(fp_store *s, const char *id, bool deep, char *why, size_t len)
{
    fp__runtab t;
    char path[4096];
    uint32_t k = find_run(s, id);
    if (k == FP__NONE) {
        snprintf(why, len, "not in the manifest");
        return FP_EINPUT;
    }
    const cat_row *c = &s->cat[k];
    fp__store_part_path(s, c->file, path, sizeof path);
    if (c->file[0] && access(path, F_OK) != 0) {
        snprintf(why, len, "its partition %s is missing", path);
        return FP_EINPUT;
    }
    if (!deep)
        return FP_OK;
    fp_status st = fp__store_read_runtab(s, id, false, &t);
    bool read = st == FP_OK;
    if (st != FP_OK) {
        snprintf(why, len, "its partition %s cannot be read (%s: the error above)", path,
                 fp_strerror(st));
        st = FP_EINPUT;
    } else if (t.nrows != c->nsamples) {
        snprintf(why, len, "its partition %s holds %zu samples, the manifest lists %llu", path,
                 t.nrows, (unsigned long long)c->nsamples);
        st = FP_EINPUT;
    }
    if (read && st == FP_OK)
        st = fp__store_verdicts_readable(s, id, why, len);
    fp__runtab_free(&t);
    return st;
}

fp_status fp__store_copy_into_part(fp_store *s, const size_t *idx, size_t n)
{
    fp_status st = FP_OK;
    hid_t dst = H5I_INVALID_HID, runs = H5I_INVALID_HID, src = H5I_INVALID_HID;
    char name[PART_NAME_MAX], from[PART_NAME_MAX] = "";
    FP_CHECK(fp__store_part_create(s, 'p', name, &dst));
    FP_CHECK_H5(runs = H5Gopen2(dst, "runs", H5P_DEFAULT));
    for (size_t i = 0; i < n; i++) {
        cat_row *r = &s->cat[idx[i]];
        char obj[64];
        if (src < 0 || strcmp(from, r->file) != 0) {
            if (src >= 0)
                H5Fclose(src);
            src = H5I_INVALID_HID;
            FP_CHECK(fp__store_open_part(s, r->file, r->id, &src));
            memcpy(from, r->file, sizeof from);
        }
        snprintf(obj, sizeof obj, "runs/%s", r->id);
        FP_CHECK_H5(H5Ocopy(src, obj, runs, r->id, H5P_DEFAULT, H5P_DEFAULT));
    }
    H5Gclose(runs);
    runs = H5I_INVALID_HID;
    st = fp__store_part_finish(s, dst, name);
    dst = H5I_INVALID_HID;
    for (size_t i = 0; st == FP_OK && i < n; i++)
        memcpy(s->cat[idx[i]].file, name, sizeof name);
cleanup:
    if (src >= 0)
        H5Fclose(src);
    if (runs >= 0)
        H5Gclose(runs);
    if (dst >= 0)
        H5Fclose(dst);
    return st;
}

fp_status fp_store_remove(fp_store *s, const char *const *ids, size_t n)
{
    fp_status st = FP_OK;
    bool *gone = NULL, started = false;
    size_t *keep = NULL;
    if (s->mode != FP_STORE_APPEND)
        FP_FAIL(FP_EUSAGE, "%s was opened read-only", s->path);
    if (s->schema == 0)
        FP_FAIL(FP_EINPUT, "%s: no such store", s->path);
    gone = calloc(s->ncat ? s->ncat : 1, sizeof *gone);
    keep = calloc(s->ncat ? s->ncat : 1, sizeof *keep);
    FP_CHECK_ALLOC(gone);
    FP_CHECK_ALLOC(keep);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = find_run(s, ids[i]);
        if (!fp__store_valid_run_id(ids[i]) || k == FP__NONE)
            FP_FAIL(FP_EINPUT, "no run '%s' in %s (nothing removed)", ids[i], s->path);
        gone[k] = true;
    }
    started = true;
    FP_CHECK(fp__store_make_partitioned(s));
    /* a partition that loses some of its runs is rewritten with the others;
     * one that loses all of them is simply no longer listed */
    for (size_t i = 0; i < s->ncat; i++) {
        if (!gone[i] || !s->cat[i].file[0])
            continue;
        char file[PART_NAME_MAX];
        size_t nkeep = 0;
        memcpy(file, s->cat[i].file, sizeof file);
        for (size_t j = 0; j < s->ncat; j++) {
            if (strcmp(s->cat[j].file, file) != 0)
                continue;
            if (!gone[j])
                keep[nkeep++] = j;
            else
                s->cat[j].file[0] = 0; /* this partition is done */
        }
        if (nkeep)
            FP_CHECK(fp__store_copy_into_part(s, keep, nkeep));
    }
    size_t m = 0;
    for (size_t i = 0; i < s->ncat; i++)
        if (!gone[i])
            s->cat[m++] = s->cat[i];
    s->ncat = m;
cleanup:
    free(gone);
    free(keep);
    return started ? fp__store_finish_change(s, st) : st;
}

static int cat_time_cmp(const void *a, const void *b, void *arg)
{
    const cat_row *cat = arg, *x = &cat[*(const size_t *)a], *y = &cat[*(const size_t *)b];
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return strcmp(x->id, y->id);
}

fp_status fp_store_compact(fp_store *s, uint64_t target, fp_compact_summary *sum)
{
    fp_status st = FP_OK;
    size_t *order = NULL, *batch = NULL, nb = 0;
    uint64_t *fsize = NULL, *fsamples = NULL, bytes = 0;
    fp__strmap files = {0};
    bool started = false;
    hid_t bsrc = H5I_INVALID_HID, bdst = H5I_INVALID_HID;
    fp_compact_summary out = {0};
    if (s->mode != FP_STORE_APPEND)
        FP_FAIL(FP_EUSAGE, "%s was opened read-only", s->path);
    if (s->schema == 0)
        FP_FAIL(FP_EINPUT, "%s: no such store", s->path);
    if (target == 0)
        FP_FAIL(FP_EUSAGE, "compact: the target size must be positive");
    started = true;
    FP_CHECK(fp__store_make_partitioned(s));
    size_t n = s->ncat;
    order = malloc((n ? n : 1) * sizeof *order);
    batch = malloc((n ? n : 1) * sizeof *batch);
    fsize = calloc(n ? n : 1, sizeof *fsize);
    fsamples = calloc(n ? n : 1, sizeof *fsamples);
    FP_CHECK_ALLOC(order);
    FP_CHECK_ALLOC(batch);
    FP_CHECK_ALLOC(fsize);
    FP_CHECK_ALLOC(fsamples);
    /* each partition's size on disk and samples, to estimate a run's bytes */
    for (size_t i = 0; i < n; i++) {
        uint32_t f;
        bool added;
        FP_CHECK(fp__strmap_intern(&files, s->cat[i].file, strlen(s->cat[i].file), &f, &added));
        if (added) {
            char p[4096];
            struct stat sb;
            fp__store_part_path(s, s->cat[i].file, p, sizeof p);
            fsize[f] = stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
        }
        fsamples[f] += s->cat[i].nsamples + 1;
        order[i] = i;
    }
    out.files_before = files.n;
    qsort_r(order, n, sizeof *order, cat_time_cmp, s->cat);
    /* runs of partitions smaller than the target, oldest first, are copied
     * into new partitions of about the target size; big ones stay */
    for (size_t k = 0; k <= n; k++) {
        uint32_t f = k < n ? fp__strmap_find(&files, s->cat[order[k]].file,
                                             strlen(s->cat[order[k]].file))
                           : FP__NONE;
        bool small = f != FP__NONE && fsize[f] < target;
        if (small) {
            batch[nb++] = order[k];
            bytes += fsize[f] * (s->cat[order[k]].nsamples + 1) / fsamples[f];
        }
        if (nb && (bytes >= target || k == n)) {
            /* a batch that is exactly one whole partition is left as it is */
            const char *first = s->cat[batch[0]].file;
            size_t same = 0;
            for (size_t i = 0; i < nb; i++)
                same += strcmp(s->cat[batch[i]].file, first) == 0;
            size_t whole = 0;
            for (size_t i = 0; i < n; i++)
                whole += strcmp(s->cat[i].file, first) == 0;
            if (same != nb || whole != nb) {
                FP_CHECK(fp__store_copy_into_part(s, batch, nb));
                out.runs_moved += nb;
            }
            nb = 0;
            bytes = 0;
        }
    }
    /* baselines that share a partition with runs (a migrated schema-1 store)
     * move to a file of their own, so that partition can go */
    if (s->has_baselines && s->baselines[0] == 'p') {
        FP_CHECK(fp__store_open_part(s, s->baselines, "the baselines file", &bsrc));
        FP_CHECK(fp__store_part_create(s, 'b', s->pending, &bdst));
        FP_CHECK_H5(H5Ocopy(bsrc, "baselines", bdst, "baselines", H5P_DEFAULT, H5P_DEFAULT));
        st = fp__store_part_finish(s, bdst, s->pending);
        bdst = H5I_INVALID_HID;
        FP_CHECK(st);
        memcpy(s->baselines, s->pending, sizeof s->baselines);
    }
    fp__strmap_free(&files);
    for (size_t i = 0; i < n; i++)
        FP_CHECK(fp__strmap_intern(&files, s->cat[i].file, strlen(s->cat[i].file),
                                   &(uint32_t){0}, NULL));
    out.files_after = files.n;
    if (sum)
        *sum = out;
cleanup:
    if (bsrc >= 0)
        H5Fclose(bsrc);
    if (bdst >= 0)
        H5Fclose(bdst);
    fp__strmap_free(&files);
    free(order);
    free(batch);
    free(fsize);
    free(fsamples);
    return started ? fp__store_finish_change(s, st) : st;
}

/* ---- reading runs ------------------------------------------------------------------ */

/* What read_runtab reads of a run: its nodes and configuration records;
 * those and its ranks (the context); all that and its entities, metrics and
 * rows (fp__store_read_runtab). */
/* The entities of a run table parsed (t->ent, from names when read so, else
 * from t->entities) on a thread of its own while its samples are read: 1.3 M
 * of them took 0.1 s at 100,000 nodes x 8. bad: the first malformed one, or
 * t->nent. */
typedef struct parse_job {
    fp__runtab *t;
    const char *names;
    size_t width, bad;
    pthread_t thread;
    bool running;
} parse_job;

static const char *entity_text(const parse_job *j, size_t i)
{
    return j->names ? j->names + i * j->width : fp__strmap_str(&j->t->entities, (uint32_t)i);
}

static void *parse_main(void *arg)
{
    parse_job *j = arg;
    fp_populate(j->t->ent, j->t->nent * sizeof *j->t->ent);
    for (size_t i = 0; i < j->t->nent && j->bad == j->t->nent; i++)
        if (!fp_entity_parse(entity_text(j, i), &j->t->ent[i]))
            j->bad = i;
    return NULL;
}

static void parse_wait(parse_job *j)
{
    if (j->running)
        pthread_join(j->thread, NULL);
    j->running = false;
}

/* READ_ROWS: the samples, their entities parsed but not kept as text (the
 * text table of 1.3 M entities took 0.1 s to index at 100,000 nodes x 8). */
typedef enum { READ_CONFIG, READ_CONTEXT, READ_SAMPLES, READ_ROWS } read_what;

/* The samples of run group g packed into *pack (rows of memtype mt), or
 * *pack NULL where the table is not of a layout kept packed. */
static fp_status read_samples_packed(hid_t g, hid_t mt, fp__pack **pack, size_t *n)
{
    fp_status st = FP_OK;
    hid_t ds = H5I_INVALID_HID, space = H5I_INVALID_HID;
    hsize_t dims[1];
    *pack = NULL;
    FP_CHECK_H5(ds = H5Dopen2(g, "samples", H5P_DEFAULT));
    FP_CHECK_H5(space = H5Dget_space(ds));
    if (H5Sget_simple_extent_ndims(space) != 1)
        goto cleanup; /* fp__h5_read_table says what is wrong */
    FP_CHECK_H5(H5Sget_simple_extent_dims(space, dims, NULL));
    FP_CHECK(fp__h5_read_packed(ds, mt, sizeof(fp__row), (size_t)dims[0], pack));
    *n = (size_t)dims[0];
cleanup:
    fp__h5_close(space);
    fp__h5_close(ds);
    return st;
}

/* "STORE: run ID", for messages */
#define RUN_NAME_MAX (4096 + 64)

/* The first of rows[0..n) that refers past nents entities or nkeys
 * metrics; n where none does. */
static size_t first_out_of_range(const fp__row *rows, size_t n, size_t nents, size_t nkeys)
{
    size_t i = 0;
    while (i < n && rows[i].entity < nents && rows[i].key < nkeys)
        i++;
    return i;
}

/* FP_EINPUT (logged, what: "STORE: run ID") where one of rows [0, n) (the
 * first of them sample first) refers past nents entities or nkeys metrics. */
static fp_status rows_in_range(const char *what, const fp__row *rows, size_t n, size_t first,
                               size_t nents, size_t nkeys)
{
    size_t i = first_out_of_range(rows, n, nents, nkeys);
    if (i == n)
        return FP_OK;
    fp_error("%s: sample %zu refers past the entity or metric table (corrupt)", what, first + i);
    return FP_EINPUT;
}

/* times: the rows' start times too (t->t), a read of their own. pack: where
 * not NULL, the samples are kept packed there where their layout allows (t
 * has no rows then), else read as rows. */
static fp_status read_runtab(fp_store *s, const char *id, fp__runtab *t, read_what what,
                             bool times, fp__pack **pack)
{
    fp_status st = FP_OK;
    hid_t g = H5I_INVALID_HID, mt = H5I_INVALID_HID, nodet = H5I_INVALID_HID;
    hid_t part = H5I_INVALID_HID;
    fp_rank_info *ranks = NULL;
    parse_job pj = {0};
    char (*nodes)[FP_NAME_MAX] = NULL, *names = NULL;
    size_t width = 0;
    size_t nn = 0, nr = 0, nm = 0;
    char name[64];
    memset(t, 0, sizeof *t);
    snprintf(name, sizeof name, "runs/%s", id);
    uint32_t k = fp__store_valid_run_id(id) ? find_run(s, id) : FP__NONE;
    if (k == FP__NONE)
        FP_FAIL(FP_EINPUT, "no run '%s' in %s", id, s->path);
    FP_CHECK(fp__store_open_part(s, s->cat[k].file, id, &part));
    if (H5Lexists(part, name, H5P_DEFAULT) <= 0)
        FP_FAIL(FP_EINPUT, "%s: run %s is not in its partition %s (corrupt)", s->path, id,
                s->cat[k].file);
    FP_CHECK_H5(g = H5Gopen2(part, name, H5P_DEFAULT));
    FP_CHECK(fp__store_read_context(g, &t->ctx));
    /* the entities first: they are parsed on a thread of their own while the
     * rest is read (the ranks alone took 0.1 s at 100,000 nodes x 8) */
    if (what == READ_SAMPLES || what == READ_ROWS) {
        if (what == READ_SAMPLES) {
            FP_CHECK(fp__h5_read_strings(g, "entities", &t->entities));
            t->nent = t->entities.n;
        } else {
            FP_CHECK(fp__h5_read_fixed_strings(g, "entities", &names, &width, &t->nent));
        }
        t->ent = fp_calloc_huge(t->nent ? t->nent : 1, sizeof *t->ent);
        FP_CHECK_ALLOC(t->ent);
        pj = (parse_job){.t = t, .names = names, .width = width, .bad = t->nent};
        pj.running = pthread_create(&pj.thread, NULL, parse_main, &pj) == 0;
        if (!pj.running)
            parse_main(&pj);
    }

    FP_CHECK_H5(nodet = fp__h5_str_type(FP_NAME_MAX));
    FP_CHECK(fp__h5_read_table(g, "nodes", nodet, FP_NAME_MAX, (void **)&nodes, &nn));
    if (what != READ_CONFIG) {
        FP_CHECK_H5(mt = rec_type(REC_RANK, false));
        FP_CHECK(fp__h5_read_table(g, "ranks", mt, sizeof *ranks, (void **)&ranks, &nr));
        H5Tclose(mt);
        mt = H5I_INVALID_HID;
    }
    if (nn > INT_MAX || nr > INT_MAX)
        FP_FAIL(FP_EINPUT, "%s: run %s holds %zu nodes and %zu ranks: too many", s->path, id, nn,
                nr);
    for (size_t i = 0; i < nn; i++)
        nodes[i][FP_NAME_MAX - 1] = 0;
    for (size_t r = 0; r < nr; r++) {
        fp_rank_info *ri = &ranks[r];
        if (ri->node < 0 || (size_t)ri->node >= nn)
            FP_FAIL(FP_EINPUT, "%s: run %s: rank %zu names node %d of %zu (corrupt)", s->path,
                    id, r, ri->node, nn);
        ri->model[sizeof ri->model - 1] = ri->uuid[sizeof ri->uuid - 1] = 0;
        ri->pci_bus[sizeof ri->pci_bus - 1] = 0;
    }
    FP_CHECK(fp_run_set_shape(&t->ctx, 0, 0)); /* the tables read become the context's */
    free(t->ctx.nodes);
    t->ctx.nodes = nodes;
    t->ctx.nnodes = (int)nn;
    nodes = NULL;
    if (ranks) {
        free(t->ctx.ranks);
        t->ctx.ranks = ranks;
        t->ctx.nranks = (int)nr;
        ranks = NULL;
    }

    if (H5Lexists(g, "config", H5P_DEFAULT) > 0) { /* absent in older runs */
        fp_cfg_item *items = NULL;
        size_t ni = 0;
        FP_CHECK_H5(mt = rec_type(REC_CONFIG, false));
        st = fp__h5_read_table(g, "config", mt, sizeof *items, (void **)&items, &ni);
        H5Tclose(mt);
        mt = H5I_INVALID_HID;
        for (size_t i = 0; st == FP_OK && i < ni; i++) {
            items[i].field[sizeof items[i].field - 1] = items[i].value[sizeof items[i].value - 1] = 0;
            if (items[i].node < 0 || (size_t)items[i].node >= nn)
                st = FP_EINPUT;
        }
        if (st == FP_EINPUT)
            fp_error("%s: run %s: a configuration row names a node out of range (corrupt)",
                     s->path, id);
        if (st == FP_OK)
            st = fp_run_set_config(&t->ctx, items, ni);
        free(items);
        if (st != FP_OK)
            goto cleanup;
    }

    if (what != READ_SAMPLES && what != READ_ROWS)
        goto cleanup;

    FP_CHECK_H5(mt = rec_type(REC_METRIC, false));
    FP_CHECK(fp__h5_read_table(g, "metrics", mt, sizeof(fp__metric), (void **)&t->metrics, &nm));
    H5Tclose(mt);
    mt = H5I_INVALID_HID;
    t->metric_cap = nm;
    t->shapes = fp__h5_has_member(g, "metrics", "last_window");
    for (size_t i = 0; i < nm; i++) {
        fp__metric *m = &t->metrics[i];
        char key[160];
        if (!t->shapes) /* an older run: the read left them unset */
            m->shape = (fp_key_shape){.last = -1};
        m->suite[sizeof m->suite - 1] = m->test[sizeof m->test - 1] = 0;
        m->metric[sizeof m->metric - 1] = m->unit[sizeof m->unit - 1] = 0;
        int len = snprintf(key, sizeof key, "%s\x1f%s\x1f%s\x1f%llu", m->suite, m->test,
                           m->metric, (unsigned long long)m->size);
        uint32_t kid;
        FP_CHECK(fp__strmap_intern(&t->keys, key, (size_t)len, &kid, NULL));
        if (kid != i)
            FP_FAIL(FP_EINPUT, "%s: run %s: metric row %zu is repeated (corrupt)", s->path, id, i);
    }

    FP_CHECK_H5(mt = rec_type(REC_ROW, false));
    if (pack)
        FP_CHECK(read_samples_packed(g, mt, pack, &t->nrows));
    if (!pack || !*pack)
        FP_CHECK(fp__h5_read_table(g, "samples", mt, sizeof(fp__row), (void **)&t->rows,
                                   &t->nrows));
    t->row_cap = t->rows ? t->nrows : 0;
    if (times) {
        size_t nt = 0;
        H5Tclose(mt);
        FP_CHECK_H5(mt = rec_type(REC_TIME, false));
        FP_CHECK(fp__h5_read_table(g, "samples", mt, sizeof *t->t, (void **)&t->t, &nt));
        if (nt != t->nrows)
            FP_FAIL(FP_EINPUT, "%s: run %s: %zu sample times for %zu samples", s->path, id, nt,
                    t->nrows);
    }
    parse_wait(&pj);
    if (pj.bad < t->nent)
        FP_FAIL(FP_EINPUT, "%s: run %s: entity %zu '%s' is malformed", s->path, id, pj.bad,
                entity_text(&pj, pj.bad));
    if (t->rows) {
        char run_name[RUN_NAME_MAX];
        snprintf(run_name, sizeof run_name, "%s: run %s", s->path, id);
        FP_CHECK(rows_in_range(run_name, t->rows, t->nrows, 0, t->nent, nm));
    }
cleanup:
    parse_wait(&pj);
    if (st == FP_EH5)
        fp_error("%s: run %s cannot be read", s->path, id);
    free(ranks);
    free(nodes);
    free(names);
    if (nodet >= 0)
        H5Tclose(nodet);
    if (mt >= 0)
        H5Tclose(mt);
    if (g >= 0)
        H5Gclose(g);
    if (part >= 0)
        H5Fclose(part);
    return st;
}

fp_status fp__store_read_runtab(fp_store *s, const char *id, bool times, fp__runtab *t)
{
    return read_runtab(s, id, t, READ_SAMPLES, times, NULL);
}

static int summary_cmp(const void *a, const void *b)
{
    const fp_run_summary *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return strcmp(x->id, y->id);
}

fp_status fp_store_list(fp_store *s, fp_run_summary **out, size_t *n)
{
    fp_status st = FP_OK;
    fp_run_summary *rows = calloc(s->ncat ? s->ncat : 1, sizeof *rows);
    *out = NULL;
    *n = 0;
    FP_CHECK_ALLOC(rows);
    for (size_t i = 0; i < s->ncat; i++) {
        const cat_row *c = &s->cat[i];
        fp_run_summary *r = &rows[i];
        memcpy(r->id, c->id, sizeof r->id);
        memcpy(r->tag, c->tag, sizeof r->tag);
        memcpy(r->status, c->status, sizeof r->status);
        r->time = c->time;
        r->duration = c->duration;
        r->nranks = c->nranks;
        r->nnodes = c->nnodes;
        r->nsamples = c->nsamples;
        r->injected = c->injected != 0;
        r->emulated = c->emulated != 0;
    }
    qsort(rows, s->ncat, sizeof *rows, summary_cmp);
    *out = rows;
    *n = s->ncat;
    rows = NULL;
cleanup:
    free(rows);
    return st;
}

/* The id of run which ("latest": see fp_store_load_run) into id. */
static fp_status which_id(fp_store *s, const char *which, const char *tag, char id[48])
{
    fp_status st = FP_OK;
    fp_run_summary *rows = NULL;
    size_t n = 0;
    if (strcmp(which, "latest") == 0) {
        FP_CHECK(fp_store_list(s, &rows, &n));
        const fp_run_summary *best = NULL;
        /* a re-test is part of the run it confirms (docs/store.md), never the latest */
        for (size_t i = 0; i < n; i++)
            if ((!tag || !tag[0] || strcmp(rows[i].tag, tag) == 0) &&
                strcmp(rows[i].status, FP_RUN_RETEST) != 0)
                best = &rows[i];
        if (!best)
            FP_FAIL(FP_EINPUT, "%s holds no run%s%s", s->path, tag && tag[0] ? " tagged " : "",
                    tag && tag[0] ? tag : "");
        snprintf(id, 48, "%s", best->id);
    } else {
        snprintf(id, 48, "%s", which);
    }
cleanup:
    free(rows);
    return st;
}

/* fp_store_load_run_rows, the samples packed into *pack where pack is not
 * NULL and their layout allows. */
static fp_status load_rows(fp_store *s, const char *which, const char *tag, bool times,
                           fp_run *run, fp__pack **pack)
{
    fp_status st = FP_OK;
    fp__runtab t;
    char id[48];
    memset(run, 0, sizeof *run);
    memset(&t, 0, sizeof t);
    FP_CHECK(which_id(s, which, tag, id));
    FP_CHECK(read_runtab(s, id, &t, READ_ROWS, times, pack));
    fp__run_take_context(run, &t.ctx);
    fp_run_rows *r = run->rows = calloc(1, sizeof *r);
    FP_CHECK_ALLOC(r);
    r->keys = malloc((t.keys.n ? t.keys.n : 1) * sizeof *r->keys);
    FP_CHECK_ALLOC(r->keys);
    for (uint32_t k = 0; k < t.keys.n; k++)
        fp__runtab_key(&t, k, &r->keys[k]);
    r->nkeys = t.keys.n;
    if (t.shapes) {
        r->shapes = malloc((t.keys.n ? t.keys.n : 1) * sizeof *r->shapes);
        FP_CHECK_ALLOC(r->shapes);
        for (uint32_t k = 0; k < t.keys.n; k++)
            r->shapes[k] = t.metrics[k].shape;
    }
    /* the runtab's parsed entities and rows become the run's */
    r->ents = t.ent;
    r->nents = t.nent;
    r->row = t.rows;
    r->t = t.t;
    r->n = run->nsamples = t.nrows;
    t.ent = NULL;
    t.rows = NULL;
    t.t = NULL;
cleanup:
    fp__runtab_free(&t);
    return st;
}

fp_status fp_store_load_run_rows(fp_store *s, const char *which, const char *tag, bool times,
                                 fp_run *run)
{
    return load_rows(s, which, tag, times, run, NULL);
}

/* ---- packed rows ----------------------------------------------------------------------- */

struct fp_row_pack {
    fp__pack *pack;
    size_t nents, nkeys; /* what its rows may refer to */
    char what[RUN_NAME_MAX]; /* "STORE: run ID", for messages */
};

struct fp_row_reader {
    const fp_row_pack *p;
    fp__unpacker *u;
    fp_sample_row *buf;
};

void fp_row_pack_free(fp_row_pack *p)
{
    if (!p)
        return;
    fp__pack_free(p->pack);
    free(p);
}

fp_status fp_store_load_run_packed(fp_store *s, const char *which, const char *tag, fp_run *run,
                                   fp_row_pack **out)
{
    fp_status st = FP_OK;
    fp_row_pack *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p) {
        memset(run, 0, sizeof *run);
        FP_FAIL(FP_ENOMEM, "out of memory reading a run of %s", fp_store_path(s));
    }
    FP_CHECK(load_rows(s, which, tag, false, run, &p->pack));
    if (p->pack) {
        p->nents = run->rows->nents;
        p->nkeys = run->rows->nkeys;
        snprintf(p->what, sizeof p->what, "%s: run %s", fp_store_path(s), run->id);
        *out = p;
        p = NULL;
    }
cleanup:
    fp_row_pack_free(p);
    return st;
}

size_t fp_row_pack_chunks(const fp_row_pack *p)
{
    return fp__pack_chunks(p->pack);
}

size_t fp_row_pack_chunk_rows(const fp_row_pack *p)
{
    return fp__pack_chunk_rows(p->pack);
}

fp_status fp_row_reader_open(const fp_row_pack *p, fp_row_reader **out)
{
    fp_status st = FP_OK;
    fp_row_reader *r = calloc(1, sizeof *r);
    *out = NULL;
    FP_CHECK_ALLOC(r);
    r->p = p;
    r->buf = malloc(fp__pack_chunk_rows(p->pack) * sizeof *r->buf);
    FP_CHECK_ALLOC(r->buf);
    FP_CHECK(fp__unpacker_open(p->pack, &r->u));
    *out = r;
    r = NULL;
cleanup:
    fp_row_reader_free(r);
    return st;
}

fp_status fp_row_reader_chunk(fp_row_reader *r, size_t c, const fp_sample_row **rows, size_t *n)
{
    fp_status st = fp__pack_decode(r->p->pack, c, r->u, r->buf, n);
    *rows = r->buf;
    if (st == FP_OK)
        st = rows_in_range(r->p->what, r->buf, *n, c * fp__pack_chunk_rows(r->p->pack),
                           r->p->nents, r->p->nkeys);
    return st;
}

bool fp_row_reader_try(fp_row_reader *r, size_t c, const fp_sample_row **rows, size_t *n)
{
    *rows = r->buf;
    return fp__pack_try(r->p->pack, c, r->u, r->buf, n) &&
           first_out_of_range(r->buf, *n, r->p->nents, r->p->nkeys) == *n;
}

void fp_row_reader_free(fp_row_reader *r)
{
    if (!r)
        return;
    fp__unpacker_free(r->u);
    free(r->buf);
    free(r);
}

fp_status fp_row_pack_unpack(const fp_row_pack *p, fp_run *run)
{
    fp_status st = FP_OK;
    fp_run_rows *rows = run->rows;
    fp_sample_row *all = fp_malloc_huge((rows->n ? rows->n : 1) * sizeof *all);
    FP_CHECK_ALLOC(all);
    FP_CHECK(fp__pack_unpack(p->pack, all));
    FP_CHECK(rows_in_range(p->what, all, rows->n, 0, p->nents, p->nkeys));
    free(rows->row);
    rows->row = all;
    all = NULL;
cleanup:
    free(all);
    return st;
}

fp_status fp_store_load_run(fp_store *s, const char *which, const char *tag, fp_run *run)
{
    fp_status st = fp_store_load_run_rows(s, which, tag, true, run);
    if (st == FP_OK && (st = fp_run_expand(run)) != FP_OK)
        fp_error("%s: run %s: no memory for its %zu samples", s->path, run->id, run->nsamples);
    return st;
}

static fp_status load_context(fp_store *s, const char *id, fp_run *run, read_what what)
{
    fp__runtab t;
    fp_status st = read_runtab(s, id, &t, what, false, NULL);
    memset(run, 0, sizeof *run);
    if (st == FP_OK)
        fp__run_take_context(run, &t.ctx);
    fp__runtab_free(&t);
    return st;
}

fp_status fp_store_load_run_context(fp_store *s, const char *id, fp_run *run)
{
    return load_context(s, id, run, READ_CONTEXT);
}

fp_status fp_store_load_run_config(fp_store *s, const char *id, fp_run *run)
{
    return load_context(s, id, run, READ_CONFIG);
}
