/* Baselines that update: the state kept beside /baselines (each run's
 * records, its windows compressed to at most STATE_POINTS values), and
 * `baseline update`, which folds new runs into the baselines from that state
 * without reading the runs before them. Layout and tolerance: docs/store.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline_build.h"
#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "h5.h"
#include "store_internal.h"

#define STATE_VERSION 1
/* A run's windows of one (key, entity) kept as at most this many values:
 * all of them up to it; above, the values at as many evenly spaced ranks
 * (the least and the greatest among them), the others read back by linear
 * interpolation between those ranks (the sorted values' quantile function
 * sketched by its points). */
#define STATE_POINTS 32

/* ==== writing ======================================================================== */

/* The rank (among n sorted values) of the j-th of np points kept: evenly
 * spaced from the least to the greatest; all of them when np == n. */
static size_t point_rank(size_t n, size_t np, size_t j)
{
    return np > 1 ? j * (n - 1) / (np - 1) : 0;
}

/* Counts and ids compress well (and fast): deflated like the store's tables. */
static fp_status write_u32(hid_t g, const char *name, const uint32_t *v, size_t n)
{
    return fp__h5_write_table(g, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, v, n);
}

/* Measured values (and the points) are written whole without compression:
 * they deflate by little and would take the most of a build's time to (2.5
 * of 6.2 s at 10,000 nodes x 8 GPUs x 5 runs). */
static fp_status write_f64(hid_t g, const char *name, const double *v, size_t n)
{
    return fp__h5_write_contiguous(g, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n);
}

/* One block as the group update/blockNNNNNN: a column per record field and
 * the points (windows as float offsets from the record's median). */
