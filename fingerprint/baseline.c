/* Baselines: robust statistics over stored runs, per (metric key, entity) and
 * per (metric key, SKU), written to /baselines; and loading them back with
 * hash indexes for O(1) lookup. Layout: docs/store.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleetprint/mem.h"
#include "fleetprint/log.h"
#include "fleetprint/stats.h"
#include "h5.h"
#include "intern.h"
#include "runtab.h"
#include "store_internal.h"

#define KEY_WIDTH 96
#define MIN_REJECT_N 10

/* A baseline row in memory: the ids it is for, then the statistic. */
typedef struct brow {
    uint32_t key;
    uint32_t who; /* entity or SKU id */
    fp_baseline b;
} brow;

/* A metric key row of /baselines/keys. */
typedef struct bkey {
    char key[KEY_WIDTH];
    char unit[16];
    uint8_t better;
} bkey;

struct fp_baselines {
    double built;
    fp__strmap keys, entities, skus, runs;
    brow *erows, *srows;
    size_t nerows, nsrows;
    uint32_t *set_off, *set_member; /* runset i: members [off[i], off[i+1]) */
    size_t nsets;
    fp__u64map eidx, sidx;
};

/* ==== statistics ===================================================================== */

/* Statistics of v[0..n) (sorted in place), dropping values farther than
 * reject * 1.4826 * MAD from the median. When the MAD is 0 (most values equal)
 * nothing is dropped: there is no scale to call anything an outlier by; nor
 * below MIN_REJECT_N values, where the MAD itself is too noisy to judge by
 * (with 5 values of clean uniform noise it would drop a quarter of them). */
static void robust_stats(double *v, size_t n, double reject, double *scratch, fp_baseline *b)
{
    fp_sort_doubles(v, n);
    double med = fp_quantile(v, n, 0.5);
    double mad = fp_mad(v, n, med, scratch);
    size_t lo = 0, hi = n;
    if (reject > 0 && mad > 0 && n >= MIN_REJECT_N) {
        double lim = reject * 1.4826 * mad;
        while (lo < hi && v[lo] < med - lim)
            lo++;
        while (hi > lo && v[hi - 1] > med + lim)
            hi--;
    }
    const double *k = v + lo;
    size_t m = hi - lo;
    b->count = (uint32_t)m;
    b->rejected = (uint32_t)(n - m);
    b->median = fp_quantile(k, m, 0.5);
    b->mad = fp_mad(k, m, b->median, scratch);
    b->p05 = fp_quantile(k, m, 0.05);
    b->p95 = fp_quantile(k, m, 0.95);
    b->min = k[0];
    b->max = k[m - 1];
}

/* ==== building ======================================================================= */

/* Observations: one value for a group (key, who) from a run. A run's
 * summary value (iteration -1) is kept apart from its windows by setting
 * the run's top bit (SUMMARY_BIT). */
typedef struct obs {
    uint32_t *group, *run;
    double *v;
    size_t n, cap;
} obs;

#define SUMMARY_BIT 0x80000000u

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
    return med != 0 ? 1.4826 * fp_mad(v, n, med, scratch) / fabs(med) : NAN;
}

/* Groups: (key, who) pairs with dense ids. */
typedef struct groups {
    fp__u64map map;
    uint64_t *pair; /* id -> key << 32 | who */
    size_t n, cap;
} groups;

static fp_status group_id(groups *g, uint32_t key, uint32_t who, uint32_t *id)
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

static void groups_free(groups *g)
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
    uint32_t *r = malloc((o->n ? o->n : 1) * sizeof *r);
    double *d = malloc((o->n ? o->n : 1) * sizeof *d);
    if (!st_ || !r || !d) {
        free(st_);
        free(r);
        free(d);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < o->n; i++)
        st_[o->group[i] + 1]++;
    for (size_t g = 0; g < ngroups; g++)
        st_[g + 1] += st_[g];
    size_t *pos = malloc((ngroups ? ngroups : 1) * sizeof *pos);
    if (!pos) {
        free(st_);
        free(r);
        free(d);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
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

/* Run sets: distinct sorted lists of run indices, interned by their text so
 * the many rows built from the same runs share one set. Set ids are the
 * interning ids (dense, in order of first use). */
typedef struct runsets {
    fp__strmap text;
    char *buf;
    size_t bufcap;
    uint32_t *off, *member; /* set i: member[off[i] .. off[i+1]) */
    size_t nsets, offcap, nmember, memcap;
    uint32_t *sorted;       /* scratch */
    size_t sortcap;
} runsets;

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

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (int)(x > y) - (int)(x < y);
}

