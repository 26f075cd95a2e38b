#include "fleetprint/inject.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetprint/config.h"
#include "fleetprint/log.h"
#include "fleetprint/timer.h"

static const char *const kind_names[FP_INJ_KIND_COUNT] = {"slow",    "link",    "hang",
                                                          "crash",   "bitflip", "corrupt",
                                                          "config"};

/* Which keys each kind takes, and which it needs. */
typedef struct {
    const char *allowed;
    const char *required;
} keyset;
static const keyset kind_keys[FP_INJ_KIND_COUNT] = {
    [FP_INJ_SLOW] = {"rank factor after until", "rank factor"},
    [FP_INJ_LINK] = {"ranks factor", "ranks factor"},
    [FP_INJ_HANG] = {"rank after", "rank after"},
    [FP_INJ_CRASH] = {"rank after", "rank"},
    [FP_INJ_BITFLIP] = {"rank at", "rank"},
    [FP_INJ_CORRUPT] = {"rank input", "rank"},
    [FP_INJ_CONFIG] = {"rank", "rank"}, /* and one configuration field: config_key() */
};

static bool word_in(const char *word, size_t len, const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && strncmp(p, word, len) == 0)
            return true;
        p += n + (p[n] == ' ');
    }
    return false;
}

static bool parse_rank(const char *v, int *out)
{
    return fp_parse_int(v, out) && *out >= 0;
}

/* "--inject 'SPEC': why" into err[len], the spec cut to 48 bytes so the reason
 * fits; never writes past len. Returns FP_EUSAGE. */
