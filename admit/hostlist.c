/* Hostlist expressions: expansion with Slurm's grammar and order-preserving
 * compression (see include/fleetprint/hostlist.h for the grammar). */
#include "fleetprint/hostlist.h"
#include "fleetprint/mem.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numbers with more digits than this do not fit in 64 bits reliably. */
#define MAX_DIGITS 18

struct fp_hostlist {
    char **name;
    size_t n, cap;
};

/* ---- the list ------------------------------------------------------------------ */

fp_hostlist *fp_hostlist_new(void)
{
    return calloc(1, sizeof(fp_hostlist));
}

void fp_hostlist_free(fp_hostlist *hl)
{
    if (!hl)
        return;
    for (size_t i = 0; i < hl->n; i++)
        free(hl->name[i]);
    free(hl->name);
    free(hl);
}

size_t fp_hostlist_count(const fp_hostlist *hl)
{
    return hl ? hl->n : 0;
}

const char *fp_hostlist_get(const fp_hostlist *hl, size_t i)
{
    return hl && i < hl->n ? hl->name[i] : NULL;
}

static bool is_sep(char c)
{
    return c == ',' || isspace((unsigned char)c);
}

static bool grow(fp_hostlist *hl, size_t more)
{
    char **p = fp_grow(hl->name, &hl->cap, hl->n + more, sizeof *p, 16);
    if (!p)
        return false;
    hl->name = p;
    return true;
}

/* Take ownership of s (already allocated). */
static fp_status push_owned(fp_hostlist *hl, char *s)
{
    fp_status st = FP_OK;
    if (!grow(hl, 1)) {
        free(s);
        FP_FAIL(FP_ENOMEM, "out of memory");
    }
    hl->name[hl->n++] = s;
cleanup:
    return st;
}

fp_status fp_hostlist_push(fp_hostlist *hl, const char *host)
{
    if (!host || !*host)
        return FP_EINPUT;
    for (const char *p = host; *p; p++)
        if (is_sep(*p) || *p == '[' || *p == ']')
            return FP_EINPUT;
    fp_status st = FP_OK;
    char *s = strdup(host);
    FP_CHECK_ALLOC(s);
    st = push_owned(hl, s);
cleanup:
    return st;
}

bool fp_hostlist_contains(const fp_hostlist *hl, const char *host)
{
    for (size_t i = 0; hl && i < hl->n; i++)
        if (strcmp(hl->name[i], host) == 0)
            return true;
    return false;
}

/* ---- expansion ------------------------------------------------------------------ */

typedef struct range {
    unsigned long long lo, hi;
    int width;
} range;

/* One bracket group: its ranges and the literal text that follows it. */
typedef struct group {
    range *r;
    size_t nr;
    const char *text; /* literal after the group, not NUL-terminated */
    size_t text_len;
} group;

typedef struct parser {
    const char *expr;
    char *err;
    size_t errlen;
} parser;

