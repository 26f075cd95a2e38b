/* Verdicts across runs (include/fleetprint/history.h): a run's verdicts kept
 * beside its samples as /runs/<id>/verdicts of its partition, written in the
 * commit that appends the run or, for a run stored without them, in a commit
 * that copies the run into a new partition with them; and the history read
 * back: the judged runs of a store in memory, each entity's verdicts over
 * time and the k-of-n test for repeat offenders. Layout: docs/store.md. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleetprint/history.h"
#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "h5.h"
#include "intern.h"
#include "runtab.h"
#include "store_handle.h"
#include "store_internal.h"

/* ==== records ======================================================================== */

const char *fp_judgement_name(int verdict)
{
    static const char *const names[] = {"pass", "warn", "fail", "unknown"};
    return verdict >= 0 && verdict <= FP_JUDGED_UNKNOWN ? names[verdict] : "?";
}

fp_status fp_run_verdicts_add(fp_run_verdicts *v, const char *entity, fp_judgement verdict,
                              bool offender, const char *reason)
{
    fp_status st = FP_OK;
    if (!entity || !entity[0] || (int)verdict < 0 || verdict > FP_JUDGED_UNKNOWN)
        FP_FAIL(FP_EINPUT, "verdict record: entity '%s' with verdict %d", entity ? entity : "",
                (int)verdict);
    fp_judged *rows = fp_grow(v->rows, &v->cap, v->n + 1, sizeof *rows, 64);
    FP_CHECK_ALLOC(rows);
    v->rows = rows;
    fp_judged *r = &rows[v->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->entity, sizeof r->entity, "%s", entity);
    r->verdict = (uint8_t)verdict;
    r->offender = offender;
    snprintf(r->reason, sizeof r->reason, "%s", reason ? reason : "");
cleanup:
    return st;
}

void fp_run_verdicts_free(fp_run_verdicts *v)
{
    free(v->rows);
    memset(v, 0, sizeof *v);
}

/* ==== the table in a run group ======================================================== */

#define VERDICTS "verdicts"

/* The memory (native) or file (packed, little-endian) type of a row. */
static hid_t judged_type(bool file)
{
    hid_t se = fp__h5_str_type(FP_JUDGED_ENTITY), sr = fp__h5_str_type(FP_JUDGED_REASON);
    hid_t u8 = file ? H5T_STD_U8LE : H5T_NATIVE_UINT8;
    const fp__h5_member m[] = {
        {"entity", se, offsetof(fp_judged, entity), FP_JUDGED_ENTITY},
        {"verdict", u8, offsetof(fp_judged, verdict), 1},
        {"offender", u8, offsetof(fp_judged, offender), 1},
        {"reason", sr, offsetof(fp_judged, reason), FP_JUDGED_REASON},
    };
    hid_t t = fp__h5_compound(m, sizeof m / sizeof m[0], sizeof(fp_judged), file);
    fp__h5_close(se);
    fp__h5_close(sr);
    return t;
}

fp_status fp__store_write_verdicts(hid_t runs, const char *id, const fp_run_verdicts *v,
                                   const char *by)
{
    fp_status st = FP_OK;
    hid_t g = H5I_INVALID_HID, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID,
          ds = H5I_INVALID_HID;
    for (size_t i = 0; i < v->n; i++)
        if (v->rows[i].verdict > FP_JUDGED_UNKNOWN)
            FP_FAIL(FP_EINPUT, "run %s: verdict row %zu (%s) has verdict %d", id, i,
                    v->rows[i].entity, v->rows[i].verdict);
    FP_CHECK_H5(g = H5Gopen2(runs, id, H5P_DEFAULT));
    FP_CHECK_H5(ft = judged_type(true));
    FP_CHECK_H5(mt = judged_type(false));
    FP_CHECK(fp__h5_write_table(g, VERDICTS, ft, mt, v->rows, v->n));
    FP_CHECK_H5(ds = H5Dopen2(g, VERDICTS, H5P_DEFAULT));
    FP_CHECK(fp__h5_attr_double(ds, "recorded", (double)time(NULL)));
    FP_CHECK(fp__h5_attr_str(ds, "by", by));
cleanup:
    fp__h5_close(ds);
    fp__h5_close(mt);
    fp__h5_close(ft);
    fp__h5_close(g);
    return st;
}

/* Read /runs/<id>/verdicts of an open partition into out (emptied first);
 * *found false when the run has none. */
