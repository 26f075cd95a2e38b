/* The detector on small hand-made runs: peer evidence without a store,
 * node vs GPU vs link demarcation, persistence, value rules, missing
 * results, group sizes, rules-file errors, hostlist output. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fleetprint/detect.h"
#include "fleetprint/report.h"
#include "fleetprint/store.h"

static fp_rules *rules_default(void)
{
    char err[256];
    fp_rules *r = NULL;
    CHECK(fp_rules_load(NULL, &r, err, sizeof err) == FP_OK);
    return r;
}

/* A run of n nodes with one device each; model SKU for every rank. */
static void make_run(fp_run *run, int n, const char *model)
{
    fp_run_init(run);
    CHECK(fp_run_set_shape(run, n, n) == FP_OK);
    for (int i = 0; i < n; i++) {
        snprintf(run->nodes[i], FP_NAME_MAX, "n%d", i);
        run->ranks[i].node = i;
        snprintf(run->ranks[i].model, sizeof run->ranks[i].model, "%s", model);
    }
}

/* Deterministic jitter of about +-1%. */
static double jitter(int a, int b)
{
    unsigned x = (unsigned)(a * 7919 + b * 104729 + 13);
    x ^= x >> 7;
    x *= 2654435761u;
    return 1 + ((double)(x % 2001) / 1000.0 - 1) * 0.01;
}

static void add(fp_run *run, const char *suite, const char *test, const char *metric,
                fp_better better, const fp_entity *e, int iter, double v)
{
    fp_metric m = {metric, better == FP_BETTER_HIGHER ? "GB/s" : "count", better};
    fp_sample s;
    fp_sample_make(&s, suite, test, &m, e, 0, iter, v, 0);
    CHECK(fp_run_add(run, &s) == FP_OK);
}

static fp_verdicts *detect(const fp_run *run, const fp_rules *r)
{
    fp_detect_opts o = {.rules = r};
    fp_verdicts *v = NULL;
    CHECK(fp_detect(run, &o, &v) == FP_OK);
    return v;
}

static const fp_entity_verdict *find(const fp_verdicts *v, const char *text)
{
    for (size_t i = 0; i < fp_verdicts_count(v); i++) {
        char buf[160];
        fp_entity_format(fp_verdicts_get(v, i)->entity, buf, sizeof buf);
        if (strcmp(buf, text) == 0)
            return fp_verdicts_get(v, i);
    }
    return NULL;
}

/* Must show 2: no store, one node of 8 with GEMM and memory bandwidth 30%
 * low is failed on peer evidence, the others pass, the run fails. */
static void test_peers_slow_node(const fp_rules *r)
{
    fp_run run;
    make_run(&run, 8, "H100");
    for (int i = 0; i < 8; i++) {
        fp_entity e = fp_entity_gpu(run.nodes[i], 0);
        double f = i == 5 ? 0.7 : 1.0;
        for (int w = 0; w < 6; w++) {
            add(&run, "kernels", "gemm", "f64_flops", FP_BETTER_HIGHER, &e, w, 50 * f * jitter(i, w));
            add(&run, "kernels", "membw", "triad_bw", FP_BETTER_HIGHER, &e, w, 20 * f * jitter(w, i));
        }
    }
    fp_verdicts *v = detect(&run, r);
    CHECK(fp_verdicts_overall(v) == FP_FAIL);
    CHECK(fp_verdicts_status(v) == FP_EFAIL);
    CHECK(fp_verdicts_node(v, "n5") == FP_FAIL);
    for (int i = 0; i < 8; i++)
        CHECK(i == 5 || fp_verdicts_node(v, run.nodes[i]) == FP_PASS);
    const fp_entity_verdict *g = find(v, "gpu:n5/0");
    CHECK(g && g->verdict == FP_FAIL && g->nreasons == 2);
    if (g && g->nreasons) {
        const fp_reason *re = fp_verdicts_reason(v, g->first_reason);
        CHECK(re->evidence == FP_EV_PEERS);
        CHECK_NEAR(re->deviation, 0.3, 0.1);
        CHECK(re->windows_bad == 6 && re->windows == 6);
    }
    const char *const *names;
    CHECK(fp_verdicts_nodes_at(v, FP_FAIL, &names) == 1 && strcmp(names[0], "n5") == 0);
    /* the drain file: exactly the failing nodes, in Slurm syntax */
    char path[] = "/tmp/fp_test_drain_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(fp_verdicts_write_hostlist(v, path) == FP_OK);
    FILE *f = fopen(path, "r");
    char line[64] = "";
    CHECK(f && fgets(line, sizeof line, f));
    CHECK(strcmp(line, "n5\n") == 0);
    if (f)
        fclose(f);
    unlink(path);
    fp_verdicts_free(v);
    fp_run_free(&run);
}

