/* What-if analysis input: op type names, the job meta YAML, CSV traces and
 * traces built from in-memory rows. Every rejection is one log line naming the
 * file, line and field, and FP_EINPUT. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/log.h"
#include "fleetprint/outfile.h"
#include "whatif_internal.h"

/* ---- op types ------------------------------------------------------------------- */

static const struct {
    const char *name;
    bool comm;
} optypes[FP_WI_OPTYPE_COUNT] = {
#define FP__WI_OPTYPE_ROW(id, name, comm) {name, comm},
    FP_WI_OPTYPE_MAP(FP__WI_OPTYPE_ROW)
#undef FP__WI_OPTYPE_ROW
};

const char *fp_wi_optype_name(fp_wi_optype t)
{
    return (int)t >= 0 && t < FP_WI_OPTYPE_COUNT ? optypes[t].name : "?";
}

bool fp_wi_optype_is_comm(fp_wi_optype t)
{
    return (int)t >= 0 && t < FP_WI_OPTYPE_COUNT && optypes[t].comm;
}

bool fp_wi_optype_parse(const char *text, size_t len, fp_wi_optype *out)
{
    for (int i = 0; i < FP_WI_OPTYPE_COUNT; i++)
        if (strlen(optypes[i].name) == len && memcmp(optypes[i].name, text, len) == 0) {
            *out = (fp_wi_optype)i;
            return true;
        }
    return false;
}

fp_status fp__wi_bad(const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fp_error("%s", msg);
    return FP_EINPUT;
}

/* ---- small parsers ---------------------------------------------------------------- */

/* Parse [s, s+len) as a whole base-10 int. */
static bool parse_int_span(const char *s, size_t len, int *out)
{
    size_t i = 0;
    bool neg = false;
    if (len && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == len || len - i > 10)
        return false;
    long long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    v = neg ? -v : v;
    if (v < INT_MIN || v > INT_MAX)
        return false;
    *out = (int)v;
    return true;
}

/* Slow but exact path: strtod on a NUL-terminated copy. */
static bool parse_double_strtod(const char *s, size_t len, double *out)
{
    char buf[128];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno == ERANGE && fabs(v) > 1.0)
        return false;
    if (*end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Parse [s, s+len) as a whole finite double. Plain decimals (the trace's
 * timestamps) take a fast path: up to 19 significant digits scaled by an exact
 * power of ten, within about one ulp of strtod; anything else goes to strtod. */
static bool parse_double_span(const char *s, size_t len, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    bool neg = false;
    if (len && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    uint64_t mant = 0;
    int digits = 0, frac = 0;
    bool any = false, dot = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            any = true;
            if (mant == 0 && c == '0') {
                frac += dot; /* leading zeros carry no significant digit */
                continue;
            }
            if (digits >= 19)
                return parse_double_strtod(s, len, out);
            mant = mant * 10 + (uint64_t)(c - '0');
            digits++;
            frac += dot;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            return parse_double_strtod(s, len, out); /* exponent, inf, nan, junk */
        }
    }
    if (!any)
        return false;
    if (frac > 22)
        return parse_double_strtod(s, len, out);
    double v = (double)mant / pow10[frac];
    *out = neg ? -v : v;
    return true;
}

/* Read a whole file into a NUL-terminated buffer. A file that cannot be
 * opened is bad input (the user named it); a failing read is FP_EIO. */
static fp_status slurp(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fp__wi_bad("%s: cannot open: %s", path, strerror(errno));
    fp_status st = FP_OK;
    char *b = NULL;
    size_t cap = 1 << 16, n = 0;
    b = malloc(cap);
    FP_CHECK_ALLOC(b);
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(b, cap * 2);
            FP_CHECK_ALLOC(nb);
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        fp_error("%s: read error", path);
        st = FP_EIO;
        goto cleanup;
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    b = NULL;
cleanup:
    free(b);
    fclose(f);
    return st;
}

