/* Baselines: robust statistics over stored runs, per (metric key, entity) and
 * per (metric key, SKU), written to /baselines; and loading them back with
 * an index of each entity's rows for lookup. A build reduces each run to
 * per-(key, entity) records (baseline_build.h), then the records of all runs to the baselines:
 * flat arrays, one lookup per (entity, metric) pair of a run, selection for
 * the SKU level's millions of values. Layout: docs/store.md. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseline_build.h"
#include "fleetprint/mem.h"
#include "fleetprint/log.h"
#include "fleetprint/stats.h"
#include "fleetprint/timer.h"
#include "h5.h"
#include "intern.h"
#include "runtab.h"
#include "store_internal.h"

#define KEY_WIDTH FP__KEY_WIDTH
#define MIN_REJECT_N 10

typedef fp__brow brow;
typedef fp__bkey bkey;

/* A baseline row as loaded: a built row without its range (the range has
 * an array of its own, read only to be shown). */
typedef struct lrow {
    uint32_t key, who;
    fp_baseline b;
} lrow;
_Static_assert(offsetof(lrow, b) == offsetof(brow, b),
               "a loaded row's statistic lies where a built row's does");

/* The rows of each entity (or SKU), found by (key, who): who's (key, row)
 * pairs lie at [off[who], off[who + 1]), by key, then row. 8 bytes a row and
 * one lookup near the next, where a hash table of (key, who) took 45 bytes a
 * row and a cache miss at each put and get (0.5 s at 100,000 nodes x 8). */
typedef struct row_pair {
    uint32_t key, row;
} row_pair;

typedef struct row_index {
    uint32_t *off;
    row_pair *pair;
    size_t nwho;
} row_index;

/* The rows of /baselines/entity or /sku as loaded: n rows of stride bytes
 * from base, each an lrow at its start; mapped from the file (map) where it
 * lays them out so, else read into an array of lrows (base, freed). */
typedef struct row_table {
    const char *base;
    size_t n, stride;
    fp__h5_map map;
} row_table;

static const lrow *row_of(const row_table *t, size_t i)
{
    return (const lrow *)(t->base + i * t->stride);
}

struct fp_baselines {
    double built;
    fp__strmap keys, entities, skus, runs;
    row_table erows, srows;
    fp_baseline_range *erange, *srange; /* NULL until fp_store_load_baseline_ranges */
    uint32_t *set_off, *set_member; /* runset i: members [off[i], off[i+1]) */
    size_t nsets;
    row_index eidx, sidx;
};

/* ==== statistics ===================================================================== */

/* Median of |v - med| over v[0..n) sorted ascending, as fp_mad gives it,
 * in O(n): the deviations below med and those above are each sorted, so
 * merging them up to the middle gives the order statistics the median
 * needs. scratch holds n. */
static double mad_of(const double *v, size_t n, double med, double *scratch)
{
    if (n == 0)
        return NAN;
    size_t right = 0, need = n / 2 + 2 < n ? n / 2 + 2 : n, m = 0;
    while (right < n && v[right] < med)
        right++;
    size_t left = right; /* v[left - 1] is the nearest below med */
    while (m < need) {
        double a = left > 0 ? fabs(v[left - 1] - med) : INFINITY;
        double b = right < n ? fabs(v[right] - med) : INFINITY;
        if (left > 0 && (right >= n || a <= b)) {
            scratch[m++] = a;
            left--;
        } else {
            scratch[m++] = b;
            right++;
        }
    }
    return fp_quantile(scratch, n, 0.5); /* reads only indices below need */
}

/* The q-quantile of v[0..n) exactly as fp_quantile gives it on the sorted
 * values (the same order statistics and arithmetic), by selection: O(n),
 * reorders v. */
static double quantile_sel(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double h = q * (double)(n - 1);
    size_t lo = (size_t)floor(h);
    double a = fp_select_k(v, n, lo), b = a;
    if (lo + 1 < n) { /* the next order statistic: the least of those above */
        b = v[lo + 1];
        for (size_t i = lo + 2; i < n; i++)
            b = v[i] < b ? v[i] : b;
    }
    return a + (h - (double)lo) * (b - a);
}

/* Above this many values the statistics select rather than sort. */
#define SELECT_ABOVE 64

/* Statistics of v[0..n) (reordered), dropping values farther than
 * reject * 1.4826 * MAD from the median. When the MAD is 0 (most values equal)
 * nothing is dropped: there is no scale to call anything an outlier by; nor
 * below MIN_REJECT_N values, where the MAD itself is too noisy to judge by
 * (with 5 values of clean uniform noise it would drop a quarter of them).
 * Large groups (a SKU's millions of entity-run medians) are reduced by
 * selection, small ones by sorting: the numbers are the same either way. */
static void robust_stats(double *v, size_t n, double reject, double *scratch, fp_baseline *b,
                         fp_baseline_range *q)
{
    bool sel = n > SELECT_ABOVE;
    if (!sel)
        fp_sort_doubles(v, n);
    double med = sel ? quantile_sel(v, n, 0.5) : fp_quantile(v, n, 0.5);
    double mad;
    if (sel) {
        for (size_t i = 0; i < n; i++)
            scratch[i] = fabs(v[i] - med);
        mad = quantile_sel(scratch, n, 0.5);
    } else {
        mad = mad_of(v, n, med, scratch);
    }
    double *k = v;
    size_t m = n;
    if (reject > 0 && mad > 0 && n >= MIN_REJECT_N) {
        double lim = reject * 1.4826 * mad, lo = med - lim, hi = med + lim;
        if (sel) { /* keep what a sorted trim keeps: lo <= v <= hi */
            m = 0;
            for (size_t i = 0; i < n; i++)
                if (!(v[i] < lo) && !(v[i] > hi))
                    v[m++] = v[i];
        } else {
            size_t a = 0, e = n;
            while (a < e && v[a] < lo)
                a++;
            while (e > a && v[e - 1] > hi)
                e--;
            k = v + a;
            m = e - a;
        }
    }
    b->count = (uint32_t)m;
    b->rejected = (uint32_t)(n - m);
    if (!sel) {
        b->median = fp_quantile(k, m, 0.5);
        b->mad = mad_of(k, m, b->median, scratch);
        q->p05 = fp_quantile(k, m, 0.05);
        q->p95 = fp_quantile(k, m, 0.95);
        q->min = m ? k[0] : NAN;
        q->max = m ? k[m - 1] : NAN;
        return;
    }
    b->median = quantile_sel(k, m, 0.5);
    for (size_t i = 0; i < m; i++)
        scratch[i] = fabs(k[i] - b->median);
    b->mad = quantile_sel(scratch, m, 0.5);
    q->p05 = quantile_sel(k, m, 0.05);
    q->p95 = quantile_sel(k, m, 0.95);
    q->min = q->max = m ? k[0] : NAN;
    for (size_t i = 1; i < m; i++) {
        q->min = k[i] < q->min ? k[i] : q->min;
        q->max = k[i] > q->max ? k[i] : q->max;
    }
}

/* Median of v[0..n) (sorted in place); NaN when n is 0. */
static double median_of(double *v, size_t n)
{
    fp_sort_doubles(v, n);
    return fp_quantile(v, n, 0.5);
}

/* Robust relative spread of v[0..n) (sorted in place): 1.4826 x MAD over
 * |median|, NaN below min_n values or at a zero median. */
static double rel_spread(double *v, size_t n, size_t min_n, double *scratch)
{
    if (n < min_n || n == 0)
        return NAN;
    double med = median_of(v, n);
    return med != 0 ? 1.4826 * mad_of(v, n, med, scratch) / fabs(med) : NAN;
}

/* ==== building ======================================================================= */

/* Observations of the SKU level: one value (an entity's median in a run) for
 * a (key, SKU) group, with its run. */
