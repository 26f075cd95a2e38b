/* Streamed appends (issue 36): the fast path of sample lines reads what the
 * full parser reads and leaves every other line to it; a run of several
 * chunks of rows appended the way rank 0 appends comes back sample for
 * sample; an append that fails after its first chunks were written leaves
 * the store as it was, with no file of its own behind. Works in a fresh temp
 * dir. */
#include <dirent.h>
#include <ftw.h>
#include <hdf5.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/jsonl.h"
#include "fleetprint/store.h"

/* ---- the fast path of sample lines ---------------------------------------------------- */

static bool span_is(const char *s, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(s, want, n) == 0;
}

/* fp_jsonl_sample_fast takes the line and reads exactly what fp_jsonl_parse reads. */
static bool fast_agrees(const char *line)
{
    fp_jsonl_sample_view v;
    fp_jsonl_line l;
    char err[256], ent[160];
    if (!fp_jsonl_sample_fast(line, strlen(line), &v) ||
        fp_jsonl_parse(line, strlen(line), &l, err, sizeof err) != FP_OK ||
        l.kind != FP_JSONL_SAMPLE)
        return false;
    const fp_sample *s = &l.sample;
    fp_entity_format(&s->entity, ent, sizeof ent);
    bool same_value = isnan(s->value) ? isnan(v.value)
                                      : memcmp(&s->value, &v.value, sizeof v.value) == 0;
    return span_is(v.run, v.run_len, l.run_id) && span_is(v.suite, v.suite_len, s->suite) &&
           span_is(v.test, v.test_len, s->test) && span_is(v.metric, v.metric_len, s->metric) &&
           span_is(v.unit, v.unit_len, s->unit) && span_is(v.entity, v.entity_len, ent) &&
           v.better == s->better && v.size == s->size && v.iter == s->iter && same_value &&
           memcmp(&s->t_start, &v.t, sizeof v.t) == 0;
}

static void test_fast_path(void)
{
    /* lines as fp_jsonl_format_sample writes them: taken, read the same */
    const double values[] = {812.5, 0.1 + 0.2, -1e-300, 1e300, 5e-324, NAN, 0, -0.0, 123456789.0};
    const int iters[] = {0, -1, 7, 2147483647, -2147483647};
    const uint64_t sizes[] = {0, 1, 1u << 20, 9999999999999999999ull};
    fp_metric m = {"triad_bw", "GB/s", FP_BETTER_HIGHER}, ml = {"lat", "us", FP_BETTER_LOWER};
    fp_entity ents[] = {fp_entity_gpu("n0", 3), fp_entity_link("a", 0, "b", 1),
                        fp_entity_rank("n1", 5), fp_entity_node("n-9.x"),
                        fp_entity_group("world")};
    int taken = 0, tried = 0;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        for (size_t j = 0; j < sizeof iters / sizeof iters[0]; j++) {
            fp_sample s;
            char line[2048];
            size_t k = (i + j) % (sizeof ents / sizeof ents[0]);
            fp_sample_make(&s, "kernels", "membw", j % 2 ? &ml : &m, &ents[k],
                           sizes[(i * 3 + j) % 4], iters[j], values[i], values[(i + 1) % 9]);
            if (isnan(s.t_start))
                s.t_start = 1.25;
            fp_jsonl_format_sample(line, sizeof line, "20250101T000000Z-1a2b3c", &s);
            tried++;
            taken += fast_agrees(line);
        }
    CHECK(taken == tried);

    /* anything else is left to the full parser, valid or not */
    const char *other[] = {
        /* valid but not the fast shape: "kind" other than first, blanks, other key
         * order, an escape, a non-ASCII byte, a size of 20 digits */
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":18446744073709551615,"
        "\"iter\":0,\"value\":1,\"t\":0}",
        "{\"run\":\"r\",\"kind\":\"sample\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\": \"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"test\":\"t\",\"suite\":\"k\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\\\"\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"t\xc3\xa9\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        /* wrong: direction, a size with a fraction or a sign or a leading zero, an iter
         * past int32, a value out of range, a null t, an empty run id, a long suite,
         * text after the object */
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"sideways\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":1.5,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":-1,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":01,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,"
        "\"iter\":2147483648,\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1e999,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":null}",
        "{\"kind\":\"sample\",\"run\":\"\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"sixteen-bytes-xx\",\"test\":\"t\","
        "\"metric\":\"m\",\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,"
        "\"iter\":0,\"value\":1,\"t\":0}",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0}x",
        "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
        "\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\",\"size\":0,\"iter\":0,"
        "\"value\":1,\"t\":0",
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        fp_jsonl_sample_view v;
        bool fast = fp_jsonl_sample_fast(other[i], strlen(other[i]), &v);
        if (fast)
            fprintf(stderr, "line %zu taken by the fast path: %s\n", i, other[i]);
        CHECK(!fast);
    }
    /* the trailing newline (and a CR) is part of a line */
    const char *nl = "{\"kind\":\"sample\",\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\","
                     "\"metric\":\"m\",\"unit\":\"u\",\"better\":\"lower\",\"entity\":\"node:a\","
                     "\"size\":0,\"iter\":-3,\"value\":null,\"t\":2.5e-3}\r\n";
    CHECK(fast_agrees(nl));
    const char *bare = "{\"run\":\"r\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\","
                       "\"unit\":\"u\",\"better\":\"higher\",\"entity\":\"link:a/0~b/1\","
                       "\"size\":1048576,\"iter\":3,\"value\":100.12345678901234,"
                       "\"t\":0.0030000000000000001}\n";
    CHECK(fast_agrees(bare));
}

