/* The actions of `fleetprint store` (ls, check, show, export, ingest, rm, compact): look
 * after the runs of a store and move them in and out as JSON Lines (docs/store.md).
 * app/store.c parses the options; this file does the work. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fleetprint/log.h"
#include "fleetprint/mem.h"
#include "fleetprint/jsonl.h"
#include "fleetprint/outfile.h"
#include "h5.h"
#include "intern.h"
#include "runtab.h"
#include "store_internal.h"

bool fp_store_parse_date(const char *text, double *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int y, mo, d, h = 0, mi = 0, s = 0, used = 0;
    if (sscanf(text, "%4d-%2d-%2d%n", &y, &mo, &d, &used) != 3)
        return false;
    const char *p = text + used;
    if (*p == 'T' || *p == ' ') {
        int u2 = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &u2) != 2)
            return false;
        p += 1 + u2;
        if (*p == ':') {
            int u3 = 0;
            if (sscanf(p + 1, "%2d%n", &s, &u3) != 1)
                return false;
            p += 1 + u3;
        }
    }
    if (*p == 'Z')
        p++;
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970)
        return false;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    *out = (double)timegm(&tm);
    return true;
}

static void format_time(double t, char *buf, size_t len)
{
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static bool tag_ok(const fp_store_action *c, const char *tag)
{
    return !c->tag || !c->tag[0] || strcmp(c->tag, tag) == 0;
}

/* ==== ls, check ======================================================================= */

/* ls: the runs as the manifest lists them, each checked cheaply (its partition
 * file is there); check: every run read whole, and the baselines. A run that
 * cannot be read is listed with the reason; ls then fails with FP_EINPUT (the
 * store is damaged input), check with FP_EFAIL (the check failed). */
static fp_status do_ls(const fp_store_action *c, fp_store *s, bool deep)
{
    fp_run_summary *rows = NULL;
    size_t n = 0, listed = 0, bad = 0;
    fp_status st = fp_store_list(s, &rows, &n);
    if (st != FP_OK)
        return st;
    printf("%-28s %-20s %-10s %-10s %6s %6s %10s %s\n", "id", "time", "tag", "status", "nodes",
           "ranks", "samples", "notes");
    for (size_t i = 0; i < n; i++) {
        const fp_run_summary *r = &rows[i];
        if (!tag_ok(c, r->tag))
            continue;
        char when[32], why[4200];
        format_time(r->time, when, sizeof when);
        bool ok = fp__store_run_readable(s, r->id, deep, why, sizeof why) == FP_OK;
        printf("%-28s %-20s %-10s %-10s %6d %6d %10llu %s%s%s\n", r->id, when,
               r->tag[0] ? r->tag : "-", r->status, r->nnodes, r->nranks,
               (unsigned long long)r->nsamples, r->injected ? "fault-injected " : "",
               ok ? "" : "UNREADABLE: ", ok ? "" : why);
        listed++;
        bad += !ok;
    }
    free(rows);
    bool base_ok = true;
    if (deep) {
        fp_baselines *b = NULL;
        base_ok = fp_store_load_baselines(s, &b) == FP_OK;
        bool none = base_ok && !fp_baselines_entity_count(b) && !fp_baselines_sku_count(b);
        fp_baselines_free(b);
        printf("baselines: %s\n", none ? "none" : base_ok ? "readable" : "UNREADABLE (the error above)");
    }
    if (bad)
        fp_error("%s: %zu of %zu runs cannot be read (UNREADABLE above)%s", fp_store_path(s), bad,
                 listed, deep ? "" : "; 'fleetprint store check' reads every run whole");
    else if (deep)
        printf("store check: %zu run%s read whole: ok\n", listed, listed == 1 ? "" : "s");
    if (!bad && base_ok)
        return FP_OK;
    return deep ? FP_EFAIL : FP_EINPUT;
}

/* ==== show ============================================================================ */