/* Transient: one bad window of six is at most a warning; a mid-run onset
 * covering half the windows fails. Summary-less series are judged per window. */
static void test_persistence(const fp_rules *r)
{
    fp_run run;
    make_run(&run, 10, "H100");
    for (int i = 0; i < 10; i++) {
        fp_entity e = fp_entity_gpu(run.nodes[i], 0);
        for (int w = 0; w < 6; w++) {
            double f = 1;
            if (i == 2 && w == 3)
                f = 0.8; /* one window 20% low */
            if (i == 7 && w >= 3)
                f = 0.75; /* throttled from window 3 on */
            add(&run, "burnin", "stress", "tflops", FP_BETTER_HIGHER, &e, w, 100 * f * jitter(i, w));
        }
    }
    fp_verdicts *v = detect(&run, r);
    CHECK(fp_verdicts_node(v, "n2") != FP_FAIL);
    CHECK(fp_verdicts_node(v, "n7") == FP_FAIL);
    fp_verdicts_free(v);
    fp_run_free(&run);
}

/* A sample of a window past 2^24 - 1 (a stray iteration number, which would
 * ask every series of its key for that many slots) is refused with
 * FP_EINPUT, as samples and as rows; window 1000 is judged. */
static void test_window_bound(const fp_rules *r)
{
    static const int iters[] = {1000, 1 << 24};
    for (int k = 0; k < 2; k++) {
        int iter = iters[k];
        fp_run run;
        make_run(&run, 4, "H100");
        for (int i = 0; i < 4; i++) {
            fp_entity e = fp_entity_gpu(run.nodes[i], 0);
            add(&run, "burnin", "stress", "tflops", FP_BETTER_HIGHER, &e, i == 3 ? iter : 0, 100);
        }
        fp_rows_builder b;
        memset(&b, 0, sizeof b);
        for (size_t i = 0; i < run.nsamples; i++)
            CHECK(fp_rows_builder_add(&b, &run.samples[i]) == FP_OK);
        fp_run rows = run; /* run's context, shared */
        rows.samples = NULL;
        fp_run_set_rows(&rows, fp_rows_builder_take(&b));
        fp_status want = k == 0 ? FP_OK : FP_EINPUT;
        for (int form = 0; form < 2; form++) {
            fp_detect_opts o = {.rules = r};
            fp_verdicts *v = NULL;
            CHECK(fp_detect(form ? &rows : &run, &o, &v) == want && (v != NULL) == (want == FP_OK));
            fp_verdicts_free(v);
        }
        rows.nodes = NULL; /* run's, freed with it */
        rows.ranks = NULL;
        rows.config = NULL;
        fp_run_free(&rows);
        fp_run_free(&run);
    }
}

/* A short episode (two windows of six, far out of bounds) on one metric of
 * a device is a transient dip: it warns; the same two windows low on two
 * metrics of a device (an intermittent fault) fail. */
static void test_episode(const fp_rules *r)
{
    fp_run run;
    make_run(&run, 10, "H100");
    for (int i = 0; i < 10; i++) {
        fp_entity e = fp_entity_gpu(run.nodes[i], 0);
        for (int w = 0; w < 6; w++) {
            bool dip = w == 2 || w == 3;
            double fm = (i == 2 || i == 7) && dip ? 0.6 : 1, fg = i == 7 && dip ? 0.6 : 1;
            add(&run, "kernels", "membw", "triad_bw", FP_BETTER_HIGHER, &e, w, 20 * fm * jitter(i, w));
            add(&run, "kernels", "gemm", "f64_flops", FP_BETTER_HIGHER, &e, w, 50 * fg * jitter(w, i));
        }
    }
    fp_verdicts *v = detect(&run, r);
    const fp_entity_verdict *g = find(v, "gpu:n2/0");
    CHECK(g && g->verdict == FP_WARN && g->nreasons == 1);
    if (g && g->nreasons) {
        const fp_reason *re = fp_verdicts_reason(v, g->first_reason);
        CHECK(re->verdict == FP_WARN && re->windows_bad == 2 && strstr(re->note, "no other metric"));
    }
    CHECK(fp_verdicts_node(v, "n2") == FP_WARN); /* not drained */
    CHECK(fp_verdicts_node(v, "n7") == FP_FAIL);
    for (int i = 0; i < 10; i++)
        CHECK(i == 2 || i == 7 || fp_verdicts_node(v, run.nodes[i]) == FP_PASS);
    fp_verdicts_free(v);
    fp_run_free(&run);
}

/* Links: all pairs of 8 nodes; a slow pair is the link (its ends pass); a
 * node slow with every partner is the node (its links only warn). */