static void trim(char **s, char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t'))
        (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
        (*e)--;
}

/* ---- job meta ----------------------------------------------------------------------- */

/* dp*pp*tp*dsp for positive sizes, or -1 when it exceeds INT_MAX (a world
 * that large is no real job, and the product would overflow). */
static long long size_product(const fp_wi_meta *m)
{
    const int f[] = {m->dp_size, m->pp_size, m->tp_size, m->dsp_size};
    long long p = 1;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        p *= f[i]; /* both factors <= INT_MAX: no overflow in long long */
        if (p > INT_MAX)
            return -1;
    }
    return p;
}

fp_status fp_wi_meta_check(const fp_wi_meta *m, const char *source)
{
    const struct {
        const char *key;
        int v;
    } sizes[] = {{"dp_size", m->dp_size},   {"pp_size", m->pp_size},
                 {"tp_size", m->tp_size},   {"dsp_size", m->dsp_size},
                 {"vpp_size", m->vpp_size}, {"world_size", m->world_size}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v <= 0)
            return fp__wi_bad("%s: %s must be a positive integer, got %d", source, sizes[i].key,
                              sizes[i].v);
    long long prod = size_product(m);
    if (prod < 0)
        return fp__wi_bad("%s: dp_size*pp_size*tp_size*dsp_size exceeds %d", source, INT_MAX);
    if (prod != m->world_size)
        return fp__wi_bad("%s: world_size %d != dp_size*pp_size*tp_size*dsp_size = %lld "
                          "(inconsistent meta)",
                          source, m->world_size, prod);
    if (m->run_id < 0)
        return fp__wi_bad("%s: run_id must be >= 0, got %d", source, m->run_id);
    return FP_OK;
}

fp_status fp_wi_meta_load(const char *path, fp_wi_meta *out)
{
    fp_status st = FP_OK;
    char *buf = NULL;
    size_t len = 0;
    FP_CHECK(slurp(path, &buf, &len));
    fp_wi_meta m = {.run_id = 0, .dp_size = 1, .pp_size = 1, .tp_size = 1, .dsp_size = 1,
                    .vpp_size = 1, .world_size = 0};
    snprintf(m.trial_name, sizeof m.trial_name, "trace");
    bool have_world = false, have_any = false;
    int lineno = 0;
    for (char *p = buf; *p;) {
        char *nl = strchr(p, '\n');
        char *end = nl ? nl : p + strlen(p);
        lineno++;
        char *hash = memchr(p, '#', (size_t)(end - p));
        char *s = p, *e = hash ? hash : end;
        p = nl ? nl + 1 : end;
        trim(&s, &e);
        if (s == e || (e - s == 3 && memcmp(s, "---", 3) == 0))
            continue;
        char *colon = memchr(s, ':', (size_t)(e - s));
        if (!colon)
            FP_CHECK(fp__wi_bad("%s:%d: expected 'key: value'", path, lineno));
        char *ks = s, *ke = colon, *vs = colon + 1, *ve = e;
        trim(&ks, &ke);
        trim(&vs, &ve);
        if (ve - vs >= 2 && (*vs == '"' || *vs == '\'') && ve[-1] == *vs) {
            vs++;
            ve--;
        }
        size_t klen = (size_t)(ke - ks);
        have_any = true;
        if (klen == 10 && memcmp(ks, "trial_name", 10) == 0) {
            if (ve == vs || (size_t)(ve - vs) >= sizeof m.trial_name)
                FP_CHECK(fp__wi_bad("%s:%d: trial_name must be 1..%zu characters", path, lineno,
                                    sizeof m.trial_name - 1));
            memcpy(m.trial_name, vs, (size_t)(ve - vs));
            m.trial_name[ve - vs] = 0;
            continue;
        }
        static const struct {
            const char *key;
            size_t off;
        } ints[] = {{"run_id", offsetof(fp_wi_meta, run_id)},
                    {"dp_size", offsetof(fp_wi_meta, dp_size)},
                    {"pp_size", offsetof(fp_wi_meta, pp_size)},
                    {"tp_size", offsetof(fp_wi_meta, tp_size)},
                    {"dsp_size", offsetof(fp_wi_meta, dsp_size)},
                    {"vpp_size", offsetof(fp_wi_meta, vpp_size)},
                    {"world_size", offsetof(fp_wi_meta, world_size)}};
        bool known = false;
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
            if (strlen(ints[i].key) != klen || memcmp(ints[i].key, ks, klen) != 0)
                continue;
            known = true;
            int v = 0;
            if (!parse_int_span(vs, (size_t)(ve - vs), &v))
                FP_CHECK(fp__wi_bad("%s:%d: %s: expected an integer, got '%.*s'", path, lineno,
                                    ints[i].key, (int)(ve - vs), vs));
            *(int *)((char *)&m + ints[i].off) = v;
            if (i == 6)
                have_world = true;
        }
        if (!known)
            fp_warn("%s:%d: ignoring unknown key '%.*s'", path, lineno, (int)klen, ks);
    }
    if (!have_any)
        FP_CHECK(fp__wi_bad("%s: empty meta file, expected dp_size, pp_size, ...", path));
    if (!have_world) {
        /* sizes not positive are reported by fp_wi_meta_check below */
        bool positive = m.dp_size > 0 && m.pp_size > 0 && m.tp_size > 0 && m.dsp_size > 0;
        long long prod = positive ? size_product(&m) : 0;
        if (prod < 0)
            FP_CHECK(fp__wi_bad("%s: dp_size*pp_size*tp_size*dsp_size exceeds %d", path,
                                INT_MAX));
        m.world_size = (int)prod;
    }
    FP_CHECK(fp_wi_meta_check(&m, path));
    *out = m;
