/* Option parsing, value parsers, entity text forms, status table, selection. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fleetprint/inject.h"
#include "fleetprint/opts.h"
#include "fleetprint/sample.h"
#include "fleetprint/stats.h"

typedef struct {
    bool flag;
    int n;
    uint64_t bytes;
    double secs;
    const char *name;
    fp_strlist list;
    const char *pos;
} cfg_t;

static const fp_opt opts[] = {
    {"flag", 0, FP_OPT_FLAG, offsetof(cfg_t, flag), NULL, "a flag"},
    {"iters", 'n', FP_OPT_INT, offsetof(cfg_t, n), "20", "iterations"},
    {"max-bytes", 'e', FP_OPT_BYTES, offsetof(cfg_t, bytes), "1M", "bytes"},
    {"timeout", 0, FP_OPT_SECONDS, offsetof(cfg_t, secs), "30s", "deadline"},
    {"name", 0, FP_OPT_STRING, offsetof(cfg_t, name), NULL, "a name"},
    {"inject", 0, FP_OPT_LIST, offsetof(cfg_t, list), NULL, "repeatable"},
    {"WORD", 0, FP_OPT_POSITIONAL, offsetof(cfg_t, pos), NULL, "a word"},
    {0},
};

/* fp_select_k against qsort, on sizes either side of where it samples (600),
 * with many ties and none: the order statistic, and no value above it
 * before k nor below it after; and fp_sort_doubles against qsort. */
static void check_select(void)
{
    enum { MAXN = 5000 };
    double *v = malloc(MAXN * sizeof *v), *w = malloc(MAXN * sizeof *w);
    double *sorted = malloc(MAXN * sizeof *v);
    CHECK(v && w && sorted);
    unsigned seed = 7;
    const size_t sizes[] = {1, 2, 17, 25, 600, 601, 602, 1000, 4999};
    for (size_t t = 0; v && w && sorted && t < 3 * sizeof sizes / sizeof *sizes; t++) {
        size_t n = sizes[t / 3], ties = t % 3, k = (seed = seed * 1103515245u + 12345u) % n;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            v[i] = ties == 0 ? (double)(seed >> 8) : ties == 1 ? (double)(seed >> 8 & 7) : 1.5;
            w[i] = sorted[i] = v[i];
        }
        qsort(sorted, n, sizeof *sorted, fp_cmp_double);
        double x = fp_select_k(v, n, k);
        bool parted = true;
        for (size_t i = 0; i < n; i++)
            parted &= i < k ? v[i] <= x : v[i] >= x;
        CHECK(x == sorted[k] && v[k] == x && parted);
        fp_sort_doubles(w, n);
        CHECK(memcmp(w, sorted, n * sizeof *w) == 0);
    }
    free(v);
    free(w);
    free(sorted);
}

static fp_status parse(cfg_t *c, char *err, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    return fp_opts_parse(opts, argc, argv, c, err, 256);
}