static void test_links(const fp_rules *r)
{
    for (int scenario = 0; scenario < 2; scenario++) {
        fp_run run;
        make_run(&run, 8, "H100");
        for (int a = 0; a < 8; a++)
            for (int b = a + 1; b < 8; b++) {
                fp_entity e = fp_entity_link(run.nodes[a], -1, run.nodes[b], -1);
                double f = 1;
                if (scenario == 0 && a == 2 && b == 6)
                    f = 0.25;
                if (scenario == 1 && (a == 3 || b == 3))
                    f = 0.4;
                for (int w = 0; w < 5; w++)
                    add(&run, "collectives", "links", "bw_inter", FP_BETTER_HIGHER, &e, w,
                        10 * f * jitter(a * 8 + b, w));
            }
        fp_verdicts *v = detect(&run, r);
        CHECK(fp_verdicts_overall(v) == FP_FAIL);
        if (scenario == 0) {
            const fp_entity_verdict *l = find(v, "link:n2~n6");
            CHECK(l && l->verdict == FP_FAIL);
            CHECK(fp_verdicts_node(v, "n2") == FP_PASS);
            CHECK(fp_verdicts_node(v, "n6") == FP_PASS);
            const char *const *names;
            CHECK(fp_verdicts_nodes_at(v, FP_FAIL, &names) == 0);
        } else {
            CHECK(fp_verdicts_node(v, "n3") == FP_FAIL);
            for (int i = 0; i < 8; i++)
                CHECK(i == 3 || fp_verdicts_node(v, run.nodes[i]) == FP_PASS);
            const fp_entity_verdict *l = find(v, "link:n0~n3");
            CHECK(l && l->verdict == FP_WARN);
        }
        fp_verdicts_free(v);
        fp_run_free(&run);
    }
}

/* Blind spots: links spreading 0.6-1.6x of their median (a robust spread of
 * 1.41x) fail only below 0.25x (z 4), beyond the link rule's 0.65x; a 2x
 * slow link then passes, and the verdicts say that the key was blind (the
 * console too). Links within +-1% fail it and have no blind spot. */
static void test_blind_spots(const fp_rules *r)
{
    static const double spread[5] = {0.6, 0.8, 1.0, 1.25, 1.6};
    for (int wide = 0; wide < 2; wide++) {
        fp_run run;
        make_run(&run, 8, "H100");
        for (int a = 0, i = 0; a < 8; a++)
            for (int b = a + 1; b < 8; b++, i++) {
                fp_entity e = fp_entity_link(run.nodes[a], -1, run.nodes[b], -1);
                double f = a == 2 && b == 6 ? 0.5 : wide ? spread[i % 5] : 1;
                for (int w = 0; w < 5; w++)
                    add(&run, "collectives", "links", "bw_inter", FP_BETTER_HIGHER, &e, w,
                        10 * f * jitter(a * 8 + b, w));
            }
        fp_verdicts *v = detect(&run, r);
        CHECK(find(v, "link:n2~n6")->verdict == (wide ? FP_PASS : FP_FAIL));
        CHECK(fp_verdicts_blind_count(v) == (size_t)wide);
        if (wide) {
            const fp_blind_spot *b = fp_verdicts_blind(v, 0);
            CHECK(strcmp(b->key, "collectives.links.bw_inter") == 0 && b->kind == FP_ENT_LINK);
            CHECK(b->peers == 28 && b->spread > 1.3 && b->spread < 1.5);
            CHECK(b->limit > 0.2 && b->limit < 0.35 && b->rule_limit == 1 - 0.35);
            char *text = NULL;
            size_t len = 0;
            FILE *mem = open_memstream(&text, &len);
            fp_verdicts_print(mem, v, &run);
            fclose(mem);
            CHECK(strstr(text, "blind collectives.links.bw_inter: 28 link peers spread 1.") &&
                  strstr(text, "(rule link: 0.65x)"));
            free(text);
        }
        fp_verdicts_free(v);
        fp_run_free(&run);
    }
}

/* Contended runs (ranks sharing cores): a link's figure aggregates every
 * exchange of the sweep, so the link class's own contended thresholds
 * (fail 50%) apply instead of the rules' (fail 60%). On 8 emulated nodes on
 * 2 cores a 4x slow link read 0.23-0.49x its peers, the lowest healthy link
 * 0.66-0.88x: here 0.45x and 0.6x. */
