/* The streamed JSON writer (reports/json_stream.c) against jansson: one
 * document, built both ways, must give the same bytes as json_dumpf with
 * fp_json_write's flags. It holds the strings and reals that format
 * differently: escapes, control characters, UTF-8, exponents, integral
 * reals, non-finite values (null), empty and nested containers. */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json_stream.h"

static const char *const strings[] = {
    "", "plain", "quote \" and backslash \\", "tab\tnew\nline\rcr\bbs\fff",
    "ctl \x01\x1f end", "slash / stays", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
    "n[001-004,007]", "link:n2~n6",
};

static const double reals[] = {0,      -0.0,   1,       -2.5,     0.1,    1e20,  1e-5,
                                1e100,  5e-324, DBL_MAX, 123.456, 1e16,   -1e-300,
                                3.0e15, 42e21,  NAN,     INFINITY, 7e-7, 0.30000000000000004};

/* The document through jansson. */
static char *by_tree(void)
{
    json_t *root = json_object(), *strs = json_array(), *nums = json_array();
    json_object_set_new(root, "run", json_string("r1"));
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        json_array_append_new(strs, json_string(strings[i]));
    json_object_set_new(root, "strings", strs);
    for (size_t i = 0; i < sizeof reals / sizeof *reals; i++)
        json_array_append_new(nums, isfinite(reals[i]) ? json_real(reals[i]) : json_null());
    json_object_set_new(root, "reals", nums);
    json_object_set_new(root, "empty_array", json_array());
    json_object_set_new(root, "empty_object", json_object());
    json_t *deep = json_object(), *list = json_array();
    json_array_append_new(list, json_pack("{s:i, s:b, s:b}", "n", -7, "t", 1, "f", 0));
    json_array_append_new(list, json_array());
    json_array_append_new(list, json_integer(1234567890123LL));
    json_object_set_new(deep, "list", list);
    json_object_set_new(deep, "key \"quoted\"", json_string("v"));
    json_object_set_new(root, "deep", deep);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    return text;
}

/* The same document, streamed. */
static char *by_stream(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fp_json_stream w;
    fp_json_stream_init(&w, f);
    fp_json_stream_open(&w, NULL, '{');
    fp_json_stream_str(&w, "run", "r1");
    fp_json_stream_open(&w, "strings", '[');
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        fp_json_stream_str(&w, NULL, strings[i]);
    fp_json_stream_close(&w, ']');
    fp_json_stream_open(&w, "reals", '[');
    for (size_t i = 0; i < sizeof reals / sizeof *reals; i++)
        fp_json_stream_real(&w, NULL, reals[i]);
    fp_json_stream_close(&w, ']');
    fp_json_stream_open(&w, "empty_array", '[');
    fp_json_stream_close(&w, ']');
    fp_json_stream_open(&w, "empty_object", '{');
    fp_json_stream_close(&w, '}');
    fp_json_stream_open(&w, "deep", '{');
    fp_json_stream_open(&w, "list", '[');
    fp_json_stream_open(&w, NULL, '{');
    fp_json_stream_int(&w, "n", -7);
    fp_json_stream_bool(&w, "t", true);
    fp_json_stream_bool(&w, "f", false);
    fp_json_stream_close(&w, '}');
    fp_json_stream_open(&w, NULL, '[');
    fp_json_stream_close(&w, ']');
    fp_json_stream_int(&w, NULL, 1234567890123LL);
    fp_json_stream_close(&w, ']');
    fp_json_stream_str(&w, "key \"quoted\"", "v");
    fp_json_stream_close(&w, '}');
    fp_json_stream_close(&w, '}');
    fclose(f);
    return text;
}

/* d written alone, by jansson and by the stream: the same text (printf's
 * exact %.17g against the stream's own digits). */
static bool same_real(double d)
{
    json_t *j = json_real(d);
    char *want = json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    json_decref(j);
    char *got = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&got, &len);
    fp_json_stream w;
    fp_json_stream_init(&w, f);
    fp_json_stream_real(&w, NULL, d);
    fclose(f);
    bool same = want && got && strcmp(want, got) == 0;
    if (!same)
        fprintf(stderr, "%a: jansson %s, stream %s\n", d, want ? want : "?", got ? got : "?");
    free(want);
    free(got);
    return same;
}

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Reals as detect writes them (values, z, deviations: 1e-6 to 1e7), any
 * bit pattern, every power of ten and its neighbours, and ties at the 18th
 * digit (m * 2^-25: 18 significant digits ending in 5). */
static size_t real_mismatches(void)
{
    size_t bad = 0;
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 300000; i++) {
        double u = (double)(next_random(&x) >> 11) / 9007199254740992.0;
        double d = exp(log(1e-6) + u * (log(1e7) - log(1e-6)));
        bad += !same_real(i % 2 ? d : -d);
        uint64_t bits = next_random(&x);
        memcpy(&d, &bits, sizeof d);
        bad += isfinite(d) && !same_real(d);
    }
    for (int e = -30; e <= 30; e++) {
        double p = pow(10, e);
        bad += !same_real(p) + !same_real(nextafter(p, 0)) + !same_real(nextafter(p, INFINITY));
    }
    for (int m = 1; m < 4000; m += 2)
        bad += !same_real(ldexp(m, -25)) + !same_real(ldexp(m, -30)) + !same_real(m * 1e10);
    return bad;
}

int main(void)
{
    CHECK(real_mismatches() == 0);
    char *tree = by_tree(), *stream = by_stream();
    CHECK(tree && stream);
    if (tree && stream && strcmp(tree, stream) != 0) {
        size_t i = 0;
        while (tree[i] && tree[i] == stream[i])
            i++;
        fprintf(stderr, "differ at byte %zu:\n--- jansson\n%.80s\n--- stream\n%.80s\n", i,
                tree + (i > 20 ? i - 20 : 0), stream + (i > 20 ? i - 20 : 0));
        CHECK(false);
    }
    /* a byte that is not UTF-8 (jansson refuses the string): U+FFFD, the
     * rest kept */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fp_json_stream w;
    fp_json_stream_init(&w, f);
    fp_json_stream_str(&w, NULL, "a\xff" "b\xc3");
    fclose(f);
    CHECK(strcmp(text, "\"a\\uFFFDb\\uFFFD\"") == 0);
    free(text);
    free(tree);
    free(stream);
    CHECK_DONE();
}