static fp_status show_run(const fp_store_action *c, fp_store *s, const char *which)
{
    fp_status st = FP_OK;
    fp__runtab t;
    fp_run_summary *rows = NULL;
    size_t n = 0;
    uint32_t *count = NULL;
    memset(&t, 0, sizeof t);
    char id[48];
    snprintf(id, sizeof id, "%s", which);
    if (strcmp(which, "latest") == 0) {
        FP_CHECK(fp_store_list(s, &rows, &n));
        id[0] = 0;
        for (size_t i = 0; i < n; i++) /* a re-test is never the latest (fp_store_load_run) */
            if (tag_ok(c, rows[i].tag) && strcmp(rows[i].status, FP_RUN_RETEST) != 0)
                snprintf(id, sizeof id, "%s", rows[i].id);
        if (!id[0])
            FP_FAIL(FP_EINPUT, "%s holds no run%s%s", fp_store_path(s),
                    c->tag ? " tagged " : "", c->tag ? c->tag : "");
    }
    FP_CHECK(fp__store_read_runtab(s, id, false, &t));
    const fp_run *r = &t.ctx;
    char when[32];
    format_time(r->time, when, sizeof when);
    printf("run        %s\ntag        %s\nstatus     %s\ntime       %s\nduration   %.3f s\n"
           "command    %s\nbackends   device %s, comm %s\nversions   fleetprint %s, mpi %s, "
           "cuda %s, driver %s, nccl %s\ninjections %s\nnodes      %d\nranks      %d\n"
           "samples    %zu\n",
           r->id, r->tag, r->status, when, r->duration, r->command, r->device_backend,
           r->comm_backend, r->fleetprint_version, r->mpi_version, r->cuda_version,
           r->driver_version, r->nccl_version, r->injections[0] ? r->injections : "none",
           r->nnodes, r->nranks, t.nrows);
    /* samples per metric key, in the order the keys were first stored */
    count = calloc(t.keys.n ? t.keys.n : 1, sizeof *count);
    FP_CHECK_ALLOC(count);
    for (size_t i = 0; i < t.nrows; i++)
        count[t.rows[i].key]++;
    printf("\n%-48s %-10s %-7s %10s\n", "metric key", "unit", "better", "samples");
    for (uint32_t m = 0; m < t.keys.n; m++) {
        fp_sample smp;
        memset(&smp, 0, sizeof smp);
        memcpy(smp.suite, t.metrics[m].suite, sizeof smp.suite);
        memcpy(smp.test, t.metrics[m].test, sizeof smp.test);
        memcpy(smp.metric, t.metrics[m].metric, sizeof smp.metric);
        smp.size = t.metrics[m].size;
        char key[128];
        printf("%-48s %-10s %-7s %10u\n", fp_sample_key(&smp, key, sizeof key),
               t.metrics[m].unit, t.metrics[m].better ? "lower" : "higher", count[m]);
    }
cleanup:
    free(count);
    free(rows);
    fp__runtab_free(&t);
    return st;
}

static fp_status show_baselines(fp_store *s)
{
    fp_baselines *b = NULL;
    fp_status st = fp_store_load_baselines(s, &b);
    if (st != FP_OK)
        return st;
    if (!fp_baselines_entity_count(b) && !fp_baselines_sku_count(b)) {
        printf("no baselines (run 'fleetprint baseline build --store %s')\n", fp_store_path(s));
    } else {
        char when[32];
        format_time(fp_baselines_built(b), when, sizeof when);
        printf("baselines built %s: %zu per (metric, entity), %zu per (metric, SKU)\n", when,
               fp_baselines_entity_count(b), fp_baselines_sku_count(b));
    }
    fp_baselines_free(b);
    return FP_OK;
}

/* ==== export =========================================================================== */

static void put_num(FILE *f, const char *name, double v)
{
    if (isfinite(v))
        fprintf(f, ",\"%s\":%.17g", name, v);
    else
        fprintf(f, ",\"%s\":null", name);
}