int main(void)
{
    cfg_t c;
    char err[256];

    char *a1[] = {"--flag", "-n", "5", "--max-bytes=16K", "--inject", "x", "--inject", "y", "w"};
    CHECK(parse(&c, err, 9, a1) == FP_OK);
    CHECK(c.flag && c.n == 5 && c.bytes == 16384 && c.secs == 30 && c.list.n == 2);
    CHECK(strcmp(c.list.item[1], "y") == 0 && strcmp(c.pos, "w") == 0);

    char *a2[] = {"--bogus"};
    CHECK(parse(&c, err, 1, a2) == FP_EUSAGE && strstr(err, "'--bogus'"));
    char *a3[] = {"-n", "abc"};
    CHECK(parse(&c, err, 2, a3) == FP_EUSAGE && strstr(err, "'abc'"));
    char *a4[] = {"--timeout"};
    CHECK(parse(&c, err, 1, a4) == FP_EUSAGE && strstr(err, "--timeout"));
    char *a5[] = {"--help"};
    CHECK(parse(&c, err, 1, a5) == FP_EUSAGE && err[0] == 0);
    char *a6[] = {"w", "extra"};
    CHECK(parse(&c, err, 2, a6) == FP_EUSAGE && strstr(err, "'extra'"));

    uint64_t b;
    double s;
    CHECK(fp_parse_bytes("4G", &b) && b == 4ull << 30);
    CHECK(fp_parse_bytes("0", &b) && b == 0);
    CHECK(!fp_parse_bytes("-1", &b) && !fp_parse_bytes("1.5", &b) && !fp_parse_bytes("3X", &b));
    CHECK(fp_parse_seconds("250ms", &s) && s == 0.25);
    CHECK(fp_parse_seconds("2m", &s) && s == 120);
    CHECK(!fp_parse_seconds("soon", &s));
    /* found by tests/fuzz/fuzz_opts: a finite number times its unit overflowed
     * to an infinite duration */
    CHECK(!fp_parse_seconds("1e306h", &s) && !fp_parse_seconds("1e307m", &s));
    CHECK(fp_parse_seconds("1e300h", &s) && s == 1e300 * 3600);

    const char *forms[] = {"node:n0", "gpu:gpu-node-01/3", "link:n2~n5", "link:n0/0~n0/1",
                           "rank:5@n1", "group:world"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        fp_entity e;
        char buf[160];
        CHECK(fp_entity_parse(forms[i], &e));
        CHECK(strcmp(fp_entity_format(&e, buf, sizeof buf), forms[i]) == 0);
    }
    /* values in engineering units (reports and reason notes) */
    const struct {
        double x;
        const char *unit, *text;
    } values[] = {{2.225e5, "us", "222.5 ms"}, {0.0123, "s", "12.3 ms"}, {1006e3, "GFLOP/s", "1.006 PFLOP/s"},
                  {0, "us", "0"}, {812.5, "GB/s", "812.5 GB/s"}, {3, "count", "3 count"}, {2, "", "2"}};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char buf[32];
        CHECK(strcmp(fp_format_value(values[i].x, values[i].unit, buf, sizeof buf), values[i].text) == 0);
    }

    const char *bad[] = {"n0", "gpu:n0", "gpu:n0/x", "link:n0", "rank:x@n0", "rank:1", "pod:x", "node:"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fp_entity e;
        CHECK(!fp_entity_parse(bad[i], &e));
    }

    /* found by tests/fuzz/fuzz_inject: the description of a bitflip said after=,
     * which bitflip rejects, a slow with factor=1 lost its required factor= and a hang
     * with after=0 its required after=,
     * so the recorded specs did not parse back */
    {
        fp_strlist in = {.n = 4, .item = {"bitflip:rank=3,at=1m", "crash:rank=1,after=2s",
                                          "slow:rank=0,factor=1", "hang:rank=2,after=0ms"}};
        fp_inject_set set, back;
        char desc[256], *semi;
        CHECK(fp_inject_parse(&in, &set, err, sizeof err) == FP_OK);
        fp_inject_describe(&set, desc, sizeof desc);
        CHECK(strcmp(desc, "bitflip:rank=3,at=60s;crash:rank=1,after=2s;slow:rank=0,factor=1;"
                           "hang:rank=2,after=0s") == 0);
        fp_strlist again = {.n = 0};
        for (char *p = desc; p && again.n < 4; p = semi ? semi + 1 : NULL) {
            semi = strchr(p, ';');
            if (semi)
                *semi = 0;
            again.item[again.n++] = p;
        }
        CHECK(fp_inject_parse(&again, &back, err, sizeof err) == FP_OK);
        CHECK(back.n == 4 && back.item[0].after == 60 && back.item[1].after == 2);
        CHECK(back.item[3].kind == FP_INJ_HANG && back.item[3].after == 0);
        CHECK(back.item[2].kind == FP_INJ_SLOW && back.item[2].factor == 1);
    }

    /* corrupt's input=1 (a contribution, not a result) parses, is told apart
     * and describes back; only 0 or 1 */
    {
        fp_strlist in = {.n = 2, .item = {"corrupt:rank=2,input=1", "corrupt:rank=4"}};
        fp_inject_set set;
        char desc[128];
        CHECK(fp_inject_parse(&in, &set, err, sizeof err) == FP_OK);
        CHECK(set.item[0].input && !set.item[1].input);
        CHECK(fp_inject_corrupt_input(&set, 2) && !fp_inject_corrupt(&set, 2));
        CHECK(fp_inject_corrupt(&set, 4) && !fp_inject_corrupt_input(&set, 4));
        fp_inject_describe(&set, desc, sizeof desc);
        CHECK(strcmp(desc, "corrupt:rank=2,input=1;corrupt:rank=4") == 0);
        fp_strlist bad = {.n = 1, .item = {"corrupt:rank=2,input=2"}};
        CHECK(fp_inject_parse(&bad, &set, err, sizeof err) == FP_EUSAGE &&
              strstr(err, "bad input '2'"));
    }

    /* found by tests/fuzz/fuzz_inject: a bad spec longer than the error buffer
     * wrote its message past the end (heap overflow); a repeated key overflowed
     * the seen-keys buffer; a spec over 255 bytes was cut silently */
    {
        char spec[400], small[40];
        memset(spec, 'x', sizeof spec - 1);
        spec[sizeof spec - 1] = 0;
        memcpy(spec, "slow:rank=1,factor=", 19);
        fp_strlist in = {.n = 1, .item = {spec}};
        fp_inject_set set;
        small[sizeof small - 1] = 'G'; /* guard: snprintf writes at most len bytes */
        CHECK(fp_inject_parse(&in, &set, small, sizeof small - 1) == FP_EUSAGE);
        CHECK(small[sizeof small - 1] == 'G' && strlen(small) == sizeof small - 2);
        CHECK(fp_inject_parse(&in, &set, err, sizeof err) == FP_EUSAGE &&
              strstr(err, "longer than 255 bytes"));
        in.item[0] = "crash:rank=1,rank=1,rank=1,rank=1,rank=1,rank=1,rank=1,rank=1,rank=1,"
                     "rank=1,rank=1,rank=1,rank=1,rank=1";
        CHECK(fp_inject_parse(&in, &set, err, sizeof err) == FP_EUSAGE &&
              strstr(err, "rank= given twice"));
        in.item[0] = "slow:rank=1,factor=2,factor=3";
        CHECK(fp_inject_parse(&in, &set, err, sizeof err) == FP_EUSAGE &&
              strstr(err, "factor= given twice"));
    }

    CHECK(fp_status_exit_code(FP_OK) == 0 && fp_status_exit_code(FP_EFAIL) == 1);
    CHECK(fp_status_exit_code(FP_EUSAGE) == 2 && fp_status_exit_code(FP_ENODEV) == 3);
    CHECK(fp_status_exit_code(FP_ETIMEOUT) == 4);
    CHECK(fp_status_worst(FP_EFAIL, FP_ETIMEOUT) == FP_ETIMEOUT);
    CHECK(fp_status_worst(FP_OK, FP_EFAIL) == FP_EFAIL);
    check_select();
    CHECK_DONE();
}