cleanup:
    free(buf);
    return st;
}

/* ---- traces ------------------------------------------------------------------------- */

enum { C_DP, C_STAGE, C_RANK, C_STEP, C_OPTYPE, C_START, C_DUR, C_SEQ, C_MC, C_MB, C_GMC, C_N };
static const char *const colnames[C_N] = {"dp_rank", "stage",    "rank",   "step",
                                          "optype",  "start_ts", "duration", "seq_id",
                                          "mc",      "mb_id",    "gmc"};

/* Check the fields every row must satisfy. */
static fp_status check_row(const fp_wi_row *r, const char *where)
{
    if (r->dp_rank < 0 || r->stage < 0 || r->rank < 0 || r->seq_id < 0)
        return fp__wi_bad("%s: dp_rank, stage, rank and seq_id must be >= 0", where);
    if ((int)r->optype < 0 || r->optype >= FP_WI_OPTYPE_COUNT)
        return fp__wi_bad("%s: invalid optype", where);
    if (!isfinite(r->start_ts) || !isfinite(r->duration))
        return fp__wi_bad("%s: start_ts and duration must be finite", where);
    if (r->duration < 0)
        return fp__wi_bad("%s: negative duration %g", where, r->duration);
    return FP_OK;
}

static fp_status trace_new(const char *source, size_t cap, fp_wi_trace **out)
{
    fp_status st = FP_OK;
    fp_wi_trace *t = calloc(1, sizeof *t);
    FP_CHECK_ALLOC(t);
    snprintf(t->source, sizeof t->source, "%s", source ? source : "trace");
    t->rows = malloc((cap ? cap : 1) * sizeof *t->rows);
    t->line = malloc((cap ? cap : 1) * sizeof *t->line);
    FP_CHECK_ALLOC(t->rows);
    FP_CHECK_ALLOC(t->line);
    *out = t;
    t = NULL;
cleanup:
    fp_wi_trace_free(t);
    return st;
}