/* Baseline lines, read straight from the file so every row is written. */
static fp_status export_baselines(fp_store *s, FILE *f)
{
    fp_status st = FP_OK;
    fp_baselines *b = NULL;
    hid_t file = H5I_INVALID_HID, g = H5I_INVALID_HID;
    fp__strmap keys = {0}, ents = {0}, skus = {0};
    FP_CHECK(fp_store_load_baselines(s, &b));
    FP_CHECK(fp_store_load_baseline_ranges(s, b));
    FP_CHECK(fp__store_baselines_file(s, &file));
    if (!fp_baselines_entity_count(b) && !fp_baselines_sku_count(b))
        goto cleanup;
    /* walk the tables by re-reading names; lookups go through the public API */
    FP_CHECK_H5(g = H5Gopen2(file, "baselines", H5P_DEFAULT));
    FP_CHECK(fp__h5_read_strings(g, "entities", &ents));
    FP_CHECK(fp__h5_read_strings(g, "skus", &skus));
    {
        hid_t sk = fp__h5_str_type(96);
        char (*kt)[96] = NULL;
        size_t nk = 0;
        hid_t mt = H5Tcreate(H5T_COMPOUND, 96);
        H5Tinsert(mt, "key", 0, sk);
        st = fp__h5_read_table(g, "keys", mt, 96, (void **)&kt, &nk);
        H5Tclose(mt);
        H5Tclose(sk);
        for (size_t i = 0; st == FP_OK && i < nk; i++) {
            uint32_t id;
            kt[i][95] = 0;
            st = fp__strmap_intern(&keys, kt[i], strlen(kt[i]), &id, NULL);
        }
        free(kt);
        FP_CHECK(st);
    }
    for (int level = 0; level < 2; level++) {
        const fp__strmap *who = level == 0 ? &ents : &skus;
        const char *scope = level == 0 ? "entity" : "sku";
        for (uint32_t k = 0; k < keys.n; k++) {
            for (uint32_t w = 0; w < who->n; w++) {
                const char *key = fp__strmap_str(&keys, k), *name = fp__strmap_str(who, w);
                const fp_baseline *row = level == 0 ? fp_baselines_entity(b, key, name)
                                                    : fp_baselines_sku(b, key, name);
                if (!row)
                    continue;
                char qk[160], qw[320];
                fp_json_quote(qk, sizeof qk, key);
                fp_json_quote(qw, sizeof qw, name);
                fprintf(f, "{\"kind\":\"baseline\",\"scope\":\"%s\",\"key\":%s,\"%s\":%s,"
                           "\"count\":%u,\"rejected\":%u",
                        scope, qk, scope, qw, row->count, row->rejected);
                put_num(f, "median", row->median);
                put_num(f, "mad", row->mad);
                const fp_baseline_range *range = fp_baselines_range(b, row);
                put_num(f, "p05", range->p05);
                put_num(f, "p95", range->p95);
                put_num(f, "min", range->min);
                put_num(f, "max", range->max);
                const char *ids[64];
                size_t nr = fp_baselines_runs(b, row, ids, 64);
                fputs(",\"runs\":[", f);
                for (size_t i = 0; i < nr && i < 64; i++) {
                    char q[128];
                    fp_json_quote(q, sizeof q, ids[i]);
                    fprintf(f, "%s%s", i ? "," : "", q);
                }
                fprintf(f, "],\"nruns\":%zu}\n", nr);
            }
        }
    }
cleanup:
    fp__strmap_free(&keys);
    fp__strmap_free(&ents);
    fp__strmap_free(&skus);
    if (g >= 0)
        H5Gclose(g);
    fp_baselines_free(b);
    return st;
}

static fp_status export_run(fp_store *s, const char *id, FILE *f)
{
    fp_status st = FP_OK;
    fp__runtab t;
    char line[4096]; /* a sample line with every byte escaped is under 2 KB */
    FP_CHECK(fp__store_read_runtab(s, id, true, &t));
    FP_CHECK(fp_jsonl_write_run(f, &t.ctx));
    for (size_t i = 0; i < t.nrows; i++) {
        fp_sample smp;
        fp__runtab_sample(&t, i, &smp);
        int n = fp_jsonl_format_sample(line, sizeof line, t.ctx.id, &smp);
        if (n < 0 || (size_t)n >= sizeof line)
            FP_FAIL(FP_EINTERNAL, "sample line too long");
        if (fwrite(line, 1, (size_t)n, f) != (size_t)n) {
            st = FP_EIO; /* the stream keeps the error: closing it names file and cause */
            goto cleanup;
        }
    }
cleanup:
    fp__runtab_free(&t);
    return st;
}