/* The set id of the distinct values of runs[0..n) (any order). */
static fp_status runset_id(runsets *rs, const uint32_t *runs_in, size_t n, uint32_t *id)
{
    fp_status st = grow_u32(&rs->sorted, &rs->sortcap, n);
    if (st != FP_OK)
        return st;
    uint32_t *runs = rs->sorted;
    for (size_t i = 0; i < n; i++)
        runs[i] = runs_in[i] & ~SUMMARY_BIT;
    qsort(runs, n, sizeof *runs, cmp_u32);
    size_t len = 0, nd = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && runs[i] == runs[i - 1])
            continue;
        char *g = fp_grow(rs->buf, &rs->bufcap, len + 16, 1, 1024);
        FP_CHECK_ALLOC(g);
        rs->buf = g;
        len += (size_t)snprintf(rs->buf + len, rs->bufcap - len, "%u,", runs[i]);
        nd++;
    }
    bool added;
    st = fp__strmap_intern(&rs->text, rs->buf ? rs->buf : "", len, id, &added);
    if (st != FP_OK || !added)
        return st;
    if ((st = grow_u32(&rs->off, &rs->offcap, rs->nsets + 2)) != FP_OK ||
        (st = grow_u32(&rs->member, &rs->memcap, rs->nmember + nd)) != FP_OK)
        return st;
    if (rs->nsets == 0)
        rs->off[0] = 0;
    for (size_t i = 0; i < n; i++)
        if (!i || runs[i] != runs[i - 1])
            rs->member[rs->nmember++] = runs[i];
    rs->off[++rs->nsets] = (uint32_t)rs->nmember;
cleanup:
    return st;
}

static void runsets_free(runsets *rs)
{
    fp__strmap_free(&rs->text);
    free(rs->buf);
    free(rs->off);
    free(rs->member);
    free(rs->sorted);
    memset(rs, 0, sizeof *rs);
}

/* ---- HDF5 record types ------------------------------------------------------------- */