fp_status fp_wi_trace_load_csv(const char *path, fp_wi_trace **out)
{
    fp_status st = FP_OK;
    char *buf = NULL;
    size_t len = 0;
    fp_wi_trace *t = NULL;
    int *which = NULL;
    *out = NULL;
    FP_CHECK(slurp(path, &buf, &len));
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    FP_CHECK(trace_new(path, lines, &t));
    t->from_file = true;

    /* header */
    char *p = buf;
    int col_of[C_N];
    for (int c = 0; c < C_N; c++)
        col_of[c] = -1;
    int nfields = 0;
    int lineno = 1;
    {
        char *nl = strchr(p, '\n');
        char *end = nl ? nl : p + strlen(p);
        char *s = p, *e = end;
        trim(&s, &e);
        if (s == e)
            FP_CHECK(fp__wi_bad("%s:1: empty file, expected a header row naming the columns",
                                path));
        for (char *f = s;; nfields++) {
            char *comma = memchr(f, ',', (size_t)(e - f));
            char *fe = comma ? comma : e, *fs = f;
            trim(&fs, &fe);
            if (fe - fs >= 2 && *fs == '"' && fe[-1] == '"') {
                fs++;
                fe--;
            }
            for (int c = 0; c < C_N; c++)
                if (strlen(colnames[c]) == (size_t)(fe - fs) &&
                    memcmp(colnames[c], fs, (size_t)(fe - fs)) == 0) {
                    if (col_of[c] >= 0)
                        FP_CHECK(fp__wi_bad("%s:1: column '%s' appears twice", path,
                                            colnames[c]));
                    col_of[c] = nfields;
                }
            if (!comma) {
                nfields++;
                break;
            }
            f = comma + 1;
        }
        for (int c = 0; c < C_N; c++)
            if (col_of[c] < 0)
                FP_CHECK(fp__wi_bad("%s:1: missing column '%s' in the header", path,
                                    colnames[c]));
        p = nl ? nl + 1 : end;
    }
    /* field index -> column id */
    which = malloc((size_t)nfields * sizeof *which);
    FP_CHECK_ALLOC(which);
    for (int i = 0; i < nfields; i++)
        which[i] = -1;
    for (int c = 0; c < C_N; c++)
        which[col_of[c]] = c;

    while (*p) {
        lineno++;
        char *nl = strchr(p, '\n');
        char *end = nl ? nl : p + strlen(p);
        char *s = p, *e = end;
        p = nl ? nl + 1 : end;
        trim(&s, &e);
        if (s == e)
            continue;
        fp_wi_row r = {0};
        int nf = 0;
        for (char *f = s;; nf++) {
            char *comma = memchr(f, ',', (size_t)(e - f));
            char *fe = comma ? comma : e;
            if (nf < nfields && which[nf] >= 0) {
                int c = which[nf];
                size_t flen = (size_t)(fe - f);
                bool ok = true;
                switch (c) {
                case C_OPTYPE:
                    if (flen >= 2 && *f == '"' && fe[-1] == '"')
                        ok = fp_wi_optype_parse(f + 1, flen - 2, &r.optype);
                    else
                        ok = fp_wi_optype_parse(f, flen, &r.optype);
                    if (!ok)
                        FP_CHECK(fp__wi_bad("%s:%d: unknown optype '%.*s' (field %d)", path,
                                            lineno, (int)(flen > 60 ? 60 : flen), f, nf + 1));
                    break;
                case C_START:
                    ok = parse_double_span(f, flen, &r.start_ts);
                    break;
                case C_DUR:
                    ok = parse_double_span(f, flen, &r.duration);
                    break;
                default: {
                    int *dst = c == C_DP      ? &r.dp_rank
                               : c == C_STAGE ? &r.stage
                               : c == C_RANK  ? &r.rank
                               : c == C_STEP  ? &r.step
                               : c == C_SEQ   ? &r.seq_id
                               : c == C_MC    ? &r.mc
                               : c == C_MB    ? &r.mb_id
                                              : &r.gmc;
                    ok = parse_int_span(f, flen, dst);
                }
                }
                if (!ok)
                    FP_CHECK(fp__wi_bad("%s:%d: %s: expected a %s, got '%.*s' (field %d)", path,
                                        lineno, colnames[c],
                                        c == C_START || c == C_DUR ? "finite number"
                                                                   : "integer",
                                        (int)(flen > 40 ? 40 : flen), f, nf + 1));
            }
            if (!comma) {
                nf++;
                break;
            }
            f = comma + 1;
        }
        if (nf != nfields)
            FP_CHECK(fp__wi_bad("%s:%d: expected %d fields, found %d%s", path, lineno, nfields,
                                nf, nl ? "" : " (file truncated?)"));
        char where[300];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        FP_CHECK(check_row(&r, where));
        t->rows[t->n] = r;
        t->line[t->n] = lineno;
        t->n++;
    }
    if (t->n == 0)
        FP_CHECK(fp__wi_bad("%s: no rows after the header", path));
    *out = t;
    t = NULL;
cleanup:
    fp_wi_trace_free(t);
    free(which);
    free(buf);
    return st;
}