static fp_status do_export(const fp_store_action *c, fp_store *s)
{
    fp_status st = FP_OK;
    fp_run_summary *rows = NULL;
    size_t n = 0;
    FILE *f = fp_outfile_open(c->out, &st);
    if (!f)
        goto cleanup;
    if (f != stdout)
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    const char *which = c->arg ? c->arg : "all";
    FP_CHECK(fp_store_list(s, &rows, &n));
    if (strcmp(which, "all") == 0) {
        for (size_t i = 0; i < n; i++)
            if (tag_ok(c, rows[i].tag))
                FP_CHECK(export_run(s, rows[i].id, f));
    } else if (strcmp(which, "latest") == 0) {
        const char *id = NULL;
        for (size_t i = 0; i < n; i++)
            if (tag_ok(c, rows[i].tag) && strcmp(rows[i].status, FP_RUN_RETEST) != 0)
                id = rows[i].id;
        if (!id)
            FP_FAIL(FP_EINPUT, "%s holds no run%s%s", fp_store_path(s),
                    c->tag ? " tagged " : "", c->tag ? c->tag : "");
        FP_CHECK(export_run(s, id, f));
    } else {
        FP_CHECK(export_run(s, which, f));
    }
    if (c->baselines)
        FP_CHECK(export_baselines(s, f));
cleanup:
    free(rows);
    if (f) {
        /* FP_EIO is the stream's own error (set on it): the close reports it,
         * naming the file and the cause, and removes the temporary */
        fp_status closed = fp_outfile_close(f, c->out, st == FP_OK || st == FP_EIO);
        st = st == FP_EIO && closed != FP_OK ? closed : fp_status_worst(st, closed);
    }
    return st;
}

/* ==== ingest =========================================================================== */

/* The runs of the file, streamed into one append (store_append.c) as their
 * lines come: a run's rows are never held whole. */
typedef struct ingest {
    fp__append *a;
    fp__strmap ids;       /* run id -> index */
    fp__apprun **runs;
    bool *has_context;
    size_t n, cap;
    uint32_t last;        /* the run of the previous sample line */
} ingest;

static fp_status ingest_run(ingest *in, const char *id, uint32_t *idx, char *err, size_t errlen)
{
    fp_status st = FP_OK;
    fp__apprun *r = NULL;
    uint32_t found = fp__strmap_find(&in->ids, id, strlen(id));
    if (found != FP__NONE) {
        *idx = found;
        return FP_OK;
    }
    if ((st = fp__append_run(in->a, id, &r, err, errlen)) != FP_OK)
        return st;
    if (in->n == in->cap) {
        size_t cap = in->cap ? in->cap * 2 : 8;
        fp__apprun **t = realloc(in->runs, cap * sizeof *t);
        FP_CHECK_ALLOC(t);
        in->runs = t;
        bool *h = realloc(in->has_context, cap * sizeof *h);
        FP_CHECK_ALLOC(h);
        in->has_context = h;
        in->cap = cap;
    }
    FP_CHECK(fp__strmap_intern(&in->ids, id, strlen(id), idx, NULL));
    in->runs[in->n] = r;
    in->has_context[in->n++] = false;
cleanup:
    return st;
}

static void ingest_free(ingest *in)
{
    fp__append_free(in->a); /* the runs are the append's */
    free(in->runs);
    free(in->has_context);
    fp__strmap_free(&in->ids);
}

/* The fast path: a sample line as simulate and export write it, read in
 * place. *done false when the line needs the full path (any other shape, or
 * a sample that turns out wrong: the full path words the error). */
static fp_status ingest_fast(ingest *in, const char *line, size_t len, bool *done, char *err,
                             size_t errlen)
{
    fp_jsonl_sample_view v;
    uint32_t idx;
    *done = false;
    if (!fp_jsonl_sample_fast(line, len, &v))
        return FP_OK;
    const char *last = in->n ? fp__apprun_context(in->runs[in->last])->id : NULL;
    if (last && strlen(last) == v.run_len && memcmp(last, v.run, v.run_len) == 0) {
        idx = in->last;
    } else {
        char id[sizeof ((fp_jsonl_line *)0)->run_id];
        memcpy(id, v.run, v.run_len);
        id[v.run_len] = 0;
        fp_status st = ingest_run(in, id, &idx, err, errlen);
        if (st != FP_OK)
            return st;
        in->last = idx;
    }
    return fp__apprun_add_view(in->runs[idx], &v, done);
}

