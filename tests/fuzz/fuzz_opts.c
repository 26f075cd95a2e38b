/* Fuzz target: option values and the option parser (core/opts.c). The input
 * is split at newlines into argv for a table holding every option type; the
 * whole input is also handed to each value parser.
 * Properties: sizes and durations that parse are finite and not negative;
 * a rejected command line has a message naming the bad token (or is --help). */
#include <math.h>
#include <stddef.h>

#include "fleetprint/opts.h"

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct cfg {
    bool flag;
    int n;
    double x;
    const char *s;
    uint64_t bytes;
    double secs;
    fp_strlist list;
    const char *pos1, *pos2;
} cfg;

static const fp_opt table[] = {
    {"flag", 'f', FP_OPT_FLAG, offsetof(cfg, flag), NULL, "a flag"},
    {"n", 'n', FP_OPT_INT, offsetof(cfg, n), "3", "an int"},
    {"x", 0, FP_OPT_DOUBLE, offsetof(cfg, x), "0.5", "a number"},
    {"s", 's', FP_OPT_STRING, offsetof(cfg, s), NULL, "a string"},
    {"bytes", 'b', FP_OPT_BYTES, offsetof(cfg, bytes), "64M", "a size"},
    {"secs", 't', FP_OPT_SECONDS, offsetof(cfg, secs), "30s", "a duration"},
    {"list", 'l', FP_OPT_LIST, offsetof(cfg, list), NULL, "repeatable"},
    {"first", 0, FP_OPT_POSITIONAL, offsetof(cfg, pos1), NULL, "first word"},
    {"second", 0, FP_OPT_POSITIONAL, offsetof(cfg, pos2), NULL, "second word"},
    {NULL, 0, 0, 0, NULL, NULL},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2048)
        return 0;
    char *text = fz_cstr(data, size);
    if (!text)
        return 0;

    uint64_t b;
    double d;
    int i;
    if (fp_parse_bytes(text, &b))
        FZ_ASSERT(b <= 9000000000000000000ull);
    if (fp_parse_seconds(text, &d)) {
        if (!isfinite(d) || d < 0)
            fprintf(stderr, "'%s' parses as %g seconds\n", text, d);
        FZ_ASSERT(isfinite(d) && d >= 0);
    }
    if (fp_parse_double(text, &d))
        FZ_ASSERT(isfinite(d));
    (void)fp_parse_int(text, &i);

    char *argv[64];
    int argc = 0;
    for (char *p = text; argc < 64;) {
        argv[argc++] = p;
        char *q = strchr(p, '\n');
        if (!q)
            break;
        *q = 0;
        p = q + 1;
    }
    cfg c;
    memset(&c, 0, sizeof c);
    char err[256];
    fp_status st = fp_opts_parse(table, argc, argv, &c, err, sizeof err);
    if (st == FP_OK) {
        FZ_ASSERT(isfinite(c.x) && isfinite(c.secs) && c.secs >= 0);
        FZ_ASSERT(c.list.n >= 0 && c.list.n <= FP_LIST_MAX);
    } else {
        FZ_ASSERT(st == FP_EUSAGE);
        if (err[0] == 0) { /* only --help leaves err empty */
            int help = 0;
            for (int k = 0; k < argc; k++)
                help |= strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0;
            FZ_ASSERT(help);
        }
    }
    free(text);
    return 0;
}