static fp_status read_verdicts(hid_t part, const char *id, fp_run_verdicts *out, bool *found)
{
    fp_status st = FP_OK;
    hid_t mt = H5I_INVALID_HID;
    char name[80];
    fp_judged *rows = NULL;
    size_t n = 0;
    fp_run_verdicts_free(out);
    snprintf(name, sizeof name, "runs/%s/" VERDICTS, id);
    *found = H5Lexists(part, "runs", H5P_DEFAULT) > 0 &&
             H5Lexists(part, name, H5P_DEFAULT) > 0;
    if (!*found)
        return FP_OK;
    FP_CHECK_H5(mt = judged_type(false));
    st = fp__h5_read_table(part, name, mt, sizeof *rows, (void **)&rows, &n);
    if (st != FP_OK)
        FP_FAIL(FP_EINPUT, "run %s: its verdicts cannot be read", id);
    for (size_t i = 0; i < n; i++) {
        rows[i].entity[FP_JUDGED_ENTITY - 1] = rows[i].reason[FP_JUDGED_REASON - 1] = 0;
        if (rows[i].verdict > FP_JUDGED_UNKNOWN || !rows[i].entity[0])
            FP_FAIL(FP_EINPUT, "run %s: verdict row %zu is malformed (corrupt)", id, i);
    }
    out->rows = rows;
    out->n = out->cap = n;
    rows = NULL;
cleanup:
    free(rows);
    fp__h5_close(mt);
    return st;
}

/* The catalog row of run id, or FP__NONE. */
static uint32_t run_row(const fp_store *s, const char *id)
{
    return fp__store_valid_run_id(id) ? fp__strmap_find(&s->ids, id, strlen(id)) : FP__NONE;
}

fp_status fp__store_verdicts_readable(fp_store *s, const char *id, char *why, size_t len)
{
    fp_run_verdicts v = {0};
    bool found;
    fp_status st = fp_store_load_verdicts(s, id, &v, &found);
    if (st != FP_OK)
        snprintf(why, len, "its verdicts cannot be read (the error above)");
    fp_run_verdicts_free(&v);
    return st;
}

fp_status fp_store_load_verdicts(fp_store *s, const char *id, fp_run_verdicts *out, bool *found)
{
    fp_status st = FP_OK;
    hid_t part = H5I_INVALID_HID;
    uint32_t k = run_row(s, id);
    *found = false;
    fp_run_verdicts_free(out);
    if (k == FP__NONE)
        FP_FAIL(FP_EINPUT, "no run '%s' in %s", id, s->path);
    FP_CHECK(fp__store_open_part(s, s->cat[k].file, id, &part));
    FP_CHECK(read_verdicts(part, id, out, found));
cleanup:
    fp__h5_close(part);
    return st;
}

/* ==== writing ========================================================================= */

fp_status fp_store_append_judged(fp_store *s, const fp_run *run, const fp_run_verdicts *v)
{
    return fp_store_append_judged_runs(s, &run, &v, 1);
}

fp_status fp_store_append_judged_file(const char *path, const fp_run *run,
                                      const fp_run_verdicts *v, double lock_timeout_s)
{
    fp_store *s = NULL;
    fp_status st = fp_store_open(&s, path, FP_STORE_APPEND, lock_timeout_s);
    if (st == FP_OK)
        st = fp_store_append_judged(s, run, v);
    fp_store_close(s);
    if (st == FP_OK && v)
        fp_info("stored run %s (%zu samples, the verdicts of %zu entities) in %s", run->id,
                run->nsamples, v->n, path);
    else if (st == FP_OK)
        fp_info("stored run %s (%zu samples) in %s", run->id, run->nsamples, path);
    return st;
}