typedef struct obs {
    uint32_t *group, *run;
    double *v;
    size_t n, cap;
} obs;

static fp_status obs_add(obs *o, uint32_t group, uint32_t run, double v)
{
    fp_status st = FP_OK;
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 1 << 16;
        uint32_t *g = realloc(o->group, cap * sizeof *g);
        FP_CHECK_ALLOC(g);
        o->group = g;
        uint32_t *r = realloc(o->run, cap * sizeof *r);
        FP_CHECK_ALLOC(r);
        o->run = r;
        double *d = realloc(o->v, cap * sizeof *d);
        FP_CHECK_ALLOC(d);
        o->v = d;
        o->cap = cap;
    }
    o->group[o->n] = group;
    o->run[o->n] = run;
    o->v[o->n++] = v;
cleanup:
    return st;
}

static void obs_free(obs *o)
{
    free(o->group);
    free(o->run);
    free(o->v);
    memset(o, 0, sizeof *o);
}

fp_status fp__group_id(fp__groups *g, uint32_t key, uint32_t who, uint32_t *id)
{
    uint64_t p = ((uint64_t)key << 32) | who;
    uint32_t v = fp__u64map_get(&g->map, p);
    if (v != FP__NONE) {
        *id = v;
        return FP_OK;
    }
    fp_status st = FP_OK;
    uint64_t *grown = fp_grow(g->pair, &g->cap, g->n + 1, sizeof *grown, 1024);
    FP_CHECK_ALLOC(grown);
    g->pair = grown;
    g->pair[g->n] = p;
    *id = (uint32_t)g->n++;
    st = fp__u64map_put(&g->map, p, *id);
cleanup:
    return st;
}

static void groups_free(fp__groups *g)
{
    fp__u64map_free(&g->map);
    free(g->pair);
    memset(g, 0, sizeof *g);
}

/* Stable counting sort of observations by group: start[g]..start[g+1] index
 * the returned run and value arrays. */
static fp_status sort_by_group(const obs *o, size_t ngroups, size_t **start, uint32_t **run,
                               double **v)
{
    fp_status st = FP_OK;
    size_t *st_ = calloc(ngroups + 1, sizeof *st_);
    size_t *pos = malloc((ngroups ? ngroups : 1) * sizeof *pos);
    uint32_t *r = malloc((o->n ? o->n : 1) * sizeof *r);
    double *d = malloc((o->n ? o->n : 1) * sizeof *d);
    if (!st_ || !pos || !r || !d) {
        free(st_);
        free(pos);
        free(r);
        free(d);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < o->n; i++)
        st_[o->group[i] + 1]++;
    for (size_t g = 0; g < ngroups; g++)
        st_[g + 1] += st_[g];
    memcpy(pos, st_, ngroups * sizeof *pos);
    for (size_t i = 0; i < o->n; i++) {
        size_t k = pos[o->group[i]]++;
        r[k] = o->run[i];
        d[k] = o->v[i];
    }
    free(pos);
    *start = st_;
    *run = r;
    *v = d;
cleanup:
    return st;
}

static fp_status grow_u32(uint32_t **p, size_t *cap, size_t need)
{
    fp_status st = FP_OK;
    if (need <= *cap)
        return FP_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    uint32_t *g = realloc(*p, c * sizeof *g);
    FP_CHECK_ALLOC(g);
    *p = g;
    *cap = c;
cleanup:
    return st;
}

/* The set id of the distinct values of runs_in[0..n) (any order, each below
 * nruns). Sets are found by their bit mask up to 64 runs, by their text
 * above; either way ids are dense in order of first use. */
static fp_status runset_id(fp__runsets *rs, const uint32_t *runs_in, size_t n, size_t nruns,
                           uint32_t *id)
{
    fp_status st = FP_OK;
    if (nruns > rs->seencap) {
        uint8_t *s = realloc(rs->seen, nruns);
        FP_CHECK_ALLOC(s);
        memset(s + rs->seencap, 0, nruns - rs->seencap);
        rs->seen = s;
        rs->seencap = nruns;
    }
    FP_CHECK(grow_u32(&rs->member, &rs->memcap, rs->nmember + nruns));
    uint32_t *list = rs->member + rs->nmember; /* kept only when the set is new */
    size_t nd = 0;
    uint64_t mask = 0;
    for (size_t i = 0; i < n; i++)
        if (!rs->seen[runs_in[i]]) {
            rs->seen[runs_in[i]] = 1;
            list[nd++] = runs_in[i];
        }
    for (size_t i = 1; i < nd; i++) { /* few: insertion sort */
        uint32_t x = list[i];
        size_t j = i;
        for (; j > 0 && list[j - 1] > x; j--)
            list[j] = list[j - 1];
        list[j] = x;
    }
    for (size_t i = 0; i < nd; i++) {
        rs->seen[list[i]] = 0;
        mask |= nruns <= 64 ? 1ull << list[i] : 0;
    }
    bool added;
    if (nruns <= 64) {
        *id = fp__u64map_get(&rs->mask, mask);
        added = *id == FP__NONE;
        if (added) {
            *id = (uint32_t)rs->nsets;
            FP_CHECK(fp__u64map_put(&rs->mask, mask, *id));
        }
    } else {
        size_t len = 0;
        for (size_t i = 0; i < nd; i++) {
            char *g = fp_grow(rs->buf, &rs->bufcap, len + 16, 1, 1024);
            FP_CHECK_ALLOC(g);
            rs->buf = g;
            len += (size_t)snprintf(rs->buf + len, rs->bufcap - len, "%u,", list[i]);
        }
        FP_CHECK(fp__strmap_intern(&rs->text, rs->buf ? rs->buf : "", len, id, &added));
    }
    if (!added)
        return FP_OK;
    FP_CHECK(grow_u32(&rs->off, &rs->offcap, rs->nsets + 2));
    if (rs->nsets == 0)
        rs->off[0] = 0;
    rs->nmember += nd;
    rs->off[++rs->nsets] = (uint32_t)rs->nmember;
cleanup:
    return st;
}

static void runsets_free(fp__runsets *rs)
{
    fp__strmap_free(&rs->text);
    fp__u64map_free(&rs->mask);
    free(rs->buf);
    free(rs->off);
    free(rs->member);
    free(rs->seen);
    memset(rs, 0, sizeof *rs);
}

/* ---- HDF5 record types ------------------------------------------------------------- */

/* The file's row type, a built row's (brow) or a loaded one's (lrow: no
 * range; the file's range members are skipped). The file's rows are laid
 * out as a built row in memory (little-endian), so that where that is a
 * loaded row's layout too the entity table is used from the file as it lies
 * (fp__h5_map_table); files of earlier versions packed the members (108
 * bytes a row), and are read member by member. */
typedef enum { ROW_FILE, ROW_BUILT, ROW_LOADED } row_form;

