/* JSON written as it is made, in json_dumpf's layout (json_stream.h). One
 * thread writes a stream, a few bytes a call (30 MB for a 100,000-node run's
 * verdicts): stdio's calls without its lock (2% of detect's cycles at 100k
 * with the lock, per perf). */
#include "json_stream.h"

#include <math.h>
#include <string.h>

void fp_json_stream_init(fp_json_stream *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->empty[0] = true;
}

/* A string's text, quoted, escaped as jansson escapes it: the quote, the
 * backslash and control characters; a byte that is not valid UTF-8 as
 * U+FFFD (jansson refuses such a string, and leaves out its member). */
static void quoted(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    putc_unlocked('"', f);
    while (p < end) {
        const unsigned char *run = p; /* bytes that need no escape */
        while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80)
            p++;
        fwrite_unlocked(run, 1, (size_t)(p - run), f);
        if (p == end)
            break;
        unsigned c = *p;
        if (c >= 0x80) { /* a UTF-8 sequence: copied when whole and valid */
            size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
            bool ok = len && (size_t)(end - p) >= len;
            for (size_t k = 1; ok && k < len; k++)
                ok = (p[k] & 0xc0) == 0x80;
            if (ok && len == 3) /* no overlong form, no surrogate */
                ok = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
            if (ok && len == 4)
                ok = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
            if (ok)
                fwrite_unlocked(p, 1, len, f);
            else
                fputs_unlocked("\\uFFFD", f);
            p += ok ? len : 1;
            continue;
        }
        switch (c) {
        case '"': fputs_unlocked("\\\"", f); break;
        case '\\': fputs_unlocked("\\\\", f); break;
        case '\b': fputs_unlocked("\\b", f); break;
        case '\f': fputs_unlocked("\\f", f); break;
        case '\n': fputs_unlocked("\\n", f); break;
        case '\r': fputs_unlocked("\\r", f); break;
        case '\t': fputs_unlocked("\\t", f); break;
        default: fprintf(f, "\\u%04X", c);
        }
        p++;
    }
    putc_unlocked('"', f);
}

/* The separator and indent before a member, and its key. */
static void member(fp_json_stream *w, const char *key)
{
    if (w->depth > 0) {
        fputs_unlocked(w->empty[w->depth] ? "\n" : ",\n", w->f);
        for (int i = 0; i < w->depth; i++)
            putc_unlocked(' ', w->f);
    }
    w->empty[w->depth] = false;
    if (key) {
        quoted(w->f, key, strlen(key));
        fputs_unlocked(": ", w->f);
    }
}

void fp_json_stream_open(fp_json_stream *w, const char *key, char bracket)
{
    member(w, key);
    putc_unlocked(bracket, w->f);
    if (w->depth + 1 < FP_JSON_STREAM_DEPTH)
        w->empty[++w->depth] = true;
}