fp_status fp_store_record_verdicts(fp_store *s, const char *id, const fp_run_verdicts *v)
{
    fp_status st = FP_OK;
    hid_t src = H5I_INVALID_HID, dst = H5I_INVALID_HID, runs = H5I_INVALID_HID;
    char name[PART_NAME_MAX], old[PART_NAME_MAX], obj[64];
    size_t *keep = NULL, nkeep = 0;
    fp_run_verdicts have = {0};
    bool found = false, started = false;
    if (s->mode != FP_STORE_APPEND)
        FP_FAIL(FP_EUSAGE, "%s was opened read-only", s->path);
    FP_CHECK(fp_store_load_verdicts(s, id, &have, &found));
    if (found)
        FP_FAIL(FP_EINPUT, "run %s in %s has its verdicts already (%zu entities): nothing "
                           "written", id, s->path, have.n);
    started = true;
    FP_CHECK(fp__store_make_partitioned(s));
    uint32_t k = run_row(s, id);
    memcpy(old, s->cat[k].file, sizeof old);
    /* the run and its verdicts into a new partition */
    FP_CHECK(fp__store_open_part(s, old, id, &src));
    FP_CHECK(fp__store_part_create(s, 'p', name, &dst));
    FP_CHECK_H5(runs = H5Gopen2(dst, "runs", H5P_DEFAULT));
    snprintf(obj, sizeof obj, "runs/%s", id);
    FP_CHECK_H5(H5Ocopy(src, obj, runs, id, H5P_DEFAULT, H5P_DEFAULT));
    FP_CHECK(fp__store_write_verdicts(runs, id, v, "detect --record"));
    fp__h5_close(runs);
    fp__h5_close(src);
    runs = src = H5I_INVALID_HID;
    st = fp__store_part_finish(s, dst, name);
    dst = H5I_INVALID_HID;
    FP_CHECK(st);
    memcpy(s->cat[k].file, name, sizeof name);
    /* the old partition's other runs move too, so that it can go (as rm does) */
    keep = malloc((s->ncat ? s->ncat : 1) * sizeof *keep);
    FP_CHECK_ALLOC(keep);
    for (size_t i = 0; i < s->ncat; i++)
        if (strcmp(s->cat[i].file, old) == 0)
            keep[nkeep++] = i;
    if (nkeep)
        FP_CHECK(fp__store_copy_into_part(s, keep, nkeep));
cleanup:
    fp__h5_close(runs);
    fp__h5_close(src);
    fp__h5_close(dst);
    free(keep);
    fp_run_verdicts_free(&have);
    return started ? fp__store_finish_change(s, st) : st;
}

/* ==== the history in memory =========================================================== */

typedef struct hist_run {
    char id[48], tag[32];
    double time;
} hist_run;

typedef struct hist_row {
    uint32_t ent;    /* id in ents */
    uint32_t reason; /* offset in text (0: "") */
    uint8_t verdict, offender;
} hist_row;

struct fp_history {
    hist_run *runs;
    uint32_t *order; /* run indices by time, then id */
    size_t nruns, runcap, ordercap;
    fp__strmap ids;  /* run ids */
    hist_row *rows;
    size_t nrows, rowcap;
    fp__u64map at;   /* run << 32 | entity -> row */
    fp__strmap ents; /* entity texts */
    uint32_t *bad;   /* per entity: rows that failed or warned */
    size_t badcap;
    char *text;      /* reasons, NUL-terminated, back to back; text[0] is "" */
    size_t ntext, textcap;
};

fp_history *fp_history_new(void)
{
    fp_history *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->text = malloc(256);
    if (!h->text) {
        free(h);
        return NULL;
    }
    h->textcap = 256;
    h->text[0] = 0;
    h->ntext = 1;
    return h;
}

void fp_history_free(fp_history *h)
{
    if (!h)
        return;
    free(h->runs);
    free(h->order);
    fp__strmap_free(&h->ids);
    free(h->rows);
    fp__u64map_free(&h->at);
    fp__strmap_free(&h->ents);
    free(h->bad);
    free(h->text);
    free(h);
}

size_t fp_history_runs(const fp_history *h)
{
    return h->nruns;
}

static int run_cmp(const hist_run *a, const hist_run *b)
{
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return strcmp(a->id, b->id);
}

static fp_status add_row(fp_history *h, uint32_t run, const fp_judged *j)
{
    fp_status st = FP_OK;
    uint32_t ent;
    bool added;
    FP_CHECK(fp__strmap_intern(&h->ents, j->entity, strlen(j->entity), &ent, &added));
    uint32_t *bad = fp_grow(h->bad, &h->badcap, (size_t)ent + 1, sizeof *bad, 256);
    FP_CHECK_ALLOC(bad);
    h->bad = bad;
    if (added)
        bad[ent] = 0;
    if (fp__u64map_get(&h->at, ((uint64_t)run << 32) | ent) != FP__NONE)
        FP_FAIL(FP_EINPUT, "run %s lists %s twice", h->runs[run].id, j->entity);
    hist_row *rows = fp_grow(h->rows, &h->rowcap, h->nrows + 1, sizeof *rows, 256);
    FP_CHECK_ALLOC(rows);
    h->rows = rows;
    hist_row *r = &rows[h->nrows];
    r->ent = ent;
    r->verdict = j->verdict;
    r->offender = j->offender;
    r->reason = 0;
    size_t len = strnlen(j->reason, sizeof j->reason);
    if (len) {
        char *t = fp_grow(h->text, &h->textcap, h->ntext + len + 1, 1, 256);
        FP_CHECK_ALLOC(t);
        h->text = t;
        memcpy(t + h->ntext, j->reason, len);
        t[h->ntext + len] = 0;
        r->reason = (uint32_t)h->ntext;
        h->ntext += len + 1;
    }
    FP_CHECK(fp__u64map_put(&h->at, ((uint64_t)run << 32) | ent, (uint32_t)h->nrows));
    h->nrows++;
    bad[ent] += j->verdict == FP_JUDGED_WARN || j->verdict == FP_JUDGED_FAIL;
cleanup:
    return st;
}

