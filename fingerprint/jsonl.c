/* JSON Lines: the store's interchange format. Sample lines are flat objects
 * and are read by a small strict scanner (jansson takes ~8 us a line, too slow
 * for a million-sample ingest); lines with nested values (run contexts,
 * baseline rows) are handed to jansson. */
#include "fleetprint/jsonl.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/mem.h"
#include "intern.h"

/* ---- writing ------------------------------------------------------------------- */

int fp_json_quote(char *buf, size_t len, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
#define PUT(c)                                                                             \
    do {                                                                                   \
        if (n + 1 < len)                                                                   \
            buf[n] = (c);                                                                  \
        n++;                                                                               \
    } while (0)
    PUT('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            PUT('\\');
            PUT((char)c);
        } else if (c == '\n') {
            PUT('\\');
            PUT('n');
        } else if (c == '\t') {
            PUT('\\');
            PUT('t');
        } else if (c < 0x20) {
            PUT('\\');
            PUT('u');
            PUT('0');
            PUT('0');
            PUT(hex[c >> 4]);
            PUT(hex[c & 15]);
        } else {
            PUT((char)c);
        }
    }
    PUT('"');
#undef PUT
    if (len)
        buf[n < len ? n : len - 1] = 0;
    return (int)n;
}

/* Shortest of %.15g / %.17g that reads back to the same double; JSON null for
 * NaN and infinities. */
static int format_double(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        return snprintf(buf, len, "null");
    int n = snprintf(buf, len, "%.15g", v);
    if (n > 0 && (size_t)n < len && strtod(buf, NULL) == v)
        return n;
    return snprintf(buf, len, "%.17g", v);
}

int fp_jsonl_format_sample(char *buf, size_t len, const char *run_id, const fp_sample *s)
{
    /* a quoted string takes at most 6 bytes per byte (\u001f) plus quotes and NUL */
#define QCAP(n) (6 * (n) + 3)
    char ent[2 * FP_NAME_MAX + 32], value[40], t[40];
    char q_run[QCAP(sizeof ((fp_jsonl_line *)0)->run_id)], q_suite[QCAP(sizeof s->suite)],
        q_test[QCAP(sizeof s->test)], q_metric[QCAP(sizeof s->metric)],
        q_unit[QCAP(sizeof s->unit)], q_ent[QCAP(sizeof ent)];
#undef QCAP
    fp_entity_format(&s->entity, ent, sizeof ent);
    fp_json_quote(q_run, sizeof q_run, run_id);
    fp_json_quote(q_suite, sizeof q_suite, s->suite);
    fp_json_quote(q_test, sizeof q_test, s->test);
    fp_json_quote(q_metric, sizeof q_metric, s->metric);
    fp_json_quote(q_unit, sizeof q_unit, s->unit);
    fp_json_quote(q_ent, sizeof q_ent, ent);
    format_double(value, sizeof value, s->value);
    format_double(t, sizeof t, s->t_start);
    return snprintf(buf, len,
                    "{\"kind\":\"sample\",\"run\":%s,\"suite\":%s,\"test\":%s,\"metric\":%s,"
                    "\"unit\":%s,\"better\":\"%s\",\"entity\":%s,\"size\":%llu,\"iter\":%d,"
                    "\"value\":%s,\"t\":%s}\n",
                    q_run, q_suite, q_test, q_metric, q_unit,
                    s->better == FP_BETTER_LOWER ? "lower" : "higher", q_ent,
                    (unsigned long long)s->size, (int)s->iter, value, t);
}

fp_status fp_jsonl_write_run(FILE *out, const fp_run *run)
{
    fp_status st = FP_OK;
    json_t *line = json_object();
    json_object_set_new(line, "kind", json_string("run"));
    json_object_set_new(line, "run", fp_json_context(run));
    char *text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(line);
    FP_CHECK_ALLOC(text);
    int rc = fputs(text, out);
    free(text);
    if (rc < 0 || fputc('\n', out) == EOF)
        st = FP_EIO;
cleanup:
    return st;
}

/* ---- the flat scanner ------------------------------------------------------------ */

typedef struct scan {
    const char *start, *p, *end;
    char *err;
    size_t errlen;
    bool nested; /* met '{' or '[' as a value: the caller falls back to jansson */
} scan;

static bool syntax(scan *sc, const char *what)
{
    snprintf(sc->err, sc->errlen, "malformed JSON at column %d: %s",
             (int)(sc->p - sc->start) + 1, what);
    return false;
}

