/* The streamed JSON writer (reports/json_stream.c) against jansson: one
 * document, built both ways, must give the same bytes as json_dumpf with
 * fp_json_write's flags. It holds the strings and reals that format
 * differently: escapes, control characters, UTF-8, exponents, integral
 * reals, non-finite values (null), empty and nested containers. */
#include <float.h>
#include <jansson.h>
#include <math.h>
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

int main(void)
{
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