/* ---- the fast path of run lines -------------------------------------------------------- */

/* The context the full path (jansson) reads from line, into *out. */
static bool full_context(const char *line, fp_run *out)
{
    fp_jsonl_line l;
    char err[256];
    memset(out, 0, sizeof *out);
    if (fp_jsonl_parse(line, strlen(line), &l, err, sizeof err) != FP_OK ||
        l.kind != FP_JSONL_RUN)
        return false;
    fp_status st = fp_json_parse_context(l.context, out, err, sizeof err);
    json_decref(l.context);
    return st == FP_OK;
}

/* Both paths read line, into the same context. */
static bool run_agrees(const char *line)
{
    fp_run a, b;
    bool ok = fp_jsonl_run_fast(line, strlen(line), &a);
    if (!ok || !full_context(line, &b)) {
        if (ok)
            fp_run_free(&a);
        return false;
    }
    ok = a.nnodes == b.nnodes && a.nranks == b.nranks && a.nconfig == b.nconfig &&
         memcmp(a.id, b.id, sizeof a.id) == 0 && memcmp(a.command, b.command, sizeof a.command) == 0 &&
         memcmp(a.confirms, b.confirms, sizeof a.confirms) == 0 &&
         memcmp(&a.time, &b.time, sizeof a.time) == 0 &&
         memcmp(&a.duration, &b.duration, sizeof a.duration) == 0;
    ok = ok && (!a.nnodes || memcmp(a.nodes, b.nodes, (size_t)a.nnodes * sizeof *a.nodes) == 0);
    ok = ok && (!a.nranks || memcmp(a.ranks, b.ranks, (size_t)a.nranks * sizeof *a.ranks) == 0);
    ok = ok && (!a.nconfig || memcmp(a.config, b.config, a.nconfig * sizeof *a.config) == 0);
    fp_run_free(&a);
    fp_run_free(&b);
    return ok;
}

static void test_run_fast_path(void)
{
    fp_run run;
    fp_run_init(&run);
    snprintf(run.id, sizeof run.id, "r-\"1\"");
    snprintf(run.command, sizeof run.command, "fleetprint preflight --nodes 'n[0-2]' \\ \t é");
    snprintf(run.confirms, sizeof run.confirms, "r-0");
    run.time = 1.7e9 + 0.125;
    run.duration = NAN;
    fp_run_set_shape(&run, 3, 7);
    for (int n = 0; n < 3; n++)
        snprintf(run.nodes[n], FP_NAME_MAX, "n%d", n);
    snprintf(run.nodes[2], FP_NAME_MAX, "n0"); /* a repeated name: its first index */
    for (int r = 0; r < 7; r++) {
        run.ranks[r].node = r % 2;
        run.ranks[r].local_rank = r / 2;
        run.ranks[r].dev = r == 6 ? -1 : r / 2;
        run.ranks[r].clock_offset = r == 3 ? NAN : -1e-7 * r;
        run.ranks[r].clock_error = 1e-6;
        snprintf(run.ranks[r].model, FP_NAME_MAX, "H100 \"SXM\"");
        snprintf(run.ranks[r].uuid, sizeof run.ranks[r].uuid, "GPU-%d", r);
    }
    fp_cfg_item items[] = {{0, -1, "kernel", "6.8.0"}, {0, -1, "driver_version", "550.54"},
                           {1, 2, "power_limit", "700 W"}, {0, 1, "ib_rate.mlx5_0/1", "400"},
                           {1, -1, "kernel", "6.8.1"}};
    fp_run_set_config(&run, items, sizeof items / sizeof items[0]);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f && fp_jsonl_write_run(f, &run) == FP_OK);
    if (f)
        fclose(f);
    CHECK(text && run_agrees(text));
    fp_run_free(&run);
    free(text);

    /* the simplest ones */
    CHECK(run_agrees("{\"kind\":\"run\",\"run\":{\"id\":\"x\"}}\n"));
    CHECK(run_agrees("{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"nodes\":[],\"ranks\":[]}}"));
    CHECK(run_agrees("{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"time\":-0,\"duration\":null,"
                     "\"nodes\":[\"a\"],\"ranks\":[{\"node\":\"a\",\"local_rank\":1.0,"
                     "\"dev\":-1}],\"config\":[]}}"));
    /* left to the full path: another key order, an unknown or repeated key, a
     * number jansson cannot hold, a bad rank, a repeated config field */
    const char *other[] = {
        "{\"run\":{\"id\":\"x\"},\"kind\":\"run\"}",
        "{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"ranks\":[],\"nodes\":[]}}",
        "{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"extra\":1}}",
        "{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"id\":\"y\"}}",
        "{\"kind\":\"run\",\"run\":{\"tag\":\"x\"}}",
        "{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"time\":12345678901234567890}}",
        "{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"nodes\":[\"a\"],\"ranks\":[{\"node\":\"b\"}]}}",
        "{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"nodes\":[\"a\"],\"ranks\":[{\"node\":\"a\","
        "\"dev\":0.5}]}}",
        "{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"nodes\":[\"a\"],\"config\":[{\"entity\":"
        "\"node:a\",\"fields\":{\"k\":\"1\",\"k\":\"2\"}}]}}",
        "{\"kind\":\"run\",\"run\":{\"id\":\"x\"}} x",
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        fp_run r;
        bool fast = fp_jsonl_run_fast(other[i], strlen(other[i]), &r);
        if (fast) {
            fprintf(stderr, "run line %zu taken by the fast path: %s\n", i, other[i]);
            fp_run_free(&r);
        }
        CHECK(!fast);
    }
}