__attribute__((format(printf, 3, 4))) static fp_status perr(parser *ps, const char *at,
                                                            const char *fmt, ...)
{
    if (ps->err && ps->errlen) {
        int n = snprintf(ps->err, ps->errlen, "position %zu: ", (size_t)(at - ps->expr) + 1);
        if (n >= 0 && (size_t)n < ps->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return FP_EINPUT;
}

/* Read a run of digits at *p into v and its length into width. */
static fp_status read_number(parser *ps, const char **p, unsigned long long *v, int *width)
{
    const char *s = *p;
    if (!isdigit((unsigned char)*s)) {
        if (*s == 0)
            return perr(ps, s, "expected a number, found the end of the expression");
        return perr(ps, s, "expected a number, found '%c'", *s);
    }
    unsigned long long x = 0;
    int n = 0;
    while (isdigit((unsigned char)s[n])) {
        if (n == MAX_DIGITS)
            return perr(ps, s, "number longer than %d digits", MAX_DIGITS);
        x = x * 10 + (unsigned long long)(s[n] - '0');
        n++;
    }
    *v = x;
    *width = n;
    *p = s + n;
    return FP_OK;
}

/* Parse "ranges]" starting after '['; on success *p points after ']'. */
static fp_status parse_group(parser *ps, const char **p, const char *open, group *g)
{
    const char *s = *p;
    size_t cap = 0;
    if (*s == ']')
        return perr(ps, open, "empty brackets");
    for (;;) {
        range r;
        const char *at = s;
        fp_status st = read_number(ps, &s, &r.lo, &r.width);
        if (st != FP_OK)
            return st;
        r.hi = r.lo;
        if (*s == '-') {
            s++;
            int hw;
            st = read_number(ps, &s, &r.hi, &hw);
            if (st != FP_OK)
                return st;
            if (r.hi < r.lo)
                return perr(ps, at, "range %llu-%llu goes backwards", r.lo, r.hi);
        }
        if (g->nr == cap) {
            cap = cap ? cap * 2 : 4;
            range *nr = realloc(g->r, cap * sizeof *nr);
            if (!nr)
                return FP_ENOMEM;
            g->r = nr;
        }
        g->r[g->nr++] = r;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == ']') {
            *p = s + 1;
            return FP_OK;
        }
        if (*s == 0)
            return perr(ps, open, "'[' is never closed");
        if (*s == '[')
            return perr(ps, s, "brackets cannot nest");
        return perr(ps, s, "unexpected '%c' inside brackets", *s);
    }
}

static size_t digits_of(unsigned long long v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* Expand one expression [tok, end) and append its hosts to hl. */
static fp_status expand_token(parser *ps, fp_hostlist *hl, const char *tok, const char *end)
{
    fp_status st = FP_OK;
    group *g = NULL;
    size_t ng = 0, capg = 0;
    const char *s = tok;
    const char *head = tok;
    size_t head_len = 0;
    unsigned long long total = 1;
    size_t *idx = NULL;
    unsigned long long *val = NULL;
    char *buf = NULL;

    /* leading literal */
    while (s < end && *s != '[' && *s != ']')
        s++;
    head_len = (size_t)(s - tok);
    while (s < end) {
        if (*s == ']') {
            st = perr(ps, s, "']' without a matching '['");
            goto cleanup;
        }
        const char *open = s++;
        if (ng == capg) {
            capg = capg ? capg * 2 : 2;
            group *ngp = realloc(g, capg * sizeof *ngp);
            if (!ngp) {
                st = FP_ENOMEM;
                goto cleanup;
            }
            g = ngp;
        }
        memset(&g[ng], 0, sizeof g[ng]);
        ng++;
        st = parse_group(ps, &s, open, &g[ng - 1]);
        if (st != FP_OK)
            goto cleanup;
        if (s > end) { /* cannot happen: tokens end outside brackets */
            st = perr(ps, open, "'[' is never closed");
            goto cleanup;
        }
        const char *t = s;
        while (s < end && *s != '[' && *s != ']')
            s++;
        g[ng - 1].text = t;
        g[ng - 1].text_len = (size_t)(s - t);
    }

    /* size of the product, with the cap checked before allocating */
    size_t name_len = head_len + 1;
    for (size_t i = 0; i < ng; i++) {
        unsigned long long count = 0;
        size_t w = 0;
        for (size_t k = 0; k < g[i].nr; k++) {
            count += g[i].r[k].hi - g[i].r[k].lo + 1;
            size_t rw = digits_of(g[i].r[k].hi);
            if ((size_t)g[i].r[k].width > rw)
                rw = (size_t)g[i].r[k].width;
            if (rw > w)
                w = rw;
            if (count > FP_HOSTLIST_MAX_HOSTS)
                break;
        }
        total *= count;
        if (count > FP_HOSTLIST_MAX_HOSTS || total > FP_HOSTLIST_MAX_HOSTS) {
            st = perr(ps, tok, "expression expands to more than %u hosts",
                      (unsigned)FP_HOSTLIST_MAX_HOSTS);
            goto cleanup;
        }
        name_len += w + g[i].text_len;
    }
    if (hl->n + total > FP_HOSTLIST_MAX_HOSTS) {
        st = perr(ps, tok, "list expands to more than %u hosts", (unsigned)FP_HOSTLIST_MAX_HOSTS);
        goto cleanup;
    }
    if (!grow(hl, (size_t)total)) {
        st = FP_ENOMEM;
        goto cleanup;
    }

    /* odometer over the groups, leftmost slowest: idx[i] is the range, val[i]
     * the value inside it */
    idx = calloc(ng + 1, sizeof *idx);
    val = calloc(ng + 1, sizeof *val);
    buf = malloc(name_len);
    if (!idx || !val || !buf) {
        st = FP_ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < ng; i++)
        val[i] = g[i].r[0].lo;
    for (;;) {
        size_t n = 0;
        memcpy(buf, head, head_len);
        n += head_len;
        for (size_t i = 0; i < ng; i++) {
            n += (size_t)sprintf(buf + n, "%0*llu", g[i].r[idx[i]].width, val[i]);
            memcpy(buf + n, g[i].text, g[i].text_len);
            n += g[i].text_len;
        }
        buf[n] = 0;
        char *name = strdup(buf);
        if (!name) {
            st = FP_ENOMEM;
            goto cleanup;
        }
        hl->name[hl->n++] = name; /* room reserved by grow() above */
        size_t i = ng;
        while (i > 0) {
            i--;
            if (val[i] < g[i].r[idx[i]].hi) {
                val[i]++;
                break;
            }
            if (idx[i] + 1 < g[i].nr) {
                idx[i]++;
                val[i] = g[i].r[idx[i]].lo;
                break;
            }
            idx[i] = 0;
            val[i] = g[i].r[0].lo;
            if (i == 0)
                goto cleanup; /* wrapped around: done */
        }
        if (ng == 0)
            break;
    }

cleanup:
    for (size_t i = 0; i < ng; i++)
        free(g[i].r);
    free(g);
    free(idx);
    free(val);
    free(buf);
    return st;
}

fp_status fp_hostlist_append(fp_hostlist *hl, const char *expr, char *err, size_t errlen)
{
    parser ps = {.expr = expr ? expr : "", .err = err, .errlen = errlen};
    size_t old = hl->n;
    fp_status st = FP_OK;
    const char *s = ps.expr;
    if (err && errlen)
        err[0] = 0;
    while (*s) {
        while (*s && is_sep(*s))
            s++;
        if (!*s)
            break;
        /* a token ends at a separator outside brackets */
        const char *tok = s;
        int depth = 0;
        const char *open = NULL;
        while (*s && (depth > 0 || !is_sep(*s))) {
            if (*s == '[') {
                if (depth > 0) {
                    st = perr(&ps, s, "brackets cannot nest");
                    goto cleanup;
                }
                depth = 1;
                open = s;
            } else if (*s == ']') {
                if (depth == 0) {
                    st = perr(&ps, s, "']' without a matching '['");
                    goto cleanup;
                }
                depth = 0;
            } else if (depth > 0 && isspace((unsigned char)*s)) {
                st = perr(&ps, s, "whitespace inside brackets");
                goto cleanup;
            }
            s++;
        }
        if (depth > 0) {
            st = perr(&ps, open, "'[' is never closed");
            goto cleanup;
        }
        st = expand_token(&ps, hl, tok, s);
        if (st != FP_OK)
            goto cleanup;
    }
cleanup:
    if (st != FP_OK) {
        if (st == FP_ENOMEM && err && errlen)
            snprintf(err, errlen, "out of memory");
        for (size_t i = old; i < hl->n; i++)
            free(hl->name[i]);
        hl->n = old;
    }
    return st;
}

fp_status fp_hostlist_append_arg(fp_hostlist *hl, const char *arg, char *err, size_t errlen)
{
    if (arg[0] != '@')
        return fp_hostlist_append(hl, arg, err, errlen);
    const char *path = arg + 1;
    bool std_in = strcmp(path, "-") == 0;
    FILE *f = std_in ? stdin : fopen(path, "r");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read it (%s)", path, strerror(errno));
        return FP_EINPUT;
    }
    fp_status st = FP_OK;
    char *line = NULL, msg[200];
    size_t cap = 0;
    for (long no = 1; st == FP_OK && getline(&line, &cap, f) >= 0; no++) {
        line[strcspn(line, "#")] = 0;
        st = fp_hostlist_append(hl, line, msg, sizeof msg);
        if (st != FP_OK && err && errlen)
            snprintf(err, errlen, "%s:%ld: %s", std_in ? "stdin" : path, no, msg);
    }
    if (st == FP_OK && ferror(f)) {
        if (err && errlen)
            snprintf(err, errlen, "%s: read error (%s)", std_in ? "stdin" : path, strerror(errno));
        st = FP_EINPUT;
    }
    free(line);
    if (!std_in)
        fclose(f);
    return st;
}

fp_status fp_hostlist_parse(const char *expr, fp_hostlist **out, char *err, size_t errlen)
{
    *out = NULL;
    fp_hostlist *hl = fp_hostlist_new();
    if (!hl) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return FP_ENOMEM;
    }
    fp_status st = fp_hostlist_append(hl, expr, err, errlen);
    if (st != FP_OK) {
        fp_hostlist_free(hl);
        return st;
    }
    *out = hl;
    return FP_OK;
}