static fp_status write_block(hid_t u, const fp__builder *b, size_t i)
{
    fp_status st = FP_OK;
    const fp__rblock *k = &b->blk[i];
    hid_t g = H5I_INVALID_HID;
    size_t n = k->n, npts = 0;
    for (size_t r = 0; r < n; r++)
        npts += k->rec[r].nw < STATE_POINTS ? k->rec[r].nw : STATE_POINTS;
    uint32_t *u32 = malloc((n ? n : 1) * sizeof *u32);
    double *f64 = malloc((n ? n : 1) * sizeof *f64);
    float *pts = malloc((npts ? npts : 1) * sizeof *pts);
    FP_CHECK_ALLOC(u32);
    FP_CHECK_ALLOC(f64);
    FP_CHECK_ALLOC(pts);
    char name[32];
    snprintf(name, sizeof name, "block%06zu", i);
    FP_CHECK_H5(g = H5Gcreate2(u, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    FP_CHECK(fp__h5_attr_str(g, "run", fp__strmap_str(&b->runs, k->run)));
#define COLUMN(name, arr, writer, field)                                                    \
    do {                                                                                   \
        for (size_t r = 0; r < n; r++)                                                     \
            arr[r] = k->rec[r].field;                                                      \
        FP_CHECK(writer(g, name, arr, n));                                                 \
    } while (0)
    COLUMN("group", u32, write_u32, group);
    COLUMN("sku", u32, write_u32, sku);
    COLUMN("nw", u32, write_u32, nw);
    COLUMN("ns", u32, write_u32, ns);
    COLUMN("med", f64, write_f64, med);
    COLUMN("wsp", f64, write_f64, wsp);
    COLUMN("sum", f64, write_f64, sum);
#undef COLUMN
    size_t p = 0, w = 0;
    for (size_t r = 0; r < n; r++) {
        const fp__grun *x = &k->rec[r];
        size_t np = x->nw < STATE_POINTS ? x->nw : STATE_POINTS;
        for (size_t j = 0; j < np; j++)
            pts[p++] = (float)(k->w[w + point_rank(x->nw, np, j)] - x->med);
        w += x->nw;
    }
    FP_CHECK(fp__h5_write_contiguous(g, "points", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, pts, npts));
cleanup:
    if (g >= 0)
        H5Gclose(g);
    free(u32);
    free(f64);
    free(pts);
    return st;
}

fp_status fp__baseline_state_write(hid_t g, const fp__builder *b)
{
    fp_status st = FP_OK;
    hid_t u = H5I_INVALID_HID;
    FP_CHECK_H5(u = H5Gcreate2(g, "update", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    FP_CHECK(fp__h5_attr_i64(u, "version", STATE_VERSION));
    FP_CHECK(fp__h5_attr_i64(u, "points", STATE_POINTS));
    FP_CHECK(fp__h5_attr_i64(u, "blocks", (long long)b->nblk));
    FP_CHECK(fp__h5_write_table(u, "groups", H5T_STD_U64LE, H5T_NATIVE_UINT64, b->eg.pair,
                                b->eg.n));
    for (size_t i = 0; i < b->nblk; i++)
        FP_CHECK(write_block(u, b, i));
cleanup:
    if (u >= 0)
        H5Gclose(u);
    return st;
}

/* ==== reading ======================================================================== */

/* What a block group holds, read whole. */
typedef struct sblock {
    uint32_t *group, *sku, *nw, *ns;
    double *med, *wsp, *sum;
    float *pts;
    size_t n, npts;
} sblock;

static void sblock_free(sblock *s)
{
    free(s->group);
    free(s->sku);
    free(s->nw);
    free(s->ns);
    free(s->med);
    free(s->wsp);
    free(s->sum);
    free(s->pts);
    memset(s, 0, sizeof *s);
}

static fp_status read_column(hid_t g, const char *name, hid_t type, size_t size, void **out,
                             size_t want)
{
    fp_status st = FP_OK;
    size_t n;
    FP_CHECK(fp__h5_read_table(g, name, type, size, out, &n));
    if (n != want)
        FP_FAIL(FP_EINPUT, "/baselines/update: column '%s' has %zu rows, not %zu (corrupt)", name,
                n, want);
cleanup:
    return st;
}

static fp_status read_sblock(hid_t g, sblock *s)
{
    fp_status st = FP_OK;
    size_t want = 0;
    FP_CHECK(fp__h5_read_table(g, "group", H5T_NATIVE_UINT32, 4, (void **)&s->group, &s->n));
    FP_CHECK(read_column(g, "sku", H5T_NATIVE_UINT32, 4, (void **)&s->sku, s->n));
    FP_CHECK(read_column(g, "nw", H5T_NATIVE_UINT32, 4, (void **)&s->nw, s->n));
    FP_CHECK(read_column(g, "ns", H5T_NATIVE_UINT32, 4, (void **)&s->ns, s->n));
    FP_CHECK(read_column(g, "med", H5T_NATIVE_DOUBLE, 8, (void **)&s->med, s->n));
    FP_CHECK(read_column(g, "wsp", H5T_NATIVE_DOUBLE, 8, (void **)&s->wsp, s->n));
    FP_CHECK(read_column(g, "sum", H5T_NATIVE_DOUBLE, 8, (void **)&s->sum, s->n));
    for (size_t r = 0; r < s->n; r++)
        want += s->nw[r] < STATE_POINTS ? s->nw[r] : STATE_POINTS;
    FP_CHECK(read_column(g, "points", H5T_NATIVE_FLOAT, 4, (void **)&s->pts, want));
    s->npts = want;
cleanup:
    return st;
}

typedef struct order_row {
    uint32_t group, rec;
} order_row;

static int cmp_order(const void *a, const void *b)
{
    const order_row *x = a, *y = b;
    return (int)(x->group > y->group) - (int)(x->group < y->group);
}

/* A stored block back into a builder block for run: each record's windows
 * read back from its points (interpolated between them where there were more
 * windows than points), its summaries as ns copies of their median; records in the
 * builder's group order. gmap: stored group id -> (key, entity). */
static fp_status load_block(fp__builder *b, const sblock *s, const uint64_t *gmap, size_t ngmap,
                            uint32_t run)
{
    fp_status st = FP_OK;
    size_t nw = 0, ns = 0;
    order_row *ord = malloc((s->n ? s->n : 1) * sizeof *ord);
    size_t *pstart = malloc((s->n + 1) * sizeof *pstart);
    FP_CHECK_ALLOC(ord);
    FP_CHECK_ALLOC(pstart);
    pstart[0] = 0;
    for (size_t r = 0; r < s->n; r++) {
        if (s->group[r] >= ngmap || s->sku[r] >= b->skus.n)
            FP_FAIL(FP_EINPUT, "/baselines/update: a record refers past its tables (corrupt)");
        uint64_t p = gmap[s->group[r]];
        if ((p >> 32) >= b->keys.n || (uint32_t)p >= b->entities.n)
            FP_FAIL(FP_EINPUT, "/baselines/update/groups refers past its tables (corrupt)");
        FP_CHECK(fp__group_id(&b->eg, (uint32_t)(p >> 32), (uint32_t)p, &ord[r].group));
        ord[r].rec = (uint32_t)r;
        pstart[r + 1] = pstart[r] + (s->nw[r] < STATE_POINTS ? s->nw[r] : STATE_POINTS);
        nw += s->nw[r];
        ns += s->ns[r];
    }
    qsort(ord, s->n, sizeof *ord, cmp_order);
    fp__rblock *grown = fp_grow(b->blk, &b->blkcap, b->nblk + 1, sizeof *grown, 8);
    FP_CHECK_ALLOC(grown);
    b->blk = grown;
    fp__rblock *k = &b->blk[b->nblk++];
    memset(k, 0, sizeof *k);
    k->run = run;
    k->rec = malloc((s->n ? s->n : 1) * sizeof *k->rec);
    k->w = malloc((nw ? nw : 1) * sizeof *k->w);
    k->s = malloc((ns ? ns : 1) * sizeof *k->s);
    FP_CHECK_ALLOC(k->rec);
    FP_CHECK_ALLOC(k->w);
    FP_CHECK_ALLOC(k->s);
    for (size_t i = 0; i < s->n; i++) {
        size_t r = ord[i].rec;
        fp__grun *x = &k->rec[k->n++];
        *x = (fp__grun){.group = ord[i].group, .sku = s->sku[r], .nw = s->nw[r],
                        .ns = s->ns[r], .med = s->med[r], .wsp = s->wsp[r], .sum = s->sum[r]};
        size_t np = pstart[r + 1] - pstart[r];
        const float *pt = s->pts + pstart[r];
        for (size_t c = 0, j = 0; c < x->nw; c++) {
            while (j + 1 < np && point_rank(x->nw, np, j + 1) <= c)
                j++;
            size_t a = point_rank(x->nw, np, j);
            double v = x->med + (double)pt[j];
            if (c > a && j + 1 < np) {
                size_t e = point_rank(x->nw, np, j + 1);
                double next = x->med + (double)pt[j + 1];
                v += (double)(c - a) / (double)(e - a) * (next - v);
            }
            k->w[k->nw++] = v;
        }
        for (size_t c = 0; c < x->ns; c++)
            k->s[k->ns++] = x->sum;
    }
cleanup:
    free(ord);
    free(pstart);
    return st;
}

/* ==== updating ======================================================================= */

/* What the stored baselines were built with. */
typedef struct built_with {
    char tag[64];
    long long last;
    double since, reject;
} built_with;

/* Open /baselines and its update state: FP_EINPUT, with one line saying to
 * run baseline build, when the store has none. */
static fp_status open_state(fp_store *s, hid_t *g, hid_t *u, built_with *w)
{
    fp_status st = FP_OK;
    hid_t f;
    FP_CHECK(fp__store_baselines_file(s, &f));
    if (f < 0 || H5Lexists(f, "baselines", H5P_DEFAULT) <= 0)
        FP_FAIL(FP_EINPUT, "%s has no baselines to update: run 'fleetprint baseline build --store "
                           "%s' first", fp_store_path(s), fp_store_path(s));
    FP_CHECK_H5(*g = H5Gopen2(f, "baselines", H5P_DEFAULT));
    if (H5Lexists(*g, "update", H5P_DEFAULT) <= 0)
        FP_FAIL(FP_EINPUT, "%s: its baselines hold no update state (built before 'baseline "
                           "update' existed): run 'fleetprint baseline build --store %s' once",
                fp_store_path(s), fp_store_path(s));
    FP_CHECK_H5(*u = H5Gopen2(*g, "update", H5P_DEFAULT));
    long long version = 0;
    FP_CHECK(fp__h5_read_attr_i64(*u, "version", &version));
    long long points = 0;
    FP_CHECK(fp__h5_read_attr_i64(*u, "points", &points));
    if (version != STATE_VERSION || points != STATE_POINTS)
        FP_FAIL(FP_EINPUT, "%s: its baselines' update state is of another version (%lld, %lld "
                           "points): run 'fleetprint baseline build --store %s'",
                fp_store_path(s), version, points, fp_store_path(s));
    FP_CHECK(fp__h5_read_attr_str(*g, "tag", w->tag, sizeof w->tag));
    FP_CHECK(fp__h5_read_attr_i64(*g, "last", &w->last));
    FP_CHECK(fp__h5_read_attr_double(*g, "since", &w->since));
    FP_CHECK(fp__h5_read_attr_double(*g, "reject", &w->reject));
cleanup:
    return st;
}

/* The position in rows[0..n) of run id, or n. */
static size_t find_run(const fp_run_summary *rows, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].id, id) == 0)
            return i;
    return n;
}

static bool eligible(const fp_run_summary *r)
{
    return !r->injected && !r->emulated && (!r->status[0] || strcmp(r->status, "complete") == 0);
}

/* The stored tables into the builder: keys (with units), entities, SKUs, and
 * the group pairs of the state. */
static fp_status load_tables(fp__builder *b, hid_t g, hid_t u, uint64_t **gmap, size_t *ngmap)
{
    fp_status st = FP_OK;
    hid_t sk = H5I_INVALID_HID, su = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    fp__bkey *keys = NULL;
    size_t nkeys = 0;
    sk = fp__h5_str_type(FP__KEY_WIDTH);
    su = fp__h5_str_type(16);
    FP_CHECK_H5(sk);
    FP_CHECK_H5(su);
    FP_CHECK_H5(mt = H5Tcreate(H5T_COMPOUND, sizeof(fp__bkey)));
    FP_CHECK_H5(H5Tinsert(mt, "key", HOFFSET(fp__bkey, key), sk));
    FP_CHECK_H5(H5Tinsert(mt, "unit", HOFFSET(fp__bkey, unit), su));
    FP_CHECK_H5(H5Tinsert(mt, "better", HOFFSET(fp__bkey, better), H5T_NATIVE_UINT8));
    FP_CHECK(fp__h5_read_table(g, "keys", mt, sizeof *keys, (void **)&keys, &nkeys));
    for (size_t i = 0; i < nkeys; i++) {
        uint32_t id;
        keys[i].key[FP__KEY_WIDTH - 1] = 0;
        keys[i].unit[sizeof keys[i].unit - 1] = 0;
        FP_CHECK(fp__builder_key(b, keys[i].key, keys[i].unit, keys[i].better, "", &id));
        if (id != i)
            FP_FAIL(FP_EINPUT, "/baselines/keys repeats '%s' (corrupt)", keys[i].key);
    }
    FP_CHECK(fp__h5_read_strings(g, "entities", &b->entities));
    FP_CHECK(fp__h5_read_strings(g, "skus", &b->skus));
    FP_CHECK(fp__h5_read_table(u, "groups", H5T_NATIVE_UINT64, sizeof **gmap, (void **)gmap,
                               ngmap));
cleanup:
    free(keys);
    fp__h5_close(mt);
    fp__h5_close(sk);
    fp__h5_close(su);
    return st;
}

fp_status fp_store_update_baselines(fp_store *s, const fp_baseline_update_opts *o,
                                    fp_baseline_summary *summary)
{
    fp_status st = FP_OK;
    fp_run_summary *rows = NULL;
    size_t n = 0, nadd = 0;
    size_t *add = NULL;
    uint64_t *gmap = NULL;
    size_t ngmap = 0;
    hid_t g = H5I_INVALID_HID, u = H5I_INVALID_HID, bg = H5I_INVALID_HID;
    const char **ids = NULL;
    fp__strmap old;
    fp__builder b;
    sblock sb;
    built_with w = {0};
    fp_baseline_summary sum = {0};
    memset(&old, 0, sizeof old);
    memset(&b, 0, sizeof b);
    memset(&sb, 0, sizeof sb);
    const char *path = fp_store_path(s), *which = o->run ? o->run : "latest";
    FP_CHECK(open_state(s, &g, &u, &w));
    if (o->tag && strcmp(o->tag, w.tag) != 0)
        FP_FAIL(FP_EINPUT, "%s: the baselines were built for tag '%s', not '%s': run 'fleetprint "
                           "baseline build --store %s --tag %s'",
                path, w.tag, o->tag, path, o->tag);
    if (o->last > 0 && o->last != w.last)
        FP_FAIL(FP_EINPUT, "%s: the baselines were built with --last %lld, not %d: run "
                           "'fleetprint baseline build' with the window you want", path, w.last,
                o->last);
    FP_CHECK(fp__h5_read_strings(g, "runs", &old));
    long long nblocks = 0;
    FP_CHECK(fp__h5_read_attr_i64(u, "blocks", &nblocks));
    if (nblocks != (long long)old.n)
        FP_FAIL(FP_EINPUT, "%s: the update state holds %lld runs, the baselines %u (corrupt): run "
                           "'fleetprint baseline build'", path, nblocks, old.n);
    FP_CHECK(fp_store_list(s, &rows, &n));
    /* the run to fold in, and where the baselines' newest run stands */
    size_t target = n;
    if (strcmp(which, "latest") == 0) {
        for (size_t i = n; i-- > 0 && target == n;)
            if ((!w.tag[0] || strcmp(rows[i].tag, w.tag) == 0) &&
                strcmp(rows[i].status, "retest") != 0)
                target = i;
        if (target == n)
            FP_FAIL(FP_EINPUT, "%s: no run%s%s%s to fold into the baselines", path,
                    w.tag[0] ? " tagged '" : "", w.tag, w.tag[0] ? "'" : "");
    } else if ((target = find_run(rows, n, which)) == n) {
        FP_FAIL(FP_EINPUT, "%s: no run '%s' in the store", path, which);
    }
    if (fp__strmap_find(&old, rows[target].id, strlen(rows[target].id)) != FP__NONE) {
        fp_info("baseline update: run %s is in the baselines already; nothing to do",
                rows[target].id);
        sum.runs_used = old.n;
        goto done;
    }
    size_t newest = n;
    for (uint32_t i = 0; i < old.n; i++) {
        size_t at = find_run(rows, n, fp__strmap_str(&old, i));
        if (at < n && (newest == n || at > newest))
            newest = at;
    }
    if (newest != n && target < newest)
        FP_FAIL(FP_EINPUT, "%s: run %s is older than the baselines' newest run %s: 'baseline "
                           "update' only adds newer runs; run 'fleetprint baseline build'",
                path, rows[target].id, rows[newest].id);
    /* every run the build's selection would take after the newest, up to the target */
    add = calloc(n ? n : 1, sizeof *add);
    FP_CHECK_ALLOC(add);
    for (size_t i = newest == n ? 0 : newest + 1; i <= target; i++) {
        const fp_run_summary *r = &rows[i];
        if ((w.tag[0] && strcmp(r->tag, w.tag) != 0) || r->time < w.since)
            continue;
        if (!eligible(r)) {
            sum.runs_skipped++;
            continue;
        }
        add[nadd++] = i;
    }
    if (nadd == 0) {
        fp_info("baseline update: run %s is not folded in (not complete, fault-injected, emulated "
                "or outside the baselines' selection); the baselines stay as they were",
                rows[target].id);
        sum.runs_used = old.n;
        goto done;
    }
    /* the window: drop the oldest runs past --last */
    size_t total = old.n + nadd, drop = 0;
    if (w.last > 0 && total > (size_t)w.last)
        drop = total - (size_t)w.last;
    size_t drop_old = drop < old.n ? drop : old.n, drop_new = drop - drop_old;
    FP_CHECK(load_tables(&b, g, u, &gmap, &ngmap));
    for (size_t i = drop_old; i < old.n; i++) {
        char name[32], run[64];
        uint32_t id;
        snprintf(name, sizeof name, "block%06zu", i);
        FP_CHECK_H5(bg = H5Gopen2(u, name, H5P_DEFAULT));
        FP_CHECK(fp__h5_read_attr_str(bg, "run", run, sizeof run));
        if (strcmp(run, fp__strmap_str(&old, (uint32_t)i)) != 0)
            FP_FAIL(FP_EINPUT, "%s: update block %zu is of run '%s', not '%s' (corrupt)", path, i,
                    run, fp__strmap_str(&old, (uint32_t)i));
        FP_CHECK(read_sblock(bg, &sb));
        H5Gclose(bg);
        bg = H5I_INVALID_HID;
        FP_CHECK(fp__strmap_intern(&b.runs, run, strlen(run), &id, NULL));
        FP_CHECK(load_block(&b, &sb, gmap, ngmap, id));
        sblock_free(&sb);
    }
    ids = calloc(nadd, sizeof *ids);
    FP_CHECK_ALLOC(ids);
    for (size_t k = drop_new; k < nadd; k++)
        ids[k - drop_new] = rows[add[k]].id;
    H5Gclose(u);
    H5Gclose(g);
    u = g = H5I_INVALID_HID;
    FP_CHECK(fp__builder_add_runs(s, &b, ids, nadd - drop_new));
    fp_baseline_opts bo = {.tag = w.tag, .last = (int)w.last, .since = w.since,
                           .reject = w.reject};
    FP_CHECK(fp__builder_commit(s, &b, &bo));
    sum.runs_used = b.runs.n;
    sum.runs_added = nadd - drop_new;
    sum.runs_dropped = drop;
    sum.entity_rows = b.eg.n;
    sum.sku_rows = b.sg.n;
    sum.values_rejected = b.rejected;
done:
    if (st == FP_OK && summary)
        *summary = sum;
cleanup:
    fp__h5_close(bg);
    fp__h5_close(u);
    fp__h5_close(g);
    sblock_free(&sb);
    fp__builder_free(&b);
    fp__strmap_free(&old);
    free(gmap);
    free(rows);
    free(add);
    free(ids);
    return st;
}