__attribute__((format(printf, 4, 5))) static fp_status spec_err(char *err, size_t len,
                                                                const char *spec,
                                                                const char *fmt, ...)
{
    if (!len)
        return FP_EUSAGE;
    int n = snprintf(err, len, "--inject '%.48s%s': ", spec, strlen(spec) > 48 ? "..." : "");
    if (n >= 0 && (size_t)n < len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return FP_EUSAGE;
}

#define SPEC_ERR(...) return spec_err(err, len, spec, __VA_ARGS__)

/* A config spec's FIELD=VALUE into in: a field of the record (config.h), once,
 * with a value that describes back into the same spec. */
static fp_status config_key(const char *spec, fp_injection *in, const char *key, const char *val,
                            char *err, size_t len)
{
    if (!fp_cfg_field_known(key))
        SPEC_ERR("unknown key '%s' for config (takes rank= and one configuration field: %s)",
                 key, fp_cfg_field_list());
    if (in->field[0])
        SPEC_ERR("config sets one field, not '%s' and '%s'", in->field, key);
    if (strlen(key) >= sizeof in->field || strlen(val) >= sizeof in->value || !val[0] ||
        strpbrk(val, ";="))
        SPEC_ERR("bad %s '%s' (1 to %zu characters, no ';' or '=')", key, val,
                 sizeof in->value - 1);
    snprintf(in->field, sizeof in->field, "%s", key);
    snprintf(in->value, sizeof in->value, "%s", val);
    return FP_OK;
}

static fp_status parse_one(const char *spec, fp_injection *out, char *err, size_t len)
{
    const char *colon = strchr(spec, ':');
    size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
    int kind = -1;
    for (int k = 0; k < FP_INJ_KIND_COUNT; k++)
        if (strlen(kind_names[k]) == klen && strncmp(spec, kind_names[k], klen) == 0)
            kind = k;
    if (kind < 0)
        SPEC_ERR("unknown kind '%.*s' (slow, link, hang, crash, bitflip, corrupt, config)",
                 (int)klen, spec);
    fp_injection in = {.kind = (fp_inject_kind)kind, .rank = -1, .rank_b = -1, .factor = 1};
    char seen[64] = "";
    char buf[256];
    /* a longer spec would be cut silently below: refuse it */
    if (colon && strlen(colon + 1) >= sizeof buf)
        SPEC_ERR("longer than %zu bytes", sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", colon ? colon + 1 : "");
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            SPEC_ERR("expected key=value, got '%s'", kv);
        *eq = 0;
        const char *key = kv, *val = eq + 1;
        if (kind == FP_INJ_CONFIG && strcmp(key, "rank") != 0) {
            fp_status cst = config_key(spec, &in, key, val, err, len);
            if (cst != FP_OK)
                return cst;
            continue;
        }
        if (!word_in(key, strlen(key), kind_keys[kind].allowed))
            SPEC_ERR("unknown key '%s' for %s (takes: %s)", key, kind_names[kind],
                     kind_keys[kind].allowed);
        /* a repeated key would silently override the first (and overflow seen) */
        if (word_in(key, strlen(key), seen))
            SPEC_ERR("%s= given twice", key);
        bool ok;
        if (strcmp(key, "rank") == 0) {
            ok = parse_rank(val, &in.rank);
        } else if (strcmp(key, "ranks") == 0) {
            char a[32];
            const char *dash = strchr(val, '-');
            ok = dash && (size_t)(dash - val) < sizeof a;
            if (ok) {
                snprintf(a, sizeof a, "%.*s", (int)(dash - val), val);
                ok = parse_rank(a, &in.rank) && parse_rank(dash + 1, &in.rank_b) &&
                     in.rank != in.rank_b;
            }
        } else if (strcmp(key, "input") == 0) {
            int v = -1;
            ok = fp_parse_int(val, &v) && (v == 0 || v == 1);
            in.input = v == 1;
        } else if (strcmp(key, "factor") == 0) {
            ok = fp_parse_double(val, &in.factor) && in.factor >= 1 && in.factor <= 1000;
        } else if (strcmp(key, "until") == 0) {
            ok = fp_parse_seconds(val, &in.until) && in.until > 0;
        } else {
            ok = fp_parse_seconds(val, &in.after);
        }
        if (!ok)
            SPEC_ERR("bad %s '%s'", key, val);
        strncat(seen, key, sizeof seen - strlen(seen) - 2);
        strcat(seen, " ");
    }
    const char *req = kind_keys[kind].required;
    for (const char *p = req; *p;) {
        size_t n = strcspn(p, " ");
        if (!word_in(p, n, seen))
            SPEC_ERR("missing %.*s=", (int)n, p);
        p += n + (p[n] == ' ');
    }
    if (kind == FP_INJ_CONFIG && !in.field[0])
        SPEC_ERR("missing the field to set (config:rank=R,FIELD=VALUE)");
    if (in.until > 0 && in.until <= in.after)
        SPEC_ERR("until=%gs is not later than after=%gs", in.until, in.after);
    *out = in;
    return FP_OK;
}

fp_status fp_inject_parse(const fp_strlist *specs, fp_inject_set *out, char *err, size_t len)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < specs->n; i++) {
        fp_status st = parse_one(specs->item[i], &out->item[out->n], err, len);
        if (st != FP_OK)
            return st;
        out->n++;
    }
    return FP_OK;
}

fp_status fp_inject_validate(const fp_inject_set *s, int nranks, char *err, size_t len)
{
    for (int i = 0; i < s->n; i++) {
        const fp_injection *in = &s->item[i];
        int bad = in->rank >= nranks ? in->rank : in->rank_b >= nranks ? in->rank_b : -1;
        if (bad >= 0) {
            snprintf(err, len, "--inject %s: rank %d out of range (%d ranks)",
                     kind_names[in->kind], bad, nranks);
            return FP_EUSAGE;
        }
    }
    return FP_OK;
}

double fp_inject_slow(const fp_inject_set *s, int rank, double now)
{
    double f = 1;
    for (int i = 0; i < s->n; i++)
        if (s->item[i].kind == FP_INJ_SLOW && s->item[i].rank == rank && now >= s->item[i].after &&
            (s->item[i].until <= 0 || now < s->item[i].until))
            f *= s->item[i].factor;
    return f;
}

