#include "fleetprint/opts.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool fp_parse_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bool fp_parse_int(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < INT_MIN || v > INT_MAX)
        return false;
    *out = (int)v;
    return true;
}

/* "<number><suffix>" with the suffix matched case-insensitively from a table. */
static bool parse_scaled(const char *text, const char *const *suffix, const double *scale,
                         double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || v < 0)
        return false;
    for (int i = 0; suffix[i]; i++) {
        if (strcasecmp(end, suffix[i]) == 0) {
            if (!isfinite(v * scale[i])) /* "1e306h": finite text, infinite value */
                return false;
            *out = v * scale[i];
            return true;
        }
    }
    return false;
}

bool fp_parse_bytes(const char *text, uint64_t *out)
{
    static const char *const suffix[] = {"", "B", "K", "KB", "KiB", "M", "MB", "MiB",
                                         "G", "GB", "GiB", "T", "TB", "TiB", NULL};
    static const double k = 1024.0;
    static const double scale[] = {1, 1, k, k, k, k * k, k * k, k * k,
                                   k * k * k, k * k * k, k * k * k, k * k * k * k,
                                   k * k * k * k, k * k * k * k};
    double v;
    if (!parse_scaled(text, suffix, scale, &v) || v > 9.0e18 || v != floor(v))
        return false;
    *out = (uint64_t)v;
    return true;
}

bool fp_parse_seconds(const char *text, double *out)
{
    static const char *const suffix[] = {"", "s", "ms", "us", "m", "min", "h", NULL};
    static const double scale[] = {1, 1, 1e-3, 1e-6, 60, 60, 3600};
    return parse_scaled(text, suffix, scale, out);
}

static bool set_value(const fp_opt *o, const char *text, void *cfg)
{
    char *field = (char *)cfg + o->offset;
    switch (o->type) {
    case FP_OPT_FLAG:
        *(bool *)field = true;
        return true;
    case FP_OPT_INT:
        return fp_parse_int(text, (int *)field);
    case FP_OPT_DOUBLE:
        return fp_parse_double(text, (double *)field);
    case FP_OPT_STRING:
    case FP_OPT_POSITIONAL:
        *(const char **)field = text;
        return true;
    case FP_OPT_BYTES:
        return fp_parse_bytes(text, (uint64_t *)field);
    case FP_OPT_SECONDS:
        return fp_parse_seconds(text, (double *)field);
    case FP_OPT_LIST: {
        fp_strlist *l = (fp_strlist *)field;
        if (l->n >= FP_LIST_MAX)
            return false;
        l->item[l->n++] = text;
        return true;
    }
    }
    return false;
}