/* ---- names split as prefix, number, suffix ------------------------------------------ */

/* A host name seen as prefix + number (its last run of digits) + suffix. */
typedef struct split {
    const char *name;
    size_t pre_len;          /* bytes of prefix */
    size_t num_len;          /* digits of the number; 0: no number */
    unsigned long long num;
    const char *suf;         /* suffix, NUL-terminated (end of name) */
} split;

static split split_name(const char *name)
{
    split sp = {.name = name};
    size_t len = strlen(name);
    size_t e = len;
    while (e > 0 && !isdigit((unsigned char)name[e - 1]))
        e--;
    size_t b = e;
    while (b > 0 && isdigit((unsigned char)name[b - 1]))
        b--;
    if (e == b || e - b > MAX_DIGITS) { /* no usable number: a literal */
        sp.pre_len = len;
        sp.suf = name + len;
        return sp;
    }
    sp.pre_len = b;
    sp.num_len = e - b;
    for (size_t i = b; i < e; i++)
        sp.num = sp.num * 10 + (unsigned long long)(name[i] - '0');
    sp.suf = name + e;
    return sp;
}

static bool same_frame(const split *a, const split *b)
{
    return a->num_len && b->num_len && a->pre_len == b->pre_len &&
           memcmp(a->name, b->name, a->pre_len) == 0 && strcmp(a->suf, b->suf) == 0;
}