static hid_t brow_type(bool file, const char *who)
{
    hid_t u32 = file ? H5T_STD_U32LE : H5T_NATIVE_UINT32;
    hid_t f64 = file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
    hid_t t = H5Tcreate(H5T_COMPOUND, file ? 7 * 4 + 10 * 8 : sizeof(brow));
    size_t off = 0;
    bool ok = t >= 0;
#define FIELD(name, type, memoff, size)                                                    \
    do {                                                                                   \
        ok = ok && H5Tinsert(t, name, file ? off : (memoff), type) >= 0;                   \
        off += (size);                                                                     \
    } while (0)
    FIELD("key", u32, HOFFSET(brow, key), 4);
    FIELD(who, u32, HOFFSET(brow, who), 4);
    FIELD("count", u32, HOFFSET(brow, b.count), 4);
    FIELD("rejected", u32, HOFFSET(brow, b.rejected), 4);
    FIELD("nruns", u32, HOFFSET(brow, b.nruns), 4);
    FIELD("runset", u32, HOFFSET(brow, b.runset), 4);
    FIELD("windows", u32, HOFFSET(brow, b.windows), 4);
    FIELD("median", f64, HOFFSET(brow, b.median), 8);
    FIELD("mad", f64, HOFFSET(brow, b.mad), 8);
    FIELD("p05", f64, HOFFSET(brow, b.p05), 8);
    FIELD("p95", f64, HOFFSET(brow, b.p95), 8);
    FIELD("min", f64, HOFFSET(brow, b.min), 8);
    FIELD("max", f64, HOFFSET(brow, b.max), 8);
    FIELD("run_spread", f64, HOFFSET(brow, b.run_spread), 8);
    FIELD("window_spread", f64, HOFFSET(brow, b.window_spread), 8);
    FIELD("summary", f64, HOFFSET(brow, b.summary), 8);
    FIELD("summary_spread", f64, HOFFSET(brow, b.summary_spread), 8);
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

static fp_status write_rows(hid_t g, const char *name, const char *who, const brow *rows,
                            size_t n)
{
    fp_status st = FP_OK;
    hid_t ft = brow_type(true, who), mt = brow_type(false, who);
    if (ft < 0 || mt < 0)
        FP_FAIL(FP_EH5, "cannot build the baseline row type");
    FP_CHECK(fp__h5_write_table(g, name, ft, mt, rows, n));
cleanup:
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    return st;
}

/* ---- the builder --------------------------------------------------------------------- */

typedef struct builder {
    fp__strmap keys, entities, skus, runs;
    bkey *key_rows;
    size_t key_cap;
    groups eg, sg;       /* (key, entity) and (key, sku) */
    obs eo, so;
    obs members;         /* SKU group -> the entity rows that fed it (run = row) */
    fp__u64map ent_sku;  /* run << 32 | entity -> sku */
    runsets rs;
    brow *erows, *srows;
} builder;

static void builder_free(builder *b)
{
    fp__strmap_free(&b->keys);
    fp__strmap_free(&b->entities);
    fp__strmap_free(&b->skus);
    fp__strmap_free(&b->runs);
    free(b->key_rows);
    groups_free(&b->eg);
    groups_free(&b->sg);
    obs_free(&b->eo);
    obs_free(&b->so);
    obs_free(&b->members);
    fp__u64map_free(&b->ent_sku);
    runsets_free(&b->rs);
    free(b->erows);
    free(b->srows);
}

/* Add one stored run's samples to the observations. */
static fp_status add_run(builder *b, const fp__runtab *t, uint32_t run)
{
    fp_status st = FP_OK;
    fp_sku_index *ix = NULL;
    uint32_t *lk = calloc(t->keys.n ? t->keys.n : 1, sizeof *lk);
    uint32_t *le = calloc(t->entities.n ? t->entities.n : 1, sizeof *le);
    FP_CHECK_ALLOC(lk);
    FP_CHECK_ALLOC(le);
    FP_CHECK(fp_sku_index_build(&t->ctx, &ix));
    for (uint32_t m = 0; m < t->keys.n; m++) {
        const fp__metric *mt = &t->metrics[m];
        fp_sample s;
        memset(&s, 0, sizeof s);
        memcpy(s.suite, mt->suite, sizeof s.suite);
        memcpy(s.test, mt->test, sizeof s.test);
        memcpy(s.metric, mt->metric, sizeof s.metric);
        s.size = mt->size;
        char key[KEY_WIDTH];
        fp_sample_key(&s, key, sizeof key);
        bool added;
        FP_CHECK(fp__strmap_intern(&b->keys, key, strlen(key), &lk[m], &added));
        if (added) {
            bkey *g = fp_grow(b->key_rows, &b->key_cap, (size_t)lk[m] + 1, sizeof *g, 64);
            FP_CHECK_ALLOC(g);
            b->key_rows = g;
            bkey *k = &b->key_rows[lk[m]];
            memset(k, 0, sizeof *k);
            memcpy(k->key, key, strlen(key));
            memcpy(k->unit, mt->unit, sizeof k->unit);
            k->better = mt->better;
        } else if (strcmp(b->key_rows[lk[m]].unit, mt->unit) != 0) {
            fp_warn("metric %s: unit '%s' in run %s, '%s' in an earlier run; the values are "
                    "pooled as if the same", key, mt->unit, t->ctx.id, b->key_rows[lk[m]].unit);
        }
    }
    for (uint32_t e = 0; e < t->entities.n; e++) {
        const char *name = fp__strmap_str(&t->entities, e);
        const char *sku = fp_sku_index_get(ix, &t->ent[e]);
        uint32_t sid;
        FP_CHECK(fp__strmap_intern(&b->entities, name, strlen(name), &le[e], NULL));
        FP_CHECK(fp__strmap_intern(&b->skus, sku, strlen(sku), &sid, NULL));
        FP_CHECK(fp__u64map_put(&b->ent_sku, ((uint64_t)run << 32) | le[e], sid));
    }
    for (size_t i = 0; i < t->nrows; i++) {
        const fp__row *r = &t->rows[i];
        if (!isfinite(r->value))
            continue;
        uint32_t g;
        FP_CHECK(group_id(&b->eg, lk[r->key], le[r->entity], &g));
        FP_CHECK(obs_add(&b->eo, g, r->iter < 0 ? run | SUMMARY_BIT : run, r->value));
    }
cleanup:
    fp_sku_index_free(ix);
    free(lk);
    free(le);
    return st;
}

/* Spreads of one entity group: v[0..n) with runs run[0..n) in run order
 * (added run by run; the counting sort is stable). Each run's windows (its
 * summary only when it has no windows) give a per-run median, fed to the SKU
 * level as group (key, the run's SKU), and a within-run spread. */
static fp_status entity_spreads(builder *b, brow *r, uint32_t row, const uint32_t *run,
                                const double *v, size_t n, double *seg, double *scratch,
                                double *meds, double *wsp, uint32_t *wins, double *sums)
{
    fp_status st = FP_OK;
    size_t nr = 0, nw = 0, ns = 0;
    uint32_t sg = 0;
    for (size_t i = 0; i < n;) {
        uint32_t id = run[i] & ~SUMMARY_BIT;
        size_t j = i, m = 0, ms = 0;
        while (j < n && (run[j] & ~SUMMARY_BIT) == id)
            j++;
        for (size_t k = i; k < j; k++) /* windows first, the summary apart */
            if (!(run[k] & SUMMARY_BIT))
                seg[m++] = v[k];
            else
                sums[ns++] = v[k];
        if (m == 0)
            for (size_t k = i; k < j; k++)
                seg[ms++] = v[k];
        size_t cnt = m ? m : ms;
        wins[nr] = (uint32_t)cnt;
        meds[nr] = median_of(seg, cnt);
        double w = rel_spread(seg, cnt, 3, scratch);
        if (isfinite(w))
            wsp[nw++] = w;
        uint32_t sku = fp__u64map_get(&b->ent_sku, ((uint64_t)id << 32) | r->who);
        FP_CHECK(group_id(&b->sg, r->key, sku, &sg));
        FP_CHECK(obs_add(&b->so, sg, id, meds[nr]));
        nr++;
        i = j;
    }
    if (nr) {
        double *wd = seg;
        for (size_t i = 0; i < nr; i++)
            wd[i] = wins[i];
        r->b.windows = (uint32_t)median_of(wd, nr);
        FP_CHECK(obs_add(&b->members, sg, row, 0));
    }
    r->b.run_spread = rel_spread(meds, nr, 2, scratch);
    r->b.window_spread = nw ? median_of(wsp, nw) : NAN;
    r->b.summary = ns ? median_of(sums, ns) : NAN;
    r->b.summary_spread = rel_spread(sums, ns, 2, scratch);
cleanup:
    return st;
}

/* A SKU row's spreads, windows and summary: medians over the entity rows
 * that fed it (members[0..n) index erows); the summary's spread is the one
 * between those entities. */
static void sku_spreads(brow *r, const brow *erows, const uint32_t *members, size_t n,
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

/* Statistics per group of o. At the entity level (erows NULL) also the
 * spreads, feeding each (group, run) median into the SKU level; at the SKU
 * level the spreads come from the entity rows erows. */
static fp_status reduce(builder *b, const obs *o, const groups *gs, double reject, brow **out,
                        const brow *erows, uint64_t *rejected)
{
    fp_status st = FP_OK;
    size_t *start = NULL, *mstart = NULL;
    uint32_t *run = NULL, *mrow = NULL;
    double *v = NULL, *scratch = NULL, *seg = NULL, *meds = NULL, *wsp = NULL, *mv = NULL;
    double *sums = NULL;
    uint32_t *wins = NULL;
    brow *rows = calloc(gs->n ? gs->n : 1, sizeof *rows);
    FP_CHECK_ALLOC(rows);
    FP_CHECK(sort_by_group(o, gs->n, &start, &run, &v));
    if (erows)
        FP_CHECK(sort_by_group(&b->members, gs->n, &mstart, &mrow, &mv));
    size_t maxn = 1;
    for (size_t g = 0; g < gs->n; g++) {
        size_t c = start[g + 1] - start[g];
        if (erows && mstart[g + 1] - mstart[g] > c)
            c = mstart[g + 1] - mstart[g];
        maxn = c > maxn ? c : maxn;
    }
    scratch = malloc(maxn * sizeof *scratch);
    seg = malloc(maxn * sizeof *seg);
    meds = malloc(maxn * sizeof *meds);
    wsp = malloc(maxn * sizeof *wsp);
    wins = malloc(maxn * sizeof *wins);
    sums = malloc(maxn * sizeof *sums);
    FP_CHECK_ALLOC(sums);
    FP_CHECK_ALLOC(scratch);
    FP_CHECK_ALLOC(seg);
    FP_CHECK_ALLOC(meds);
    FP_CHECK_ALLOC(wsp);
    FP_CHECK_ALLOC(wins);
    for (size_t g = 0; g < gs->n; g++) {
        size_t a = start[g], n = start[g + 1] - a;
        brow *r = &rows[g];
        r->key = (uint32_t)(gs->pair[g] >> 32);
        r->who = (uint32_t)gs->pair[g];
        FP_CHECK(runset_id(&b->rs, run + a, n, &r->b.runset));
        r->b.nruns = b->rs.off[r->b.runset + 1] - b->rs.off[r->b.runset];
        if (!erows)
            FP_CHECK(entity_spreads(b, r, (uint32_t)g, run + a, v + a, n, seg, scratch, meds,
                                    wsp, wins, sums));
        else
            sku_spreads(r, erows, mrow + mstart[g], mstart[g + 1] - mstart[g], meds, wsp, seg,
                        scratch);
        robust_stats(v + a, n, reject, scratch, &r->b);
        *rejected += r->b.rejected;
    }
    *out = rows;
    rows = NULL;
cleanup:
    free(rows);
    free(start);
    free(run);
    free(v);
    free(mstart);
    free(mrow);
    free(mv);
    free(scratch);
    free(seg);
    free(meds);
    free(wsp);
    free(wins);
    free(sums);
    return st;
}

static fp_status write_baselines(hid_t f, const builder *b, const fp_baseline_opts *o)
{
    fp_status st = FP_OK;
    hid_t g = H5I_INVALID_HID, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    FP_CHECK_H5(g = H5Gcreate2(f, "baselines", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
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
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    if (g >= 0)
        H5Gclose(g);
    return st;
}

fp_status fp_store_build_baselines(fp_store *s, const fp_baseline_opts *o,
                                   fp_baseline_summary *summary)
{
    fp_status st = FP_OK;
    fp_run_summary *rows = NULL;
    size_t n = 0, nsel = 0;
    size_t *sel = NULL;
    builder b;
    fp__runtab t;
    hid_t tmp = H5I_INVALID_HID;
    fp_baseline_summary sum = {0};
    memset(&b, 0, sizeof b);
    memset(&t, 0, sizeof t);
    FP_CHECK(fp_store_list(s, &rows, &n));
    sel = calloc(n ? n : 1, sizeof *sel);
    FP_CHECK_ALLOC(sel);
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
    for (size_t k = first; k < nsel; k++) {
        const char *id = rows[sel[k]].id;
        uint32_t run;
        FP_CHECK(fp__strmap_intern(&b.runs, id, strlen(id), &run, NULL));
        FP_CHECK(fp__store_read_runtab(s, id, &t));
        FP_CHECK(add_run(&b, &t, run));
        fp__runtab_free(&t);
    }
    sum.runs_used = nsel - first;
    FP_CHECK(reduce(&b, &b.eo, &b.eg, o->reject, &b.erows, NULL, &sum.values_rejected));
    uint64_t sku_rejected = 0;
    FP_CHECK(reduce(&b, &b.so, &b.sg, o->reject, &b.srows, b.erows, &sku_rejected));
    sum.entity_rows = b.eg.n;
    sum.sku_rows = b.sg.n;
    FP_CHECK(fp__store_tx_begin(s, &tmp));
    FP_CHECK(write_baselines(tmp, &b, o));
    st = fp__store_tx_commit(s, tmp);
    tmp = H5I_INVALID_HID;
    if (summary)
        *summary = sum;
cleanup:
    if (tmp >= 0)
        fp__store_tx_abort(s, tmp);
    fp__runtab_free(&t);
    builder_free(&b);
    free(rows);
    free(sel);
    return st;
}

/* ==== loading ======================================================================== */

/* Baselines written before the spreads existed lack those members, which
 * the read leaves unset: mark them unknown (NaN spreads, one window). */
static void mark_old_rows(hid_t g, const char *name, brow *rows, size_t n)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t t = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    bool old = t >= 0 && H5Tget_member_index(t, "summary_spread") < 0;
    for (size_t i = 0; old && i < n; i++) {
        fp_baseline *b = &rows[i].b;
        b->windows = 1;
        b->run_spread = b->window_spread = b->summary = b->summary_spread = NAN;
    }
    if (t >= 0)
        H5Tclose(t);
    if (d >= 0)
        H5Dclose(d);
}

static fp_status index_rows(fp__u64map *m, const brow *rows, size_t n, size_t nkeys,
                            size_t nwho, const char *what)
{
    fp_status st = FP_OK;
    FP_CHECK(fp__u64map_reserve(m, n));
    for (size_t i = 0; i < n; i++) {
        if (rows[i].key >= nkeys || rows[i].who >= nwho)
            FP_FAIL(FP_EINPUT, "/baselines/%s row %zu refers past its tables (corrupt)", what, i);
        FP_CHECK(fp__u64map_put(m, ((uint64_t)rows[i].key << 32) | rows[i].who, (uint32_t)i));
    }
cleanup:
    return st;
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
    H5Tclose(mt);
    FP_CHECK_H5(mt = brow_type(false, "entity"));
    FP_CHECK(fp__h5_read_table(g, "entity", mt, sizeof(brow), (void **)&b->erows, &b->nerows));
    H5Tclose(mt);
    FP_CHECK_H5(mt = brow_type(false, "sku"));
    FP_CHECK(fp__h5_read_table(g, "sku", mt, sizeof(brow), (void **)&b->srows, &b->nsrows));
    mark_old_rows(g, "entity", b->erows, b->nerows);
    mark_old_rows(g, "sku", b->srows, b->nsrows);
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
    for (size_t i = 0; i < b->nerows; i++)
        if (b->erows[i].b.runset >= b->nsets)
            FP_FAIL(FP_EINPUT, "/baselines/entity row %zu has no run set (corrupt)", i);
    for (size_t i = 0; i < b->nsrows; i++)
        if (b->srows[i].b.runset >= b->nsets)
            FP_FAIL(FP_EINPUT, "/baselines/sku row %zu has no run set (corrupt)", i);
    FP_CHECK(index_rows(&b->eidx, b->erows, b->nerows, nkeys, b->entities.n, "entity"));
    FP_CHECK(index_rows(&b->sidx, b->srows, b->nsrows, nkeys, b->skus.n, "sku"));
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
    free(b->erows);
    free(b->srows);
    free(b->set_off);
    free(b->set_member);
    fp__u64map_free(&b->eidx);
    fp__u64map_free(&b->sidx);
    free(b);
}

static const fp_baseline *row_at(const fp__u64map *idx, const brow *rows, uint32_t key,
                                 uint32_t who)
{
    if (key == FP__NONE || who == FP__NONE)
        return NULL;
    uint32_t r = fp__u64map_get(idx, ((uint64_t)key << 32) | who);
    return r == FP__NONE ? NULL : &rows[r].b;
}

uint32_t fp_baselines_key_id(const fp_baselines *b, const char *key)
{
    return fp__strmap_find(&b->keys, key, strlen(key));
}

uint32_t fp_baselines_entity_id(const fp_baselines *b, const char *entity)
{
    return fp__strmap_find(&b->entities, entity, strlen(entity));
}

const fp_baseline *fp_baselines_entity_at(const fp_baselines *b, uint32_t key, uint32_t entity)
{
    return row_at(&b->eidx, b->erows, key, entity);
}

const fp_baseline *fp_baselines_entity(const fp_baselines *b, const char *key,
                                       const char *entity)
{
    return fp_baselines_entity_at(b, fp_baselines_key_id(b, key), fp_baselines_entity_id(b, entity));
}

const fp_baseline *fp_baselines_sku(const fp_baselines *b, const char *key, const char *sku)
{
    return row_at(&b->sidx, b->srows, fp_baselines_key_id(b, key),
                  fp__strmap_find(&b->skus, sku, strlen(sku)));
}

const fp_baseline *fp_baselines_sku_row(const fp_baselines *b, size_t i, const char **key,
                                        const char **sku)
{
    if (i >= b->nsrows)
        return NULL;
    *key = fp__strmap_str(&b->keys, b->srows[i].key);
    *sku = fp__strmap_str(&b->skus, b->srows[i].who);
    return &b->srows[i].b;
}

size_t fp_baselines_entity_count(const fp_baselines *b)
{
    return b->nerows;
}

size_t fp_baselines_sku_count(const fp_baselines *b)
{
    return b->nsrows;
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