/* ---- a run of several chunks, appended as rank 0 appends ------------------------------- */

#define BIG_GPUS 500
#define BIG_SAMPLES 100003 /* three whole chunks of 32768 rows and a short one */

static void make_big(fp_run *run, const char *id)
{
    fp_run_init(run);
    snprintf(run->id, sizeof run->id, "%s", id);
    snprintf(run->tag, sizeof run->tag, "big");
    run->time = 5000;
    fp_run_set_shape(run, BIG_GPUS / 4, BIG_GPUS);
    for (int n = 0; n < BIG_GPUS / 4; n++)
        snprintf(run->nodes[n], FP_NAME_MAX, "n%04d", n);
    for (int r = 0; r < BIG_GPUS; r++) {
        run->ranks[r].node = r / 4;
        run->ranks[r].dev = r % 4;
        snprintf(run->ranks[r].model, FP_NAME_MAX, "H100");
    }
    fp_metric ms[] = {{"triad_bw", "GB/s", FP_BETTER_HIGHER}, {"lat", "us", FP_BETTER_LOWER}};
    srand(7);
    for (size_t i = 0; i < BIG_SAMPLES; i++) {
        /* grouped by metric and GPU, as suites emit them; a NaN now and then */
        size_t metric = i / (BIG_SAMPLES / 2 + 1), gpu = (i / 7) % BIG_GPUS;
        fp_entity e = fp_entity_gpu(run->nodes[gpu / 4], (int)(gpu % 4));
        double v = i % 997 == 0 ? NAN : 100 + rand() / (double)RAND_MAX;
        fp_sample s;
        fp_sample_make(&s, "kernels", "membw", &ms[metric], &e, metric ? 4096 : 0,
                       (int)(i % 7) - 1, v, i * 1e-3);
        fp_run_add(run, &s);
    }
}

static int is_partition(const struct dirent *e)
{
    return e->d_name[0] == 'p' || e->d_name[0] == 'b';
}

/* The partition files in dir (the first one's name into first, when given). */
static int partitions(const char *dir, char *first, size_t len)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, is_partition, alphasort);
    if (first && n > 0)
        snprintf(first, len, "%s/%s", dir, list[0]->d_name);
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    return n;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A chunk of the samples whose deflated bytes were overwritten: loading the
 * run (its chunks decompressed by fleetprint, not HDF5) names the dataset
 * and the chunk, and reads nothing. */
