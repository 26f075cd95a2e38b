#include "fleetprint/mem.h"
#include "fleetprint/sample.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void copy_name(char *dst, const char *src, size_t len)
{
    snprintf(dst, len, "%s", src ? src : "");
}

static fp_entity entity_blank(fp_entity_kind kind, const char *node)
{
    fp_entity e = {.kind = kind, .dev = -1, .peer_dev = -1, .rank = -1};
    copy_name(e.node, node, sizeof e.node);
    return e;
}

fp_entity fp_entity_node(const char *node)
{
    return entity_blank(FP_ENT_NODE, node);
}

fp_entity fp_entity_gpu(const char *node, int dev)
{
    fp_entity e = entity_blank(FP_ENT_GPU, node);
    e.dev = dev;
    return e;
}

fp_entity fp_entity_rank(const char *node, int rank)
{
    fp_entity e = entity_blank(FP_ENT_RANK, node);
    e.rank = rank;
    return e;
}

fp_entity fp_entity_link(const char *a, int dev_a, const char *b, int dev_b)
{
    fp_entity e = entity_blank(FP_ENT_LINK, a);
    e.dev = dev_a;
    e.peer_dev = dev_b;
    copy_name(e.peer, b, sizeof e.peer);
    return e;
}

fp_entity fp_entity_group(const char *name)
{
    return entity_blank(FP_ENT_GROUP, name);
}

static const char *const kind_names[FP_ENT_KIND_COUNT] = {"node", "gpu", "link", "rank",
                                                          "group"};

const char *fp_entity_kind_name(fp_entity_kind kind)
{
    return (int)kind >= 0 && kind < FP_ENT_KIND_COUNT ? kind_names[kind] : "unknown";
}

/* Text appended to buf[0..len), cut short when full, always NUL-terminated:
 * entities are formatted for every stored sample, so no printf here. */
typedef struct textbuf {
    char *buf;
    size_t len, n;
} textbuf;

static void put_text(textbuf *t, const char *s)
{
    for (; *s; s++, t->n++)
        if (t->n + 1 < t->len)
            t->buf[t->n] = *s;
}

static void put_int(textbuf *t, int v)
{
    char d[12];
    int k = 0;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do
        d[k++] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        d[k++] = '-';
    char rev[13];
    for (int i = 0; i < k; i++)
        rev[i] = d[k - 1 - i];
    rev[k] = 0;
    put_text(t, rev);
}

/* "node" or "node/dev" */
static void put_end(textbuf *t, const char *node, int dev)
{
    put_text(t, node);
    if (dev >= 0) {
        put_text(t, "/");
        put_int(t, dev);
    }
}

char *fp_entity_format(const fp_entity *e, char *buf, size_t len)
{
    textbuf t = {buf, len, 0};
    put_text(&t, fp_entity_kind_name(e->kind));
    put_text(&t, ":");
    switch (e->kind) {
    case FP_ENT_GPU:
        put_end(&t, e->node, e->dev);
        break;
    case FP_ENT_LINK:
        put_end(&t, e->node, e->dev);
        put_text(&t, "~");
        put_end(&t, e->peer, e->peer_dev);
        break;
    case FP_ENT_RANK:
        put_int(&t, e->rank);
        put_text(&t, "@");
        put_text(&t, e->node);
        break;
    default:
        put_text(&t, e->node);
    }
    if (len)
        buf[t.n < len ? t.n : len - 1] = 0;
    return buf;
}

/* Parse "node" or "node/dev" from [s, end). */
static bool parse_end(const char *s, const char *end, char *node, int *dev)
{
    const char *slash = memchr(s, '/', (size_t)(end - s));
    const char *name_end = slash ? slash : end;
    size_t n = (size_t)(name_end - s);
    if (n == 0 || n >= FP_NAME_MAX)
        return false;
    memcpy(node, s, n);
    node[n] = 0;
    *dev = -1;
    if (slash) {
        char *stop;
        long v = strtol(slash + 1, &stop, 10);
        if (stop != end || slash + 1 == end || v < 0 || v > 1 << 20)
            return false;
        *dev = (int)v;
    }
    return true;
}

