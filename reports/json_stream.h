#ifndef FLEETPRINT_REPORTS_JSON_STREAM_H
#define FLEETPRINT_REPORTS_JSON_STREAM_H
/* JSON written as it is made, for documents too large to build as a tree
 * first (a 100,000-node run's verdicts: 17 MB, 0.7 s through a jansson tree).
 * The text is byte for byte what json_dumpf gives the same tree with
 * JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) (fp_json_write):
 * one space per level, "key": value, reals as %.17g with ".0" added where
 * they would read as integers, and a non-finite real as null. Each call takes
 * the member's key inside an object, NULL inside an array or at the top. */
#include <stdbool.h>
#include <stdio.h>

#define FP_JSON_STREAM_DEPTH 16

typedef struct fp_json_stream {
    FILE *f;
    int depth;
    bool empty[FP_JSON_STREAM_DEPTH]; /* no member yet at this depth */
} fp_json_stream;

void fp_json_stream_init(fp_json_stream *w, FILE *f);
/* Open an object ('{') or an array ('['); close it with the closing bracket. */
void fp_json_stream_open(fp_json_stream *w, const char *key, char bracket);
void fp_json_stream_close(fp_json_stream *w, char bracket);
void fp_json_stream_str(fp_json_stream *w, const char *key, const char *s);
/* s[0..n), which need not end in a NUL */
void fp_json_stream_strn(fp_json_stream *w, const char *key, const char *s, size_t n);
void fp_json_stream_real(fp_json_stream *w, const char *key, double d);
void fp_json_stream_int(fp_json_stream *w, const char *key, long long v);
void fp_json_stream_bool(fp_json_stream *w, const char *key, bool b);

#endif
