/* The store's C API: JSONL lines, append/list/load/remove, robust per-entity
 * and per-SKU baselines, SKU index, error paths. Works in a fresh temp dir. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"

/* ---- JSONL ------------------------------------------------------------------------ */

static void test_jsonl(void)
{
    fp_sample s;
    fp_metric m = {"busbw", "GB/s", FP_BETTER_HIGHER};
    fp_entity e = fp_entity_link("n\"1", 0, "n2", 3);
    fp_sample_make(&s, "collectives", "allreduce", &m, &e, 1u << 20, -1, 0.1 + 0.2, 1e-9);
    char line[1024], err[256];
    int n = fp_jsonl_format_sample(line, sizeof line, "r\\1", &s);
    CHECK(n > 0 && (size_t)n < sizeof line && line[n - 1] == '\n');
    fp_jsonl_line l;
    CHECK(fp_jsonl_parse(line, (size_t)n, &l, err, sizeof err) == FP_OK);
    CHECK(l.kind == FP_JSONL_SAMPLE && strcmp(l.run_id, "r\\1") == 0);
    CHECK(l.sample.value == 0.1 + 0.2 && l.sample.t_start == 1e-9); /* bit for bit */
    CHECK(l.sample.size == 1u << 20 && l.sample.iter == -1);
    CHECK(strcmp(l.sample.entity.node, "n\"1") == 0 && l.sample.entity.peer_dev == 3);

    /* found by tests/fuzz/fuzz_jsonl: strings of control characters (each one
     * written as \u00XX, 6 bytes) overflowed the quoting buffers, and the line
     * was cut into malformed JSON */
    {
        char ctl[48], big[4096];
        memset(ctl, 1, sizeof ctl - 1);
        ctl[sizeof ctl - 1] = 0;
        fp_sample c = s;
        memset(c.suite, 2, sizeof c.suite - 1);
        memset(c.metric, 3, sizeof c.metric - 1);
        c.entity = fp_entity_link("\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"
                                  "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01",
                                  1048576, "\x02", 7);
        n = fp_jsonl_format_sample(big, sizeof big, ctl, &c);
        CHECK(n > 0 && n < 2048 && big[n - 1] == '\n');
        CHECK(fp_jsonl_parse(big, (size_t)n, &l, err, sizeof err) == FP_OK);
        CHECK(strcmp(l.run_id, ctl) == 0 && strcmp(l.sample.suite, c.suite) == 0);
        CHECK(strcmp(l.sample.metric, c.metric) == 0 && l.sample.entity.dev == 1048576 &&
              strcmp(l.sample.entity.node, c.entity.node) == 0);
    }

    /* NaN goes out as null and comes back as NaN */
    s.value = NAN;
    n = fp_jsonl_format_sample(line, sizeof line, "r", &s);
    CHECK(strstr(line, "\"value\":null") != NULL);
    CHECK(fp_jsonl_parse(line, (size_t)n, &l, err, sizeof err) == FP_OK && isnan(l.sample.value));

    /* unicode escapes decode to UTF-8; unknown keys are ignored */
    const char *u = "{\"run\":\"x\",\"suite\":\"k\\u00e9\",\"test\":\"t\",\"metric\":\"m\","
                    "\"unit\":\"s\",\"better\":\"lower\",\"entity\":\"node:a\",\"value\":1e3,"
                    "\"extra\":true}";
    CHECK(fp_jsonl_parse(u, strlen(u), &l, err, sizeof err) == FP_OK);
    CHECK(strcmp(l.sample.suite, "k\xc3\xa9") == 0 && l.sample.value == 1000 &&
          l.sample.better == FP_BETTER_LOWER);
    /* raw UTF-8 (2, 3 and 4 bytes) is kept as it is */
    const char *raw = "{\"run\":\"x\",\"suite\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\","
                      "\"test\":\"t\",\"metric\":\"m\",\"unit\":\"s\",\"better\":\"lower\","
                      "\"entity\":\"node:a\",\"value\":1}";
    CHECK(fp_jsonl_parse(raw, strlen(raw), &l, err, sizeof err) == FP_OK);
    CHECK(strcmp(l.sample.suite, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == 0);

    /* errors name the field or the column */
    const char *bad[][2] = {
        {"{\"run\":\"x\",\"suite\":\"k\"", "column"},
        {"{\"run\":\"x\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\",\"unit\":\"s\","
         "\"better\":\"up\",\"entity\":\"node:a\",\"value\":1}", "'better'"},
        {"{\"run\":\"x\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\",\"unit\":\"s\","
         "\"better\":\"lower\",\"entity\":\"gpu:a\",\"value\":1}", "'entity'"},
        {"{\"run\":\"x\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\",\"unit\":\"s\","
         "\"better\":\"lower\",\"entity\":\"node:a\"}", "'value'"},
        {"{\"run\":\"x\",\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\",\"unit\":\"s\","
         "\"better\":\"lower\",\"entity\":\"node:a\",\"value\":1,\"size\":-4}", "'size'"},
        {"{\"run\":\"x\",\"suite\":\"a-suite-name-too-long\"}", "'suite'"},
        {"{\"run\":\"x\",\"value\":01}", "column"},
        {"{\"run\":\"x\",\"value\":NaN}", "column"},
        {"[1,2]", "column"},
        {"{\"kind\":\"sample\",\"run\":{\"id\":\"x\"}}", "sample line"},
        /* found by tests/fuzz/fuzz_jsonl: bytes that are not UTF-8 (a stray
         * continuation byte, an overlong '/', a surrogate) passed the scanner, and
         * jansson could not write them out again */
        {"{\"run\":\"x\",\"suite\":\"k\xb2\"}", "UTF-8"},
        {"{\"run\":\"x\",\"suite\":\"\xc0\xaf\"}", "UTF-8"},
        {"{\"run\":\"x\",\"suite\":\"\xed\xa0\x80\"}", "UTF-8"},
        {"{\"run\":\"x\",\"suite\":\"\xf4\x90\x80\x80\"}", "UTF-8"},
        {"{\"run\":\"x\",\"suite\":\"\xe2\x82\"}", "UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        fp_status st = fp_jsonl_parse(bad[i][0], strlen(bad[i][0]), &l, err, sizeof err);
        CHECK(st == FP_EINPUT);
        if (!strstr(err, bad[i][1]))
            fprintf(stderr, "case %zu: error '%s' lacks '%s'\n", i, err, bad[i][1]);
        CHECK(strstr(err, bad[i][1]) != NULL);
    }
    /* a run line goes through jansson */
    const char *r = "{\"kind\":\"run\",\"run\":{\"id\":\"x\",\"nodes\":[\"a\"]}}";
    CHECK(fp_jsonl_parse(r, strlen(r), &l, err, sizeof err) == FP_OK && l.kind == FP_JSONL_RUN);
    CHECK(json_is_object(l.context));
    json_decref(l.context);
    CHECK(fp_jsonl_parse("  \n", 3, &l, err, sizeof err) == FP_OK && l.kind == FP_JSONL_BLANK);

    /* found by tests/fuzz/fuzz_jsonl (UBSan): numbers outside int or uint64_t
     * range were cast anyway (undefined); they are malformed fields now */
    {
        const char *ctx[] = {"{\"id\":\"x\",\"nodes\":[\"a\"],\"ranks\":[{\"node\":\"a\",\"local_rank\":1e300}]}",
                             "{\"id\":\"x\",\"nodes\":[\"a\"],\"ranks\":[{\"node\":\"a\",\"dev\":-1e10}]}",
                             "{\"id\":\"x\",\"nodes\":[\"a\"],\"ranks\":[{\"node\":\"a\",\"dev\":0.5}]}"};
        for (size_t i = 0; i < sizeof ctx / sizeof ctx[0]; i++) {
            json_t *j = json_loads(ctx[i], 0, NULL);
            fp_run run;
            memset(&run, 0, sizeof run);
            CHECK(j && fp_json_parse_context(j, &run, err, sizeof err) == FP_EINPUT &&
                  strstr(err, "ranks."));
            fp_run_free(&run);
            json_decref(j);
        }
        json_t *j = json_loads("{\"id\":\"x\",\"nodes\":[\"a\"],\"ranks\":[{\"node\":\"a\","
                               "\"local_rank\":2,\"dev\":-1}]}", 0, NULL);
        fp_run run;
        memset(&run, 0, sizeof run);
        CHECK(j && fp_json_parse_context(j, &run, err, sizeof err) == FP_OK &&
              run.ranks[0].local_rank == 2 && run.ranks[0].dev == -1);
        fp_run_free(&run);
        json_decref(j);
        fp_sample smp;
        j = json_loads("{\"suite\":\"k\",\"test\":\"t\",\"metric\":\"m\",\"unit\":\"s\","
                       "\"better\":\"lower\",\"entity\":\"node:a\",\"value\":1,\"size\":1e30}", 0, NULL);
        CHECK(j && fp_json_parse_sample(j, &smp, err, sizeof err) == FP_EINPUT && strstr(err, "size"));
        json_decref(j);
    }
}

/* ---- a synthetic fleet -------------------------------------------------------------- */

/* nodes n0..n19, one GPU each; n0..n9 are A100 (value ~100), n10..n19 H100
 * (value ~300); n0 and n1 are bad (value / 2). Every GPU has 4 iterations. */
static void make_run(fp_run *run, const char *id, double time, const char *tag, unsigned seed)
{
    fp_run_init(run);
    snprintf(run->id, sizeof run->id, "%s", id);
    snprintf(run->tag, sizeof run->tag, "%s", tag);
    run->time = time;
    fp_run_set_shape(run, 20, 20);
    for (int n = 0; n < 20; n++) {
        snprintf(run->nodes[n], FP_NAME_MAX, "n%d", n);
        run->ranks[n].node = n;
        run->ranks[n].dev = 0;
        snprintf(run->ranks[n].model, FP_NAME_MAX, "%s", n < 10 ? "A100" : "H100");
    }
    fp_metric m = {"triad_bw", "GB/s", FP_BETTER_HIGHER};
    srand(seed);
    for (int n = 0; n < 20; n++)
        for (int it = 0; it < 4; it++) {
            fp_entity e = fp_entity_gpu(run->nodes[n], 0);
            double base = n < 10 ? 100 : 300;
            if (n < 2)
                base /= 2;
            double v = base * (0.99 + 0.02 * rand() / (double)RAND_MAX);
            fp_sample s;
            fp_sample_make(&s, "kernels", "membw", &m, &e, 0, it, v, it * 0.5);
            fp_run_add(run, &s);
        }
    /* one group-level sample with no SKU of its own */
    fp_entity g = fp_entity_group("world");
    fp_sample s;
    fp_sample_make(&s, "kernels", "membw", &m, &g, 0, -1, 200, 0);
    fp_run_add(run, &s);
}

/* Whether runs a and b (of samples or rows) hold the same samples. */
static bool same_samples(const fp_run *a, const fp_run *b)
{
    bool same = a->nsamples == b->nsamples;
    for (size_t i = 0; same && i < a->nsamples; i++) {
        fp_sample x, y;
        fp_run_sample(a, i, &x);
        fp_run_sample(b, i, &y);
        char ex[160], ey[160];
        same = x.value == y.value && x.t_start == y.t_start && x.iter == y.iter &&
               x.size == y.size && x.better == y.better && strcmp(x.metric, y.metric) == 0 &&
               strcmp(x.unit, y.unit) == 0 &&
               strcmp(fp_entity_format(&x.entity, ex, sizeof ex),
                      fp_entity_format(&y.entity, ey, sizeof ey)) == 0;
    }
    return same;
}

static void test_store(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/fleet.h5", dir);
    fp_store *st = NULL;

    /* read-only open of a missing store fails cleanly */
    CHECK(fp_store_open(&st, path, FP_STORE_READ, 0) == FP_EINPUT && st == NULL);

    CHECK(fp_store_open(&st, path, FP_STORE_APPEND, 1) == FP_OK);
    fp_run runs[4];
    make_run(&runs[0], "r0", 1000, "nightly", 1);
    make_run(&runs[1], "r1", 2000, "nightly", 2);
    make_run(&runs[2], "r2", 3000, "ci", 3);
    make_run(&runs[3], "r3", 4000, "nightly", 4);
    snprintf(runs[3].injections, sizeof runs[3].injections, "slow-rank:3:2.0");
    CHECK(fp_store_append(st, &runs[0]) == FP_OK);
    const fp_run *more[] = {&runs[1], &runs[2], &runs[3]};
    CHECK(fp_store_append_runs(st, more, 3) == FP_OK);
    /* a repeated id is refused and nothing is written */
    CHECK(fp_store_append(st, &runs[1]) == FP_EINPUT);
    fp_run_summary *rows = NULL;
    size_t n = 0;
    CHECK(fp_store_list(st, &rows, &n) == FP_OK && n == 4);
    CHECK(n == 4 && strcmp(rows[0].id, "r0") == 0 && strcmp(rows[3].id, "r3") == 0);
    CHECK(n == 4 && rows[3].injected && rows[0].nsamples == 81 && rows[0].nranks == 20);
    free(rows);

    /* load by id and latest-with-tag; the samples come back exactly */
    fp_run back;
    CHECK(fp_store_load_run(st, "r1", NULL, &back) == FP_OK);
    CHECK(same_samples(&back, &runs[1]) && !back.rows);
    CHECK(strcmp(back.ranks[12].model, "H100") == 0 && strcmp(back.nodes[19], "n19") == 0);
    fp_run_free(&back);
    /* as rows: the same samples through fp_run_sample, and after expanding */
    CHECK(fp_store_load_run_rows(st, "r1", NULL, true, &back) == FP_OK);
    CHECK(back.rows && !back.samples && back.rows->nkeys < back.nsamples);
    CHECK(same_samples(&back, &runs[1]) && strcmp(back.nodes[19], "n19") == 0);
    CHECK(fp_run_expand(&back) == FP_OK && !back.rows && same_samples(&back, &runs[1]));
    fp_run_free(&back);
    /* without their start times (detect): NaN, all else as stored */
    CHECK(fp_store_load_run_rows(st, "r1", NULL, false, &back) == FP_OK && !back.rows->t);
    for (size_t i = 0; i < back.nsamples; i++) {
        fp_sample a;
        fp_run_sample(&back, i, &a);
        CHECK(isnan(a.t_start) && a.value == runs[1].samples[i].value &&
              memcmp(&a.entity, &runs[1].samples[i].entity, sizeof a.entity) == 0);
    }
    fp_run_free(&back);
    /* the context alone */
    CHECK(fp_store_load_run_context(st, "r1", &back) == FP_OK);
    CHECK(back.nsamples == 0 && !back.samples && !back.rows && back.nranks == 20);
    CHECK(strcmp(back.ranks[12].model, "H100") == 0);
    fp_run_free(&back);
    /* its nodes and configuration records, no ranks */
    CHECK(fp_store_load_run_config(st, "r1", &back) == FP_OK);
    CHECK(back.nsamples == 0 && back.nranks == 0 && back.nnodes == 20 &&
          strcmp(back.nodes[19], "n19") == 0 && back.nconfig == runs[1].nconfig);
    fp_run_free(&back);
    CHECK(fp_store_load_run(st, "latest", "ci", &back) == FP_OK && strcmp(back.id, "r2") == 0);
    fp_run_free(&back);
    CHECK(fp_store_load_run(st, "latest", NULL, &back) == FP_OK && strcmp(back.id, "r3") == 0);
    fp_run_free(&back);
    CHECK(fp_store_load_run(st, "nope", NULL, &back) == FP_EINPUT);
    fp_run_free(&back);

    /* SKU index */
    fp_sku_index *ix = NULL;
    CHECK(fp_sku_index_build(&runs[0], &ix) == FP_OK);
    fp_entity e = fp_entity_gpu("n12", 0);
    CHECK(strcmp(fp_sku_index_get(ix, &e), "H100") == 0);
    e = fp_entity_link("n3", 0, "n15", 0);
    CHECK(strcmp(fp_sku_index_get(ix, &e), "A100") == 0);
    e = fp_entity_group("world");
    CHECK(strcmp(fp_sku_index_get(ix, &e), "mixed") == 0);
    e = fp_entity_node("elsewhere");
    CHECK(strcmp(fp_sku_index_get(ix, &e), "unknown") == 0);
    fp_sku_index_free(ix);

    /* baselines over the nightly runs: r0, r1 (r3 has injections and is skipped) */
    fp_baseline_opts o = {.tag = "nightly", .reject = 3.5};
    fp_baseline_summary sum;
    CHECK(fp_store_build_baselines(st, &o, &sum) == FP_OK);
    CHECK(sum.runs_used == 2 && sum.runs_skipped == 1);
    CHECK(sum.entity_rows == 21 && sum.sku_rows == 3);
    fp_baselines *b = NULL;
    CHECK(fp_store_load_baselines(st, &b) == FP_OK);
    const fp_baseline *a100 = fp_baselines_sku(b, "kernels.membw.triad_bw", "A100");
    const fp_baseline *h100 = fp_baselines_sku(b, "kernels.membw.triad_bw", "H100");
    CHECK(a100 && h100);
    if (a100 && h100) {
        /* the two bad A100 nodes are rejected: the median stays at ~100 */
        CHECK(fabs(a100->median - 100) < 1.0 && a100->rejected == 4 && a100->count == 16);
        /* the ranges are read only when asked for */
        CHECK(!fp_baselines_range(b, a100) && fp_store_load_baseline_ranges(st, b) == FP_OK);
        const fp_baseline_range *qa = fp_baselines_range(b, a100);
        const fp_baseline_range *qh = fp_baselines_range(b, h100);
        CHECK(qa && qh && qa->min > 98 && qa->min <= qa->p05 && qa->p95 <= qa->max);
        /* H100 numbers never mix with A100's */
        CHECK(fabs(h100->median - 300) < 3.0 && h100->count == 20 && qh->min > 290);
        CHECK(a100->nruns == 2);
        const char *ids[4];
        CHECK(fp_baselines_runs(b, a100, ids, 4) == 2 && strcmp(ids[0], "r0") == 0 &&
              strcmp(ids[1], "r1") == 0);
    }
    const fp_baseline *bad = fp_baselines_entity(b, "kernels.membw.triad_bw", "gpu:n0/0");
    /* the bad node's own baseline is its own (slow) level */
    CHECK(bad && bad->count + bad->rejected == 8 && fabs(bad->median - 50) < 1);
    CHECK(fp_baselines_sku(b, "kernels.membw.triad_bw", "mixed") != NULL);
    CHECK(fp_baselines_entity(b, "kernels.membw.triad_bw", "gpu:n99/0") == NULL);
    CHECK(fp_baselines_entity(b, "no.such.key", "gpu:n0/0") == NULL);
    fp_baselines_free(b);

    /* an empty selection is an input error */
    fp_baseline_opts none = {.tag = "weekly"};
    CHECK(fp_store_build_baselines(st, &none, NULL) == FP_EINPUT);

    /* remove: unknown ids refuse the whole request */
    const char *ids_bad[] = {"r0", "zz"};
    CHECK(fp_store_remove(st, ids_bad, 2) == FP_EINPUT);
    const char *ids[] = {"r0", "r2"};
    CHECK(fp_store_remove(st, ids, 2) == FP_OK);
    CHECK(fp_store_list(st, &rows, &n) == FP_OK && n == 2);
    free(rows);
    /* baselines survive a removal */
    CHECK(fp_store_load_baselines(st, &b) == FP_OK && fp_baselines_sku_count(b) == 3);
    fp_baselines_free(b);
    fp_store_close(st);

    /* read-only handles cannot write */
    CHECK(fp_store_open(&st, path, FP_STORE_READ, 0) == FP_OK);
    CHECK(fp_store_append(st, &runs[0]) == FP_EUSAGE);
    fp_store_close(st);
    for (int i = 0; i < 4; i++)
        fp_run_free(&runs[i]);
}

/* Spreads: one GPU, 3 runs at levels 100, 102, 98, each with 5 windows at
 * level x {0.98 .. 1.02} and a summary at level x 1.05. Known by hand:
 * run-to-run 1.4826 x MAD(100, 102, 98) / 100, within-run 1.4826 x 0.01,
 * summary median 105 and its spread 1.4826 x 2.1 / 105. */
static void test_spreads(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/spreads.h5", dir);
    fp_store *st = NULL;
    CHECK(fp_store_open(&st, path, FP_STORE_APPEND, 0) == FP_OK);
    const double level[3] = {100, 102, 98}, shape[5] = {0.98, 0.99, 1.00, 1.01, 1.02};
    fp_metric m = {"triad_bw", "GB/s", FP_BETTER_HIGHER};
    for (int r = 0; r < 3; r++) {
        fp_run run;
        fp_run_init(&run);
        snprintf(run.id, sizeof run.id, "s%d", r);
        run.time = 1e9 + r;
        fp_run_set_shape(&run, 1, 1);
        snprintf(run.nodes[0], FP_NAME_MAX, "n0");
        run.ranks[0].node = 0;
        snprintf(run.ranks[0].model, FP_NAME_MAX, "H100");
        fp_entity e = fp_entity_gpu("n0", 0);
        fp_sample s;
        for (int w = 0; w < 5; w++) {
            fp_sample_make(&s, "kernels", "membw", &m, &e, 0, w, level[r] * shape[w], w);
            fp_run_add(&run, &s);
        }
        fp_sample_make(&s, "kernels", "membw", &m, &e, 0, -1, level[r] * 1.05, 5);
        fp_run_add(&run, &s);
        CHECK(fp_store_append(st, &run) == FP_OK);
        fp_run_free(&run);
    }
    fp_baseline_opts o = {.reject = 0};
    CHECK(fp_store_build_baselines(st, &o, NULL) == FP_OK);
    fp_baselines *b = NULL;
    CHECK(fp_store_load_baselines(st, &b) == FP_OK);
    const fp_baseline *e = b ? fp_baselines_entity(b, "kernels.membw.triad_bw", "gpu:n0/0") : NULL;
    const fp_baseline *k = b ? fp_baselines_sku(b, "kernels.membw.triad_bw", "H100") : NULL;
    CHECK(e && k);
    if (e && k) {
        CHECK(e->nruns == 3 && e->windows == 5 && e->count == 18);
        CHECK(fabs(e->run_spread - 1.4826 * 2 / 100) < 1e-9);
        CHECK(fabs(e->window_spread - 1.4826 * 0.01) < 1e-9);
        CHECK(fabs(e->summary - 105) < 1e-9);
        CHECK(fabs(e->summary_spread - 1.4826 * 2.1 / 105) < 1e-9);
        /* the SKU's typical entity is this one; one entity has no spread between */
        CHECK(fabs(k->run_spread - e->run_spread) < 1e-12 && k->windows == 5);
        CHECK(fabs(k->summary - 105) < 1e-9 && isnan(k->summary_spread));
    }
    fp_baselines_free(b);
    fp_store_close(st);
}

int main(void)
{
    char dir[] = "/tmp/fp_test_store_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_jsonl();
    test_store(dir);
    test_spreads(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_DONE();
}