fp_status fp_wi_trace_from_rows(const fp_wi_row *rows, size_t n, const char *source,
                                fp_wi_trace **out)
{
    fp_status st = FP_OK;
    fp_wi_trace *t = NULL;
    *out = NULL;
    const char *src = source ? source : "rows";
    if (n == 0)
        FP_CHECK(fp__wi_bad("%s: no rows", src));
    FP_CHECK(trace_new(src, n, &t));
    for (size_t i = 0; i < n; i++) {
        char where[300];
        snprintf(where, sizeof where, "%s: row %zu", src, i + 1);
        FP_CHECK(check_row(&rows[i], where));
        t->rows[i] = rows[i];
        t->line[i] = (int)(i + 1 > INT_MAX ? INT_MAX : i + 1);
    }
    t->n = n;
    *out = t;
    t = NULL;
cleanup:
    fp_wi_trace_free(t);
    return st;
}

size_t fp_wi_trace_rows(const fp_wi_trace *trace)
{
    return trace ? trace->n : 0;
}

const fp_wi_row *fp_wi_trace_data(const fp_wi_trace *trace)
{
    return trace ? trace->rows : NULL;
}

void fp_wi_trace_free(fp_wi_trace *trace)
{
    if (!trace)
        return;
    free(trace->rows);
    free(trace->line);
    free(trace);
}

fp_status fp_wi_write_csv(const fp_wi_row *rows, size_t n, const char *path)
{
    fp_status st;
    FILE *f = fp_outfile_open(path, &st);
    if (!f)
        return st;
    fputs("dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n", f);
    for (size_t i = 0; i < n; i++) {
        const fp_wi_row *r = &rows[i];
        fprintf(f, "%d,%d,%d,%d,%s,%.17g,%.17g,%d,%d,%d,%d\n", r->dp_rank, r->stage, r->rank,
                r->step, fp_wi_optype_name(r->optype), r->start_ts, r->duration, r->seq_id, r->mc,
                r->mb_id, r->gmc);
    }
    return fp_outfile_close(f, path, true);
}

fp_status fp_wi_write_meta(const fp_wi_meta *m, const char *comment, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fp_error("%s: cannot write: %s", path, strerror(errno));
        return FP_EIO;
    }
    if (comment)
        fprintf(f, "# %s\n", comment);
    fprintf(f,
            "trial_name: %s\nrun_id: %d\ndp_size: %d\npp_size: %d\ntp_size: %d\ndsp_size: %d\n"
            "vpp_size: %d\nworld_size: %d\n",
            m->trial_name, m->run_id, m->dp_size, m->pp_size, m->tp_size, m->dsp_size,
            m->vpp_size, m->world_size);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        fp_error("%s: write failed", path);
        return FP_EIO;
    }
    return FP_OK;
}