/* A run's context, from its run line: moved into the run (*ctx is left empty). */
static fp_status ingest_context(ingest *in, fp_run *ctx, char *err, size_t errlen)
{
    uint32_t idx;
    fp_status st = ingest_run(in, ctx->id, &idx, err, errlen);
    if (st != FP_OK)
        return st;
    if (in->has_context[idx]) {
        snprintf(err, errlen, "a second run line for run %s", ctx->id);
        return FP_EINPUT;
    }
    in->has_context[idx] = true;
    fp_run *t = fp__apprun_context(in->runs[idx]);
    fp_run_free(t);
    *t = *ctx;
    memset(ctx, 0, sizeof *ctx);
    if (!t->status[0])
        snprintf(t->status, sizeof t->status, "complete");
    return FP_OK;
}

static fp_status ingest_line(ingest *in, const char *line, size_t len, char *err, size_t errlen)
{
    fp_jsonl_line l;
    fp_run ctx;
    bool done;
    fp_status st = ingest_fast(in, line, len, &done, err, errlen);
    if (st != FP_OK || done)
        return st;
    if (fp_jsonl_run_fast(line, len, &ctx)) {
        st = ingest_context(in, &ctx, err, errlen);
        fp_run_free(&ctx);
        return st;
    }
    st = fp_jsonl_parse(line, len, &l, err, errlen);
    if (st != FP_OK)
        return st;
    uint32_t idx;
    switch (l.kind) {
    case FP_JSONL_BLANK:
        return FP_OK;
    case FP_JSONL_BASELINE:
        snprintf(err, errlen, "baseline lines are written by export for reading, not ingested "
                              "(run 'fleetprint baseline build')");
        return FP_EINPUT;
    case FP_JSONL_SAMPLE:
        if (in->n && strcmp(fp__apprun_context(in->runs[in->last])->id, l.run_id) == 0) {
            idx = in->last;
        } else {
            if ((st = ingest_run(in, l.run_id, &idx, err, errlen)) != FP_OK)
                return st;
            in->last = idx;
        }
        return fp__apprun_add(in->runs[idx], &l.sample, err, errlen);
    case FP_JSONL_RUN:
        memset(&ctx, 0, sizeof ctx);
        st = fp_json_parse_context(l.context, &ctx, err, errlen);
        json_decref(l.context);
        if (st == FP_OK)
            st = ingest_context(in, &ctx, err, errlen);
        fp_run_free(&ctx);
        return st;
    }
    return FP_EINTERNAL;
}

/* Lines of the input, read a block at a time into one buffer (a file of any
 * size costs a block and its longest line; a mapped file's pages counted in
 * the resident set, 4.7 GB at 100,000 nodes): files, stdin and pipes alike. */
#define LINES_BLOCK ((size_t)4 << 20)

typedef struct line_src {
    int fd;
    char *buf;
    size_t cap, at, end; /* unread lines: buf[at, end) */
    bool eof, failed;
    int err;             /* errno of a failed read */
} line_src;