fp_status fp_history_add(fp_history *h, const char *id, const char *tag, double time,
                         const fp_run_verdicts *v)
{
    fp_status st = FP_OK;
    uint32_t rid;
    bool added;
    FP_CHECK(fp__strmap_intern(&h->ids, id, strlen(id), &rid, &added));
    if (!added)
        FP_FAIL(FP_EINPUT, "history: run %s is given twice", id);
    hist_run *runs = fp_grow(h->runs, &h->runcap, h->nruns + 1, sizeof *runs, 16);
    FP_CHECK_ALLOC(runs);
    h->runs = runs;
    uint32_t *order = fp_grow(h->order, &h->ordercap, h->nruns + 1, sizeof *order, 16);
    FP_CHECK_ALLOC(order);
    h->order = order;
    hist_run *r = &runs[h->nruns];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", id);
    snprintf(r->tag, sizeof r->tag, "%s", tag ? tag : "");
    r->time = time;
    size_t at = h->nruns;
    while (at > 0 && run_cmp(&runs[order[at - 1]], r) > 0)
        at--;
    memmove(order + at + 1, order + at, (h->nruns - at) * sizeof *order);
    order[at] = (uint32_t)h->nruns;
    h->nruns++;
    for (size_t i = 0; v && i < v->n; i++)
        FP_CHECK(add_row(h, (uint32_t)(h->nruns - 1), &v->rows[i]));
cleanup:
    return st;
}

/* ---- queries ---------------------------------------------------------------------------- */

/* The row of entity id ent in run, or NULL. */
static const hist_row *row_of(const fp_history *h, uint32_t run, uint32_t ent)
{
    uint32_t r = ent == FP__NONE ? FP__NONE : fp__u64map_get(&h->at, ((uint64_t)run << 32) | ent);
    return r == FP__NONE ? NULL : &h->rows[r];
}

/* Whether run judged node (listed with a verdict other than unknown). */
static bool node_judged(const fp_history *h, uint32_t run, const char *node)
{
    char text[FP_NAME_MAX + 8];
    int n = snprintf(text, sizeof text, "node:%s", node);
    const hist_row *r = row_of(h, run, fp__strmap_find(&h->ents, text, (size_t)n));
    return r && r->verdict != FP_JUDGED_UNKNOWN;
}

/* What entity (id ent, parsed e) got in run: FP_JUDGED_UNKNOWN when the run
 * did not judge it; *row the listed row or NULL (a pass by omission). */
static fp_judgement judged_in(const fp_history *h, uint32_t run, uint32_t ent, const fp_entity *e,
                              const hist_row **row)
{
    *row = row_of(h, run, ent);
    if (*row)
        return (fp_judgement)(*row)->verdict;
    if (e->kind == FP_ENT_NODE || e->kind == FP_ENT_GROUP || !node_judged(h, run, e->node))
        return FP_JUDGED_UNKNOWN;
    if (e->kind == FP_ENT_LINK && strcmp(e->peer, e->node) != 0 && !node_judged(h, run, e->peer))
        return FP_JUDGED_UNKNOWN;
    return FP_JUDGED_PASS;
}

size_t fp_history_of(const fp_history *h, const char *entity, fp_history_entry *out, size_t max)
{
    fp_entity e;
    if (!fp_entity_parse(entity, &e))
        return 0;
    uint32_t ent = fp__strmap_find(&h->ents, entity, strlen(entity));
    size_t n = 0;
    for (size_t i = 0; i < h->nruns; i++) {
        uint32_t run = h->order[i];
        const hist_row *row;
        fp_judgement v = judged_in(h, run, ent, &e, &row);
        if (v == FP_JUDGED_UNKNOWN)
            continue;
        if (n < max) {
            fp_history_entry *o = &out[n];
            o->run = h->runs[run].id;
            o->tag = h->runs[run].tag;
            o->time = h->runs[run].time;
            o->verdict = v;
            o->offender = row && row->offender;
            o->reason = row ? h->text + row->reason : "";
        }
        n++;
    }
    return n;
}