static void skip_ws(scan *sc)
{
    while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' || *sc->p == '\r' || *sc->p == '\n'))
        sc->p++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_hex4(scan *sc, unsigned *out)
{
    if (sc->end - sc->p < 4)
        return syntax(sc, "short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(sc->p[i]);
        if (h < 0)
            return syntax(sc, "bad \\u escape");
        v = v * 16 + (unsigned)h;
    }
    sc->p += 4;
    *out = v;
    return true;
}

/* Length of the well-formed UTF-8 sequence at [p, end) whose lead byte is
 * >= 0x80, or 0 when it is malformed (overlong, surrogate, above U+10FFFF or
 * cut short): the same bytes jansson rejects. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    size_t n;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 0;
    if (c == 0xE0)
        lo = 0xA0; /* overlong */
    else if (c == 0xED)
        hi = 0x9F; /* surrogates */
    else if (c == 0xF0)
        lo = 0x90; /* overlong */
    else if (c == 0xF4)
        hi = 0x8F; /* above U+10FFFF */
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* Decode a string literal (sc->p at the opening quote) into dst[cap]. On
 * overflow keeps scanning and sets *too_long. */
static bool read_string(scan *sc, char *dst, size_t cap, bool *too_long)
{
    size_t n = 0;
    *too_long = false;
    sc->p++; /* opening quote */
    for (;;) {
        if (sc->p >= sc->end)
            return syntax(sc, "unterminated string");
        unsigned char c = (unsigned char)*sc->p;
        unsigned cp;
        char enc[4];
        int k = 0;
        if (c == '"') {
            sc->p++;
            break;
        }
        if (c < 0x20)
            return syntax(sc, "control character in string");
        if (c != '\\') {
            /* copy a run of plain bytes at once */
            const char *q = sc->p;
            while (q < sc->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20) {
                if ((unsigned char)*q < 0x80) {
                    q++;
                    continue;
                }
                size_t u = utf8_len((const unsigned char *)q, (const unsigned char *)sc->end);
                if (!u) {
                    sc->p = q;
                    return syntax(sc, "invalid UTF-8 in string");
                }
                q += u;
            }
            size_t m = (size_t)(q - sc->p);
            if (n + m < cap)
                memcpy(dst + n, sc->p, m);
            else
                *too_long = true;
            n += m;
            sc->p = q;
            continue;
        }
        sc->p++;
        if (sc->p >= sc->end)
            return syntax(sc, "unterminated escape");
        switch (*sc->p++) {
        case '"': enc[k++] = '"'; break;
        case '\\': enc[k++] = '\\'; break;
        case '/': enc[k++] = '/'; break;
        case 'b': enc[k++] = '\b'; break;
        case 'f': enc[k++] = '\f'; break;
        case 'n': enc[k++] = '\n'; break;
        case 'r': enc[k++] = '\r'; break;
        case 't': enc[k++] = '\t'; break;
        case 'u':
            if (!read_hex4(sc, &cp))
                return false;
            if (cp >= 0xD800 && cp < 0xDC00) {
                unsigned lo;
                if (sc->end - sc->p < 2 || sc->p[0] != '\\' || sc->p[1] != 'u')
                    return syntax(sc, "lone surrogate");
                sc->p += 2;
                if (!read_hex4(sc, &lo))
                    return false;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return syntax(sc, "bad surrogate pair");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                return syntax(sc, "lone surrogate");
            }
            if (cp == 0)
                return syntax(sc, "\\u0000 in string");
            if (cp < 0x80) {
                enc[k++] = (char)cp;
            } else if (cp < 0x800) {
                enc[k++] = (char)(0xC0 | (cp >> 6));
                enc[k++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                enc[k++] = (char)(0xE0 | (cp >> 12));
                enc[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                enc[k++] = (char)(0x80 | (cp & 0x3F));
            } else {
                enc[k++] = (char)(0xF0 | (cp >> 18));
                enc[k++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                enc[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                enc[k++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        default:
            sc->p--;
            return syntax(sc, "bad escape");
        }
        if (n + (size_t)k < cap)
            memcpy(dst + n, enc, (size_t)k);
        else
            *too_long = true;
        n += (size_t)k;
    }
    if (cap)
        dst[n < cap ? n : cap - 1] = 0;
    return true;
}

/* A value's kind as seen by the scanner. */
typedef enum { V_STRING, V_NUMBER, V_NULL, V_BOOL } vkind;

typedef struct value {
    vkind kind;
    const char *num;      /* V_NUMBER: the token */
    size_t numlen;
    bool num_integer;     /* no fraction or exponent */
    bool too_long;        /* V_STRING: did not fit */
} value;

/* Check JSON number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
static bool read_number(scan *sc, value *v)
{
    const char *q = sc->p;
    v->num_integer = true;
    if (q < sc->end && *q == '-')
        q++;
    if (q >= sc->end || *q < '0' || *q > '9')
        return syntax(sc, "bad value");
    if (*q == '0')
        q++;
    else
        while (q < sc->end && *q >= '0' && *q <= '9')
            q++;
    if (q < sc->end && *q == '.') {
        v->num_integer = false;
        q++;
        if (q >= sc->end || *q < '0' || *q > '9')
            return syntax(sc, "bad number");
        while (q < sc->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < sc->end && (*q == 'e' || *q == 'E')) {
        v->num_integer = false;
        q++;
        if (q < sc->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= sc->end || *q < '0' || *q > '9')
            return syntax(sc, "bad number");
        while (q < sc->end && *q >= '0' && *q <= '9')
            q++;
    }
    v->kind = V_NUMBER;
    v->num = sc->p;
    v->numlen = (size_t)(q - sc->p);
    sc->p = q;
    return true;
}

static bool read_literal(scan *sc, const char *word, vkind kind, value *v)
{
    size_t n = strlen(word);
    if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, word, n) != 0)
        return syntax(sc, "bad value");
    sc->p += n;
    v->kind = kind;
    return true;
}

/* Read a scalar value; string contents go to dst[cap]. */
static bool read_value(scan *sc, value *v, char *dst, size_t cap)
{
    skip_ws(sc);
    if (sc->p >= sc->end)
        return syntax(sc, "missing value");
    switch (*sc->p) {
    case '"':
        v->kind = V_STRING;
        return read_string(sc, dst, cap, &v->too_long);
    case '{':
    case '[':
        sc->nested = true;
        return false;
    case 'n':
        return read_literal(sc, "null", V_NULL, v);
    case 't':
        return read_literal(sc, "true", V_BOOL, v);
    case 'f':
        return read_literal(sc, "false", V_BOOL, v);
    default:
        return read_number(sc, v);
    }
}

/* ---- sample lines ------------------------------------------------------------------ */

enum {
    F_KIND, F_RUN, F_SUITE, F_TEST, F_METRIC, F_UNIT, F_BETTER, F_ENTITY,
    F_SIZE, F_ITER, F_VALUE, F_T, F_COUNT
};
static const char *const field_names[F_COUNT] = {"kind", "run", "suite", "test", "metric", "unit",
                                                 "better", "entity", "size", "iter", "value", "t"};

/* The field a key names, or -1. This runs for every key of every sample
 * line, so the first letter picks the (at most two) candidates. */
static int field_of(const char *key)
{
    /* by first letter: candidate fields + 1 (0: none) */
    static const unsigned char first[26][2] = {
        ['b' - 'a'] = {F_BETTER + 1}, ['e' - 'a'] = {F_ENTITY + 1}, ['i' - 'a'] = {F_ITER + 1},
        ['k' - 'a'] = {F_KIND + 1},   ['m' - 'a'] = {F_METRIC + 1}, ['r' - 'a'] = {F_RUN + 1},
        ['s' - 'a'] = {F_SUITE + 1, F_SIZE + 1}, ['t' - 'a'] = {F_TEST + 1, F_T + 1},
        ['u' - 'a'] = {F_UNIT + 1},   ['v' - 'a'] = {F_VALUE + 1}};
    if (key[0] < 'a' || key[0] > 'z')
        return -1;
    for (int i = 0; i < 2; i++) {
        int f = first[key[0] - 'a'][i] - 1;
        if (f < 0)
            continue;
        const char *a = key, *b = field_names[f];
        while (*a && *a == *b)
            a++, b++;
        if (*a == *b)
            return f;
    }
    return -1;
}

static bool bad_field(char *err, size_t errlen, int f, const char *why)
{
    snprintf(err, errlen, "field '%s' %s", field_names[f], why);
    return false;
}

#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
#define FAST_DECIMALS 1
/* m / 10^decimals (m < 10^19, decimals <= 27) as the nearest double, *out
 * negated when neg. With the 64-bit mantissa of x87 long double, m and 10^k
 * are exact and m / 10^k is rounded once; the second rounding, to double, is
 * the correct one unless the long double landed exactly halfway between two
 * doubles (its 11 bits below a double's mantissa are 10000000000): then
 * false, and the caller uses strtod. */
static bool decimal_double(uint64_t m, int decimals, bool neg, double *out)
{
    static const long double pow10[28] = {
        1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
        1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
        1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
    long double q = (long double)m / pow10[decimals];
    double d = (double)q;
    if (m && d >= DBL_MIN) {
        uint64_t mant; /* x87: the 64-bit significand is the first 8 bytes */
        memcpy(&mant, &q, sizeof mant);
        if ((mant & 0x7ff) == 0x400)
            return false;
    } else if (m) {
        /* below the normal range: compare with the midpoint itself */
        long double r = q - (long double)d;
        double other = nextafter(d, r > 0 ? INFINITY : -INFINITY);
        if (r != 0 && q == ((long double)d + (long double)other) / 2)
            return false;
    }
    *out = neg ? -d : d;
    return true;
}
#endif

/* The double nearest a plain decimal [-]digits[.digits] (grammar already
 * checked) of at most 19 significant digits and 27 decimals, without strtod
 * (a tenth of the time of an ingest went there): false for anything else,
 * and on other machines; the caller uses strtod. */
static bool fast_number(const char *p, size_t n, double *out)
{
#ifdef FAST_DECIMALS
    const char *end = p + n;
    bool neg = p < end && *p == '-', frac = false;
    uint64_t m = 0;
    int digits = 0, decimals = 0;
    for (p += neg; p < end; p++) {
        if (*p == '.') {
            frac = true;
            continue;
        }
        if (*p < '0' || *p > '9')
            return false; /* an exponent */
        if (m || *p != '0')
            digits++;
        if (digits > 19)
            return false;
        m = m * 10 + (uint64_t)(*p - '0');
        decimals += frac;
    }
    return decimals <= 27 && decimal_double(m, decimals, neg, out);
#else
    (void)p;
    (void)n;
    (void)out;
    return false;
#endif
}

/* The fast path's numbers: -?(0|[1-9][0-9]*)(\.[0-9]+)? (JSON's grammar
 * without an exponent) of at most 19 significant digits and 27 decimals,
 * read in one pass; p past it, or NULL for anything else (the caller reads
 * it the general way). */
static const char *plain_decimal(const char *p, const char *end, double *out)
{
#ifdef FAST_DECIMALS
    if (!p)
        return NULL;
    bool neg = p < end && *p == '-';
    uint64_t m = 0;
    int digits = 0, decimals = 0;
    p += neg;
    if (p >= end || *p < '0' || *p > '9')
        return NULL;
    if (*p == '0') {
        p++;
    } else {
        for (; p < end && *p >= '0' && *p <= '9'; p++, digits++)
            m = m * 10 + (uint64_t)(*p - '0');
    }
    if (p < end && *p == '.') {
        const char *f = ++p;
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            digits += m || *p != '0';
            m = m * 10 + (uint64_t)(*p - '0');
            if (digits > 19)
                return NULL;
        }
        decimals = (int)(p - f);
        if (!decimals)
            return NULL;
    }
    if (digits > 19 || decimals > 27 || (p < end && (*p == 'e' || *p == 'E')) ||
        !decimal_double(m, decimals, neg, out))
        return NULL;
    return p;
#else
    (void)p;
    (void)end;
    (void)out;
    return NULL;
#endif
}

/* Number value of a field into *out; integers must be exact. */
static bool num_field(const value *v, int f, double *out, char *err, size_t errlen)
{
    if (v->kind == V_NULL && f == F_VALUE) {
        *out = NAN;
        return true;
    }
    if (v->kind != V_NUMBER)
        return bad_field(err, errlen, f, "is not a number");
    if (fast_number(v->num, v->numlen, out))
        return true;
    char tmp[64];
    if (v->numlen >= sizeof tmp)
        return bad_field(err, errlen, f, "has too many digits");
    memcpy(tmp, v->num, v->numlen);
    tmp[v->numlen] = 0;
    errno = 0;
    *out = strtod(tmp, NULL);
    if (errno == ERANGE && isinf(*out))
        return bad_field(err, errlen, f, "is out of range");
    return true;
}

static bool scan_sample(scan *sc, fp_jsonl_line *out, char *kind, size_t kindcap)
{
    fp_sample *s = &out->sample;
    bool seen[F_COUNT] = {false};
    char key[16], better[16], entity[2 * FP_NAME_MAX + 32];
    char *strdst[F_COUNT] = {[F_KIND] = kind,      [F_RUN] = out->run_id, [F_SUITE] = s->suite,
                             [F_TEST] = s->test,   [F_METRIC] = s->metric, [F_UNIT] = s->unit,
                             [F_BETTER] = better,  [F_ENTITY] = entity};
    size_t strcap[F_COUNT] = {[F_KIND] = kindcap,          [F_RUN] = sizeof out->run_id,
                              [F_SUITE] = sizeof s->suite,   [F_TEST] = sizeof s->test,
                              [F_METRIC] = sizeof s->metric, [F_UNIT] = sizeof s->unit,
                              [F_BETTER] = sizeof better,    [F_ENTITY] = sizeof entity};
    double num[F_COUNT] = {0};
    char *err = sc->err;
    size_t errlen = sc->errlen;

    skip_ws(sc);
    if (sc->p >= sc->end || *sc->p != '{')
        return syntax(sc, "expected '{'");
    sc->p++;
    skip_ws(sc);
    if (sc->p < sc->end && *sc->p == '}') {
        sc->p++;
    } else {
        for (;;) {
            skip_ws(sc);
            if (sc->p >= sc->end || *sc->p != '"')
                return syntax(sc, "expected a key");
            bool long_key;
            if (!read_string(sc, key, sizeof key, &long_key))
                return false;
            skip_ws(sc);
            if (sc->p >= sc->end || *sc->p != ':')
                return syntax(sc, "expected ':'");
            sc->p++;
            int f = long_key ? -1 : field_of(key);
            value v;
            char junk[8];
            if (!read_value(sc, &v, f >= 0 && strdst[f] ? strdst[f] : junk,
                            f >= 0 && strdst[f] ? strcap[f] : sizeof junk))
                return false;
            if (f >= 0) {
                seen[f] = true;
                if (strdst[f]) {
                    if (v.kind != V_STRING)
                        return bad_field(err, errlen, f, "is not a string");
                    if (v.too_long) {
                        char why[48];
                        snprintf(why, sizeof why, "is too long (at most %zu bytes)",
                                 strcap[f] - 1);
                        return bad_field(err, errlen, f, why);
                    }
                } else {
                    if (!num_field(&v, f, &num[f], err, errlen))
                        return false;
                    if (f == F_SIZE && (!v.num_integer || v.num[0] == '-'))
                        return bad_field(err, errlen, f, "is not a non-negative integer");
                    if (f == F_SIZE) {
                        char tmp[32];
                        if (v.numlen >= sizeof tmp)
                            return bad_field(err, errlen, f, "is out of range");
                        memcpy(tmp, v.num, v.numlen);
                        tmp[v.numlen] = 0;
                        errno = 0;
                        unsigned long long u = strtoull(tmp, NULL, 10);
                        if (errno == ERANGE)
                            return bad_field(err, errlen, f, "is out of range");
                        s->size = (uint64_t)u;
                    }
                    if (f == F_ITER && (!v.num_integer || fabs(num[f]) > 2147483647.0))
                        return bad_field(err, errlen, f, "is not a 32-bit integer");
                }
            }
            skip_ws(sc);
            if (sc->p < sc->end && *sc->p == ',') {
                sc->p++;
                continue;
            }
            if (sc->p < sc->end && *sc->p == '}') {
                sc->p++;
                break;
            }
            return syntax(sc, "expected ',' or '}'");
        }
    }
    skip_ws(sc);
    if (sc->p != sc->end)
        return syntax(sc, "text after the object");
    if (seen[F_KIND] && strcmp(kind, "sample") != 0) {
        if (strcmp(kind, "run") == 0)
            return bad_field(err, errlen, F_RUN, "of a run line must be an object");
        return bad_field(err, errlen, F_KIND, "must be \"sample\" or \"run\"");
    }
    static const int required[] = {F_RUN, F_SUITE, F_TEST, F_METRIC, F_UNIT, F_BETTER,
                                   F_ENTITY, F_VALUE};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!seen[required[i]])
            return bad_field(err, errlen, required[i], "is missing");
    if (!out->run_id[0])
        return bad_field(err, errlen, F_RUN, "is empty");
    if (strcmp(better, "higher") == 0)
        s->better = FP_BETTER_HIGHER;
    else if (strcmp(better, "lower") == 0)
        s->better = FP_BETTER_LOWER;
    else
        return bad_field(err, errlen, F_BETTER, "must be \"higher\" or \"lower\"");
    if (!fp_entity_parse(entity, &s->entity))
        return bad_field(err, errlen, F_ENTITY, "is not an entity (node:n0, gpu:n0/3, "
                                                "link:a~b, rank:5@n1, group:g)");
    s->iter = (int32_t)num[F_ITER];
    s->value = num[F_VALUE];
    s->t_start = num[F_T];
    return true;
}

/* ---- the fast path of sample lines ---------------------------------------------- */

/* p past the literal lit (n bytes), or NULL when the text differs. */
static const char *expect(const char *p, const char *end, const char *lit, size_t n)
{
    return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0 ? p + n : NULL;
}
#define EXPECT(p, end, lit) ((p) ? expect((p), (end), (lit), sizeof(lit) - 1) : NULL)

/* A string's body up to its closing quote when it is printable ASCII
 * without escapes and shorter than cap bytes: *s, *n; p past the quote. */
static const char *plain_string(const char *p, const char *end, size_t cap, const char **s,
                                size_t *n)
{
    if (!p)
        return NULL;
    const char *q = p;
    while (q < end && *q != '"') {
        unsigned char c = (unsigned char)*q++;
        if (c < 0x20 || c >= 0x80 || c == '\\')
            return NULL;
    }
    if (q >= end || (size_t)(q - p) >= cap)
        return NULL;
    *s = p;
    *n = (size_t)(q - p);
    return q + 1;
}

/* An integer without sign, fraction or leading zero, below 10^19 (so it fits). */
static const char *plain_uint(const char *p, const char *end, uint64_t *out)
{
    if (!p || p >= end || *p < '0' || *p > '9')
        return NULL;
    uint64_t v = 0;
    const char *q = p;
    while (q < end && *q >= '0' && *q <= '9')
        v = v * 10 + (uint64_t)(*q++ - '0');
    if ((*p == '0' && q - p > 1) || q - p > 19)
        return NULL;
    *out = v;
    return q;
}

/* A JSON number (grammar checked as read_number does) as fp_jsonl_parse
 * reads it: *integer when it has neither fraction nor exponent. NULL when it
 * is not one or is out of range (the full path words the error). */
static const char *number(const char *p, const char *end, double *out, bool *integer)
{
    if (!p)
        return NULL;
    char err[8];
    scan sc = {.start = p, .p = p, .end = end, .err = err, .errlen = sizeof err};
    value v;
    if (!read_number(&sc, &v) || !num_field(&v, F_T, out, err, sizeof err))
        return NULL;
    *integer = v.num_integer;
    return sc.p;
}

bool fp_jsonl_sample_fast(const char *line, size_t len, fp_jsonl_sample_view *v)
{
    const char *p = line, *end = line + len;
    uint64_t u;
    double d;
    bool integer;
    const char *kind = EXPECT(p, end, "{\"kind\":\"sample\",\"run\":\"");
    p = kind ? kind : EXPECT(p, end, "{\"run\":\""); /* "kind" may be left out */
    p = plain_string(p, end, sizeof ((fp_jsonl_line *)0)->run_id, &v->run, &v->run_len);
    p = EXPECT(p, end, ",\"suite\":\"");
    p = plain_string(p, end, sizeof ((fp_sample *)0)->suite, &v->suite, &v->suite_len);
    p = EXPECT(p, end, ",\"test\":\"");
    p = plain_string(p, end, sizeof ((fp_sample *)0)->test, &v->test, &v->test_len);
    p = EXPECT(p, end, ",\"metric\":\"");
    p = plain_string(p, end, sizeof ((fp_sample *)0)->metric, &v->metric, &v->metric_len);
    p = EXPECT(p, end, ",\"unit\":\"");
    p = plain_string(p, end, sizeof ((fp_sample *)0)->unit, &v->unit, &v->unit_len);
    p = EXPECT(p, end, ",\"better\":\"");
    if (!p || !v->run_len)
        return false;
    const char *q = p;
    if ((p = expect(q, end, "higher\"", 7)) != NULL)
        v->better = FP_BETTER_HIGHER;
    else if ((p = expect(q, end, "lower\"", 6)) != NULL)
        v->better = FP_BETTER_LOWER;
    p = EXPECT(p, end, ",\"entity\":\"");
    p = plain_string(p, end, 2 * FP_NAME_MAX + 32, &v->entity, &v->entity_len);
    p = EXPECT(p, end, ",\"size\":");
    p = plain_uint(p, end, &v->size);
    p = EXPECT(p, end, ",\"iter\":");
    bool neg = p && p < end && *p == '-';
    p = plain_uint(p ? p + neg : NULL, end, &u);
    if (!p || u > 2147483647u)
        return false;
    v->iter = neg ? -(int32_t)u : (int32_t)u;
    p = EXPECT(p, end, ",\"value\":");
    const char *q2;
    if (p && (size_t)(end - p) >= 4 && memcmp(p, "null", 4) == 0) {
        v->value = NAN;
        p += 4;
    } else if ((q2 = plain_decimal(p, end, &v->value)) != NULL) {
        p = q2;
    } else {
        p = number(p, end, &v->value, &integer);
    }
    p = EXPECT(p, end, ",\"t\":");
    q2 = plain_decimal(p, end, &d);
    p = q2 ? q2 : number(p, end, &d, &integer);
    p = EXPECT(p, end, "}");
    if (!p)
        return false;
    v->t = d;
    while (p < end && (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t'))
        p++;
    return p == end;
}

/* ---- the fast path of run lines ---------------------------------------------------- */

static bool fast_char(scan *sc, char c)
{
    skip_ws(sc);
    if (sc->p >= sc->end || *sc->p != c)
        return false;
    sc->p++;
    return true;
}

/* A string value into dst[cap], decoded as jansson decodes it (escapes,
 * UTF-8, no NUL): false when it is not a string or does not fit. */
static bool fast_str(scan *sc, char *dst, size_t cap)
{
    bool too_long;
    skip_ws(sc);
    return sc->p < sc->end && *sc->p == '"' && read_string(sc, dst, cap, &too_long) &&
           !too_long;
}

/* An object's key and the colon after it. */
static bool fast_key(scan *sc, char *key, size_t cap)
{
    return fast_str(sc, key, cap) && fast_char(sc, ':');
}

/* After a member: true at ',' (another follows), false at the closing c
 * (*closed set) or anything else (*closed clear). */
static bool fast_more(scan *sc, char c, bool *closed)
{
    *closed = false;
    if (fast_char(sc, ','))
        return true;
    *closed = fast_char(sc, c);
    return false;
}

/* A number, or null (NaN), as jansson reads it: an integer of more digits
 * than its json_int_t holds is left to it (an error there); an integer is
 * converted from its int64 value, so -0 is 0. */
static bool fast_num(scan *sc, double *out)
{
    value v;
    char err[8];
    skip_ws(sc);
    if (sc->end - sc->p >= 4 && memcmp(sc->p, "null", 4) == 0) {
        sc->p += 4;
        *out = NAN;
        return true;
    }
    if (!read_number(sc, &v) || (v.num_integer && v.numlen - (v.num[0] == '-') > 18) ||
        !num_field(&v, F_T, out, err, sizeof err))
        return false;
    if (v.num_integer && *out == 0)
        *out = 0;
    return true;
}

/* The index of key in names[n], or -1. */
static int key_index(const char *key, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(key, names[i]) == 0)
            return i;
    return -1;
}

/* A JSON array into *arr (grown; items of size bytes), each item read by
 * item(sc, ix, it) into its zeroed place; *n its length (at most INT_MAX). */
static bool fast_array(scan *sc, void **arr, size_t size, int *n,
                       bool (*item)(scan *sc, const fp__nameix *ix, void *it),
                       const fp__nameix *ix)
{
    size_t cap = 0, k = 0;
    bool closed;
    if (!fast_char(sc, '['))
        return false;
    if (!fast_char(sc, ']')) {
        do {
            char *grown = fp_grow(*arr, &cap, k + 1, size, 1024);
            if (!grown)
                return false;
            *arr = grown;
            memset(grown + k * size, 0, size); /* stored whole: no stray bytes */
            if (!item(sc, ix, grown + k++ * size) || k > INT_MAX)
                return false;
        } while (fast_more(sc, ']', &closed));
        if (!closed)
            return false;
    }
    *n = (int)k;
    return true;
}

/* One of "nodes": a name. */
static bool fast_node(scan *sc, const fp__nameix *ix, void *it)
{
    (void)ix;
    return fast_str(sc, it, FP_NAME_MAX);
}

/* One object of "ranks" (fp_json_parse_context's rules). */
static bool fast_rank(scan *sc, const fp__nameix *ix, void *it)
{
    fp_rank_info *ri = it;
    static const char *const names[] = {"node",        "local_rank", "dev",  "clock_offset",
                                        "clock_error", "model",      "uuid", "pci_bus"};
    unsigned seen = 0;
    double lr = 0, dev = 0;
    char key[16], node[FP_NAME_MAX];
    bool closed = true, ok = true;
    if (!fast_char(sc, '{'))
        return false;
    if (!fast_char(sc, '}')) {
        do {
            int k = fast_key(sc, key, sizeof key) ? key_index(key, names, 8) : -1;
            if (k < 0 || seen & (1u << k))
                return false;
            seen |= 1u << k;
            switch (k) {
            case 0: ok = fast_str(sc, node, sizeof node) && (ri->node = fp__nameix_get(ix, node)) >= 0;
                break;
            case 1: ok = fast_num(sc, &lr); break;
            case 2: ok = fast_num(sc, &dev); break;
            case 3: ok = fast_num(sc, &ri->clock_offset); break;
            case 4: ok = fast_num(sc, &ri->clock_error); break;
            case 5: ok = fast_str(sc, ri->model, sizeof ri->model); break;
            case 6: ok = fast_str(sc, ri->uuid, sizeof ri->uuid); break;
            default: ok = fast_str(sc, ri->pci_bus, sizeof ri->pci_bus); break;
            }
            if (!ok)
                return false;
        } while (fast_more(sc, '}', &closed));
    }
    if (!closed || !(seen & 1) || !(lr >= 0 && lr <= INT_MAX) || lr != floor(lr) ||
        !(dev >= -1 && dev <= INT_MAX) || dev != floor(dev))
        return false;
    ri->local_rank = (int)lr;
    ri->dev = (int)dev;
    return true;
}

/* "config": [{"entity": "node:N" | "gpu:N/D", "fields": {"name": "value", ...}}, ...],
 * the two keys in that order, every field a string, none repeated. */
static bool fast_config(scan *sc, const fp__nameix *ix, fp_run *run)
{
    fp_cfg_item *items = NULL;
    size_t cap = 0, n = 0;
    bool closed = true, ok = false;
    char key[16], text[2 * FP_NAME_MAX + 32];
    if (!fast_char(sc, '['))
        return false;
    if (!fast_char(sc, ']')) {
        do {
            fp_entity e;
            int node;
            size_t from = n;
            if (!fast_char(sc, '{') || !fast_key(sc, key, sizeof key) ||
                strcmp(key, "entity") != 0 || !fast_str(sc, text, sizeof text) ||
                !fp_entity_parse(text, &e) || (e.kind != FP_ENT_NODE && e.kind != FP_ENT_GPU) ||
                (node = fp__nameix_get(ix, e.node)) < 0 || !fast_char(sc, ',') ||
                !fast_key(sc, key, sizeof key) || strcmp(key, "fields") != 0 ||
                !fast_char(sc, '{'))
                goto done;
            if (!fast_char(sc, '}')) {
                do {
                    fp_cfg_item *grown = fp_grow(items, &cap, n + 1, sizeof *grown, 256);
                    if (!grown)
                        goto done;
                    items = grown;
                    fp_cfg_item *it = &items[n];
                    memset(it, 0, sizeof *it);
                    if (!fast_key(sc, it->field, sizeof it->field) || !it->field[0] ||
                        !fast_str(sc, it->value, sizeof it->value))
                        goto done;
                    for (size_t k = from; k < n; k++)
                        if (strcmp(items[k].field, it->field) == 0)
                            goto done; /* jansson refuses a repeated key */
                    it->node = node;
                    it->dev = e.kind == FP_ENT_GPU ? e.dev : -1;
                    n++;
                } while (fast_more(sc, '}', &closed));
                if (!closed)
                    goto done;
            }
            if (!fast_char(sc, '}'))
                goto done;
        } while (fast_more(sc, ']', &closed));
        if (!closed)
            goto done;
    }
    ok = fp_run_set_config(run, items, n) == FP_OK;
done:
    free(items);
    return ok;
}

bool fp_jsonl_run_fast(const char *line, size_t len, fp_run *run)
{
    /* the keys of fp_json_context: the text fields, then the rest */
    static const struct {
        const char *name;
        size_t off, size;
    } text[] = {
#define TEXT(field) {#field, offsetof(fp_run, field), sizeof ((fp_run *)0)->field},
        TEXT(id) FP_RUN_TEXT_FIELDS(TEXT)
#undef TEXT
    };
    enum { NTEXT = sizeof text / sizeof text[0] };
    static const char *const rest[] = {"time", "duration", "nodes", "ranks", "config"};
    char err[8], key[32];
    scan sc = {.start = line, .p = line, .end = line + len, .err = err, .errlen = sizeof err};
    fp__nameix ix = {0};
    uint64_t seen = 0;
    bool ok = false, closed = true;
    memset(run, 0, sizeof *run);
    if (!fast_char(&sc, '{') || !fast_key(&sc, key, sizeof key) || strcmp(key, "kind") != 0 ||
        !fast_str(&sc, key, sizeof key) || strcmp(key, "run") != 0 || !fast_char(&sc, ',') ||
        !fast_key(&sc, key, sizeof key) || strcmp(key, "run") != 0 || !fast_char(&sc, '{'))
        goto done;
    if (!fast_char(&sc, '}')) {
        do {
            int k = -1;
            if (fast_key(&sc, key, sizeof key)) {
                for (int i = 0; k < 0 && i < NTEXT; i++)
                    k = strcmp(key, text[i].name) == 0 ? i : -1;
                if (k < 0 && (k = key_index(key, rest, 5)) >= 0)
                    k += NTEXT;
            }
            if (k < 0 || seen & (1ull << k))
                goto done; /* an unknown key, or one repeated: jansson's */
            seen |= 1ull << k;
            bool got;
            if (k < NTEXT)
                got = fast_str(&sc, (char *)run + text[k].off, text[k].size);
            else if (k == NTEXT)
                got = fast_num(&sc, &run->time);
            else if (k == NTEXT + 1)
                got = fast_num(&sc, &run->duration);
            else if (k == NTEXT + 2)
                got = !(seen & (3ull << (NTEXT + 3))) &&
                      fast_array(&sc, (void **)&run->nodes, FP_NAME_MAX, &run->nnodes,
                                 fast_node, NULL) &&
                      fp__nameix_build(&ix, run->nodes ? run->nodes[0] : "", FP_NAME_MAX,
                                       run->nnodes) == FP_OK; /* before ranks and config */
            else if (k == NTEXT + 3)
                got = (seen & (1ull << (NTEXT + 2))) &&
                      fast_array(&sc, (void **)&run->ranks, sizeof *run->ranks, &run->nranks,
                                 fast_rank, &ix);
            else
                got = (seen & (1ull << (NTEXT + 2))) && fast_config(&sc, &ix, run);
            if (!got)
                goto done;
        } while (fast_more(&sc, '}', &closed));
    }
    ok = closed && (seen & 1) && fast_char(&sc, '}');
    skip_ws(&sc);
    ok = ok && sc.p == sc.end;
    if (ok && !run->nodes) /* no node: no rank either; the arrays exist, if empty */
        ok = fp_run_set_shape(run, 0, 0) == FP_OK;
    if (ok && !run->ranks) {
        run->ranks = calloc(1, sizeof *run->ranks);
        ok = run->ranks != NULL;
    }
done:
    fp__nameix_free(&ix);
    if (!ok)
        fp_run_free(run);
    return ok;
}

/* ---- nested lines (jansson) ------------------------------------------------------ */

static fp_status parse_nested(const char *line, size_t len, fp_jsonl_line *out, char *err,
                              size_t errlen)
{
    json_error_t jerr;
    json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) {
        snprintf(err, errlen, "malformed JSON at column %d: %s", jerr.column, jerr.text);
        return FP_EINPUT;
    }
    fp_status st = FP_EINPUT;
    const char *kind = json_string_value(json_object_get(j, "kind"));
    if (!json_is_object(j)) {
        snprintf(err, errlen, "a line must be a JSON object");
    } else if (kind && strcmp(kind, "baseline") == 0) {
        out->kind = FP_JSONL_BASELINE;
        st = FP_OK;
    } else if (kind && strcmp(kind, "run") == 0) {
        json_t *ctx = json_object_get(j, "run");
        if (!json_is_object(ctx)) {
            snprintf(err, errlen, "field 'run' of a run line must be an object");
        } else {
            out->kind = FP_JSONL_RUN;
            out->context = json_incref(ctx);
            st = FP_OK;
        }
    } else {
        snprintf(err, errlen, "a sample line has only strings, numbers and null as values "
                              "(or set \"kind\" to \"run\")");
    }
    json_decref(j);
    return st;
}

fp_status fp_jsonl_parse(const char *line, size_t len, fp_jsonl_line *out, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    err[0] = 0;
    scan sc = {.start = line, .p = line, .end = line + len, .err = err, .errlen = errlen};
    skip_ws(&sc);
    if (sc.p == sc.end) {
        out->kind = FP_JSONL_BLANK;
        return FP_OK;
    }
    char kind[16] = "";
    if (scan_sample(&sc, out, kind, sizeof kind)) {
        out->kind = FP_JSONL_SAMPLE;
        return FP_OK;
    }
    if (sc.nested) {
        memset(out, 0, sizeof *out);
        err[0] = 0;
        return parse_nested(line, len, out, err, errlen);
    }
    return FP_EINPUT;
}