bool fp_node_name_ok(const char *name)
{
    size_t n = strnlen(name, FP_NAME_MAX);
    if (n == 0 || n >= FP_NAME_MAX || !isalnum((unsigned char)name[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
            return false;
    return true;
}

bool fp_entity_parse(const char *text, fp_entity *out)
{
    const char *colon = strchr(text, ':');
    if (!colon)
        return false;
    int kind = -1;
    for (int k = 0; k < FP_ENT_KIND_COUNT; k++)
        if (strlen(kind_names[k]) == (size_t)(colon - text) &&
            strncmp(text, kind_names[k], (size_t)(colon - text)) == 0)
            kind = k;
    if (kind < 0)
        return false;
    fp_entity e = entity_blank((fp_entity_kind)kind, "");
    const char *s = colon + 1, *end = s + strlen(s);
    switch (e.kind) {
    case FP_ENT_NODE:
    case FP_ENT_GROUP:
        if (s == end || strlen(s) >= FP_NAME_MAX || strchr(s, '/') || strchr(s, '~'))
            return false;
        copy_name(e.node, s, sizeof e.node);
        break;
    case FP_ENT_GPU:
        if (!parse_end(s, end, e.node, &e.dev) || e.dev < 0)
            return false;
        break;
    case FP_ENT_LINK: {
        const char *tilde = strchr(s, '~');
        if (!tilde || !parse_end(s, tilde, e.node, &e.dev) ||
            !parse_end(tilde + 1, end, e.peer, &e.peer_dev))
            return false;
        break;
    }
    case FP_ENT_RANK: {
        char *at;
        long r = strtol(s, &at, 10);
        if (at == s || *at != '@' || r < 0 || r > 1 << 30 || !at[1] || strlen(at + 1) >= FP_NAME_MAX)
            return false;
        e.rank = (int)r;
        copy_name(e.node, at + 1, sizeof e.node);
        break;
    }
    default:
        return false;
    }
    *out = e;
    return true;
}

char *fp_sample_key(const fp_sample *s, char *buf, size_t len)
{
    if (s->size)
        snprintf(buf, len, "%s.%s.%s@%llu", s->suite, s->test, s->metric,
                 (unsigned long long)s->size);
    else
        snprintf(buf, len, "%s.%s.%s", s->suite, s->test, s->metric);
    return buf;
}

void fp_sample_make(fp_sample *s, const char *suite, const char *test, const fp_metric *m,
                    const fp_entity *e, uint64_t size, int iter, double value, double t_start)
{
    memset(s, 0, sizeof *s);
    copy_name(s->suite, suite, sizeof s->suite);
    copy_name(s->test, test, sizeof s->test);
    copy_name(s->metric, m->name, sizeof s->metric);
    copy_name(s->unit, m->unit, sizeof s->unit);
    s->better = m->better;
    s->entity = *e;
    s->size = size;
    s->iter = iter;
    s->value = value;
    s->t_start = t_start;
}

/* ---- runs ------------------------------------------------------------------ */

void fp_run_init(fp_run *run)
{
    memset(run, 0, sizeof *run);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    run->time = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    /* the suffix mixes time, pid and address so two runs in one second differ */
    unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 20) ^
                           (unsigned long long)(uintptr_t)run;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    snprintf(run->id, sizeof run->id, "%s-%06llx", stamp, x & 0xffffffULL);
    snprintf(run->status, sizeof run->status, "complete");
}

static void rows_free(fp_run_rows *r)
{
    if (!r)
        return;
    free(r->row);
    free(r->t);
    free(r->keys);
    free(r->shapes);
    free(r->ents);
    free(r);
}

void fp_run_free(fp_run *run)
{
    free(run->nodes);
    free(run->ranks);
    free(run->samples);
    rows_free(run->rows);
    free(run->config);
    memset(run, 0, sizeof *run);
}

fp_sample_ref fp_run_ref(const fp_run *run, size_t i)
{
    if (!run->rows) {
        const fp_sample *s = &run->samples[i];
        return (fp_sample_ref){s, &s->entity, s->iter, s->value, s->t_start};
    }
    const fp_sample_row *r = &run->rows->row[i];
    return (fp_sample_ref){&run->rows->keys[r->key], &run->rows->ents[r->entity], r->iter,
                           r->value, run->rows->t ? run->rows->t[i] : NAN};
}

void fp_run_sample(const fp_run *run, size_t i, fp_sample *out)
{
    fp_sample_ref r = fp_run_ref(run, i);
    *out = *r.key;
    out->entity = *r.entity;
    out->iter = r.iter;
    out->value = r.value;
    out->t_start = r.t_start;
}

void fp_run_shift_t(fp_run *run, size_t i, double dt)
{
    if (run->rows && run->rows->t)
        run->rows->t[i] += dt;
    else if (!run->rows)
        run->samples[i].t_start += dt;
}

void fp_run_set_rows(fp_run *run, fp_run_rows *rows)
{
    free(run->samples);
    run->samples = NULL;
    run->cap = 0;
    rows_free(run->rows);
    run->rows = rows;
    run->nsamples = rows->n;
}

fp_status fp_run_expand(fp_run *run)
{
    if (!run->rows)
        return FP_OK;
    size_t n = run->rows->n;
    fp_sample *s = fp_malloc_huge((n ? n : 1) * sizeof *s);
    if (!s)
        return FP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        fp_run_sample(run, i, &s[i]);
    free(run->samples);
    run->samples = s;
    run->nsamples = run->cap = n;
    rows_free(run->rows);
    run->rows = NULL;
    return FP_OK;
}

fp_status fp_run_set_config(fp_run *run, const fp_cfg_item *items, size_t n)
{
    fp_status st = FP_OK;
    fp_cfg_item *copy = malloc((n ? n : 1) * sizeof *copy);
    FP_CHECK_ALLOC(copy);
    if (n)
        memcpy(copy, items, n * sizeof *copy);
    free(run->config);
    run->config = copy;
    run->nconfig = n;
cleanup:
    return st;
}

fp_status fp_run_set_shape(fp_run *run, int nnodes, int nranks)
{
    fp_status st = FP_OK;
    free(run->nodes);
    free(run->ranks);
    run->nodes = calloc(nnodes > 0 ? (size_t)nnodes : 1, sizeof *run->nodes);
    run->ranks = calloc(nranks > 0 ? (size_t)nranks : 1, sizeof *run->ranks);
    FP_CHECK_ALLOC(run->nodes);
    FP_CHECK_ALLOC(run->ranks);
    run->nnodes = nnodes;
    run->nranks = nranks;
cleanup:
    return st;
}

fp_status fp_run_add_many(fp_run *run, const fp_sample *s, size_t n)
{
    fp_status st = FP_OK;
    if (run->rows)
        FP_FAIL(FP_EUSAGE, "run %s holds rows: samples cannot be added to it", run->id);
    fp_sample *grown = fp_grow(run->samples, &run->cap, run->nsamples + n, sizeof *grown, 256);
    FP_CHECK_ALLOC(grown);
    run->samples = grown;
    memcpy(run->samples + run->nsamples, s, n * sizeof *s);
    run->nsamples += n;
cleanup:
    return st;
}

fp_status fp_run_add(fp_run *run, const fp_sample *s)
{
    return fp_run_add_many(run, s, 1);
}

int fp_run_node_index(const fp_run *run, const char *node)
{
    for (int i = 0; i < run->nnodes; i++)
        if (strcmp(run->nodes[i], node) == 0)
            return i;
    return -1;
}

void fp_run_slurm_context(fp_run *run)
{
    static const struct {
        const char *var;
        size_t off, len;
    } vars[] = {
        {"SLURM_JOB_ID", offsetof(fp_run, slurm_job_id), sizeof run->slurm_job_id},
        {"SLURM_JOB_PARTITION", offsetof(fp_run, slurm_partition), sizeof run->slurm_partition},
        {"SLURM_JOB_NAME", offsetof(fp_run, slurm_job_name), sizeof run->slurm_job_name},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i].var);
        if (v && *v)
            snprintf((char *)run + vars[i].off, vars[i].len, "%s", v);
    }
}