static const fp_opt *find_long(const fp_opt *opts, const char *name, size_t len)
{
    for (const fp_opt *o = opts; o->name; o++)
        if (o->type != FP_OPT_POSITIONAL && strlen(o->name) == len &&
            strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static const fp_opt *find_short(const fp_opt *opts, char c)
{
    for (const fp_opt *o = opts; o->name; o++)
        if (o->short_name == c && o->type != FP_OPT_POSITIONAL)
            return o;
    return NULL;
}

const fp_opt *fp_opts_find(const fp_opt *opts, const char *arg)
{
    if (arg[0] != '-' || !arg[1])
        return NULL;
    if (arg[1] == '-') {
        const char *eq = strchr(arg + 2, '=');
        return find_long(opts, arg + 2, eq ? (size_t)(eq - arg - 2) : strlen(arg + 2));
    }
    return arg[2] == 0 ? find_short(opts, arg[1]) : NULL;
}

static const char *kind_word(fp_opt_type t)
{
    switch (t) {
    case FP_OPT_INT: return "integer";
    case FP_OPT_DOUBLE: return "number";
    case FP_OPT_BYTES: return "size (e.g. 64M)";
    case FP_OPT_SECONDS: return "duration (e.g. 30s, 5m)";
    case FP_OPT_LIST: return "value (at most 32 of them)";
    default: return "value";
    }
}

const char *fp_opts_placeholder(const fp_opt *o, char *buf, size_t len)
{
    /* a string names what it takes where its help says so, else it is
     * named after the option, as argparse does (--tag TAG) */
    static const char *const named[] = {"FILE", "DIR", "DATE", "ENTITY", NULL};
    switch (o->type) {
    case FP_OPT_FLAG: return "";
    case FP_OPT_INT: return "N";
    case FP_OPT_DOUBLE: return "X";
    case FP_OPT_BYTES: return "SIZE";
    case FP_OPT_SECONDS: return "TIME";
    case FP_OPT_LIST: return "A,B,..";
    default:
        for (int i = 0; named[i]; i++)
            if (o->help && strstr(o->help, named[i]))
                return named[i];
        size_t n = 0;
        for (const char *c = o->name; *c && n + 1 < len; c++)
            buf[n++] = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
        buf[n] = 0;
        return buf;
    }
}

fp_status fp_opts_parse(const fp_opt *opts, int argc, char **argv, void *cfg, char *err,
                        size_t errlen)
{
    err[0] = 0;
    for (const fp_opt *o = opts; o->name; o++)
        if (o->defval && !set_value(o, o->defval, cfg)) {
            snprintf(err, errlen, "internal: bad default '%s' for --%s", o->defval, o->name);
            return FP_EUSAGE;
        }
    const fp_opt *next_pos = opts;
    bool only_positional = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const fp_opt *o = NULL;
        const char *value = NULL;
        if (!only_positional && strcmp(a, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (!only_positional && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0))
            return FP_EUSAGE; /* err "" means: print usage */
        if (!only_positional && a[0] == '-' && a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            o = find_long(opts, a + 2, len);
            if (eq)
                value = eq + 1;
        } else if (!only_positional && a[0] == '-' && a[1] && !isdigit((unsigned char)a[1])) {
            o = a[2] == 0 ? find_short(opts, a[1]) : NULL;
        } else {
            while (next_pos->name && next_pos->type != FP_OPT_POSITIONAL)
                next_pos++;
            if (!next_pos->name) {
                snprintf(err, errlen, "unexpected argument '%s'", a);
                return FP_EUSAGE;
            }
            set_value(next_pos++, a, cfg);
            continue;
        }
        if (!o) {
            snprintf(err, errlen, "unknown option '%s'", a);
            return FP_EUSAGE;
        }
        if (o->type == FP_OPT_FLAG) {
            if (value) {
                snprintf(err, errlen, "option '--%s' takes no value", o->name);
                return FP_EUSAGE;
            }
        } else if (!value) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option '%s' needs a %s", a, kind_word(o->type));
                return FP_EUSAGE;
            }
            value = argv[++i];
        }
        if (!set_value(o, value, cfg)) {
            snprintf(err, errlen, "option '%s': bad %s '%s'", a, kind_word(o->type), value);
            return FP_EUSAGE;
        }
    }
    return FP_OK;
}

void fp_opts_usage(FILE *out, const char *cmd, const char *summary, const fp_opt *opts)
{
    fprintf(out, "usage: fleetprint %s", cmd);
    for (const fp_opt *o = opts; o->name; o++)
        if (o->type == FP_OPT_POSITIONAL)
            fprintf(out, " [%s]", o->name);
    fprintf(out, " [options]\n\n%s\n", summary);
    bool args = false;
    for (const fp_opt *o = opts; o->name; o++)
        if (o->type == FP_OPT_POSITIONAL && o->help) {
            fprintf(out, "%s  %-30s %s\n", args ? "" : "\narguments:\n", o->name, o->help);
            args = true;
        }
    fputs("\noptions:\n", out);
    for (const fp_opt *o = opts; o->name; o++) {
        if (o->type == FP_OPT_POSITIONAL)
            continue;
        char left[64];
        char meta[40];
        const char *arg = fp_opts_placeholder(o, meta, sizeof meta);
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, arg[0] ? " " : "",
                     arg);
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->name, arg[0] ? " " : "", arg);
        fprintf(out, "  %-30s %s", left, o->help);
        if (o->defval)
            fprintf(out, " (default %s)", o->defval);
        fputc('\n', out);
    }
    fprintf(out, "  %-30s %s\n", "-h, --help", "show this help");
}