static void test_links_contended(const fp_rules *r)
{
    fp_run run;
    make_run(&run, 8, "H100");
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++) {
            fp_entity e = fp_entity_link(run.nodes[a], -1, run.nodes[b], -1);
            double f = a == 2 && b == 6 ? 0.45 : a == 0 && b == 1 ? 0.6 : 1;
            add(&run, "collectives", "links", "bw_inter", FP_BETTER_HIGHER, &e, -1,
                10 * f * jitter(a, b));
        }
    fp_detect_opts o = {.rules = r, .contended = true, .contended_note = "test"};
    fp_verdicts *v = NULL;
    CHECK(fp_detect(&run, &o, &v) == FP_OK);
    const fp_entity_verdict *l = find(v, "link:n2~n6");
    CHECK(l && l->verdict == FP_FAIL);
    l = find(v, "link:n0~n1");
    CHECK(l && l->verdict == FP_WARN); /* 40% worse: above warn 30%, below fail 50% */
    CHECK(fp_verdicts_node(v, "n2") == FP_PASS && fp_verdicts_node(v, "n6") == FP_PASS);
    fp_verdicts_free(v);

    /* without the class's own thresholds the rules' 60% applies: it warns */
    char err[256];
    fp_rules *plain = NULL;
    CHECK(fp_rules_parse("{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"link\", "
                         "\"match\": \"*\", \"warn\": 0.2, \"fail\": 0.35, \"summary\": true}]}",
                         "plain.json", &plain, err, sizeof err) == FP_OK);
    o.rules = plain;
    CHECK(fp_detect(&run, &o, &v) == FP_OK);
    l = find(v, "link:n2~n6");
    CHECK(l && l->verdict == FP_WARN);
    fp_verdicts_free(v);
    /* uncontended, the class's own 35% fails both */
    o.contended = false;
    CHECK(fp_detect(&run, &o, &v) == FP_OK);
    CHECK(find(v, "link:n2~n6")->verdict == FP_FAIL && find(v, "link:n0~n1")->verdict == FP_FAIL);
    fp_verdicts_free(v);
    fp_rules_free(plain);
    fp_run_free(&run);
}

/* Contended runs judge run summaries (best of the run) of the memory and
 * compute classes; one far-off summary with every other metric of the
 * device normal is no slow device there (seen in CI: one healthy rank's
 * add bandwidth 68% below its peers, its copy, scale and triad normal). It
 * warns; a device whose two metrics are out fails, and uncontended the one
 * far-off metric fails as before. Where the device was measured by another
 * test too (GEMM), that test must agree: a healthy rank's four STREAM kernels
 * read slow together on shared cores (CI: 3 of 8 ranks 44-47% below their
 * peers at copy, scale and add, their GEMM normal); a test not judged
 * against peers is none. */
static void test_summary_contended(const fp_rules *r)
{
    static const char *const ops[] = {"copy_bw", "scale_bw", "add_bw", "triad_bw"};
    for (int gemm = 0; gemm < 2; gemm++) {
        fp_run run;
        make_run(&run, 8, "host");
        for (int i = 0; i < 8; i++) {
            fp_entity e = fp_entity_gpu(run.nodes[i], 0);
            for (int o = 0; o < 4; o++) {
                double f = 1;
                if ((i == 1 && o == 2) || (i == 3 && o >= 2) || i == 5)
                    f = 0.32; /* n1: add alone; n3: add and triad; n5: all */
                add(&run, "kernels", "membw", ops[o], FP_BETTER_HIGHER, &e, -1,
                    57 * f * jitter(i, o));
                add(&run, "kernels", "membw", ops[o], FP_BETTER_HIGHER, &e, 0, 50 * jitter(o, i));
            }
            if (!gemm) /* a test not judged (rule not-judged) is no other test */
                add(&run, "kernels", "fused", "gemm_best", FP_BETTER_LOWER, &e, -1, 3 * jitter(i, 9));
            else { /* n5 slow at GEMM too */
                double f = i == 5 ? 0.4 : 1;
                add(&run, "kernels", "gemm", "f32_flops", FP_BETTER_HIGHER, &e, -1,
                    900 * f * jitter(i, 7));
                add(&run, "kernels", "gemm", "f32_flops", FP_BETTER_HIGHER, &e, 0, 800 * jitter(7, i));
            }
        }
        fp_detect_opts o = {.rules = r, .contended = true, .contended_note = "8 threads on 2 cores"};
        fp_verdicts *v = NULL;
        CHECK(fp_detect(&run, &o, &v) == FP_OK);
        const fp_entity_verdict *g = find(v, "gpu:n1/0");
        CHECK(g && g->verdict == FP_WARN);
        if (g && g->nreasons)
            CHECK(strstr(fp_verdicts_reason(v, g->first_reason)->note,
                         gemm ? "no other test agrees" : "no other metric agrees"));
        CHECK(fp_verdicts_node(v, "n1") == FP_WARN);
        CHECK(fp_verdicts_node(v, "n3") == (gemm ? FP_WARN : FP_FAIL));
        CHECK(fp_verdicts_node(v, "n5") == FP_FAIL);
        for (int i = 0; i < 8; i++)
            CHECK(i == 1 || i == 3 || i == 5 || fp_verdicts_node(v, run.nodes[i]) == FP_PASS);
        fp_verdicts_free(v);
        o.contended = false;
        CHECK(fp_detect(&run, &o, &v) == FP_OK);
        CHECK(fp_verdicts_node(v, "n1") == FP_FAIL && fp_verdicts_node(v, "n3") == FP_FAIL);
        fp_verdicts_free(v);
        fp_run_free(&run);
    }
}