double fp_inject_link(const fp_inject_set *s, int a, int b)
{
    double f = 1;
    for (int i = 0; i < s->n; i++) {
        const fp_injection *in = &s->item[i];
        if (in->kind == FP_INJ_LINK &&
            ((in->rank == a && in->rank_b == b) || (in->rank == b && in->rank_b == a)))
            f *= in->factor;
    }
    return f;
}

bool fp_inject_bitflip(const fp_inject_set *s, int rank, double now)
{
    for (int i = 0; i < s->n; i++)
        if (s->item[i].kind == FP_INJ_BITFLIP && s->item[i].rank == rank && now >= s->item[i].after)
            return true;
    return false;
}

bool fp_inject_corrupt(const fp_inject_set *s, int rank)
{
    for (int i = 0; i < s->n; i++)
        if (s->item[i].kind == FP_INJ_CORRUPT && s->item[i].rank == rank && !s->item[i].input)
            return true;
    return false;
}

bool fp_inject_corrupt_input(const fp_inject_set *s, int rank)
{
    for (int i = 0; i < s->n; i++)
        if (s->item[i].kind == FP_INJ_CORRUPT && s->item[i].rank == rank && s->item[i].input)
            return true;
    return false;
}

bool fp_inject_has(const fp_inject_set *s, fp_inject_kind kind)
{
    for (int i = 0; i < s->n; i++)
        if (s->item[i].kind == kind)
            return true;
    return false;
}

void fp_inject_point(const fp_inject_set *s, int rank, double now)
{
    for (int i = 0; i < s->n; i++) {
        const fp_injection *in = &s->item[i];
        if (in->rank != rank || now < in->after)
            continue;
        if (in->kind == FP_INJ_CRASH) {
            fp_error("injected crash of rank %d now (%.1f s)", rank, now);
            raise(SIGABRT);
        }
        if (in->kind == FP_INJ_HANG) {
            fp_error("injected hang of rank %d from now (%.1f s): it stops responding", rank, now);
            for (;;)
                fp_sleep(1.0);
        }
    }
}

/* The shortest %g of x that reads back as x: a described spec must parse
 * back to the same times (until= after after=, however close). */
static const char *exact(double x, char *buf, size_t len)
{
    for (int p = 6; p <= 17; p++) {
        snprintf(buf, len, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

void fp_inject_describe(const fp_inject_set *s, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n && n + 1 < len; i++) {
        const fp_injection *in = &s->item[i];
        int m = snprintf(buf + n, len - n, "%s%s:", i ? ";" : "", kind_names[in->kind]);
        n += m > 0 ? (size_t)m : 0;
        if (n >= len)
            break;
        if (in->kind == FP_INJ_LINK)
            m = snprintf(buf + n, len - n, "ranks=%d-%d", in->rank, in->rank_b);
        else if (in->kind == FP_INJ_CONFIG)
            m = snprintf(buf + n, len - n, "rank=%d,%s=%s", in->rank, in->field, in->value);
        else
            m = snprintf(buf + n, len - n, "rank=%d", in->rank);
        n += m > 0 ? (size_t)m : 0;
        /* keys the kind requires are written even at their defaults (factor=1,
         * after=0s), so the description parses back as a spec */
        const char *req = kind_keys[in->kind].required;
        if (n < len && (in->factor != 1 || word_in("factor", 6, req)))
            n += (size_t)snprintf(buf + n, len - n, ",factor=%g", in->factor);
        if (n < len && in->input)
            n += (size_t)snprintf(buf + n, len - n, ",input=1");
        /* the key the spec was written with: bitflip takes at=, the rest after= */
        char t[32];
        if (n < len && (in->after > 0 || word_in("after", 5, req)))
            n += (size_t)snprintf(buf + n, len - n, ",%s=%ss",
                                  in->kind == FP_INJ_BITFLIP ? "at" : "after",
                                  exact(in->after, t, sizeof t));
        if (n < len && in->until > 0)
            n += (size_t)snprintf(buf + n, len - n, ",until=%ss", exact(in->until, t, sizeof t));
    }
}