static fp_status lines_open(line_src *l, const char *name)
{
    fp_status st = FP_OK;
    memset(l, 0, sizeof *l);
    l->fd = strcmp(name, "-") == 0 ? 0 : open(name, O_RDONLY | O_CLOEXEC);
    if (l->fd < 0)
        FP_FAIL(FP_EINPUT, "cannot read %s: %s", name, strerror(errno));
    if (l->fd > 0)
        posix_fadvise(l->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    l->cap = LINES_BLOCK;
    l->buf = malloc(l->cap);
    FP_CHECK_ALLOC(l->buf);
cleanup:
    return st;
}

/* The next line (newline included, not NUL-terminated, valid until the next
 * call): false at the end, on a read error (lines_failed tells) or when a
 * line outgrows memory (FP_ENOMEM in *st). */
static bool lines_next(line_src *l, const char **line, size_t *len, fp_status *st)
{
    size_t scanned = l->at;
    for (;;) {
        const char *nl = memchr(l->buf + scanned, '\n', l->end - scanned);
        if (nl || (l->eof && l->at < l->end)) {
            *line = l->buf + l->at;
            *len = nl ? (size_t)(nl - *line) + 1 : l->end - l->at;
            l->at += *len;
            return true;
        }
        if (l->eof || l->failed)
            return false;
        /* the line goes on past the buffer: move it to the front, read more */
        memmove(l->buf, l->buf + l->at, l->end - l->at);
        l->end -= l->at;
        l->at = 0;
        scanned = l->end;
        if (l->end == l->cap) {
            char *grown = realloc(l->buf, l->cap * 2);
            if (!grown) {
                *st = FP_ENOMEM;
                return false;
            }
            l->buf = grown;
            l->cap *= 2;
        }
        ssize_t n = read(l->fd, l->buf + l->end, l->cap - l->end);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            l->failed = true;
            l->err = errno;
        }
        if (n <= 0)
            l->eof = true;
        else
            l->end += (size_t)n;
    }
}

static void lines_close(line_src *l)
{
    if (l->fd > 0)
        close(l->fd);
    free(l->buf);
}

static fp_status do_ingest(const fp_store_action *c, fp_store *s)
{
    fp_status st = FP_OK, lst = FP_OK;
    ingest in;
    memset(&in, 0, sizeof in);
    line_src src = {.fd = -1};
    size_t lineno = 0, len;
    uint64_t nsamples = 0;
    const char *name = c->arg, *line;
    char err[512];
    FP_CHECK(fp__append_begin(s, &in.a));
    FP_CHECK(lines_open(&src, name));
    while (lines_next(&src, &line, &len, &lst)) {
        lineno++;
        if (memchr(line, 0, len))
            FP_FAIL(FP_EINPUT, "%s:%zu: NUL byte in line", name, lineno);
        lst = ingest_line(&in, line, len, err, sizeof err);
        if (lst == FP_EINPUT)
            FP_FAIL(FP_EINPUT, "%s:%zu: %s", name, lineno, err);
        if (lst == FP_ENOMEM)
            FP_FAIL(FP_ENOMEM, "%s:%zu: out of memory", name, lineno);
        FP_CHECK(lst); /* a write that failed: logged */
    }
    if (lst == FP_ENOMEM)
        FP_FAIL(FP_ENOMEM, "%s:%zu: out of memory (a line longer than %zu MiB)", name,
                lineno + 1, src.cap >> 20);
    if (src.failed)
        FP_FAIL(FP_EINPUT, "cannot read %s: %s", name, strerror(src.err));
    if (in.n == 0)
        FP_FAIL(FP_EINPUT, "%s: no samples or runs in it", name);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (size_t i = 0; i < in.n; i++) {
        fp_run *ctx = fp__apprun_context(in.runs[i]);
        if (!in.has_context[i])
            ctx->time = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        if (!ctx->tag[0] && c->tag)
            snprintf(ctx->tag, sizeof ctx->tag, "%s", c->tag);
        nsamples += fp__apprun_samples(in.runs[i]);
    }
    FP_CHECK(fp__append_commit(in.a, NULL));
    fp_info("ingested %zu run%s, %llu samples from %s into %s", in.n, in.n == 1 ? "" : "s",
            (unsigned long long)nsamples, name, fp_store_path(s));
cleanup:
    lines_close(&src);
    ingest_free(&in);
    return st;
}

/* ==== rm ================================================================================ */