static void test_bad_chunk(const char *store, const char *part)
{
    hid_t f = H5Fopen(part, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t ds = f >= 0 ? H5Dopen2(f, "runs/big-0/samples", H5P_DEFAULT) : -1;
    hsize_t offset[1];
    unsigned mask = 0;
    haddr_t addr = 0;
    hsize_t size = 0;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
    CHECK(sp >= 0 && H5Dget_chunk_info(ds, sp, 1, offset, &mask, &addr, &size) >= 0);
    CHECK(offset[0] == 32768 && size > 256);
    if (sp >= 0)
        H5Sclose(sp);
    if (ds >= 0)
        H5Dclose(ds);
    if (f >= 0)
        H5Fclose(f);
    FILE *fp = addr && size ? fopen(part, "r+b") : NULL;
    unsigned char junk[64];
    memset(junk, 0xa5, sizeof junk);
    CHECK(fp && fseek(fp, (long)(addr + size / 2), SEEK_SET) == 0 &&
          fwrite(junk, 1, sizeof junk, fp) == sizeof junk);
    if (fp)
        fclose(fp);
    fp_store *st = NULL;
    fp_run back;
    CHECK(fp_store_open(&st, store, FP_STORE_READ, 0) == FP_OK);
    CHECK(fp_store_load_run_rows(st, "big-0", NULL, true, &back) == FP_EINPUT);
    CHECK(back.nsamples == 0 && !back.rows);
    fp_store_close(st);
}

static void test_big_append(const char *dir)
{
    char path[512], parts[520];
    snprintf(path, sizeof path, "%s/big.h5", dir);
    snprintf(parts, sizeof parts, "%s.d", path);
    fp_store *st = NULL;
    fp_run run, back;
    make_big(&run, "big-0");
    CHECK(run.nsamples == BIG_SAMPLES);
    CHECK(fp_store_open(&st, path, FP_STORE_APPEND, 1) == FP_OK);
    CHECK(fp_store_append(st, &run) == FP_OK);
    CHECK(fp_store_load_run(st, "big-0", NULL, &back) == FP_OK);
    bool same = back.nsamples == run.nsamples && back.nranks == run.nranks;
    for (size_t i = 0; same && i < back.nsamples; i++) {
        const fp_sample *a = &back.samples[i], *b = &run.samples[i];
        char ea[160], eb[160];
        same = (isnan(b->value) ? isnan(a->value) : a->value == b->value) &&
               a->t_start == b->t_start && a->iter == b->iter && a->size == b->size &&
               a->better == b->better && strcmp(a->metric, b->metric) == 0 &&
               strcmp(a->unit, b->unit) == 0 &&
               strcmp(fp_entity_format(&a->entity, ea, sizeof ea),
                      fp_entity_format(&b->entity, eb, sizeof eb)) == 0;
        if (!same)
            fprintf(stderr, "sample %zu differs after the round trip\n", i);
    }
    CHECK(same);
    fp_run_free(&back);
    int files = partitions(parts, NULL, 0);

    /* a sample that breaks its metric's unit after two chunks were written:
     * refused, nothing committed, no partition left behind */
    fp_run bad;
    make_big(&bad, "big-1");
    snprintf(bad.samples[80000].unit, sizeof bad.samples[80000].unit, "ms");
    CHECK(fp_store_append(st, &bad) == FP_EINPUT);
    fp_run_summary *rows = NULL;
    size_t n = 0;
    CHECK(fp_store_list(st, &rows, &n) == FP_OK && n == 1 && strcmp(rows[0].id, "big-0") == 0);
    CHECK(n == 1 && rows[0].nsamples == BIG_SAMPLES); /* the manifest counts the rows written */
    free(rows);
    CHECK(partitions(parts, NULL, 0) == files);
    fp_store_close(st);

    /* HDF5 reads the streamed chunks by itself: every row, the filters as documented */
    char part[1100] = "";
    CHECK(partitions(parts, part, sizeof part) == 1);
    hid_t f = H5Fopen(part, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t ds = f >= 0 ? H5Dopen2(f, "runs/big-0/samples", H5P_DEFAULT) : -1;
    CHECK(ds >= 0);
    if (ds >= 0) {
        hid_t sp = H5Dget_space(ds), dcpl = H5Dget_create_plist(ds);
        hsize_t dims[1] = {0}, chunk[1] = {0};
        H5Sget_simple_extent_dims(sp, dims, NULL);
        CHECK(dims[0] == BIG_SAMPLES);
        CHECK(H5Pget_chunk(dcpl, 1, chunk) == 1 && chunk[0] == 32768);
        CHECK(H5Pget_nfilters(dcpl) == 2);
        hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(double));
        H5Tinsert(mt, "value", 0, H5T_NATIVE_DOUBLE);
        double *v = malloc(BIG_SAMPLES * sizeof *v);
        CHECK(v && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        bool values = v != NULL;
        for (size_t i = 0; values && i < BIG_SAMPLES; i++)
            values = isnan(run.samples[i].value) ? isnan(v[i]) : v[i] == run.samples[i].value;
        CHECK(values);
        free(v);
        H5Tclose(mt);
        H5Pclose(dcpl);
        H5Sclose(sp);
        H5Dclose(ds);
    }
    if (f >= 0)
        H5Fclose(f);
    fp_run_free(&run);
    fp_run_free(&bad);
    test_bad_chunk(path, part);
}

int main(void)
{
    char dir[] = "/tmp/fp_test_stream_XXXXXX";
    test_fast_path();
    test_run_fast_path();
    CHECK(mkdtemp(dir) != NULL);
    test_big_append(dir);
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_DONE();
}