void fp_history_count(const fp_history *h, const char *entity, int n, fp_offense *out)
{
    fp_offense o = {0};
    fp_entity e;
    uint32_t ent = fp__strmap_find(&h->ents, entity, strlen(entity));
    bool known = fp_entity_parse(entity, &e);
    for (size_t i = h->nruns; known && i-- > 0 && o.judged < n;) {
        uint32_t run = h->order[i];
        const hist_row *row;
        fp_judgement v = judged_in(h, run, ent, &e, &row);
        if (v == FP_JUDGED_UNKNOWN)
            continue;
        if (o.judged++ == 0)
            o.last = h->runs[run].time;
        o.first = h->runs[run].time;
        o.bad += v == FP_JUDGED_WARN || v == FP_JUDGED_FAIL;
    }
    *out = o;
}

bool fp_history_offender(const fp_history *h, const char *entity, int k, int n, fp_offense *out)
{
    fp_offense o = {0};
    uint32_t ent = fp__strmap_find(&h->ents, entity, strlen(entity));
    /* fewer than k bad verdicts in the whole history: not one, and cheap to
     * tell (most entities of a fleet never warn) */
    bool suspect = k >= 1 && n >= k && ent != FP__NONE && h->bad[ent] >= (uint32_t)k;
    if (suspect)
        fp_history_count(h, entity, n, &o);
    if (out)
        *out = o;
    return suspect && o.bad >= k;
}

bool fp_history_any_suspect(const fp_history *h, int k)
{
    for (uint32_t e = 0; k >= 1 && e < h->ents.n; e++)
        if (h->bad[e] >= (uint32_t)k)
            return true;
    return false;
}

/* ==== reading the history of a store ================================================== */

fp_status fp_store_load_history(fp_store *s, const fp_history_opts *o, fp_history **out)
{
    fp_status st = FP_OK;
    fp_run_summary *rows = NULL;
    size_t n = 0, end = 0, begin = 0;
    fp_history *h = NULL;
    fp_run_verdicts v = {0};
    hid_t part = H5I_INVALID_HID;
    char open_file[PART_NAME_MAX] = "";
    const char *tag = o && o->tag && o->tag[0] ? o->tag : NULL;
    *out = NULL;
    FP_CHECK_ALLOC(h = fp_history_new());
    FP_CHECK(fp_store_list(s, &rows, &n));
    /* the candidates: rows[begin, end) after the filters, oldest first */
    fp_run_summary limit;
    bool before = o && o->before;
    if (before) {
        uint32_t k = run_row(s, o->before);
        if (k == FP__NONE)
            FP_FAIL(FP_EINPUT, "no run '%s' in %s", o->before, s->path);
        memset(&limit, 0, sizeof limit);
        limit.time = s->cat[k].time;
        snprintf(limit.id, sizeof limit.id, "%s", s->cat[k].id);
    }
    for (size_t i = 0; i < n; i++) {
        bool older = !before || rows[i].time < limit.time ||
                     (rows[i].time == limit.time && strcmp(rows[i].id, limit.id) < 0);
        if (older && (!tag || strcmp(rows[i].tag, tag) == 0))
            rows[end++] = rows[i];
    }
    if (o && o->runs > 0 && end > (size_t)o->runs)
        begin = end - (size_t)o->runs;
    for (size_t i = begin; i < end; i++) {
        uint32_t k = run_row(s, rows[i].id);
        bool found;
        if (part < 0 || strcmp(open_file, s->cat[k].file) != 0) {
            fp__h5_close(part);
            part = H5I_INVALID_HID;
            FP_CHECK(fp__store_open_part(s, s->cat[k].file, rows[i].id, &part));
            memcpy(open_file, s->cat[k].file, sizeof open_file);
        }
        FP_CHECK(read_verdicts(part, rows[i].id, &v, &found));
        if (found)
            FP_CHECK(fp_history_add(h, rows[i].id, rows[i].tag, rows[i].time, &v));
    }
    *out = h;
    h = NULL;
cleanup:
    fp__h5_close(part);
    fp_run_verdicts_free(&v);
    fp_history_free(h);
    free(rows);
    return st;
}