static fp_status do_rm(const fp_store_action *c, fp_store *s)
{
    fp_status st = FP_OK;
    char *copy = NULL;
    const char **ids = NULL;
    fp_run_summary *rows = NULL;
    size_t n = 0, nrows = 0, cap = 0;
    if (c->before) {
        double before;
        if (c->arg)
            FP_FAIL(FP_EUSAGE, "store rm: give run ids or --before, not both");
        if (!fp_store_parse_date(c->before, &before))
            FP_FAIL(FP_EUSAGE, "store rm: --before '%s' is not a date (YYYY-MM-DD[THH:MM[:SS]])",
                    c->before);
        FP_CHECK(fp_store_list(s, &rows, &nrows));
        ids = calloc(nrows ? nrows : 1, sizeof *ids);
        FP_CHECK_ALLOC(ids);
        for (size_t i = 0; i < nrows; i++)
            if (rows[i].time < before)
                ids[n++] = rows[i].id;
        if (!n) {
            fp_info("no run in %s started before %s: nothing removed", fp_store_path(s),
                    c->before);
            goto cleanup;
        }
    } else {
        if (!c->arg)
            FP_FAIL(FP_EUSAGE, "store rm: which runs? (ids separated by commas, or --before DATE)");
        copy = strdup(c->arg);
        FP_CHECK_ALLOC(copy);
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            const char **g = fp_grow(ids, &cap, n + 1, sizeof *g, 16);
            FP_CHECK_ALLOC(g);
            ids = g;
            ids[n++] = tok;
        }
        if (!n)
            FP_FAIL(FP_EUSAGE, "store rm: which runs? (ids separated by commas)");
    }
    FP_CHECK(fp_store_remove(s, ids, n));
    fp_info("removed %zu run%s from %s", n, n == 1 ? "" : "s", fp_store_path(s));
cleanup:
    free(copy);
    free(ids);
    free(rows);
    return st;
}

/* ==== compact ============================================================================ */

static fp_status do_compact(const fp_store_action *c, fp_store *s)
{
    fp_compact_summary sum;
    fp_status st = fp_store_compact(s, c->target, &sum);
    if (st == FP_OK)
        fp_info("compacted %s: %zu run%s moved; %zu partition files before, %zu after",
                fp_store_path(s), sum.runs_moved, sum.runs_moved == 1 ? "" : "s",
                sum.files_before, sum.files_after);
    return st;
}

/* ==== dispatch ========================================================================== */

fp_status fp_store_run_action(const fp_store_action *c)
{
    fp_status st = FP_OK;
    fp_store *s = NULL;
    if (!c->action)
        FP_FAIL(FP_EUSAGE, "store: which action? ls, check, show, export, ingest, rm or compact");
    if (!c->store)
        FP_FAIL(FP_EUSAGE, "store %s: which store? (--store FILE)", c->action);
    bool is_ingest = strcmp(c->action, "ingest") == 0, rm = strcmp(c->action, "rm") == 0,
         compact = strcmp(c->action, "compact") == 0;
    bool writes = is_ingest || rm || compact;
    bool ls = strcmp(c->action, "ls") == 0, check = strcmp(c->action, "check") == 0;
    if (!writes && !ls && !check && strcmp(c->action, "show") != 0 &&
        strcmp(c->action, "export") != 0)
        FP_FAIL(FP_EUSAGE,
                "store: unknown action '%s' (ls, check, show, export, ingest, rm, compact)",
                c->action);
    if (is_ingest && !c->arg)
        FP_FAIL(FP_EUSAGE, "store ingest: missing argument (a JSONL file or -)");
    if (c->arg && (ls || check || compact))
        FP_FAIL(FP_EUSAGE, "store %s: unexpected argument '%s'", c->action, c->arg);
    if (c->before && !rm)
        FP_FAIL(FP_EUSAGE, "store %s: --before is for rm", c->action);
    FP_CHECK(fp_store_open(&s, c->store, writes ? FP_STORE_APPEND : FP_STORE_READ,
                           c->lock_timeout));
    if (ls || check)
        st = do_ls(c, s, check);
    else if (strcmp(c->action, "show") == 0)
        st = c->baselines && !c->arg ? show_baselines(s) : show_run(c, s, c->arg ? c->arg : "latest");
    else if (strcmp(c->action, "export") == 0)
        st = do_export(c, s);
    else if (is_ingest)
        st = do_ingest(c, s);
    else if (rm)
        st = do_rm(c, s);
    else
        st = do_compact(c, s);
cleanup:
    fp_store_close(s);
    return st;
}