/* Value rules (wrong results), missing results, one GPU of a node, group
 * sizes: 3 peers judge, 2 cannot (unknown), and SKUs are kept apart. */
static void test_values_missing_groups(const fp_rules *r)
{
    fp_run run;
    make_run(&run, 4, "H100");
    /* node n3 is another SKU, 2x faster: it must not look like an outlier */
    snprintf(run.ranks[3].model, sizeof run.ranks[3].model, "H200");
    for (int i = 0; i < 4; i++)
        for (int d = 0; d < 4; d++) {
            fp_entity e = fp_entity_gpu(run.nodes[i], d);
            double base = i == 3 ? 200 : 100;
            if (!(i == 1 && d == 2)) /* missing: n1/2 lacks gemm flops */
                add(&run, "kernels", "gemm", "f32_flops", FP_BETTER_HIGHER, &e, -1,
                    base * jitter(i, d) * (i == 0 && d == 1 ? 0.5 : 1));
            add(&run, "kernels", "gemm", "f32_wrong", FP_BETTER_LOWER, &e, -1,
                i == 2 && d == 3 ? 7 : 0);
        }
    fp_verdicts *v = detect(&run, r);
    const fp_entity_verdict *g = find(v, "gpu:n0/1");
    CHECK(g && g->verdict == FP_FAIL); /* half speed among 11 H100 peers */
    g = find(v, "gpu:n1/2");
    CHECK(g && g->verdict == FP_FAIL && g->nreasons == 1 &&
          fp_verdicts_reason(v, g->first_reason)->evidence == FP_EV_MISSING);
    g = find(v, "gpu:n2/3");
    CHECK(g && g->verdict == FP_FAIL &&
          fp_verdicts_reason(v, g->first_reason)->evidence == FP_EV_VALUE);
    CHECK(fp_verdicts_node(v, "n3") == FP_PASS); /* 4 H200 devices judged among themselves */
    fp_verdicts_free(v);
    fp_run_free(&run);

    /* two entities: no peer group, no baseline: unknown, not pass or fail */
    make_run(&run, 2, "H100");
    for (int i = 0; i < 2; i++) {
        fp_entity e = fp_entity_gpu(run.nodes[i], 0);
        add(&run, "kernels", "membw", "copy_bw", FP_BETTER_HIGHER, &e, -1, i ? 10 : 100);
    }
    v = detect(&run, r);
    CHECK(fp_verdicts_overall(v) == FP_UNKNOWN);
    CHECK(fp_verdicts_status(v) == FP_OK);
    fp_verdicts_free(v);
    fp_run_free(&run);

    /* an empty run is an input error */
    make_run(&run, 2, "H100");
    fp_detect_opts o = {.rules = r};
    CHECK(fp_detect(&run, &o, &v) == FP_EINPUT && v == NULL);
    fp_run_free(&run);
}

/* A rules text that must be refused: FP_EINPUT, no rules, and an error
 * (origin r.json) that contains want. */
static void rules_error(const char *text, const char *want)
{
    char err[256];
    fp_rules *r = NULL;
    CHECK(fp_rules_parse(text, "r.json", &r, err, sizeof err) == FP_EINPUT && r == NULL);
    CHECK(strstr(err, want) != NULL);
}