void fp_json_stream_close(fp_json_stream *w, char bracket)
{
    bool empty = w->empty[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (!empty) {
        putc_unlocked('\n', w->f);
        for (int i = 0; i < w->depth; i++)
            putc_unlocked(' ', w->f);
    }
    putc_unlocked(bracket, w->f);
}

void fp_json_stream_strn(fp_json_stream *w, const char *key, const char *s, size_t n)
{
    member(w, key);
    quoted(w->f, s, n);
}

void fp_json_stream_str(fp_json_stream *w, const char *key, const char *s)
{
    fp_json_stream_strn(w, key, s, strlen(s));
}

/* ---- reals ----------------------------------------------------------------------------- */

/* The 17 significant digits of |d| (normal, finite, not 0), correctly
 * rounded (to even on a tie, as printf rounds), as an integer N in [1e16,
 * 1e17) with d = N * 10^(*k - 16); false where they need more than 128-bit
 * arithmetic (|d| below about 1e-6 or from 2^127): printf gives them.
 * Exact: d is m * 2^e, and N is m * 10^s / 2^-e or m * 2^e / 10^-s
 * rounded. */
static bool digits17(double d, unsigned long long *n, int *k)
{
#ifndef __SIZEOF_INT128__ /* a compiler without 128-bit integers: printf */
    (void)d, (void)n, (void)k;
    return false;
#else
    typedef unsigned __int128 u128;
    const u128 lo = 10000000000000000ULL, hi = 10 * lo;
    int e2;
    double f = frexp(fabs(d), &e2); /* |d| = f * 2^e2, f in [0.5, 1) */
    u128 m = (u128)ldexp(f, 53);    /* exact: 53 bits */
    int e = e2 - 53;
    int dk = (int)floor(log10(fabs(d))); /* off by one at most: corrected below */
    for (int tries = 0; tries < 3; tries++) {
        int s = 16 - dk;
        u128 q, r, half;
        bool exact;
        if (s >= 0) { /* m * 10^s / 2^-e */
            if (s > 22 || e < -127 || e > 10)
                return false;
            u128 p = m;
            for (int i = 0; i < s; i++)
                p *= 10;
            if (e >= 0) {
                q = p << e, r = 0, half = 1, exact = true;
            } else {
                q = p >> -e, r = p & (((u128)1 << -e) - 1), half = (u128)1 << (-e - 1);
                exact = false;
            }
        } else { /* m * 2^e / 10^-s */
            if (-s > 38 || e < 0 || e > 74)
                return false;
            u128 p = m << e, t = 1;
            for (int i = 0; i < -s; i++)
                t *= 10;
            q = p / t, r = p % t, half = t / 2, exact = false; /* t even: half exact */
        }
        if (q >= hi) { /* the exponent from the digits before rounding */
            dk++;
            continue;
        }
        if (q < lo) {
            dk--;
            continue;
        }
        if (!exact && (r > half || (r == half && (q & 1))))
            q++;
        if (q == hi) /* 99...9 rounded up: 1 and a larger exponent */
            q = lo, dk++;
        *n = (unsigned long long)q;
        *k = dk;
        return true;
    }
    return false;
#endif
}

/* d as %.17g and then jansson's edits (below) would give it; 0 where
 * digits17 cannot say. buf: 32 bytes. */
static int real17(double d, char *buf)
{
    unsigned long long n;
    int k;
    if (!isnormal(d) || !digits17(d, &n, &k))
        return 0;
    char dig[18];
    for (int i = 16; i >= 0; i--, n /= 10)
        dig[i] = (char)('0' + n % 10);
    int nd = 17;
    while (nd > 1 && dig[nd - 1] == '0') /* %g drops trailing zeros */
        nd--;
    char *p = buf;
    if (d < 0)
        *p++ = '-';
    if (k < -4 || k >= 17) { /* d.ddd e[-]x */
        *p++ = dig[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, dig + 1, (size_t)nd - 1);
            p += nd - 1;
        }
        p += sprintf(p, "e%d", k);
    } else if (k < 0) { /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        for (int i = -1; i > k; i--)
            *p++ = '0';
        memcpy(p, dig, (size_t)nd);
        p += nd;
    } else { /* ddd.ddd, ".0" where no fraction is left */
        int whole = k + 1;
        for (int i = 0; i < whole; i++)
            *p++ = i < nd ? dig[i] : '0';
        *p++ = '.';
        if (nd > whole) {
            memcpy(p, dig + whole, (size_t)(nd - whole));
            p += nd - whole;
        } else {
            *p++ = '0';
        }
    }
    *p = 0;
    return (int)(p - buf);
}

/* d as jansson's jsonp_dtostr gives it at precision 17: %.17g, ".0" where
 * neither a point nor an exponent shows, the exponent without '+' and
 * leading zeros. printf's exact conversion was a third of the time writing
 * a 100,000-node run's verdicts; real17 gives the same bytes in integers
 * (tests/unit/test_json_stream.c compares them with jansson's). */
void fp_json_stream_real(fp_json_stream *w, const char *key, double d)
{
    member(w, key);
    if (!isfinite(d)) {
        fputs_unlocked("null", w->f);
        return;
    }
    char buf[40];
    int len = real17(d, buf);
    if (len) {
        fwrite_unlocked(buf, 1, (size_t)len, w->f);
        return;
    }
    len = snprintf(buf, sizeof buf - 3, "%.17g", d);
    char *e = strchr(buf, 'e');
    if (!e && !strchr(buf, '.')) {
        memcpy(buf + len, ".0", 3);
    } else if (e) {
        char *start = e + 1 + (e[1] == '-'), *digits = e + 2;
        while (*digits == '0')
            digits++;
        memmove(start, digits, strlen(digits) + 1);
    }
    fputs_unlocked(buf, w->f);
}

void fp_json_stream_int(fp_json_stream *w, const char *key, long long v)
{
    member(w, key);
    fprintf(w->f, "%lld", v);
}

void fp_json_stream_bool(fp_json_stream *w, const char *key, bool b)
{
    member(w, key);
    fputs_unlocked(b ? "true" : "false", w->f);
}