static hid_t brow_type(row_form form, const char *who)
{
    bool file = form == ROW_FILE;
    hid_t u32 = file ? H5T_STD_U32LE : H5T_NATIVE_UINT32;
    hid_t f64 = file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
    hid_t t = H5Tcreate(H5T_COMPOUND, form == ROW_LOADED ? sizeof(lrow) : sizeof(brow));
    bool ok = t >= 0;
#define FIELD(name, type, memoff) ok = ok && H5Tinsert(t, name, memoff, type) >= 0
    FIELD("key", u32, HOFFSET(brow, key));
    FIELD(who, u32, HOFFSET(brow, who));
    FIELD("count", u32, HOFFSET(brow, b.count));
    FIELD("rejected", u32, HOFFSET(brow, b.rejected));
    FIELD("nruns", u32, HOFFSET(brow, b.nruns));
    FIELD("runset", u32, HOFFSET(brow, b.runset));
    FIELD("windows", u32, HOFFSET(brow, b.windows));
    FIELD("median", f64, HOFFSET(brow, b.median));
    FIELD("mad", f64, HOFFSET(brow, b.mad));
    if (form != ROW_LOADED) {
        FIELD("p05", f64, HOFFSET(brow, q.p05));
        FIELD("p95", f64, HOFFSET(brow, q.p95));
        FIELD("min", f64, HOFFSET(brow, q.min));
        FIELD("max", f64, HOFFSET(brow, q.max));
    }
    FIELD("run_spread", f64, HOFFSET(brow, b.run_spread));
    FIELD("window_spread", f64, HOFFSET(brow, b.window_spread));
    FIELD("summary", f64, HOFFSET(brow, b.summary));
    FIELD("summary_spread", f64, HOFFSET(brow, b.summary_spread));
#undef FIELD
    if (!ok && t >= 0) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

static hid_t bkey_type(bool file)
{
    hid_t sk = fp__h5_str_type(KEY_WIDTH), su = fp__h5_str_type(16);
    hid_t t = H5Tcreate(H5T_COMPOUND, file ? KEY_WIDTH + 16 + 1 : sizeof(bkey));
    bool ok = t >= 0 && sk >= 0 && su >= 0;
    ok = ok && H5Tinsert(t, "key", file ? 0 : HOFFSET(bkey, key), sk) >= 0;
    ok = ok && H5Tinsert(t, "unit", file ? KEY_WIDTH : HOFFSET(bkey, unit), su) >= 0;
    ok = ok && H5Tinsert(t, "better", file ? KEY_WIDTH + 16 : HOFFSET(bkey, better),
                         file ? H5T_STD_U8LE : H5T_NATIVE_UINT8) >= 0;
    if (sk >= 0)
        H5Tclose(sk);
    if (su >= 0)
        H5Tclose(su);
    if (!ok && t >= 0) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

/* The rows of /baselines/<name>: the entity table (the large one, which
 * detect reads whole) contiguous and uncompressed, to be mapped. */
static fp_status write_rows(hid_t g, const char *name, const char *who, const brow *rows,
                            size_t n)
{
    fp_status st = FP_OK;
    hid_t ft = brow_type(ROW_FILE, who), mt = brow_type(ROW_BUILT, who);
    if (ft < 0 || mt < 0)
        FP_FAIL(FP_EH5, "cannot build the baseline row type");
    if (strcmp(name, "entity") == 0)
        FP_CHECK(fp__h5_write_contiguous(g, name, ft, mt, rows, n));
    else
        FP_CHECK(fp__h5_write_table(g, name, ft, mt, rows, n));
cleanup:
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    return st;
}

/* ---- the builder --------------------------------------------------------------------- */

typedef fp__pairs pairs;

static void pairs_free(pairs *p)
{
    free(p->ent);
    free(p->metric);
    free(p->first);
    free(p->group);
    free(p->row);
    free(p->off);
    free(p->rec);
    free(p->w);
    free(p->s);
    free(p->order);
    free(p->rp);
    free(p->mslot);
    free(p->estart);
    memset(p, 0, sizeof *p);
}

/* *a holds at least n elements of size bytes (at least one), kept from run to
 * run: a fresh large allocation each run would fault its pages in again. */
static fp_status need(void *a, size_t *cap, size_t n, size_t size)
{
    fp_status st = FP_OK;
    void **p = a;
    n = n ? n : 1;
    if (n <= *cap)
        return FP_OK;
    void *g = realloc(*p, n * size);
    FP_CHECK_ALLOC(g);
    *p = g;
    *cap = n;
cleanup:
    return st;
}

void fp__builder_free(fp__builder *b)
{
    fp__strmap_free(&b->keys);
    fp__strmap_free(&b->entities);
    fp__strmap_free(&b->skus);
    fp__strmap_free(&b->runs);
    free(b->key_rows);
    groups_free(&b->eg);
    groups_free(&b->sg);
    for (size_t i = 0; i < b->nblk; i++) {
        free(b->blk[i].rec);
        free(b->blk[i].w);
        free(b->blk[i].s);
    }
    free(b->blk);
    runsets_free(&b->rs);
    free(b->erows);
    free(b->srows);
    free(b->byg);
    memset(b, 0, sizeof *b);
}

fp_status fp__builder_key(fp__builder *b, const char *key, const char *unit, uint8_t better,
                          const char *run, uint32_t *id)
{
    fp_status st = FP_OK;
    bool added;
    FP_CHECK(fp__strmap_intern(&b->keys, key, strlen(key), id, &added));
    if (added) {
        fp__bkey *g = fp_grow(b->key_rows, &b->key_cap, (size_t)*id + 1, sizeof *g, 64);
        FP_CHECK_ALLOC(g);
        b->key_rows = g;
        fp__bkey *k = &b->key_rows[*id];
        memset(k, 0, sizeof *k);
        snprintf(k->key, sizeof k->key, "%s", key);
        snprintf(k->unit, sizeof k->unit, "%s", unit);
        k->better = better;
    } else if (strcmp(b->key_rows[*id].unit, unit) != 0) {
        fp_warn("metric %s: unit '%s' in run %s, '%s' in an earlier run; the values are "
                "pooled as if the same", key, unit, run, b->key_rows[*id].unit);
    }
cleanup:
    return st;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (int)(x > y) - (int)(x < y);
}

/* Find t's pairs: rows by entity (a stable counting sort), then within each
 * entity by metric, so that each pair is looked up once, not once a row. */
static fp_status find_pairs(const fp__runtab *t, pairs *p)
{
    fp_status st = FP_OK;
    size_t ne = t->entities.n, nm = t->keys.n, nr = t->nrows, nf = 0;
    FP_CHECK(need(&p->estart, &p->cap_estart, ne + 2, sizeof *p->estart));
    FP_CHECK(need(&p->mslot, &p->cap_mslot, nm, sizeof *p->mslot));
    size_t *estart = p->estart;
    memset(estart, 0, (ne + 2) * sizeof *estart);
    for (size_t i = 0; i < nr; i++)
        if (isfinite(t->rows[i].value)) {
            estart[t->rows[i].entity + 2]++;
            nf++;
        }
    for (size_t e = 0; e < ne; e++)
        estart[e + 2] += estart[e + 1];
    FP_CHECK(need(&p->order, &p->cap_row[0], nf, sizeof *p->order));
    FP_CHECK(need(&p->rp, &p->cap_row[1], nf, sizeof *p->rp));
    FP_CHECK(need(&p->row, &p->cap_row[2], nf, sizeof *p->row));
    FP_CHECK(need(&p->ent, &p->cap_pair[0], nf, sizeof *p->ent)); /* pairs: at most nf */
    FP_CHECK(need(&p->metric, &p->cap_pair[1], nf, sizeof *p->metric));
    FP_CHECK(need(&p->first, &p->cap_pair[2], nf, sizeof *p->first));
    uint32_t *order = p->order, *rp = p->rp, *mslot = p->mslot;
    for (size_t i = 0; i < nr; i++)
        if (isfinite(t->rows[i].value))
            order[estart[t->rows[i].entity + 1]++] = (uint32_t)i;
    /* estart[e] .. estart[e + 1] now bound entity e's rows in order */
    memset(mslot, 0xff, (nm ? nm : 1) * sizeof *mslot);
    size_t np = 0;
    for (size_t e = 0; e < ne; e++) {
        size_t p0 = np;
        for (size_t k = estart[e]; k < estart[e + 1]; k++) {
            uint32_t m = t->rows[order[k]].key;
            if (mslot[m] == FP__NONE) {
                mslot[m] = (uint32_t)np;
                p->ent[np] = (uint32_t)e;
                p->metric[np] = m;
                p->first[np] = order[k];
                np++;
            }
            rp[k] = mslot[m];
        }
        for (size_t q = p0; q < np; q++)
            mslot[p->metric[q]] = FP__NONE;
    }
    p->n = np;
    FP_CHECK(need(&p->off, &p->cap_off, np + 2, sizeof *p->off));
    FP_CHECK(need(&p->group, &p->cap_pair[3], np, sizeof *p->group));
    memset(p->off, 0, (np + 2) * sizeof *p->off);
    for (size_t k = 0; k < nf; k++)
        p->off[rp[k] + 2]++;
    for (size_t q = 0; q < np; q++)
        p->off[q + 2] += p->off[q + 1];
    for (size_t k = 0; k < nf; k++)
        p->row[p->off[rp[k] + 1]++] = order[k];
cleanup:
    return st;
}

/* Give each pair its group: known pairs by lookup, new ones numbered in order
 * of their first row, as adding the rows one by one would. */
static fp_status pair_groups(fp__builder *b, pairs *p, const uint32_t *lk, const uint32_t *le)
{
    fp_status st = FP_OK;
    uint64_t *fresh = NULL;
    size_t nfresh = 0;
    for (size_t q = 0; q < p->n; q++) {
        uint64_t key = ((uint64_t)lk[p->metric[q]] << 32) | le[p->ent[q]];
        p->group[q] = fp__u64map_get(&b->eg.map, key);
        if (p->group[q] == FP__NONE) {
            if (!fresh) {
                fresh = malloc((p->n - q) * sizeof *fresh);
                FP_CHECK_ALLOC(fresh);
            }
            fresh[nfresh++] = ((uint64_t)p->first[q] << 32) | q;
        }
    }
    if (nfresh)
        qsort(fresh, nfresh, sizeof *fresh, cmp_u64);
    FP_CHECK(fp__u64map_reserve(&b->eg.map, b->eg.n + nfresh));
    for (size_t i = 0; i < nfresh; i++) {
        uint32_t q = (uint32_t)fresh[i];
        FP_CHECK(fp__group_id(&b->eg, lk[p->metric[q]], le[p->ent[q]], &p->group[q]));
    }
cleanup:
    free(fresh);
    return st;
}

/* What t's rows say of each pair p found: its record but the group and the
 * SKU (the windows' median and spread, a run with only a summary using that;
 * the summaries' median), and its sorted windows and summaries. */
static fp_status pair_records(const fp__runtab *t, pairs *p)
{
    fp_status st = FP_OK;
    size_t nwin = 0, nsum = 0, maxn = 1;
    double *scratch = NULL;
    for (size_t q = 0; q < p->n; q++) {
        size_t n = p->off[q + 1] - p->off[q];
        maxn = n > maxn ? n : maxn;
        for (size_t i = p->off[q]; i < p->off[q + 1]; i++) {
            if (t->rows[p->row[i]].iter < 0)
                nsum++;
            else
                nwin++;
        }
    }
    scratch = malloc(maxn * sizeof *scratch);
    FP_CHECK_ALLOC(scratch);
    FP_CHECK(need(&p->rec, &p->cap_pair[4], p->n, sizeof *p->rec));
    FP_CHECK(need(&p->w, &p->cap_row[3], nwin, sizeof *p->w));
    FP_CHECK(need(&p->s, &p->cap_pair[5], nsum, sizeof *p->s));
    double *w = p->w, *s = p->s;
    for (size_t q = 0; q < p->n; q++) {
        fp__grun *r = &p->rec[q];
        uint32_t nw = 0, ns = 0;
        for (size_t i = p->off[q]; i < p->off[q + 1]; i++) {
            const fp__row *row = &t->rows[p->row[i]];
            if (row->iter < 0)
                s[ns++] = row->value;
            else
                w[nw++] = row->value;
        }
        fp_sort_doubles(w, nw);
        fp_sort_doubles(s, ns);
        double *v = nw ? w : s;
        size_t n = nw ? nw : ns;
        r->nw = nw;
        r->ns = ns;
        r->med = fp_quantile(v, n, 0.5);
        r->wsp = n >= 3 && r->med != 0 ? 1.4826 * mad_of(v, n, r->med, scratch) / fabs(r->med)
                                       : NAN;
        r->sum = ns ? fp_quantile(s, ns, 0.5) : NAN;
        w += nw;
        s += ns;
    }
cleanup:
    free(scratch);
    return st;
}

/* One run's block from its pairs: a record per group, in group order. */
static fp_status make_block(fp__builder *b, const pairs *p, const uint32_t *ls, fp__rblock *k)
{
    fp_status st = FP_OK;
    size_t ng = b->eg.n, nwin = 0, nsum = 0;
    size_t *wo = malloc((p->n + 1) * sizeof *wo), *so = malloc((p->n + 1) * sizeof *so);
    FP_CHECK(need(&b->byg, &b->cap_byg, ng, sizeof *b->byg));
    uint32_t *byg = b->byg;
    FP_CHECK_ALLOC(wo);
    FP_CHECK_ALLOC(so);
    memset(byg, 0xff, (ng ? ng : 1) * sizeof *byg);
    for (size_t q = 0; q < p->n; q++) {
        byg[p->group[q]] = (uint32_t)q;
        wo[q] = nwin;
        so[q] = nsum;
        nwin += p->rec[q].nw;
        nsum += p->rec[q].ns;
    }
    k->rec = malloc((p->n ? p->n : 1) * sizeof *k->rec);
    k->w = malloc((nwin ? nwin : 1) * sizeof *k->w);
    k->s = malloc((nsum ? nsum : 1) * sizeof *k->s);
    FP_CHECK_ALLOC(k->rec);
    FP_CHECK_ALLOC(k->w);
    FP_CHECK_ALLOC(k->s);
    for (size_t g = 0; g < ng; g++) {
        uint32_t q = byg[g];
        if (q == FP__NONE)
            continue;
        fp__grun *r = &k->rec[k->n++];
        *r = p->rec[q];
        r->group = (uint32_t)g;
        r->sku = ls[p->ent[q]];
        memcpy(k->w + k->nw, p->w + wo[q], r->nw * sizeof *k->w);
        memcpy(k->s + k->ns, p->s + so[q], r->ns * sizeof *k->s);
        k->nw += r->nw;
        k->ns += r->ns;
    }
cleanup:
    free(wo);
    free(so);
    return st;
}

/* Add a block for the stored run t (run: its id in b->runs), whose pairs p
 * were found and reduced where it was read. */
static fp_status add_run(fp__builder *b, const fp__runtab *t, pairs *p, uint32_t run)
{
    fp_status st = FP_OK;
    fp_sku_index *ix = NULL;
    uint32_t *lk = calloc(t->keys.n ? t->keys.n : 1, sizeof *lk);
    uint32_t *le = calloc(t->entities.n ? t->entities.n : 1, sizeof *le);
    uint32_t *ls = calloc(t->entities.n ? t->entities.n : 1, sizeof *ls);
    FP_CHECK_ALLOC(lk);
    FP_CHECK_ALLOC(le);
    FP_CHECK_ALLOC(ls);
    FP_CHECK(fp_sku_index_build(&t->ctx, &ix));
    for (uint32_t m = 0; m < t->keys.n; m++) {
        const fp__metric *mt = &t->metrics[m];
        fp_sample s;
        memset(&s, 0, sizeof s);
        memcpy(s.suite, mt->suite, sizeof s.suite);
        memcpy(s.test, mt->test, sizeof s.test);
        memcpy(s.metric, mt->metric, sizeof s.metric);
        s.size = mt->size;
        char key[FP__KEY_WIDTH];
        fp_sample_key(&s, key, sizeof key);
        FP_CHECK(fp__builder_key(b, key, mt->unit, mt->better, t->ctx.id, &lk[m]));
    }
    for (uint32_t e = 0; e < t->entities.n; e++) {
        const char *name = fp__strmap_str(&t->entities, e);
        const char *sku = fp_sku_index_get(ix, &t->ent[e]);
        FP_CHECK(fp__strmap_intern(&b->entities, name, strlen(name), &le[e], NULL));
        FP_CHECK(fp__strmap_intern(&b->skus, sku, strlen(sku), &ls[e], NULL));
    }
    FP_CHECK(pair_groups(b, p, lk, le));
    fp__rblock *grown = fp_grow(b->blk, &b->blkcap, b->nblk + 1, sizeof *grown, 8);
    FP_CHECK_ALLOC(grown);
    b->blk = grown;
    fp__rblock *k = &b->blk[b->nblk++];
    memset(k, 0, sizeof *k);
    k->run = run;
    FP_CHECK(make_block(b, p, ls, k));
cleanup:
    fp_sku_index_free(ix);
    free(lk);
    free(le);
    free(ls);
    return st;
}

/* Scratch of the reduction, grown as groups need. */
typedef struct rscratch {
    double *v, *sums, *scratch;
    size_t cap;
} rscratch;

static fp_status rscratch_need(rscratch *r, size_t n)
{
    fp_status st = FP_OK;
    if (n <= r->cap)
        return FP_OK;
    size_t cap = r->cap ? r->cap : 256;
    while (cap < n)
        cap *= 2;
    double *a = realloc(r->v, cap * sizeof *a);
    FP_CHECK_ALLOC(a);
    r->v = a;
    a = realloc(r->sums, cap * sizeof *a);
    FP_CHECK_ALLOC(a);
    r->sums = a;
    a = realloc(r->scratch, cap * sizeof *a);
    FP_CHECK_ALLOC(a);
    r->scratch = a;
    r->cap = cap;
cleanup:
    return st;
}

/* A SKU row's spreads, windows and summary: medians over the entity rows
 * that fed it (members[0..n) index erows); the summary's spread is the one
 * between those entities. */
static void sku_spreads(fp__brow *r, const fp__brow *erows, const uint32_t *members, size_t n,
                        double *a, double *c, double *w, double *scratch)
{
    size_t na = 0, nc = 0, ns = 0;
    for (size_t i = 0; i < n; i++) {
        const fp_baseline *e = &erows[members[i]].b;
        if (isfinite(e->run_spread))
            a[na++] = e->run_spread;
        if (isfinite(e->window_spread))
            c[nc++] = e->window_spread;
        w[i] = e->windows;
    }
    r->b.run_spread = na ? median_of(a, na) : NAN;
    r->b.window_spread = nc ? median_of(c, nc) : NAN;
    r->b.windows = n ? (uint32_t)median_of(w, n) : 1;
    for (size_t i = 0; i < n; i++)
        if (isfinite(erows[members[i]].b.summary))
            a[ns++] = erows[members[i]].b.summary;
    r->b.summary = ns ? median_of(a, ns) : NAN;
    r->b.summary_spread = rel_spread(a, ns, 3, scratch);
}

/* The entity rows: per group, its records of every block (blocks are sorted
 * by group: one cursor each). Each record's median also feeds the SKU level
 * as an observation of (key, the entity's SKU in that run). */
static fp_status reduce_entities(fp__builder *b, double reject, obs *so, obs *members)
{
    fp_status st = FP_OK;
    size_t ng = b->eg.n, nb = b->nblk;
    size_t *cur = calloc(3 * (nb ? nb : 1), sizeof *cur); /* record, window, summary */
    uint32_t *runs = malloc((nb ? nb : 1) * sizeof *runs);
    double *meds = malloc((nb ? nb : 1) * sizeof *meds);
    double *wins = malloc((nb ? nb : 1) * sizeof *wins);
    double *wsp = malloc((nb ? nb : 1) * sizeof *wsp);
    rscratch rs = {0};
    b->erows = calloc(ng ? ng : 1, sizeof *b->erows);
    FP_CHECK_ALLOC(cur);
    FP_CHECK_ALLOC(runs);
    FP_CHECK_ALLOC(meds);
    FP_CHECK_ALLOC(wins);
    FP_CHECK_ALLOC(wsp);
    FP_CHECK_ALLOC(b->erows);
    for (size_t g = 0; g < ng; g++) {
        fp__brow *r = &b->erows[g];
        r->key = (uint32_t)(b->eg.pair[g] >> 32);
        r->who = (uint32_t)b->eg.pair[g];
        size_t n = 0, ns = 0, nr = 0, nw = 0;
        uint32_t sg = 0;
        for (size_t k = 0; k < nb; k++) {
            const fp__rblock *bk = &b->blk[k];
            size_t *c = cur + 3 * k;
            if (c[0] >= bk->n || bk->rec[c[0]].group != g)
                continue;
            const fp__grun *x = &bk->rec[c[0]++];
            FP_CHECK(rscratch_need(&rs, n + x->nw + x->ns));
            memcpy(rs.v + n, bk->w + c[1], x->nw * sizeof *rs.v);
            memcpy(rs.v + n + x->nw, bk->s + c[2], x->ns * sizeof *rs.v);
            memcpy(rs.sums + ns, bk->s + c[2], x->ns * sizeof *rs.v);
            n += x->nw + x->ns;
            ns += x->ns;
            c[1] += x->nw;
            c[2] += x->ns;
            runs[nr] = bk->run;
            meds[nr] = x->med;
            wins[nr] = x->nw ? x->nw : x->ns;
            if (isfinite(x->wsp))
                wsp[nw++] = x->wsp;
            FP_CHECK(fp__group_id(&b->sg, r->key, x->sku, &sg));
            FP_CHECK(obs_add(so, sg, bk->run, x->med));
            nr++;
        }
        FP_CHECK(rscratch_need(&rs, n > nb ? n : nb));
        FP_CHECK(runset_id(&b->rs, runs, nr, b->runs.n, &r->b.runset));
        r->b.nruns = b->rs.off[r->b.runset + 1] - b->rs.off[r->b.runset];
        if (nr) {
            r->b.windows = (uint32_t)median_of(wins, nr);
            FP_CHECK(obs_add(members, sg, (uint32_t)g, 0));
        }
        r->b.run_spread = rel_spread(meds, nr, 2, rs.scratch);
        r->b.window_spread = nw ? median_of(wsp, nw) : NAN;
        r->b.summary = ns ? median_of(rs.sums, ns) : NAN;
        r->b.summary_spread = rel_spread(rs.sums, ns, 2, rs.scratch);
        robust_stats(rs.v, n, reject, rs.scratch, &r->b, &r->q);
        b->rejected += r->b.rejected;
    }
cleanup:
    free(cur);
    free(runs);
    free(meds);
    free(wins);
    free(wsp);
    free(rs.v);
    free(rs.sums);
    free(rs.scratch);
    return st;
}

/* The SKU rows: over the (entity, run) medians of each (key, SKU); spreads
 * from the entity rows that fed it. */
static fp_status reduce_skus(fp__builder *b, double reject, const obs *so, const obs *members)
{
    fp_status st = FP_OK;
    size_t ng = b->sg.n;
    size_t *start = NULL, *mstart = NULL;
    uint32_t *run = NULL, *mrow = NULL;
    double *v = NULL, *mv = NULL, *scratch = NULL, *a = NULL, *c = NULL, *w = NULL;
    b->srows = calloc(ng ? ng : 1, sizeof *b->srows);
    FP_CHECK_ALLOC(b->srows);
    FP_CHECK(sort_by_group(so, ng, &start, &run, &v));
    FP_CHECK(sort_by_group(members, ng, &mstart, &mrow, &mv));
    size_t maxn = 1;
    for (size_t g = 0; g < ng; g++) {
        size_t n = start[g + 1] - start[g], m = mstart[g + 1] - mstart[g];
        maxn = n > maxn ? n : maxn;
        maxn = m > maxn ? m : maxn;
    }
    scratch = malloc(maxn * sizeof *scratch);
    a = malloc(maxn * sizeof *a);
    c = malloc(maxn * sizeof *c);
    w = malloc(maxn * sizeof *w);
    FP_CHECK_ALLOC(scratch);
    FP_CHECK_ALLOC(a);
    FP_CHECK_ALLOC(c);
    FP_CHECK_ALLOC(w);
    for (size_t g = 0; g < ng; g++) {
        size_t s0 = start[g], n = start[g + 1] - s0;
        fp__brow *r = &b->srows[g];
        r->key = (uint32_t)(b->sg.pair[g] >> 32);
        r->who = (uint32_t)b->sg.pair[g];
        FP_CHECK(runset_id(&b->rs, run + s0, n, b->runs.n, &r->b.runset));
        r->b.nruns = b->rs.off[r->b.runset + 1] - b->rs.off[r->b.runset];
        sku_spreads(r, b->erows, mrow + mstart[g], mstart[g + 1] - mstart[g], a, c, w, scratch);
        robust_stats(v + s0, n, reject, scratch, &r->b, &r->q);
    }
cleanup:
    free(start);
    free(run);
    free(v);
    free(mstart);
    free(mrow);
    free(mv);
    free(scratch);
    free(a);
    free(c);
    free(w);
    return st;
}

static fp_status builder_reduce(fp__builder *b, double reject)
{
    fp_status st = FP_OK;
    obs so = {0}, members = {0};
    FP_CHECK(reduce_entities(b, reject, &so, &members));
    FP_CHECK(reduce_skus(b, reject, &so, &members));
cleanup:
    obs_free(&so);
    obs_free(&members);
    return st;
}

/* The update state written on a thread of its own while the main thread
 * reduces: both only read the blocks, and only this thread calls HDF5 until
 * it is joined. */
typedef struct state_job {
    hid_t g;
    const fp__builder *b;
    fp_status st;
} state_job;

static void *state_thread(void *arg)
{
    state_job *j = arg;
    j->st = fp__baseline_state_write(j->g, j->b);
    return NULL;
}

/* /baselines but the update state, into g. */
static fp_status write_rows_of(hid_t g, const fp__builder *b, const fp_baseline_opts *o)
{
    fp_status st = FP_OK;
    hid_t ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    FP_CHECK(fp__h5_attr_double(g, "built", (double)ts.tv_sec + ts.tv_nsec * 1e-9));
    FP_CHECK(fp__h5_attr_double(g, "reject", o->reject));
    FP_CHECK(fp__h5_attr_str(g, "tag", o->tag ? o->tag : ""));
    FP_CHECK(fp__h5_attr_i64(g, "last", o->last));
    FP_CHECK(fp__h5_attr_double(g, "since", o->since));
    FP_CHECK(fp__h5_attr_i64(g, "nruns", b->runs.n));
    FP_CHECK(fp__h5_write_strings(g, "runs", &b->runs));
    FP_CHECK(fp__h5_write_strings(g, "entities", &b->entities));
    FP_CHECK(fp__h5_write_strings(g, "skus", &b->skus));
    FP_CHECK_H5(ft = bkey_type(true));
    FP_CHECK_H5(mt = bkey_type(false));
    FP_CHECK(fp__h5_write_table(g, "keys", ft, mt, b->key_rows, b->keys.n));
    FP_CHECK(write_rows(g, "entity", "entity", b->erows, b->eg.n));
    FP_CHECK(write_rows(g, "sku", "sku", b->srows, b->sg.n));
    FP_CHECK(fp__h5_write_table(g, "runset_offsets", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                                b->rs.off, b->rs.nsets + 1));
    FP_CHECK(fp__h5_write_table(g, "runset_members", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                                b->rs.member, b->rs.nmember));
cleanup:
    fp__h5_close(ft);
    fp__h5_close(mt);
    return st;
}

fp_status fp__builder_commit(fp_store *s, fp__builder *b, const fp_baseline_opts *o)
{
    fp_status st = FP_OK;
    hid_t tmp = H5I_INVALID_HID, g = H5I_INVALID_HID;
    state_job job = {.b = b, .st = FP_OK};
    pthread_t th;
    bool threaded = false;
    FP_CHECK(fp__store_tx_begin(s, &tmp));
    FP_CHECK_H5(g = H5Gcreate2(tmp, "baselines", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    job.g = g;
    double t0 = fp_clock();
    threaded = pthread_create(&th, NULL, state_thread, &job) == 0;
    if (!threaded) /* no thread to be had: one after the other */
        job.st = fp__baseline_state_write(g, b);
    st = builder_reduce(b, o->reject);
    double t1 = fp_clock();
    if (threaded)
        pthread_join(th, NULL);
    double t2 = fp_clock();
    FP_CHECK(st);
    FP_CHECK(job.st);
    FP_CHECK(write_rows_of(g, b, o));
    H5Gclose(g);
    g = H5I_INVALID_HID;
    double t3 = fp_clock();
    st = fp__store_tx_commit(s, tmp);
    tmp = H5I_INVALID_HID;
    fp_debug("baselines: reduced in %.2f s (the update state written beside it, %.2f s more), "
             "rows written in %.2f s, committed in %.2f s", t1 - t0, t2 - t1, t3 - t2,
             fp_clock() - t3);
cleanup:
    fp__h5_close(g);
    if (tmp >= 0)
        fp__store_tx_abort(s, tmp);
    return st;
}

/* A run read on a thread of its own while the main thread adds the one
 * before (only this thread calls HDF5 until it is joined). */
typedef struct read_job {
    fp_store *s;
    const char *id;
    fp__runtab t;
    pairs p; /* kept from run to run */
    fp_status st;
} read_job;

/* Read a run and work out what it says per pair: everything of adding it
 * that needs no builder state. */
static void *read_thread(void *arg)
{
    read_job *j = arg;
    j->st = fp__store_read_runtab(j->s, j->id, false, &j->t);
    if (j->st == FP_OK)
        j->st = find_pairs(&j->t, &j->p);
    if (j->st == FP_OK)
        j->st = pair_records(&j->t, &j->p);
    return NULL;
}

fp_status fp__builder_add_runs(fp_store *s, fp__builder *b, const char *const *ids, size_t n)
{
    fp_status st = FP_OK;
    read_job job[2];
    memset(job, 0, sizeof job);
    pthread_t th;
    bool reading = false;
    for (size_t k = 0; k < n; k++) {
        uint32_t run;
        FP_CHECK(fp__strmap_intern(&b->runs, ids[k], strlen(ids[k]), &run, NULL));
    }
    if (n) {
        job[0].s = s;
        job[0].id = ids[0];
        read_thread(&job[0]);
    }
    double add = 0, wait = 0, t0 = fp_clock();
    for (size_t k = 0; k < n; k++) {
        read_job *now = &job[k % 2], *next = &job[(k + 1) % 2];
        FP_CHECK(now->st);
        if (k + 1 < n) {
            next->s = s;
            next->id = ids[k + 1];
            reading = pthread_create(&th, NULL, read_thread, next) == 0;
            if (!reading)
                read_thread(next);
        }
        uint32_t run = fp__strmap_find(&b->runs, ids[k], strlen(ids[k]));
        double a = fp_clock();
        st = add_run(b, &now->t, &now->p, run);
        fp__runtab_free(&now->t);
        double j = fp_clock();
        if (reading)
            pthread_join(th, NULL);
        reading = false;
        add += j - a;
        wait += fp_clock() - j;
        FP_CHECK(st);
    }
    fp_debug("baselines: %zu runs read and added in %.2f s (adding %.2f s, then waiting for the "
             "next read %.2f s)", n, fp_clock() - t0, add, wait);
cleanup:
    if (reading)
        pthread_join(th, NULL);
    for (int i = 0; i < 2; i++) {
        fp__runtab_free(&job[i].t);
        pairs_free(&job[i].p);
    }
    return st;
}

fp_status fp_store_build_baselines(fp_store *s, const fp_baseline_opts *o,
                                   fp_baseline_summary *summary)
{
    fp_status st = FP_OK;
    fp_run_summary *rows = NULL;
    size_t n = 0, nsel = 0;
    size_t *sel = NULL;
    const char **ids = NULL;
    fp__builder b;
    fp_baseline_summary sum = {0};
    memset(&b, 0, sizeof b);
    FP_CHECK(fp_store_list(s, &rows, &n));
    sel = calloc(n ? n : 1, sizeof *sel);
    ids = calloc(n ? n : 1, sizeof *ids);
    FP_CHECK_ALLOC(sel);
    FP_CHECK_ALLOC(ids);
    for (size_t i = 0; i < n; i++) {
        const fp_run_summary *r = &rows[i];
        if ((o->tag && o->tag[0] && strcmp(r->tag, o->tag) != 0) || r->time < o->since)
            continue;
        if (r->injected || r->emulated || (r->status[0] && strcmp(r->status, "complete") != 0)) {
            sum.runs_skipped++;
            continue;
        }
        sel[nsel++] = i;
    }
    size_t first = o->last > 0 && nsel > (size_t)o->last ? nsel - (size_t)o->last : 0;
    if (nsel == first)
        FP_FAIL(FP_EINPUT, "%s: no complete run without fault injections matches the selection "
                           "(%zu runs stored, %zu skipped)", fp_store_path(s), n, sum.runs_skipped);
    for (size_t k = first; k < nsel; k++)
        ids[k - first] = rows[sel[k]].id;
    sum.runs_used = nsel - first;
    FP_CHECK(fp__builder_add_runs(s, &b, ids, sum.runs_used));
    FP_CHECK(fp__builder_commit(s, &b, o));
    sum.values_rejected = b.rejected;
    sum.entity_rows = b.eg.n;
    sum.sku_rows = b.sg.n;
    if (summary)
        *summary = sum;
cleanup:
    fp__builder_free(&b);
    free(rows);
    free(sel);
    free(ids);
    return st;
}

/* ==== loading ======================================================================== */

/* Baselines written before the spreads existed lack those members, which
 * the read leaves unset: mark them unknown (NaN spreads, one window). The
 * table was just read: it exists. */
static void mark_old_rows(hid_t g, const char *name, lrow *rows, size_t n)
{
    bool old = !fp__h5_has_member(g, name, "summary_spread");
    for (size_t i = 0; old && i < n; i++) {
        fp_baseline *b = &rows[i].b;
        b->windows = 1;
        b->run_spread = b->window_spread = b->summary = b->summary_spread = NAN;
    }
}

static int pair_cmp(const void *a, const void *b)
{
    const row_pair *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* x: the rows of each who, by a counting sort (so each who's pairs come in
 * row order), then by key where a who's rows were not written by key. Each
 * row's ids are checked on the way: its key, its who and its run set. */
static fp_status index_rows(row_index *x, const row_table *t, size_t nkeys, size_t nwho,
                            size_t nsets, const char *what)
{
    fp_status st = FP_OK;
    size_t n = t->n;
    if (n >= FP__NONE || nwho >= FP__NONE)
        FP_FAIL(FP_EINPUT, "/baselines/%s holds %zu rows of %zu names: too many", what, n, nwho);
    x->nwho = nwho;
    x->off = calloc(nwho + 2, sizeof *x->off);
    x->pair = fp_malloc_huge((n + 1) * sizeof *x->pair);
    FP_CHECK_ALLOC(x->off);
    FP_CHECK_ALLOC(x->pair);
    for (size_t i = 0; i < n; i++) {
        const lrow *r = row_of(t, i);
        if (r->b.runset >= nsets)
            FP_FAIL(FP_EINPUT, "/baselines/%s row %zu has no run set (corrupt)", what, i);
        if (r->key >= nkeys || r->who >= nwho)
            FP_FAIL(FP_EINPUT, "/baselines/%s row %zu refers past its tables (corrupt)", what, i);
        x->off[r->who + 2]++;
    }
    for (size_t w = 2; w <= nwho + 1; w++)
        x->off[w] += x->off[w - 1];
    for (size_t i = 0; i < n; i++) { /* off[who + 1]: where who's next pair goes */
        const lrow *r = row_of(t, i);
        x->pair[x->off[r->who + 1]++] = (row_pair){r->key, (uint32_t)i};
    }
    for (size_t w = 0; w < nwho; w++) {
        row_pair *p = x->pair + x->off[w];
        size_t m = x->off[w + 1] - x->off[w], j = 1;
        while (j < m && p[j - 1].key <= p[j].key)
            j++;
        if (j < m)
            qsort(p, m, sizeof *p, pair_cmp);
    }
cleanup:
    return st;
}

static void index_free(row_index *x)
{
    free(x->off);
    free(x->pair);
    memset(x, 0, sizeof *x);
}

/* The row of (key, who) in x, FP__NONE when none: of a pair written twice,
 * the later row (as the table's last word). */
static uint32_t index_find(const row_index *x, uint32_t key, uint32_t who)
{
    if (who >= x->nwho)
        return FP__NONE;
    size_t first = x->off[who], lo = first, hi = x->off[who + 1];
    while (lo < hi) { /* the first pair past key */
        size_t mid = lo + (hi - lo) / 2;
        if (x->pair[mid].key <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > first && x->pair[lo - 1].key == key ? x->pair[lo - 1].row : FP__NONE;
}

/* /baselines/<name> (name also its who member) into t: mapped from the file
 * where its rows lie as loaded rows do, else read. */
static fp_status load_rows(hid_t g, const char *name, row_table *t)
{
    fp_status st = FP_OK;
    lrow *rows = NULL;
    hid_t mt = brow_type(ROW_LOADED, name);
    FP_CHECK_H5(mt);
    FP_CHECK(fp__h5_map_table(g, name, mt, sizeof(lrow), &t->map));
    if (t->map.map) {
        *t = (row_table){t->map.rows, t->map.n, t->map.stride, t->map};
        goto cleanup;
    }
    FP_CHECK(fp__h5_read_table(g, name, mt, sizeof(lrow), (void **)&rows, &t->n));
    mark_old_rows(g, name, rows, t->n);
    t->base = (const char *)rows;
    t->stride = sizeof(lrow);
cleanup:
    fp__h5_close(mt);
    return st;
}

static void rows_free(row_table *t)
{
    if (t->map.map)
        fp__h5_unmap(&t->map);
    else
        free((void *)t->base);
    memset(t, 0, sizeof *t);
}

fp_status fp_store_load_baselines(fp_store *s, fp_baselines **out)
{
    fp_status st = FP_OK;
    hid_t g = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    bkey *keys = NULL;
    size_t nkeys = 0, noff = 0, nmem = 0;
    fp_baselines *b = calloc(1, sizeof *b);
    *out = NULL;
    FP_CHECK_ALLOC(b);
    hid_t f;
    FP_CHECK(fp__store_baselines_file(s, &f));
    if (f < 0 || H5Lexists(f, "baselines", H5P_DEFAULT) <= 0) {
        *out = b;
        return FP_OK;
    }
    FP_CHECK_H5(g = H5Gopen2(f, "baselines", H5P_DEFAULT));
    FP_CHECK(fp__h5_read_attr_double(g, "built", &b->built));
    FP_CHECK_H5(mt = bkey_type(false));
    FP_CHECK(fp__h5_read_table(g, "keys", mt, sizeof *keys, (void **)&keys, &nkeys));
    for (size_t i = 0; i < nkeys; i++) {
        uint32_t id;
        keys[i].key[KEY_WIDTH - 1] = 0;
        FP_CHECK(fp__strmap_intern(&b->keys, keys[i].key, strlen(keys[i].key), &id, NULL));
        if (id != i)
            FP_FAIL(FP_EINPUT, "/baselines/keys repeats '%s' (corrupt)", keys[i].key);
    }
    FP_CHECK(fp__h5_read_strings(g, "entities", &b->entities));
    FP_CHECK(fp__h5_read_strings(g, "skus", &b->skus));
    FP_CHECK(fp__h5_read_strings(g, "runs", &b->runs));
    FP_CHECK(load_rows(g, "entity", &b->erows));
    FP_CHECK(load_rows(g, "sku", &b->srows));
    FP_CHECK(fp__h5_read_table(g, "runset_offsets", H5T_NATIVE_UINT32, sizeof(uint32_t),
                               (void **)&b->set_off, &noff));
    FP_CHECK(fp__h5_read_table(g, "runset_members", H5T_NATIVE_UINT32, sizeof(uint32_t),
                               (void **)&b->set_member, &nmem));
    b->nsets = noff ? noff - 1 : 0;
    for (size_t i = 0; i < noff; i++)
        if (b->set_off[i] > nmem || (i && b->set_off[i] < b->set_off[i - 1]))
            FP_FAIL(FP_EINPUT, "/baselines/runset_offsets is not monotonic (corrupt)");
    for (size_t i = 0; i < nmem; i++)
        if (b->set_member[i] >= b->runs.n)
            FP_FAIL(FP_EINPUT, "/baselines/runset_members refers past /baselines/runs (corrupt)");
    FP_CHECK(index_rows(&b->eidx, &b->erows, nkeys, b->entities.n, b->nsets, "entity"));
    FP_CHECK(index_rows(&b->sidx, &b->srows, nkeys, b->skus.n, b->nsets, "sku"));
    *out = b;
    b = NULL;
cleanup:
    if (st == FP_EINPUT || st == FP_EH5)
        fp_error("%s: the baselines cannot be read", fp_store_path(s));
    free(keys);
    if (mt >= 0)
        H5Tclose(mt);
    if (g >= 0)
        H5Gclose(g);
    fp_baselines_free(b);
    return st;
}

void fp_baselines_free(fp_baselines *b)
{
    if (!b)
        return;
    fp__strmap_free(&b->keys);
    fp__strmap_free(&b->entities);
    fp__strmap_free(&b->skus);
    fp__strmap_free(&b->runs);
    rows_free(&b->erows);
    rows_free(&b->srows);
    free(b->erange);
    free(b->srange);
    free(b->set_off);
    free(b->set_member);
    index_free(&b->eidx);
    index_free(&b->sidx);
    free(b);
}

/* The ranges of /baselines/<name> (n rows, as loaded) into *out. */
static fp_status read_ranges(hid_t g, const char *name, size_t n, fp_baseline_range **out)
{
    fp_status st = FP_OK;
    size_t got = 0;
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof **out);
    FP_CHECK_H5(mt);
    FP_CHECK_H5(H5Tinsert(mt, "p05", HOFFSET(fp_baseline_range, p05), H5T_NATIVE_DOUBLE));
    FP_CHECK_H5(H5Tinsert(mt, "p95", HOFFSET(fp_baseline_range, p95), H5T_NATIVE_DOUBLE));
    FP_CHECK_H5(H5Tinsert(mt, "min", HOFFSET(fp_baseline_range, min), H5T_NATIVE_DOUBLE));
    FP_CHECK_H5(H5Tinsert(mt, "max", HOFFSET(fp_baseline_range, max), H5T_NATIVE_DOUBLE));
    FP_CHECK(fp__h5_read_table(g, name, mt, sizeof **out, (void **)out, &got));
    if (got != n)
        FP_FAIL(FP_EINPUT, "/baselines/%s holds %zu rows, %zu when its baselines were read", name,
                got, n);
cleanup:
    if (mt >= 0)
        H5Tclose(mt);
    return st;
}

fp_status fp_store_load_baseline_ranges(fp_store *s, fp_baselines *b)
{
    fp_status st = FP_OK;
    hid_t f, g = H5I_INVALID_HID;
    FP_CHECK(fp__store_baselines_file(s, &f));
    if (f < 0 || H5Lexists(f, "baselines", H5P_DEFAULT) <= 0) {
        if (b->erows.n + b->srows.n)
            FP_FAIL(FP_EINPUT, "%s has no baselines now", fp_store_path(s));
        return FP_OK;
    }
    FP_CHECK_H5(g = H5Gopen2(f, "baselines", H5P_DEFAULT));
    FP_CHECK(read_ranges(g, "entity", b->erows.n, &b->erange));
    FP_CHECK(read_ranges(g, "sku", b->srows.n, &b->srange));
cleanup:
    if (st == FP_EH5)
        fp_error("%s: the baselines' ranges cannot be read", fp_store_path(s));
    if (g >= 0)
        H5Gclose(g);
    return st;
}

const fp_baseline_range *fp_baselines_range(const fp_baselines *b, const fp_baseline *row)
{
    const char *r = (const char *)row - offsetof(lrow, b);
    const row_table *t[2] = {&b->erows, &b->srows};
    const fp_baseline_range *range[2] = {b->erange, b->srange};
    for (int i = 0; i < 2; i++)
        if (range[i] && r >= t[i]->base && r < t[i]->base + t[i]->n * t[i]->stride)
            return &range[i][(size_t)(r - t[i]->base) / t[i]->stride];
    return NULL;
}

static const fp_baseline *row_at(const row_index *idx, const row_table *t, uint32_t key,
                                 uint32_t who)
{
    uint32_t r = index_find(idx, key, who);
    return r == FP__NONE ? NULL : &row_of(t, r)->b;
}

uint32_t fp_baselines_key_id(const fp_baselines *b, const char *key)
{
    return fp__strmap_find(&b->keys, key, strlen(key));
}

uint32_t fp_baselines_entity_id(const fp_baselines *b, const char *entity)
{
    return fp__strmap_find(&b->entities, entity, strlen(entity));
}

uint32_t fp_baselines_entity_id_near(const fp_baselines *b, const char *entity, uint32_t guess)
{
    if (guess < b->entities.n && strcmp(fp__strmap_str(&b->entities, guess), entity) == 0)
        return guess;
    return fp_baselines_entity_id(b, entity);
}

const fp_baseline *fp_baselines_entity_at(const fp_baselines *b, uint32_t key, uint32_t entity)
{
    return row_at(&b->eidx, &b->erows, key, entity);
}

const fp_baseline *fp_baselines_entity(const fp_baselines *b, const char *key,
                                       const char *entity)
{
    return fp_baselines_entity_at(b, fp_baselines_key_id(b, key), fp_baselines_entity_id(b, entity));
}

const fp_baseline *fp_baselines_sku(const fp_baselines *b, const char *key, const char *sku)
{
    return row_at(&b->sidx, &b->srows, fp_baselines_key_id(b, key),
                  fp__strmap_find(&b->skus, sku, strlen(sku)));
}

const fp_baseline *fp_baselines_sku_row(const fp_baselines *b, size_t i, const char **key,
                                        const char **sku)
{
    if (i >= b->srows.n)
        return NULL;
    const lrow *r = row_of(&b->srows, i);
    *key = fp__strmap_str(&b->keys, r->key);
    *sku = fp__strmap_str(&b->skus, r->who);
    return &r->b;
}

size_t fp_baselines_entity_count(const fp_baselines *b)
{
    return b->erows.n;
}

size_t fp_baselines_sku_count(const fp_baselines *b)
{
    return b->srows.n;
}

double fp_baselines_built(const fp_baselines *b)
{
    return b->built;
}

size_t fp_baselines_runs(const fp_baselines *b, const fp_baseline *row, const char **ids,
                         size_t max)
{
    if (row->runset >= b->nsets)
        return 0;
    size_t a = b->set_off[row->runset], n = b->set_off[row->runset + 1] - a;
    for (size_t i = 0; i < n && i < max; i++)
        ids[i] = fp__strmap_str(&b->runs, b->set_member[a + i]);
    return n;
}