static void test_rules_errors(void)
{
    char err[256];
    fp_rules *r = NULL;
    rules_error("{\"fleetprint_rules\": 1, \"classes\": [}",
                "r.json: line 1, column");
    rules_error("{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"x\", \"match\": "
                "\"*\", \"warn\": 0.2, \"fail\": 0.1}]}",
                "classes[0].fail: must be at least warn");
    rules_error("{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"x\", \"match\": "
                "\"*\", \"warn\": 0.1, \"fail\": 2}]}",
                "classes[0].fail");
    rules_error("{\"fleetprint_rules\": 1, \"clases\": []}",
                "clases: unknown field");
    /* inside a class or value rule too: a typo must not drop a threshold */
    rules_error("{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"x\", \"match\": "
                "\"*\", \"warn\": 0.1, \"fial\": 0.3, \"fail\": 0.2}]}",
                "r.json: classes[0].fial: unknown field");
    rules_error("{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"x\", \"match\": "
                "\"*\", \"warn\": 0.1, \"fail\": 0.2}], \"values\": [{\"name\": \"x\", "
                "\"match\": \"*\", \"maximum\": 0}]}",
                "values[0].maximum: unknown field");
    rules_error("{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"x\", \"match\": "
                "\"*\", \"warn\": 0.1, \"fail\": 0.2, \"contended\": {\"warn\": 0.6, "
                "\"fail\": 0.5}}]}",
                "classes[0].contended: expected");
    rules_error("{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"x\", \"match\": "
                "\"*\", \"warn\": 0.1, \"fail\": 0.2, \"contended\": {\"warn\": 0.3, "
                "\"fail\": 0.5, \"z\": -1}}]}",
                "classes[0].contended: expected");
    /* the top level's contended thresholds have no z: each class keeps its own */
    rules_error("{\"fleetprint_rules\": 1, \"contended\": {\"warn\": 0.3, \"fail\": 0.6, "
                "\"z\": 3}, \"classes\": [{\"name\": \"x\", \"match\": \"*\", \"warn\": 0.1, "
                "\"fail\": 0.2}]}",
                "r.json: contended: expected");
    rules_error("{\"fleetprint_rules\": 2, \"classes\": []}",
                "fleetprint_rules");
    /* a single pattern string over 95 bytes was cut silently (a list was not) */
    {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"x\", \"match\": "
                 "\"kernels.%0100d*\", \"warn\": 0.1, \"fail\": 0.2}]}", 0);
        rules_error(text, "classes[0].match");
    }
    CHECK(fp_rules_load("/nonexistent/rules.json", &r, err, sizeof err) == FP_EINPUT);
    CHECK(strstr(err, "/nonexistent/rules.json: cannot open") != NULL);
    /* the defaults parse, and a minimal file works */
    CHECK(fp_rules_parse(fp_rules_default_text(), "defaults", &r, err, sizeof err) == FP_OK);
    fp_rules_free(r);
    CHECK(fp_rules_parse("{\"fleetprint_rules\": 1, \"classes\": [{\"name\": \"all\", \"match\": "
                         "\"*\", \"warn\": 0.1, \"fail\": 0.2}]}",
                         "min.json", &r, err, sizeof err) == FP_OK);
    fp_rules_free(r);
}

/* Stragglers: per-call lateness on rank entities names the late rank, and
 * its node, with the time it cost the others; arrival jitter does not. */
static void test_late_rank(const fp_rules *r)
{
    fp_run run;
    make_run(&run, 8, "H100");
    for (int i = 0; i < 8; i++) {
        fp_entity e = fp_entity_rank(run.nodes[i], i);
        for (int call = 0; call < 40; call++) {
            double jit = 200 * (jitter(i, call) - 1) / 0.01; /* +-200 us */
            double v = (i == 5 ? 2500 : 0) + jit;
            fp_metric m = {"lateness_f32_sum_oop", "us", FP_BETTER_LOWER};
            fp_sample smp;
            fp_sample_make(&smp, "collectives", "allreduce", &m, &e, 1 << 20, call, v, 0);
            CHECK(fp_run_add(&run, &smp) == FP_OK);
        }
    }
    fp_verdicts *v = detect(&run, r);
    CHECK(fp_verdicts_node(v, "n5") == FP_FAIL);
    for (int i = 0; i < 8; i++)
        CHECK(i == 5 || fp_verdicts_node(v, run.nodes[i]) == FP_PASS);
    const fp_entity_verdict *e = find(v, "rank:5@n5");
    CHECK(e && e->verdict == FP_FAIL && e->nreasons == 1);
    if (e && e->nreasons) {
        const fp_reason *re = fp_verdicts_reason(v, e->first_reason);
        CHECK(strcmp(re->rule, "straggler") == 0);
        CHECK(strstr(re->note, "cost the 7 others") != NULL);
    }
    e = find(v, "node:n5");
    CHECK(e && e->nreasons >= 1 &&
          fp_verdicts_reason(v, e->first_reason)->evidence == FP_EV_LATE);
    fp_verdicts_free(v);
    fp_run_free(&run);
}

/* Whether files a and b hold the same bytes. */
static bool same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    bool same = x && y;
    for (int c = 0, d = 0; same && c != EOF; same = c == d)
        c = fgetc(x), d = fgetc(y);
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

/* Whether the file at path has a line holding every one of want[0..n). */
static bool has_line(const char *path, const char *const *want, int n)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        found = true;
        for (int i = 0; i < n && found; i++)
            found = strstr(line, want[i]) != NULL;
    }
    if (f)
        fclose(f);
    return found;
}