static int natural_cmp(const void *pa, const void *pb)
{
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    split x = split_name(a), y = split_name(b);
    size_t m = x.pre_len < y.pre_len ? x.pre_len : y.pre_len;
    int c = memcmp(a, b, m);
    if (c)
        return c;
    if (x.pre_len != y.pre_len)
        return x.pre_len < y.pre_len ? -1 : 1;
    if (!x.num_len || !y.num_len) /* both are literals here or one is */
        return x.num_len == y.num_len ? strcmp(x.suf, y.suf) : (x.num_len ? 1 : -1);
    if (x.num != y.num)
        return x.num < y.num ? -1 : 1;
    if (x.num_len != y.num_len)
        return x.num_len < y.num_len ? -1 : 1;
    return strcmp(x.suf, y.suf);
}

void fp_hostlist_sort_unique(fp_hostlist *hl)
{
    if (!hl || hl->n < 2)
        return;
    qsort(hl->name, hl->n, sizeof *hl->name, natural_cmp);
    size_t w = 1;
    for (size_t i = 1; i < hl->n; i++) {
        if (strcmp(hl->name[i], hl->name[w - 1]) == 0)
            free(hl->name[i]);
        else
            hl->name[w++] = hl->name[i];
    }
    hl->n = w;
}

bool fp_hostlist_contains_sorted(const fp_hostlist *hl, const char *host)
{
    if (!hl || !hl->n)
        return false;
    return bsearch(&host, hl->name, hl->n, sizeof *hl->name, natural_cmp) != NULL;
}

/* ---- compression ---------------------------------------------------------------- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, len);
    b->n += len;
    b->s[b->n] = 0;
}

static void sb_num(sbuf *b, unsigned long long v, int width)
{
    char t[32];
    int n = snprintf(t, sizeof t, "%0*llu", width, v);
    sb_add(b, t, (size_t)n);
}

/* Write one group: prefix, then either the single number or "[ranges]", then
 * the suffix. */
static void emit_group(sbuf *b, const split *frame, const range *r, size_t nr)
{
    if (b->n)
        sb_add(b, ",", 1);
    sb_add(b, frame->name, frame->pre_len);
    if (nr == 1 && r[0].lo == r[0].hi) {
        sb_num(b, r[0].lo, r[0].width);
    } else {
        sb_add(b, "[", 1);
        for (size_t i = 0; i < nr; i++) {
            if (i)
                sb_add(b, ",", 1);
            sb_num(b, r[i].lo, r[i].width);
            if (r[i].hi != r[i].lo) {
                sb_add(b, "-", 1);
                sb_num(b, r[i].hi, r[i].width);
            }
        }
        sb_add(b, "]", 1);
    }
    sb_add(b, frame->suf, strlen(frame->suf));
}

char *fp_hostlist_compress(const char *const *names, size_t n)
{
    sbuf b = {0};
    range *r = NULL;
    size_t nr = 0, cap = 0;
    split frame = {0};
    sb_add(&b, "", 0);
    for (size_t i = 0; i < n && !b.oom; i++) {
        split sp = split_name(names[i]);
        if (nr && same_frame(&frame, &sp)) {
            range *last = &r[nr - 1];
            /* extends the last range when the next number prints the same */
            size_t natural = digits_of(sp.num);
            size_t want = natural > (size_t)last->width ? natural : (size_t)last->width;
            if (sp.num == last->hi + 1 && sp.num_len == want) {
                last->hi = sp.num;
                continue;
            }
        } else {
            if (nr)
                emit_group(&b, &frame, r, nr);
            nr = 0;
            if (!sp.num_len) { /* a literal name */
                if (b.n)
                    sb_add(&b, ",", 1);
                sb_add(&b, names[i], strlen(names[i]));
                continue;
            }
            frame = sp;
        }
        if (nr == cap) {
            cap = cap ? cap * 2 : 8;
            range *p = realloc(r, cap * sizeof *p);
            if (!p) {
                b.oom = true;
                break;
            }
            r = p;
        }
        r[nr++] = (range){sp.num, sp.num, (int)sp.num_len};
    }
    if (nr && !b.oom)
        emit_group(&b, &frame, r, nr);
    free(r);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

char *fp_hostlist_format(const fp_hostlist *hl)
{
    return fp_hostlist_compress((const char *const *)(hl ? hl->name : NULL), hl ? hl->n : 0);
}