char *fp_format_value(double x, const char *unit, char *buf, size_t len)
{
    static const struct {
        const char *unit;
        double scale;        /* x * scale is in the first rung */
        const char *rung[4]; /* each 1000 times the one before */
    } ladders[] = {
        {"GFLOP/s", 1, {"GFLOP/s", "TFLOP/s", "PFLOP/s", NULL}},
        {"GB/s", 1, {"GB/s", "TB/s", NULL, NULL}},
        {"s", 1e9, {"ns", "\u00b5s", "ms", "s"}},
        {"ms", 1e6, {"ns", "\u00b5s", "ms", "s"}},
        {"us", 1e3, {"ns", "\u00b5s", "ms", "s"}},
    };
    for (size_t i = 0; i < sizeof ladders / sizeof ladders[0]; i++) {
        if (strcmp(unit, ladders[i].unit) != 0 || !isfinite(x))
            continue;
        double y = x * ladders[i].scale;
        int k = 0;
        while (k < 3 && ladders[i].rung[k + 1] && fabs(y) >= 1000) {
            y /= 1000;
            k++;
        }
        if (x == 0)
            snprintf(buf, len, "0");
        else
            snprintf(buf, len, "%.4g %s", y, ladders[i].rung[k]);
        return buf;
    }
    snprintf(buf, len, "%.4g%s%s", x, unit[0] ? " " : "", unit);
    return buf;
}