/* The Prometheus textfile labels a GPU with its UUID, the first rank's of
 * that node and device (looked up in an index, not a scan per series). */
static void test_prometheus_uuid(const fp_rules *r)
{
    fp_run run;
    fp_run_init(&run);
    CHECK(fp_run_set_shape(&run, 3, 9) == FP_OK);
    fp_metric m = {"triad_bw", "GB/s", FP_BETTER_HIGHER};
    for (int i = 0; i < 3; i++) {
        snprintf(run.nodes[i], FP_NAME_MAX, "n%d", 2 - i); /* not in name order */
        for (int d = 0; d < 3; d++) {
            fp_rank_info *ri = &run.ranks[i * 3 + d];
            ri->node = i;
            ri->dev = d < 2 ? d : 1; /* a second rank on device 1: its UUID is not used */
            snprintf(ri->model, sizeof ri->model, "H100");
            snprintf(ri->uuid, sizeof ri->uuid, "GPU-%s-%d%s", run.nodes[i], ri->dev,
                     d < 2 ? "" : "-second");
            fp_entity e = fp_entity_gpu(run.nodes[i], d);
            fp_sample smp;
            fp_sample_make(&smp, "kernels", "membw", &m, &e, 0, -1, 100 + i, 0);
            CHECK(fp_run_add(&run, &smp) == FP_OK);
        }
    }
    char dir[] = "/tmp/fp_test_prom_XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/p.prom", dir);
    fp_verdicts *v = detect(&run, r);
    CHECK(fp_report_prometheus(&run, v, "test", path) == FP_OK);
    const char *gpu1[] = {"memory_bandwidth", "Hostname=\"n0\",gpu=\"1\",UUID=\"GPU-n0-1\""};
    const char *gpu2[] = {"Hostname=\"n1\",gpu=\"2\"", "UUID"};
    const char *second[] = {"-second"};
    CHECK(has_line(path, gpu1, 2) && !has_line(path, second, 1));
    CHECK(!has_line(path, gpu2, 2)); /* device 2 of n1 has no rank that knows it */
    fp_verdicts_free(v);
    fp_run_free(&run);
    unlink(path);
    rmdir(dir);
}

/* The simulator: same seed, same run; its faults are found. */
static void test_sim(const fp_rules *r)
{
    fp_sim_opts o = {.nodes = 64, .gpus_per_node = 4, .runs = 2, .windows = 6,
                     .link_partners = 4, .seed = 7,
                     .faults = "slow-gpu=2,slow-node=1,bad-link=1,sdc=1,throttle=1,intermittent=1"};
    char err[256];
    fp_sim *sim = NULL;
    CHECK(fp_sim_open(&o, &sim, err, sizeof err) == FP_OK);
    fp_run a, b;
    CHECK(fp_sim_run(sim, 1, &a) == FP_OK);
    CHECK(fp_sim_run(sim, 1, &b) == FP_OK);
    CHECK(a.nsamples == b.nsamples && a.nsamples > 0);
    CHECK(memcmp(a.samples, b.samples, a.nsamples * sizeof *a.samples) == 0);
    /* the same run made as rows: the same samples, byte for byte */
    fp_run_free(&b);
    CHECK(fp_sim_run_rows(sim, 1, &b) == FP_OK && b.rows && !b.samples);
    CHECK(b.nsamples == a.nsamples && b.rows->nkeys < 16);
    size_t differ = 0;
    for (size_t i = 0; i < a.nsamples && b.nsamples == a.nsamples; i++) {
        fp_sample x;
        fp_run_sample(&b, i, &x);
        differ += memcmp(&x, &a.samples[i], offsetof(fp_sample, entity) + sizeof x.entity) != 0 ||
                  x.size != a.samples[i].size || x.iter != a.samples[i].iter ||
                  memcmp(&x.value, &a.samples[i].value, 2 * sizeof x.value) != 0;
    }
    CHECK(differ == 0);
    fp_verdicts *v = detect(&a, r);
    fp_sim_score sc;
    fp_sim_score_verdicts(sim, v, &sc);
    CHECK(sc.tp == 6 && sc.fn == 0 && sc.fp == 0);
    CHECK(sc.link_tp == 1 && sc.link_fp == 0);
    /* the run stored and read back as rows: the same verdict JSON, byte for byte */
    char dir[] = "/tmp/fp_test_detect_XXXXXX", store[64], ja[64], jb[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(store, sizeof store, "%s/s.h5", dir);
    snprintf(ja, sizeof ja, "%s/a.json", dir);
    snprintf(jb, sizeof jb, "%s/b.json", dir);
    fp_store *st = NULL;
    fp_run rows;
    CHECK(fp_store_open(&st, store, FP_STORE_APPEND, 1) == FP_OK && fp_store_append(st, &a) == FP_OK);
    CHECK(fp_store_load_run_rows(st, a.id, NULL, false, &rows) == FP_OK && rows.rows);
    fp_verdicts *vr = detect(&rows, r);
    CHECK(fp_verdicts_write_json(v, &a, ja) == FP_OK && fp_verdicts_write_json(vr, &rows, jb) == FP_OK);
    CHECK(same_file(ja, jb));
    fp_verdicts_free(vr);
    /* interned ahead on a thread: the same again; a preparation of another
     * run is not used (and is freed whole) */
    fp_detect_prep *prep = NULL, *other = NULL;
    CHECK(fp_detect_prepare(&rows, NULL, r, &prep) == FP_OK && prep);
    CHECK(fp_detect_prepare(&a, NULL, r, &other) == FP_OK && other);
    fp_detect_opts po = {.rules = r, .prepared = other};
    vr = NULL;
    CHECK(fp_detect(&rows, &po, &vr) == FP_OK);
    fp_verdicts_free(vr);
    po.prepared = prep;
    vr = NULL;
    CHECK(fp_detect(&rows, &po, &vr) == FP_OK && fp_verdicts_write_json(vr, &rows, jb) == FP_OK);
    CHECK(same_file(ja, jb));
    fp_verdicts_free(vr);
    fp_detect_prep_free(prep);
    fp_detect_prep_free(other);
    /* the shapes the store counted are the rows' */
    CHECK(rows.rows->shapes != NULL);
    for (size_t k = 0; rows.rows->shapes && k < rows.rows->nkeys; k++) {
        fp_key_shape want = {.last = -1};
        for (size_t i = 0; i < rows.rows->n; i++) {
            const fp_sample_row *x = &rows.rows->row[i];
            if (x->key != k)
                continue;
            want.last = x->iter > want.last ? x->iter : want.last;
            want.firsts += x->iter == 0;
            want.summaries += x->iter < 0;
        }
        const fp_key_shape *got = &rows.rows->shapes[k];
        CHECK(got->last == want.last && got->firsts == want.firsts &&
              got->summaries == want.summaries);
    }
    /* kept packed, interned a chunk at a time: the same verdicts; fp_detect
     * alone will not read a packed run; unpacked, the same rows */
    fp_run packed;
    fp_row_pack *pack = NULL;
    CHECK(fp_store_load_run_packed(st, a.id, NULL, &packed, &pack) == FP_OK && pack);
    CHECK(packed.rows && !packed.rows->row && packed.rows->n == rows.rows->n);
    vr = NULL;
    CHECK(fp_detect(&packed, &(fp_detect_opts){.rules = r}, &vr) == FP_EUSAGE && !vr);
    CHECK(fp_detect_prepare(&packed, pack, r, &prep) == FP_OK && prep);
    po.prepared = prep;
    CHECK(fp_detect(&packed, &po, &vr) == FP_OK);
    CHECK(fp_verdicts_write_json(vr, &packed, jb) == FP_OK);
    CHECK(same_file(ja, jb));
    fp_verdicts_free(vr);
    fp_detect_prep_free(prep);
    CHECK(fp_row_pack_unpack(pack, &packed) == FP_OK && packed.rows->row);
    CHECK(memcmp(packed.rows->row, rows.rows->row, rows.rows->n * sizeof *rows.rows->row) == 0);
    fp_row_pack_free(pack);
    fp_run_free(&packed);
    fp_run_free(&rows);
    fp_store_close(st);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    fp_verdicts_free(v);
    fp_run_free(&a);
    fp_run_free(&b);
    fp_sim_free(sim);
    o.faults = "slow-gpu=x";
    CHECK(fp_sim_open(&o, &sim, err, sizeof err) == FP_EUSAGE && strstr(err, "bad count 'x'"));
    o.faults = "melted=1";
    CHECK(fp_sim_open(&o, &sim, err, sizeof err) == FP_EUSAGE && strstr(err, "unknown fault kind"));
}

int main(void)
{
    fp_rules *r = rules_default();
    if (!r)
        CHECK_DONE();
    test_peers_slow_node(r);
    test_persistence(r);
    test_window_bound(r);
    test_episode(r);
    test_links(r);
    test_links_contended(r);
    test_blind_spots(r);
    test_summary_contended(r);
    test_values_missing_groups(r);
    test_rules_errors();
    test_late_rank(r);
    test_sim(r);
    test_prometheus_uuid(r);
    fp_rules_free(r);
    CHECK_DONE();
}
